// Package wallet holds ledger keys and builds the blocks a key holder signs:
// key files on disk, and constructors for each block type from an account's
// chain head.
package wallet

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/latticenet/lattice/internal/run/durablefile"
	"github.com/latticenet/lattice/ledger"
)

// Key is an ed25519 key pair controlling one account.
type Key struct {
	priv ed25519.PrivateKey
}

// NewKey returns a fresh random key.
func NewKey() Key {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic("wallet: no randomness: " + err.Error()) // crypto/rand never fails on supported platforms
	}
	return Key{priv: priv}
}

// KeyFromSeed returns the key of a 32-byte ed25519 seed.
func KeyFromSeed(seed []byte) (Key, error) {
	if len(seed) != ed25519.SeedSize {
		return Key{}, fmt.Errorf("wallet: seed must be %d bytes, got %d", ed25519.SeedSize, len(seed))
	}
	return Key{priv: ed25519.NewKeyFromSeed(seed)}, nil
}

// Address returns the account the key controls.
func (k Key) Address() ledger.Address {
	var a ledger.Address
	copy(a[:], k.priv.Public().(ed25519.PublicKey))
	return a
}

// Private returns the ed25519 private key.
func (k Key) Private() ed25519.PrivateKey { return k.priv }

// Seed returns the 32-byte seed the key derives from.
func (k Key) Seed() []byte { return k.priv.Seed() }

// keyFile is the on-disk form of a key: JSON, mode 0600. SaveKey writes
// the 32-byte ed25519 seed as "seed". Files of earlier versions named it
// "private_key", a name that elsewhere (the test vectors, most ed25519
// libraries) means the 64-byte seed ‖ public key; LoadKey reads that field
// in either length.
type keyFile struct {
	Address    ledger.Address `json:"address"`
	Seed       string         `json:"seed,omitempty"`
	PrivateKey string         `json:"private_key,omitempty"`
}

// ErrKeyExists is returned by SaveKey when the file is already there.
var ErrKeyExists = errors.New("wallet: key file already exists")

// SaveKey writes k to path with mode 0600, creating parent directories. It
// never overwrites an existing file, and the file appears whole or not at
// all.
func SaveKey(path string, k Key) error {
	data, err := json.MarshalIndent(keyFile{Address: k.Address(), Seed: hex.EncodeToString(k.Seed())}, "", "  ")
	if err != nil {
		return err
	}
	if err := durablefile.Create(path, append(data, '\n'), 0o600); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s", ErrKeyExists, path)
		}
		return fmt.Errorf("wallet: %w", err)
	}
	return nil
}

// maxKeyFile bounds what LoadKey reads: a key file is about 200 bytes.
const maxKeyFile = 64 << 10

// LoadKey reads a key file written by SaveKey. It refuses files that group
// or others can read, as ssh does; a file that is no key file at all is
// named as such first (a genesis file given for a key was refused for its
// mode alone).
func LoadKey(path string) (Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return Key{}, fmt.Errorf("wallet: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Key{}, fmt.Errorf("wallet: %w", err)
	}
	var kf keyFile
	dec := json.NewDecoder(io.LimitReader(f, maxKeyFile))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&kf); err != nil {
		return Key{}, fmt.Errorf("wallet: %s is not a lattice key file (the JSON `lattice key new` writes): %w", path, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return Key{}, fmt.Errorf("wallet: key file %s is accessible by others (mode %04o); run chmod 600 %s", path, st.Mode().Perm(), path)
	}
	k, err := kf.key()
	if err != nil {
		return Key{}, fmt.Errorf("wallet: key file %s: %w", path, err)
	}
	if k.Address() != kf.Address {
		return Key{}, fmt.Errorf("wallet: key file %s: address %s does not match its private key", path, kf.Address)
	}
	return k, nil
}

// key is the key a file holds: its seed, or its legacy private_key (a
// seed, or a seed followed by its public key).
func (kf keyFile) key() (Key, error) {
	field, text := "seed", kf.Seed
	switch {
	case kf.Seed != "" && kf.PrivateKey != "":
		return Key{}, errors.New("both seed and private_key: keep one")
	case kf.Seed == "" && kf.PrivateKey == "":
		return Key{}, errors.New("no seed")
	case kf.PrivateKey != "":
		field, text = "private_key", kf.PrivateKey
	}
	b, err := hex.DecodeString(text)
	if err != nil {
		return Key{}, fmt.Errorf("%s is not hex", field)
	}
	if field == "private_key" && len(b) != ed25519.SeedSize && len(b) != ed25519.PrivateKeySize {
		return Key{}, fmt.Errorf("private_key must be %d bytes (a seed) or %d (a seed and its public key), got %d", ed25519.SeedSize, ed25519.PrivateKeySize, len(b))
	}
	if len(b) == ed25519.PrivateKeySize && field == "private_key" {
		k, err := KeyFromSeed(b[:ed25519.SeedSize])
		if err != nil {
			return Key{}, err
		}
		if !bytes.Equal(k.Private(), b) {
			return Key{}, errors.New("private_key: its last 32 bytes are not the public key of its seed")
		}
		return k, nil
	}
	return KeyFromSeed(b)
}
