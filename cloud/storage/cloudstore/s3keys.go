package cloudstore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/cloud/storage/storagenames"
	"github.com/latticenet/lattice/internal/run/durablefile"
)

// S3 key permissions.
const (
	PermRead      = "read"
	PermWrite     = "write"
	PermReadWrite = "readwrite"
)

// S3Key is an S3 access key. Its secret is kept encrypted (AES-256-GCM
// under the store's secret key, DATA/secret.key) because signature V4
// verification needs it in the clear; the database alone does not reveal
// it.
type S3Key struct {
	AccessKeyID string    `json:"access_key_id"`
	Account     string    `json:"account"`
	Name        string    `json:"name"`
	Permissions string    `json:"permissions"`
	BucketScope string    `json:"bucket_scope"` // "*" or one bucket name
	CreatedAt   time.Time `json:"created_at"`
	Sealed      []byte    `json:"sealed_secret"` // nonce || AES-GCM(secret)
}

const tS3Key = 's' // s | access key id -> S3Key

// ValidS3Scope checks a bucketScope: "*" or a valid bucket name.
func ValidS3Scope(scope string) error {
	if scope == "*" {
		return nil
	}
	return storagenames.ExistingBucketName(scope)
}

// ValidS3Permissions checks a permissions value.
func ValidS3Permissions(p string) error {
	switch p {
	case PermRead, PermWrite, PermReadWrite:
		return nil
	}
	return fmt.Errorf("permissions must be read, write or readwrite, got %q", p)
}

// OpenSecrets loads the secret key in path, creating it (0600) on first use.
func (s *Store) OpenSecrets(path string) error {
	key, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key = make([]byte, 32)
		rand.Read(key)
		if err := durablefile.Create(path, key, 0o600); err != nil {
			return fmt.Errorf("cloudstore: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("cloudstore: %w", err)
	}
	if len(key) != 32 {
		return fmt.Errorf("cloudstore: secret key %s must hold 32 bytes", path)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return err
	}
	s.aead, err = cipher.NewGCM(block)
	s.master = key
	s.s3Cache.Clear() // secrets unsealed with another key
	return err
}

// DerivedKey returns a 32-byte key for the purpose label, derived from the
// secret key of OpenSecrets with HKDF-SHA256. It is the same across
// restarts; distinct labels give independent keys, and none is the key
// that seals S3 secrets (which is the secret key itself).
func (s *Store) DerivedKey(label string) ([]byte, error) {
	if s.master == nil {
		return nil, errors.New("cloudstore: no secret key: call OpenSecrets")
	}
	return hkdf.Key(sha256.New, s.master, nil, "lattice/cloudstore/"+label, 32)
}

// CreateS3Key makes an S3 access key for account and returns it with its
// secret (shown once).
func (s *Store) CreateS3Key(account, name, perms, scope string, now time.Time) (S3Key, string, error) {
	if s.aead == nil {
		return S3Key{}, "", errors.New("cloudstore: no secret key: call OpenSecrets")
	}
	if err := ValidS3Permissions(perms); err != nil {
		return S3Key{}, "", err
	}
	if err := ValidS3Scope(scope); err != nil {
		return S3Key{}, "", err
	}
	s.mu.Lock() // the count holds until the key is stored
	defer s.mu.Unlock()
	if keys, err := s.S3Keys(account); err != nil {
		return S3Key{}, "", err
	} else if len(keys) >= MaxS3KeysPerAccount {
		return S3Key{}, "", fmt.Errorf("%w: it has %d S3 keys, the most an account may have: delete one it no longer uses", ErrQuota, len(keys))
	}
	secret := randomBase62(40)
	key := S3Key{AccessKeyID: "LK" + randomFrom("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", 18), Account: account, Name: name,
		Permissions: perms, BucketScope: scope, CreatedAt: now.UTC()}
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	// The access key ID is bound in as additional data, so a sealed
	// secret cannot be moved to another key's record.
	key.Sealed = s.aead.Seal(nonce, nonce, []byte(secret), []byte(key.AccessKeyID))
	b := s.db.NewBatch()
	defer b.Close()
	if err := setJSON(b, k(tS3Key, key.AccessKeyID), key); err != nil {
		return S3Key{}, "", err
	}
	return key, secret, s.commit(b)
}

// S3Secret returns an access key and its secret, for request signing.
// Keys never change once made, so they are cached, unsealed, until
// deleted: every S3 request looks its key up.
func (s *Store) S3Secret(accessKeyID string) (S3Key, string, error) {
	if v, ok := s.s3Cache.Load(accessKeyID); ok {
		c := v.(cachedS3Key)
		return c.key, c.secret, nil
	}
	// A miss reads and caches under s.mu, which DeleteS3Key holds while
	// it deletes the record and its cache entry: a deleted key can never
	// be cached again from a read made before its deletion.
	s.mu.Lock()
	defer s.mu.Unlock()
	key, secret, err := s.s3Secret(accessKeyID)
	if err != nil {
		return S3Key{}, "", err
	}
	s.s3Cache.Store(accessKeyID, cachedS3Key{key, secret})
	return key, secret, nil
}

type cachedS3Key struct {
	key    S3Key
	secret string
}

func (s *Store) s3Secret(accessKeyID string) (S3Key, string, error) {
	var key S3Key
	if err := s.getJSON(k(tS3Key, accessKeyID), &key); err != nil {
		return S3Key{}, "", err
	}
	n := s.aead.NonceSize()
	if len(key.Sealed) < n {
		return S3Key{}, "", errors.New("cloudstore: corrupt S3 key record")
	}
	secret, err := s.aead.Open(nil, key.Sealed[:n], key.Sealed[n:], []byte(key.AccessKeyID))
	if err != nil {
		return S3Key{}, "", fmt.Errorf("cloudstore: S3 secret does not decrypt (wrong secret.key?): %w", err)
	}
	return key, string(secret), nil
}

// S3Keys returns account's S3 keys, newest first.
func (s *Store) S3Keys(account string) ([]S3Key, error) {
	var out []S3Key
	err := s.scan([]byte{tS3Key}, func(_, v []byte) error {
		var key S3Key
		if err := json.Unmarshal(v, &key); err != nil {
			return err
		}
		if key.Account == account {
			out = append(out, key)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].AccessKeyID < out[j].AccessKeyID
	})
	return out, err
}

// DeleteS3Key deletes account's S3 key; another account's is ErrNotFound.
func (s *Store) DeleteS3Key(account, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var key S3Key
	if err := s.getJSON(k(tS3Key, id), &key); err != nil {
		return err
	}
	if key.Account != account {
		return ErrNotFound
	}
	// Under s.mu, as S3Secret's cache fill is.
	if err := s.durable(func() error { return s.db.Delete(k(tS3Key, id), pebble.Sync) }); err != nil {
		return err
	}
	s.s3Cache.Delete(id)
	return nil
}
