package cloudstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/latticenet/lattice/cloud/storage/kms"
	"github.com/latticenet/lattice/cloud/storage/sse"
)

// Encryption modes of object bodies at rest.
const (
	// SSES3 is server-side encryption with the store's keys (S3's
	// SSE-S3, "AES256"): each body has its own data key, sealed under a
	// key derived from the store's secret key.
	SSES3 = "AES256"
	// SSEC is server-side encryption with a key the client gives on
	// every write and read (S3's SSE-C). The client's key is never
	// stored: it seals the body's data key, and a read without it
	// cannot unseal it.
	SSEC = "SSE-C"
	// SSEKMS is server-side encryption with a key of the key service
	// (S3's SSE-KMS, "aws:kms"): each body's data key is made and sealed
	// by the service under a key of the bucket owner's, bound to an
	// encryption context, and opens only while that key is enabled.
	SSEKMS = "aws:kms"
	// SSEDSSE is dual-layer server-side encryption with a key of the key
	// service (S3's DSSE-KMS, "aws:kms:dsse"): as SSEKMS, with two data
	// keys, each made and sealed by the service, and the body sealed
	// twice, once under each (package sse's dual-layer streams).
	SSEDSSE = "aws:kms:dsse"
)

// Errors of encrypted objects.
var (
	ErrKeyRequired      = errors.New("cloudstore: the object is encrypted with a customer key (SSE-C), which the request must give")
	ErrWrongKey         = errors.New("cloudstore: the customer key given is not the one the object was encrypted with")
	ErrKeyNotApplicable = errors.New("cloudstore: a customer key was given for an object not encrypted with one")
	ErrBadEncryption    = errors.New("cloudstore: unknown encryption mode")
	// ErrNoKMS is an SSE-KMS request to a store without a key service.
	ErrNoKMS = errors.New("cloudstore: SSE-KMS needs a key service, and this store has none")
	// ErrKMSAccess is a request of one account that would use another
	// account's KMS key (KMSRequester); ErrKMSAnonymous, which is one,
	// an anonymous request that would use any.
	ErrKMSAccess    = errors.New("cloudstore: the KMS key belongs to another account, and a key is used only for requests of its own account")
	ErrKMSAnonymous = fmt.Errorf("%w: an anonymous request uses no KMS key", ErrKMSAccess)
)

// kmsRequesterKey is the context key of KMSRequester's account.
type kmsRequesterKey struct{}

// KMSRequester returns ctx for the reads and writes of a request made by
// account ("" for an anonymous one). Under it, the store makes or opens a
// data key only with a KMS key of that account, and refuses anything else
// with ErrKMSAccess: keys have no policies, so a key serves its own
// account alone, as S3's default key policy has it (an aws/s3 key never
// serves another account; a customer key does only if its policy says
// so, and ours never do). A grant on a bucket or an object therefore
// gives another account its SSE-S3 and SSE-C objects, never its SSE-KMS
// ones. A context without a requester is the store's own work
// (lifecycle, replication) and may use any key: every entry point that
// serves a request (the S3 endpoint, the REST API, the CDN's origin) sets
// one.
func KMSRequester(ctx context.Context, account string) context.Context {
	return context.WithValue(ctx, kmsRequesterKey{}, account)
}

// mayUseKey tells whether ctx's request may use a KMS key of owner.
func mayUseKey(ctx context.Context, owner string) error {
	who, ok := ctx.Value(kmsRequesterKey{}).(string)
	switch {
	case !ok || who == owner:
		return nil
	case who == "":
		return ErrKMSAnonymous
	}
	return ErrKMSAccess
}

// Encryption is how a body (an object's, an upload's parts') is encrypted
// at rest. Bodies are streams of package sse; an object completed from
// parts is its parts' streams one after the other (PartSizes says where),
// so a completion joins them without decrypting.
type Encryption struct {
	Mode      string `json:"mode"`       // SSES3, SSEC, SSEKMS or SSEDSSE
	SealedKey []byte `json:"sealed_key"` // the body's data key, sealed
	// OuterSealedKey is SSEDSSE's second data key, the outer layer's,
	// sealed as SealedKey is (SealedKey is the inner layer's).
	OuterSealedKey []byte `json:"outer_sealed_key,omitempty"`
	// SSE-KMS: the key service's key id that sealed the data key, the
	// encryption context it is bound to (canonical JSON: the client's
	// pairs and aws:s3:arn, the object's ARN when it was written), and
	// whether the client asked for an S3 Bucket Key (answered back; a
	// built-in key service has no call cost for a bucket key to save).
	KeyID     string `json:"kms_key_id,omitempty"`
	KeyOwner  string `json:"kms_key_owner,omitempty"` // the key's account, for its ARN
	Context   []byte `json:"kms_context,omitempty"`
	BucketKey bool   `json:"bucket_key,omitempty"`
	// Streams is the SHA-256 of the nonce prefixes of the body's streams,
	// in order (streamsDigest). Every stream of a body is sealed under
	// its one data key, the parts of a multipart object each a stream of
	// its own, so each stream authenticates only itself: without this, a
	// body whose streams were swapped, repeated or replaced by an earlier
	// upload of the same part would decrypt to other bytes without an
	// error. A read checks it; records written before it was kept have
	// none, and are not checked.
	Streams []byte `json:"streams,omitempty"`
}

// UsesKMS tells whether the body's data keys are the key service's
// (SSE-KMS or DSSE-KMS): reads need the key enabled, and S3 serves them
// only to requests signed with Signature Version 4.
func (e *Encryption) UsesKMS() bool {
	return e != nil && (e.Mode == SSEKMS || e.Mode == SSEDSSE)
}

// streamsDigest is Encryption.Streams of streams of these nonce prefixes.
func streamsDigest(prefixes ...[]byte) []byte {
	h := sha256.New()
	for _, p := range prefixes {
		h.Write(p)
	}
	return h.Sum(nil)
}

// sealedAs is enc, for a body of streams with these nonce prefixes: a
// copy with Streams set (nil stays nil). When a prefix is not known (a
// part uploaded before they were kept), Streams is left out.
func sealedAs(enc *Encryption, prefixes ...[]byte) *Encryption {
	if enc == nil {
		return nil
	}
	e := *enc
	e.Streams = nil
	for _, p := range prefixes {
		if len(p) == 0 {
			return &e
		}
	}
	e.Streams = streamsDigest(prefixes...)
	return &e
}

// SSE asks for a write to be encrypted (Mode), or gives the customer key
// of an SSE-C object to read (CustomerKey alone).
type SSE struct {
	Mode        string
	CustomerKey []byte // SSE-C: the client's 32-byte key
	// SSE-KMS: the key as the client named it ("" for the account's
	// default key), the client's encryption context (pairs the seal is
	// bound to besides the object's ARN) and its Bucket Key choice.
	KMSKey    string
	Context   map[string]string
	BucketKey bool
}

// DefaultEncryption is a bucket's default encryption of new objects.
type DefaultEncryption struct {
	Mode      string // SSES3, SSEKMS, SSEDSSE, or "" for none
	KMSKeyID  string // SSEKMS, SSEDSSE: the key's id ("" for the account's default key)
	BucketKey bool
}

// defaultSSE is what a write that asks for no encryption gets in bk.
func defaultSSE(bk Bucket) *SSE {
	switch bk.Encryption {
	case SSES3:
		return &SSE{Mode: SSES3}
	case SSEKMS, SSEDSSE:
		return &SSE{Mode: bk.Encryption, KMSKey: bk.EncryptionKey, BucketKey: bk.BucketKey}
	}
	return nil
}

// SetKMS gives the store its key service, for SSE-KMS. Call it before
// the store is used.
func (s *Store) SetKMS(k kms.Service) { s.kms = k }

// KMS returns the store's key service, nil if it has none.
func (s *Store) KMS() kms.Service { return s.kms }

// OpenKMS gives the store the built-in key service, keeping its keys in
// the store's database sealed under master (32 bytes); previous, when not
// nil, is the master key being rotated out (OpenLocal).
func (s *Store) OpenKMS(master, previous []byte) (*kms.Local, error) {
	l, err := kms.OpenLocal(s.db, tKMS, master, previous)
	if err != nil {
		return nil, err
	}
	s.kms = l
	return l, nil
}

// KMSKeysStored tells whether the database holds keys of the built-in
// key service (before OpenKMS: a missing master key must not be replaced
// by a new one while keys sealed under the old one are there).
func (s *Store) KMSKeysStored() (bool, error) { return kms.Stored(s.db, tKMS) }

// tKMS is the built-in key service's table (package kms).
const tKMS = 'K' // K | key id -> the key's record, its material sealed under the master key

// kmsPairs are the client's pairs of an encryption context kmsContext
// made: all but aws:s3:arn, which names the object.
func kmsPairs(encCtx []byte) map[string]string {
	var c map[string]string
	if json.Unmarshal(encCtx, &c) != nil {
		return nil
	}
	delete(c, "aws:s3:arn")
	return c
}

// kmsContext is the encryption context of an SSE-KMS body of object key
// in bucket: the client's pairs and the object's ARN, as S3 binds it, in
// canonical JSON (keys in order).
func kmsContext(pairs map[string]string, bucket, key string) ([]byte, error) {
	c := make(map[string]string, len(pairs)+1)
	for k, v := range pairs {
		c[k] = v
	}
	c["aws:s3:arn"] = "arn:aws:s3:::" + bucket + "/" + key
	return json.Marshal(c)
}

// Contexts bound into sealed data keys, so a key sealed for one mode is
// never taken for the other's.
var (
	ctxSSES3 = []byte("lattice/cloudstore/sse-s3/v1")
	ctxSSEC  = []byte("lattice/cloudstore/sse-c/v1")
)

// kek is the key that seals SSE-S3 data keys.
func (s *Store) kek() ([]byte, error) { return s.DerivedKey("sse-s3") }

// newEncryption makes a data key for a write that e asks to encrypt, and
// seals it. A nil e is no encryption. An SSE-KMS body is account's
// (the bucket owner's) object key in bucket.
func (s *Store) newEncryption(ctx context.Context, e *SSE, account, bucket, key string) (*Encryption, []byte, error) {
	if e == nil {
		return nil, nil, nil
	}
	if e.Mode == SSEKMS || e.Mode == SSEDSSE {
		return s.newKMSEncryption(ctx, e, account, bucket, key)
	}
	data := sse.NewKey()
	var sealed []byte
	var err error
	switch e.Mode {
	case SSES3:
		kek, kerr := s.kek()
		if kerr != nil {
			return nil, nil, kerr
		}
		sealed, err = sse.SealKey(kek, data, ctxSSES3)
	case SSEC:
		sealed, err = sse.SealKey(e.CustomerKey, data, ctxSSEC)
	default:
		return nil, nil, fmt.Errorf("%w: %q", ErrBadEncryption, e.Mode)
	}
	if err != nil {
		return nil, nil, err
	}
	return &Encryption{Mode: e.Mode, SealedKey: sealed}, data, nil
}

func (s *Store) newKMSEncryption(ctx context.Context, e *SSE, account, bucket, key string) (*Encryption, []byte, error) {
	if s.kms == nil {
		return nil, nil, ErrNoKMS
	}
	// Keys resolve in the bucket owner's account alone; asked first, so
	// that a refused write does not make the owner's aws/s3 key.
	if err := mayUseKey(ctx, account); err != nil {
		return nil, nil, err
	}
	k, err := s.kms.Resolve(ctx, account, e.KMSKey)
	if err != nil {
		return nil, nil, err
	}
	if err := mayUseKey(ctx, k.Account); err != nil {
		return nil, nil, err
	}
	encCtx, err := kmsContext(e.Context, bucket, key)
	if err != nil {
		return nil, nil, err
	}
	data, sealed, err := s.kms.GenerateDataKey(ctx, k.ID, encCtx)
	if err != nil {
		return nil, nil, err
	}
	enc := &Encryption{Mode: e.Mode, SealedKey: sealed, KeyID: k.ID, KeyOwner: k.Account, Context: encCtx, BucketKey: e.BucketKey}
	if e.Mode == SSEDSSE {
		// Two data keys, made and sealed apart: the outer layer's is no
		// function of the inner's. S3 applies no bucket key to DSSE-KMS.
		outer, outerSealed, err := s.kms.GenerateDataKey(ctx, k.ID, encCtx)
		if err != nil {
			return nil, nil, err
		}
		enc.OuterSealedKey, enc.BucketKey = outerSealed, false
		data = append(data, outer...)
	}
	return enc, data, nil
}

// dataKey unseals the data key of a body encrypted as enc, with the
// customer key a reader gave (nil for none). A body not encrypted has
// none, and takes no customer key.
func (s *Store) dataKey(ctx context.Context, enc *Encryption, customerKey []byte) ([]byte, error) {
	switch {
	case enc == nil && customerKey != nil:
		return nil, ErrKeyNotApplicable
	case enc == nil:
		return nil, nil
	case enc.Mode == SSES3:
		if customerKey != nil {
			return nil, ErrKeyNotApplicable
		}
		kek, err := s.kek()
		if err != nil {
			return nil, err
		}
		key, err := sse.OpenKey(kek, enc.SealedKey, ctxSSES3)
		if err != nil {
			return nil, fmt.Errorf("cloudstore: an SSE-S3 data key does not open under this store's secret key: %w", err)
		}
		return key, nil
	case enc.UsesKMS():
		if customerKey != nil {
			return nil, ErrKeyNotApplicable
		}
		if s.kms == nil {
			return nil, ErrNoKMS
		}
		if err := mayUseKey(ctx, enc.KeyOwner); err != nil {
			return nil, err
		}
		key, err := s.kms.Decrypt(ctx, enc.KeyID, enc.SealedKey, enc.Context)
		if err != nil || enc.Mode == SSEKMS {
			return key, err
		}
		if enc.OuterSealedKey == nil {
			return nil, fmt.Errorf("cloudstore: a dual-layer body's record has no outer data key: %w", sse.ErrCorrupt)
		}
		outer, err := s.kms.Decrypt(ctx, enc.KeyID, enc.OuterSealedKey, enc.Context)
		if err != nil {
			return nil, err
		}
		return append(key, outer...), nil
	case enc.Mode == SSEC:
		if customerKey == nil {
			return nil, ErrKeyRequired
		}
		key, err := sse.OpenKey(customerKey, enc.SealedKey, ctxSSEC)
		if err != nil {
			return nil, ErrWrongKey
		}
		return key, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrBadEncryption, enc.Mode)
}

// CheckKey tells whether a reader giving customerKey (nil for none) may
// read obj, as a read of its body would: nil, ErrKeyRequired, ErrWrongKey
// or ErrKeyNotApplicable. It is for reads of an object's metadata that S3
// gives only to holders of an SSE-C object's key (GetObjectAttributes:
// the checksum kept is the plaintext's).
func (s *Store) CheckKey(ctx context.Context, obj Object, customerKey []byte) error {
	_, err := s.dataKey(ctx, obj.Encryption, customerKey)
	return err
}

// sameKey tells whether a body encrypted as enc may be shared, as it is,
// by a copy that asks for target (nil: none), given the customer keys of
// source and target: only with the same mode and, for SSE-C, the same key.
func sameKey(enc *Encryption, srcKey []byte, target *SSE) bool {
	switch {
	case enc == nil || target == nil:
		return enc == nil && target == nil
	case enc.Mode != target.Mode:
		return false
	case enc.Mode == SSEC:
		return subtle.ConstantTimeCompare(srcKey, target.CustomerKey) == 1
	case enc.UsesKMS():
		// A body sealed for another object's ARN is sealed again: its
		// context must name the object it belongs to.
		return false
	}
	return true
}

// streamSizes are the plaintext sizes of the streams an encrypted body of
// obj is made of: one per part of an object completed from parts.
func streamSizes(obj Object) []int64 {
	if len(obj.PartSizes) > 0 {
		return obj.PartSizes
	}
	return []int64{obj.Size}
}

// decryptBody is a Body reading the plaintext of obj's encrypted streams,
// which src holds one after the other; closer closes src. streams, if not
// nil, is the Encryption.Streams the body was recorded with: streams
// other than those, though each decrypts, are ErrCorrupt.
func decryptBody(key []byte, src io.ReaderAt, closer io.Closer, sizes []int64, streams []byte) (Body, error) {
	d, err := sse.NewStreams(key, src, sizes)
	if err != nil {
		return nil, err
	}
	if streams != nil {
		h := sha256.New()
		for _, p := range d.Prefixes() {
			h.Write(p)
		}
		if subtle.ConstantTimeCompare(h.Sum(nil), streams) != 1 {
			return nil, fmt.Errorf("%w: the body's streams are not the ones written (moved, repeated or replaced)", sse.ErrCorrupt)
		}
	}
	return streamsBody{d, closer}, nil
}

// streamsBody is an encrypted body being read, and what closes its file.
type streamsBody struct {
	*sse.Streams
	closer io.Closer
}

func (b streamsBody) Close() error {
	if b.closer != nil {
		return b.closer.Close()
	}
	return nil
}

// sealedBody is a body written encrypted: the plaintext's size and the
// MD5 an ETag is made of (the plaintext's for SSE-S3, as S3 gives; the
// stream's for SSE-C, so that the ETag says nothing of a plaintext the
// store cannot read).
type sealedBody struct {
	inline []byte
	blob   string
	size   int64
	md5    []byte
	prefix []byte // the stream's nonce prefix
}

// writeEncrypted encrypts body (at most max bytes of plaintext) with key
// into a stream kept inline, when inline allows and the plaintext fits,
// or in a new body file. Errors are as writeBlob's.
func (s *Store) writeEncrypted(ctx context.Context, body io.Reader, max int64, mode string, key []byte, inline bool) (sealedBody, error) {
	plain := &countingReader{r: io.LimitReader(ctxReader{ctx, body}, max+1)}
	// One MD5, of the side the ETag is made of: an SSE-S3 ETag is the
	// plaintext's MD5, as S3 gives it (the AWS CLI checks it); an SSE-C
	// ETag is the stream's, so that it tells nothing about a plaintext
	// only the customer's key should reveal. MD5 is most of a large PUT's
	// CPU, so the other side is not hashed.
	sum := md5.New()
	var plainSum, cipherSum io.Writer = sum, io.Discard
	if mode == SSEC {
		plainSum, cipherSum = io.Discard, sum
	}
	head := make([]byte, min(max+1, InlineMax+1))
	if !inline {
		head = head[:0]
	}
	n, err := readUpTo(plain, head)
	if err != nil {
		return sealedBody{}, fmt.Errorf("%w: %w", ErrBody, err)
	}
	if int64(n) > max {
		return sealedBody{}, ErrTooLarge
	}
	if inline && n <= InlineMax {
		plainSum.Write(head[:n])
		e, err := sse.NewEncrypter(key, bytes.NewReader(head[:n]))
		if err != nil {
			return sealedBody{}, err
		}
		stream, err := io.ReadAll(e)
		if err != nil {
			return sealedBody{}, err
		}
		cipherSum.Write(stream)
		return sealedBody{inline: stream, size: int64(n), md5: sum.Sum(nil), prefix: e.Prefix()}, nil
	}
	src := io.MultiReader(bytes.NewReader(head[:n]), plain)
	if mode != SSEC {
		src = io.TeeReader(src, plainSum)
	}
	e, err := sse.NewEncrypter(key, src)
	if err != nil {
		return sealedBody{}, err
	}
	var blobSum io.Writer
	if mode == SSEC {
		blobSum = cipherSum
	}
	blob, _, err := s.writeBlob(ctx, e, sse.StreamSize(key, max+1), blobSum)
	if err != nil {
		return sealedBody{}, err
	}
	if plain.n > max {
		s.removeBlob(blob)
		return sealedBody{}, ErrTooLarge
	}
	return sealedBody{blob: blob, size: plain.n, md5: sum.Sum(nil), prefix: e.Prefix()}, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// SetBucketEncryption sets the default encryption of account's bucket's
// new objects. Objects already there stay as they are, as in S3. An
// SSE-KMS default names a key of account's by its id ("" for the
// account's default key).
func (s *Store) SetBucketEncryption(account, bucket string, d DefaultEncryption) error {
	switch d.Mode {
	case "", SSES3:
		if d.KMSKeyID != "" {
			return fmt.Errorf("%w: a key id for %q", ErrBadEncryption, d.Mode)
		}
	case SSEKMS, SSEDSSE:
		if s.kms == nil {
			return ErrNoKMS
		}
	default:
		return fmt.Errorf("%w: %q as a bucket's default", ErrBadEncryption, d.Mode)
	}
	return s.write(func(t *tx) error {
		bk, err := s.Bucket(account, bucket)
		if err != nil {
			return err
		}
		if bk.Encryption == d.Mode && bk.EncryptionKey == d.KMSKeyID && bk.BucketKey == d.BucketKey {
			return nil
		}
		bk.Encryption, bk.EncryptionKey, bk.BucketKey = d.Mode, d.KMSKeyID, d.BucketKey
		b := s.db.NewBatch()
		defer t.closeUnapplied(b)
		if err := setJSON(b, k(tBucket, bucket), bk); err != nil {
			return err
		}
		return s.apply(t, b)
	})
}
