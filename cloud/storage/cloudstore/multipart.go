package cloudstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/cloud/storage/s3acl"
	"github.com/latticenet/lattice/cloud/storage/sse"
	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

// Multipart upload limits, as in S3.
const (
	MaxPartNumber = 10000
	MaxPartSize   = 5 << 30
	// MinPartSize is the least size of every part but the last.
	MinPartSize = 5 << 20
)

// Errors of multipart uploads.
var (
	ErrNoSuchUpload  = errors.New("cloudstore: no such upload")
	ErrInvalidPart   = errors.New("cloudstore: a listed part was not uploaded or its ETag differs")
	ErrPartOrder     = errors.New("cloudstore: parts must be listed in ascending order, each once")
	ErrPartTooSmall  = errors.New("cloudstore: every part but the last must hold at least 5 MiB")
	ErrNoParts       = errors.New("cloudstore: a multipart upload must be completed with at least one part")
	ErrBadPartNumber = errors.New("cloudstore: part numbers are 1 to 10000")
	// ErrPartChecksumMissing: the upload was created with a COMPOSITE
	// checksum, and a listed part was not given its checksum.
	ErrPartChecksumMissing = errors.New("cloudstore: the upload was created with a checksum; the completion must give each part's")
	// ErrChecksumMismatch: a checksum given for a listed part, or for the
	// whole object, is of another algorithm than the one kept, or (for
	// the whole object) of another value.
	ErrChecksumMismatch = errors.New("cloudstore: the checksum given does not match the one computed")
	// ErrChecksumUnchecked: a completion gives the object's checksum in
	// an algorithm none of its parts has a checksum in, which leaves
	// nothing to check it against.
	ErrChecksumUnchecked = errors.New("cloudstore: the object's checksum cannot be checked: its parts have none of that algorithm")
	// ErrChecksumSpec: an upload's checksum algorithm and type do not go
	// together (a full-object SHA, a composite CRC64NVME, a type alone).
	ErrChecksumSpec = errors.New("cloudstore: the checksum type cannot be used with the checksum algorithm")
)

// Upload is a multipart upload in progress.
type Upload struct {
	ID          string            `json:"id"`
	Account     string            `json:"account"`
	Bucket      string            `json:"bucket"`
	Key         string            `json:"key"`
	ContentType string            `json:"content_type"`
	Meta        map[string]string `json:"meta,omitempty"`
	Initiated   time.Time         `json:"initiated"`
	// Tags are given to the object when the upload completes.
	Tags map[string]string `json:"tags,omitempty"`
	// Encryption is how the parts, and so the object, are encrypted:
	// each part is a stream of its own under the upload's data key.
	Encryption *Encryption `json:"encryption,omitempty"`
	// ChecksumAlgorithm, if set, is the checksum every part has (S3's
	// x-amz-checksum-algorithm on CreateMultipartUpload), and
	// ChecksumType says what the object's is: COMPOSITE (of the parts'
	// checksums, which the completion must list) or FULL_OBJECT (a CRC of
	// the whole body, combined from the parts').
	ChecksumAlgorithm string `json:"checksum_algorithm,omitempty"`
	ChecksumType      string `json:"checksum_type,omitempty"`
	// Owner and ACL are given to the object when the upload completes
	// (Object's fields of those names).
	Owner string        `json:"owner,omitempty"`
	ACL   []s3acl.Grant `json:"acl,omitzero"`
	// Lock is the object's Object Lock, asked when the upload was
	// created (PutOptions.Lock); the bucket's default applies without it.
	Lock *Lock `json:"lock,omitempty"`
}

// Writer is the account the upload's object is to be owned by: Owner, or
// the bucket's owner.
func (u Upload) Writer() string {
	if u.Owner != "" {
		return u.Owner
	}
	return u.Account
}

// Part is an uploaded part. Its body is a body file like an object's,
// counted in the reference counts, so OpenBlobs keeps it across restarts.
type Part struct {
	Number       int       `json:"number"`
	ETag         string    `json:"etag"`
	Size         int64     `json:"size"`
	LastModified time.Time `json:"last_modified"`
	Blob         string    `json:"blob"`
	Checksum     *Checksum `json:"checksum,omitempty"`
	// Prefix is the nonce prefix of an encrypted part's stream, which the
	// completed object's Encryption.Streams binds in its place.
	Prefix []byte `json:"prefix,omitempty"`
	// Encryption is the upload's, which PutPart and CopyPart return with
	// the part they stored (for the answer's headers); the upload keeps
	// it, the part record does not.
	Encryption *Encryption `json:"-"`
}

// CompletedPart names a part in a completion request.
type CompletedPart struct {
	Number int
	ETag   string
	// Checksum, if not nil, is the part's checksum as the completion
	// lists it: it must be the one the part was uploaded with.
	Checksum *Checksum
}

// CompleteOptions are a completion's time, its precondition on the object
// it replaces, and the whole object's checksum the client computed.
type CompleteOptions struct {
	Now time.Time
	If  Preconditions
	// Checksum, if not nil, is the client's checksum of the whole
	// object, checked against the object's (checkObjectChecksum).
	Checksum *Checksum
}

const (
	tUpload   = 'M' // M | upload id -> Upload
	tUploadBy = 'U' // U | bucket | 0 | key | 0 | upload id -> nothing (uploads in key order)
	tPart     = 'P' // P | upload id | 0 | part number (5 digits) -> Part
)

func partKey(id string, n int) []byte { return k(tPart, id, fmt.Sprintf("%05d", n)) }

// CreateUpload starts a multipart upload of key in account's bucket.
func (s *Store) CreateUpload(ctx context.Context, account, bucket, key string, o PutOptions) (Upload, error) {
	if err := storagenames.ValidObjectKey(key); err != nil {
		return Upload{}, err
	}
	if err := checkTags(o.Tags, MaxObjectTags); err != nil {
		return Upload{}, err
	}
	bk, err := s.Bucket(account, bucket)
	if err != nil {
		return Upload{}, err
	}
	if o.Lock != nil && bk.ObjectLock == nil {
		return Upload{}, ErrNoObjectLock // the completion checks it again
	}
	target := o.Encrypt
	if target == nil {
		target = defaultSSE(bk)
	}
	typ, err := UploadChecksumType(o.ChecksumAlgorithm, o.ChecksumType)
	if err != nil {
		return Upload{}, err
	}
	enc, _, err := s.newEncryption(ctx, target, bk.Account, bucket, key)
	if err != nil {
		return Upload{}, err
	}
	u := Upload{ID: randomFrom("0123456789abcdef", 32), Account: account, Bucket: bucket, Key: key,
		ContentType: o.ContentType, Meta: o.Meta, Initiated: o.Now.UTC(), Tags: tagsOrNil(o.Tags), Encryption: enc,
		ChecksumAlgorithm: o.ChecksumAlgorithm, ChecksumType: typ, Owner: o.Owner, ACL: o.ACL, Lock: o.Lock}
	b := s.db.NewBatch()
	defer b.Close()
	if err := setJSON(b, k(tUpload, u.ID), u); err != nil {
		return Upload{}, err
	}
	b.Set(k(tUploadBy, bucket, key, u.ID), nil, nil)
	return u, s.commit(b)
}

// Upload returns account's upload id of key in bucket: ErrNoSuchUpload
// when there is none.
func (s *Store) Upload(account, bucket, key, id string) (Upload, error) {
	return s.upload(account, bucket, key, id)
}

// upload finds an upload of account's key in bucket.
func (s *Store) upload(account, bucket, key, id string) (Upload, error) {
	u, _, err := s.uploadIn(account, bucket, key, id)
	return u, err
}

// uploadIn is upload with the bucket it read to check the owner, for a
// caller that writes to the bucket in the same transaction.
func (s *Store) uploadIn(account, bucket, key, id string) (Upload, Bucket, error) {
	var u Upload
	if err := s.getJSON(k(tUpload, id), &u); errors.Is(err, ErrNotFound) {
		return Upload{}, Bucket{}, ErrNoSuchUpload
	} else if err != nil {
		return Upload{}, Bucket{}, err
	}
	if u.Account != account || u.Bucket != bucket || u.Key != key {
		return Upload{}, Bucket{}, ErrNoSuchUpload
	}
	bk, err := s.Bucket(account, bucket)
	if err != nil {
		return Upload{}, Bucket{}, err
	}
	return u, bk, nil
}

// PartOptions describe a part's upload beyond its body.
type PartOptions struct {
	Now time.Time
	// ChecksumAlgorithm is the algorithm of the checksum the part comes
	// with ("" for none), known before its body is read: an upload
	// created with a checksum algorithm takes parts of that one only
	// (ChecksumAlgorithmError), and, if its type is FULL_OBJECT, parts
	// without one, whose checksum the store then computes.
	ChecksumAlgorithm string
	// Checksum, if not nil, is called once the body was read to its end,
	// and gives the part's checksum.
	Checksum func() *Checksum
	// CustomerKey is the upload's SSE-C key, which every part of an
	// upload encrypted with one must give.
	CustomerKey []byte
}

// PutPart stores part number n of an upload, replacing an earlier
// upload of the same number, as o says. Like Put, it returns only once the
// part is on disk.
func (s *Store) PutPart(ctx context.Context, account, bucket, key, id string, n int, body io.Reader, o PartOptions) (Part, error) {
	if n < 1 || n > MaxPartNumber {
		return Part{}, ErrBadPartNumber
	}
	u, err := s.upload(account, bucket, key, id)
	if err != nil {
		return Part{}, err
	}
	dataKey, err := s.dataKey(ctx, u.Encryption, o.CustomerKey)
	if err != nil {
		return Part{}, err
	}
	if u.ChecksumAlgorithm != "" {
		got := o.ChecksumAlgorithm
		if got != u.ChecksumAlgorithm && (got != "" || u.ChecksumType == Composite) {
			return Part{}, &ChecksumAlgorithmError{Want: u.ChecksumAlgorithm, Got: got}
		}
		if got == "" {
			// A FULL_OBJECT upload's part may come without its CRC, as in
			// S3: the store computes it, for the object's to be made of.
			body, o.Checksum = checksumming(u.ChecksumAlgorithm, body)
		}
	}
	sb, err := s.storeBody(ctx, body, MaxPartSize, u.Encryption, dataKey, false)
	if err != nil {
		return Part{}, err
	}
	p := Part{Number: n, ETag: sb.etag, Size: sb.size, LastModified: o.Now.UTC(), Blob: sb.blob, Prefix: sb.prefix}
	if o.Checksum != nil {
		p.Checksum = o.Checksum()
	}
	if err := s.commitPart(account, bucket, key, id, p); err != nil {
		s.discardBlob(p.Blob, err)
		return Part{}, err
	}
	p.Encryption = u.Encryption
	return p, nil
}

func (s *Store) commitPart(account, bucket, key, id string, p Part) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commitPartLocked(account, bucket, key, id, p)
}

// commitPartLocked records part p of an upload, replacing an earlier part
// of its number; s.mu held.
func (s *Store) commitPartLocked(account, bucket, key, id string, p Part) error {
	if _, err := s.upload(account, bucket, key, id); err != nil {
		return err // aborted or completed while the part was uploading
	}
	b := s.db.NewBatch()
	defer b.Close()
	var old Part
	switch err := s.getJSON(partKey(id, p.Number), &old); {
	case err == nil:
	case errors.Is(err, ErrNotFound):
		old = Part{}
	default:
		return err
	}
	// One adjustment per body: the counts are read from the database, so
	// two adjustments of the same body in one batch would overwrite each
	// other (the same object copied twice into one part number shares
	// its body both times).
	if old.Blob != p.Blob {
		if err := s.ref(b, old.Blob, -1); err != nil {
			return err
		}
		if err := s.ref(b, p.Blob, 1); err != nil {
			return err
		}
	}
	if err := setJSON(b, partKey(id, p.Number), p); err != nil {
		return err
	}
	if err := s.commit(b); err != nil {
		return err
	}
	if old.Blob != p.Blob {
		s.dropUnreferenced(old.Blob)
	}
	return nil
}

// ErrCopyRange is returned by CopyPart when the span it is given does not
// lie within the source object, or is larger than a part may be.
var ErrCopyRange = errors.New("cloudstore: the range to copy is not within the source object")

// CopyPart stores part number n of an upload from the bytes of an existing
// object of the account's, srcKey in srcBucket (UploadPartCopy). span is
// called under the store's lock with the source object as it is then; it
// returns the bytes to copy (first and length, within the object and at
// most MaxPartSize) or an error (a copy condition that does not hold),
// which CopyPart returns as it is, having stored nothing.
//
// A whole single-part object stored in a body file is shared by
// reference, as CopyObject shares it, and the part's ETag is the object's
// (the MD5 of its body). Any other span is streamed from the source's
// body file into a new part body file, MD5 computed on the way, through
// the same write path as an uploaded part (written, fsync'd, renamed);
// the source stays readable even if it is replaced or deleted meanwhile,
// and the copy is of the object as span saw it. Like PutPart, CopyPart
// returns only once the part is on disk.
func (s *Store) CopyPart(ctx context.Context, account, bucket, key, id string, n int, src PartSource,
	span func(src Object) (first, length int64, err error), now time.Time) (Part, error) {
	if n < 1 || n > MaxPartNumber {
		return Part{}, ErrBadPartNumber
	}
	if err := s.Err(); err != nil {
		return Part{}, err
	}
	u, err := s.upload(account, bucket, key, id)
	if err != nil {
		return Part{}, err
	}
	dataKey, err := s.dataKey(ctx, u.Encryption, src.TargetKey)
	if err != nil {
		return Part{}, err
	}
	var (
		part   Part
		shared bool
		body   io.ReadCloser
		length int64
	)
	srcAccount := account
	if src.Account != "" {
		srcAccount = src.Account
	}
	err = s.locked(func() error {
		obj, err := s.versionLocked(srcAccount, src.Bucket, src.Key, src.Version)
		if err != nil {
			return err
		}
		if obj.DeleteMarker {
			return &DeleteMarkerError{VersionID: obj.VersionID}
		}
		first, n64, err := span(obj)
		if err != nil {
			return err
		}
		if first < 0 || n64 < 0 || first > obj.Size-n64 || n64 > MaxPartSize {
			return fmt.Errorf("%w: bytes %d to %d of %d", ErrCopyRange, first, first+n64-1, obj.Size)
		}
		length = n64
		// An upload with a checksum algorithm gives each part a checksum
		// of it: a whole source whose own checksum is one keeps it,
		// another is computed as the part is copied.
		var sum *Checksum
		if c := obj.Checksum; u.ChecksumAlgorithm != "" && c != nil && c.Algorithm == u.ChecksumAlgorithm && c.Type != Composite {
			sum = &Checksum{Algorithm: c.Algorithm, Value: c.Value}
		}
		if first == 0 && n64 == obj.Size && obj.Blob != "" && isMD5(obj.ETag) && obj.Encryption == nil && u.Encryption == nil &&
			(u.ChecksumAlgorithm == "" || sum != nil) {
			if src.CustomerKey != nil {
				return ErrKeyNotApplicable
			}
			// The whole body, whose ETag is its MD5: share it.
			part = Part{Number: n, ETag: obj.ETag, Size: obj.Size, LastModified: now.UTC(), Blob: obj.Blob, Checksum: sum}
			shared = true
			return s.commitPartLocked(account, bucket, key, id, part)
		}
		// Opened under the lock, so that a replacement or delete of the
		// source cannot remove the file first; once open it stays
		// readable. An encrypted source is read decrypted.
		_, f, err := s.openLocked(ctx, src.Bucket, obj, src.CustomerKey)
		if err != nil {
			return err
		}
		if _, err := f.Seek(first, io.SeekStart); err != nil {
			f.Close()
			return fmt.Errorf("cloudstore: body of %s/%s: %w", src.Bucket, src.Key, err)
		}
		body = f
		return nil
	})
	if err != nil {
		return Part{}, err
	}
	if shared {
		part.Encryption = u.Encryption
		return part, nil
	}
	defer body.Close()
	var in io.Reader = io.LimitReader(body, length)
	var sum func() *Checksum
	if u.ChecksumAlgorithm != "" {
		in, sum = checksumming(u.ChecksumAlgorithm, in)
	}
	sb, err := s.storeBody(ctx, in, length, u.Encryption, dataKey, false)
	switch {
	case err != nil && ctx.Err() != nil:
		return Part{}, fmt.Errorf("cloudstore: copying a part: %w", ctx.Err())
	case errors.Is(err, ErrBody) || errors.Is(err, ErrTooLarge):
		// The source is our own file: a failure to read it is ours, not
		// the client's.
		return Part{}, fmt.Errorf("cloudstore: copying a part: %v", err)
	case err != nil:
		return Part{}, err
	case sb.size != length:
		s.removeBlob(sb.blob)
		return Part{}, fmt.Errorf("cloudstore: copying a part: %d bytes read, the source range holds %d", sb.size, length)
	}
	part = Part{Number: n, ETag: sb.etag, Size: sb.size, LastModified: now.UTC(), Blob: sb.blob, Prefix: sb.prefix}
	if sum != nil {
		part.Checksum = sum()
	}
	if err := s.commitPart(account, bucket, key, id, part); err != nil {
		s.discardBlob(sb.blob, err)
		return Part{}, err
	}
	part.Encryption = u.Encryption
	return part, nil
}

// PartSource is what UploadPartCopy copies from: a version of an object
// ("" for the current one), with the keys of SSE-C: the source's, and the
// upload's.
type PartSource struct {
	Bucket, Key, Version string
	// Account, if not "", owns the source's bucket when it is not the
	// upload's account (see CopyOptions.SourceAccount).
	Account     string
	CustomerKey []byte // the source's SSE-C key
	TargetKey   []byte // the upload's SSE-C key
}

// isMD5 reports whether etag is a hex MD5 (a single-part object's ETag),
// not a multipart ETag.
func isMD5(etag string) bool {
	if len(etag) != 2*md5.Size {
		return false
	}
	_, err := hex.DecodeString(etag)
	return err == nil
}

// Parts lists an upload's parts numbered above marker, at most max; more
// reports whether others follow.
func (s *Store) Parts(account, bucket, key, id string, marker, max int) (parts []Part, more bool, err error) {
	if _, err := s.upload(account, bucket, key, id); err != nil {
		return nil, false, err
	}
	all, err := s.partsOf(id)
	if err != nil {
		return nil, false, err
	}
	for _, p := range all {
		if p.Number <= marker {
			continue
		}
		if len(parts) == max {
			return parts, true, nil
		}
		parts = append(parts, p)
	}
	return parts, false, nil
}

func (s *Store) partsOf(id string) ([]Part, error) {
	var parts []Part
	err := s.scan(append(k(tPart, id), 0), func(_, v []byte) error {
		var p Part
		if err := json.Unmarshal(v, &p); err != nil {
			return err
		}
		parts = append(parts, p)
		return nil
	})
	return parts, err
}

// UploadListing is one page of a bucket's uploads in progress.
type UploadListing struct {
	Uploads                     []Upload
	Prefixes                    []string
	NextKeyMarker, NextIDMarker string
	Truncated                   bool
}

// Uploads lists the uploads in progress in account's bucket whose keys
// start with prefix, after (keyMarker, idMarker), in key order then
// upload id order, at most max entries (uploads plus common prefixes).
func (s *Store) Uploads(account, bucket, prefix, delimiter, keyMarker, idMarker string, max int) (UploadListing, error) {
	if _, err := s.Bucket(account, bucket); err != nil {
		return UploadListing{}, err
	}
	var l UploadListing
	base := append(k(tUploadBy, bucket), 0)
	err := s.scan(append(bytes.Clone(base), prefix...), func(key, _ []byte) error {
		objKey, id, _ := strings.Cut(string(key[len(base):]), "\x00")
		if keyMarker != "" && (objKey < keyMarker || objKey == keyMarker && (idMarker == "" || id <= idMarker)) {
			return nil
		}
		entry := ""
		if delimiter != "" {
			if i := strings.Index(objKey[len(prefix):], delimiter); i >= 0 {
				entry = objKey[:len(prefix)+i+len(delimiter)]
				if n := len(l.Prefixes); n > 0 && l.Prefixes[n-1] == entry {
					return nil
				}
				if keyMarker != "" && entry <= keyMarker {
					return nil
				}
			}
		}
		if len(l.Uploads)+len(l.Prefixes) == max {
			l.Truncated = true
			return errStop
		}
		if entry != "" {
			l.Prefixes = append(l.Prefixes, entry)
			l.NextKeyMarker, l.NextIDMarker = entry, ""
			return nil
		}
		var u Upload
		if err := s.getJSON(k(tUpload, id), &u); err != nil {
			return err
		}
		if u.Account != account {
			return nil // left by a former owner of the name, until the sweep
		}
		l.Uploads = append(l.Uploads, u)
		l.NextKeyMarker, l.NextIDMarker = objKey, id
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	if !l.Truncated {
		l.NextKeyMarker, l.NextIDMarker = "", ""
	}
	return l, err
}

var errStop = errors.New("stop")

// AbortUpload ends an upload and deletes its parts.
func (s *Store) AbortUpload(account, bucket, key, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, err := s.upload(account, bucket, key, id)
	if err != nil {
		return err
	}
	return s.dropUpload(u)
}

// dropUpload deletes an upload's records and its parts' bodies; s.mu held.
func (s *Store) dropUpload(u Upload) error {
	var t tx
	err := s.dropUploadTx(&t, u)
	for _, b := range t.applied {
		if serr := s.durable(b.SyncWait); serr != nil && err == nil {
			err = serr
		}
		b.Close()
	}
	s.unsynced -= len(t.applied)
	if err != nil {
		return err
	}
	s.dropUnreferenced(t.drop...)
	return nil
}

// dropUploadTx deletes an upload's records and lets its parts' bodies go,
// in t (s.mu held): a body an object now names stays.
func (s *Store) dropUploadTx(t *tx, u Upload) error {
	b := s.db.NewBatch()
	defer t.closeUnapplied(b)
	refs := refDeltas{}
	if err := s.dropUploadInto(b, refs, u); err != nil {
		return err
	}
	if err := refs.write(s, b, t); err != nil {
		return err
	}
	return s.apply(t, b)
}

// dropUploadInto adds to b the deletion of u's records, and to refs the
// release of its parts' bodies.
func (s *Store) dropUploadInto(b *pebble.Batch, refs refDeltas, u Upload) error {
	parts, err := s.partsOf(u.ID)
	if err != nil {
		return err
	}
	for _, p := range parts {
		refs.add(p.Blob, -1)
		if err := b.Delete(partKey(u.ID, p.Number), nil); err != nil {
			return err
		}
	}
	if err := b.Delete(k(tUpload, u.ID), nil); err != nil {
		return err
	}
	return b.Delete(k(tUploadBy, u.Bucket, u.Key, u.ID), nil)
}

// CompleteUpload makes the listed parts, in order, the object and ends
// the upload, if pre holds for the object it replaces (ErrPrecondition
// otherwise, and the upload stays). The object's ETag is S3's multipart
// ETag: the MD5 of the parts' MD5s, a dash and the number of parts. The
// parts' body files become the object's as they are (Object.Blobs): a
// completion writes no byte of the body again, and an encrypted upload's
// streams are kept without being decrypted (so an SSE-C upload completes
// without its key, as in S3). The check of the parts, the object's
// record and the end of the upload are one step under the store's lock.
func (s *Store) CompleteUpload(ctx context.Context, account, bucket, key, id string, list []CompletedPart, now time.Time, pre Preconditions) (Object, error) {
	return s.CompleteUploadWith(ctx, account, bucket, key, id, list, CompleteOptions{Now: now, If: pre})
}

// CompleteUploadWith is CompleteUpload with its checksum checks: a part
// listed with a checksum must have been uploaded with that one
// (ErrChecksumMismatch for another algorithm, ErrInvalidPart for another
// value); an upload created with a COMPOSITE checksum must list every
// part's (ErrPartChecksumMissing); one created with a FULL_OBJECT
// checksum gets the CRC of its whole body, which o.Checksum, if given,
// must equal.
func (s *Store) CompleteUploadWith(ctx context.Context, account, bucket, key, id string, list []CompletedPart, o CompleteOptions) (Object, error) {
	now, pre := o.Now, o.If
	if len(list) == 0 {
		return Object{}, ErrNoParts
	}
	for i, c := range list {
		if c.Number < 1 || c.Number > MaxPartNumber {
			return Object{}, ErrBadPartNumber
		}
		if i > 0 && c.Number <= list[i-1].Number {
			return Object{}, ErrPartOrder
		}
	}
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	var obj Object
	err := s.write(func(t *tx) error {
		u, bk, err := s.uploadIn(account, bucket, key, id)
		if err != nil {
			return err
		}
		var (
			blobs    []string
			etags    []byte
			sizes    []int64
			sums     []*Checksum
			prefixes [][]byte
			total    int64
		)
		for i, c := range list {
			var p Part
			if err = s.getJSON(partKey(id, c.Number), &p); errors.Is(err, ErrNotFound) || err == nil && strings.Trim(c.ETag, `"`) != p.ETag {
				err = fmt.Errorf("%w: part %d", ErrInvalidPart, c.Number)
			}
			if err != nil {
				return err
			}
			if i < len(list)-1 && p.Size < MinPartSize {
				return fmt.Errorf("%w: part %d holds %d bytes", ErrPartTooSmall, c.Number, p.Size)
			}
			if err := checkListedChecksum(u, c, p); err != nil {
				return err
			}
			blobs = append(blobs, p.Blob)
			sum, _ := hex.DecodeString(p.ETag)
			etags = append(etags, sum...)
			sizes = append(sizes, p.Size)
			sums = append(sums, p.Checksum)
			prefixes = append(prefixes, p.Prefix)
			total += p.Size
		}
		sum := md5.Sum(etags)
		obj = Object{Key: key, ETag: fmt.Sprintf("%s-%d", hex.EncodeToString(sum[:]), len(list)), ContentType: u.ContentType, Meta: u.Meta,
			LastModified: now.UTC(), Size: total, PartSizes: sizes, Blobs: blobs, Tags: tagsOrNil(u.Tags), Encryption: sealedAs(u.Encryption, prefixes...),
			Owner: u.Owner, ACL: u.ACL}
		// Every part has a checksum of one algorithm: the object's is
		// composite, or the whole body's CRC when the upload asked for
		// that, and the parts' are kept for part reads.
		if u.ChecksumType == FullObject {
			obj.Checksum = fullObjectChecksum(u.ChecksumAlgorithm, sums, sizes)
		} else {
			obj.Checksum = compositeChecksum(sums)
		}
		if c := o.Checksum; c != nil {
			if err := checkObjectChecksum(u, c, obj.Checksum, sums, sizes); err != nil {
				return err
			}
		}
		if alg := partsAlgorithm(sums); alg != "" {
			obj.PartChecksumAlgorithm = alg
			obj.PartChecksums = make([]string, len(sums))
			for i, c := range sums {
				obj.PartChecksums[i] = c.Value
			}
		}
		ev := Event{Type: EventObjectCreated, Time: obj.LastModified, Key: key, Size: total}
		// One commit records the object and ends the upload: a crash
		// leaves both or neither, never an object whose upload a retry
		// could complete again.
		return s.commitEventTx(t, bk, &obj, ev, pre, u.Lock, func(b *pebble.Batch, refs refDeltas) error {
			return s.dropUploadInto(b, refs, u)
		})
	})
	if err != nil {
		return Object{}, err
	}
	return obj, nil
}

// checkObjectChecksum checks given, the whole object's checksum a
// completion of u gives, against the object's, kept. An upload created
// without an algorithm has a composite checksum when its parts share one;
// given may then also be the full-object CRC of those parts. One that
// cannot be checked (the parts have no checksum of its algorithm) is
// ErrChecksumUnchecked rather than taken on trust.
func checkObjectChecksum(u Upload, given, kept *Checksum, parts []*Checksum, sizes []int64) error {
	switch {
	case sameChecksum(given, kept):
		return nil
	case u.ChecksumAlgorithm == "" && partsAlgorithm(parts) != given.Algorithm:
		return fmt.Errorf("%w: the object's %s", ErrChecksumUnchecked, given.Algorithm)
	case u.ChecksumAlgorithm == "" && sameChecksum(given, fullObjectChecksum(given.Algorithm, parts, sizes)):
		return nil
	}
	return fmt.Errorf("%w: the object's %s", ErrChecksumMismatch, given.Algorithm)
}

// checkListedChecksum checks the checksum a completion lists for part c
// against p, the part as uploaded into u.
func checkListedChecksum(u Upload, c CompletedPart, p Part) error {
	switch {
	case c.Checksum == nil:
		if u.ChecksumAlgorithm != "" && u.ChecksumType == Composite {
			return &PartChecksumError{Err: ErrPartChecksumMissing, Part: c.Number, Algorithm: u.ChecksumAlgorithm}
		}
	case p.Checksum == nil || p.Checksum.Algorithm != c.Checksum.Algorithm:
		return &PartChecksumError{Err: ErrChecksumMismatch, Part: c.Number, Algorithm: c.Checksum.Algorithm}
	case p.Checksum.Value != c.Checksum.Value:
		return fmt.Errorf("%w: part %d's %s", ErrInvalidPart, c.Number, c.Checksum.Algorithm)
	}
	return nil
}

// ChecksumAlgorithmError refuses a part whose checksum's algorithm (Got,
// "" for none) is not its upload's (Want).
type ChecksumAlgorithmError struct{ Want, Got string }

func (e *ChecksumAlgorithmError) Error() string {
	got := e.Got
	if got == "" {
		got = "none"
	}
	return fmt.Sprintf("cloudstore: the upload's parts have %s checksums; this one has %s", e.Want, got)
}

// PartChecksumError names the part and the algorithm of a completion's
// checksum error; it wraps ErrPartChecksumMissing or ErrChecksumMismatch.
type PartChecksumError struct {
	Err       error
	Part      int
	Algorithm string
}

func (e *PartChecksumError) Error() string {
	return fmt.Sprintf("%v: part %d, %s", e.Err, e.Part, e.Algorithm)
}

func (e *PartChecksumError) Unwrap() error { return e.Err }

// ExpireUploads aborts the uploads started before cutoff, and those whose
// bucket was deleted, as S3's AbortIncompleteMultipartUpload rule does.
func (s *Store) ExpireUploads(cutoff time.Time) (int, error) {
	var stale []Upload
	err := s.scan([]byte{tUpload}, func(_, v []byte) error {
		var u Upload
		if err := json.Unmarshal(v, &u); err != nil {
			return err
		}
		if _, err := s.Bucket(u.Account, u.Bucket); u.Initiated.Before(cutoff) || errors.Is(err, ErrNotFound) {
			stale = append(stale, u)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, u := range stale {
		// An upload completed or aborted since the scan is gone: dropping
		// it again would release its parts' bodies twice.
		ok, err := s.abortStale(u)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// unpin releases pinned body files, removing those nothing refers to any
// more.
func (s *Store) unpin(blobs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unpinLocked(blobs)
}

// unpinLocked is unpin with s.mu held.
func (s *Store) unpinLocked(blobs []string) {
	for _, b := range blobs {
		if s.pins[b]--; s.pins[b] <= 0 {
			delete(s.pins, b)
			s.dropUnreferenced(b)
		}
	}
}

// writebackEvery is how much of a body is written before its writeback
// is started.
const writebackEvery = 8 << 20

// bodyWriter writes a body file, starting the writeback of every
// writebackEvery bytes as they come, so that disk writes overlap the
// upload rather than all waiting for its final fsync. Only a file of the
// OS's (fd not vfs.InvalidFd) has a writeback to start. Like vfs.File's,
// its Write may modify p.
type bodyWriter struct {
	f                vfs.File
	fd               uintptr // f.Fd()
	written, started int64
}

func (w *bodyWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.written += int64(n)
	if w.written-w.started >= writebackEvery {
		if w.fd != vfs.InvalidFd {
			startWriteback(w.fd, w.started, w.written-w.started)
		}
		w.started = w.written
	}
	return n, err
}

// abortBucketUploads aborts account's uploads into bucket; s.mu held.
func (s *Store) abortBucketUploads(account, bucket string) {
	var ups []Upload
	base := append(k(tUploadBy, bucket), 0)
	s.scan(base, func(key, _ []byte) error {
		_, id, _ := strings.Cut(string(key[len(base):]), "\x00")
		var u Upload
		if err := s.getJSON(k(tUpload, id), &u); err == nil && u.Account == account {
			ups = append(ups, u)
		}
		return nil
	})
	for _, u := range ups {
		s.dropUpload(u)
	}
}

// partFiles reads the body files of an object completed from parts as
// one, at any offset. The files are pinned while it is open, so that a
// delete or overwrite of the object meanwhile cannot remove them, and
// opened one at a time as reads reach them, so that an object of 10 000
// parts never holds 10 000 descriptors.
type partFiles struct {
	s      *Store
	ids    []string
	starts []int64 // each file's first byte
	sizes  []int64 // each file's bytes
	cur    int     // the open file's index, or -1
	f      vfs.File
}

// openParts pins obj's body files (s.mu held) and returns a reader of
// them; key, when not nil, is the data key of the sse streams they hold,
// whose sizes differ from the parts' by its layers.
func (s *Store) openParts(obj Object, key []byte) (*partFiles, error) {
	if len(obj.PartSizes) != len(obj.Blobs) {
		return nil, fmt.Errorf("%d body files for %d parts", len(obj.Blobs), len(obj.PartSizes))
	}
	p := &partFiles{s: s, ids: slices.Clone(obj.Blobs), cur: -1}
	var off int64
	for _, n := range obj.PartSizes {
		if key != nil {
			n = sse.StreamSize(key, n)
		}
		p.starts = append(p.starts, off)
		p.sizes = append(p.sizes, n)
		off += n
	}
	for _, id := range p.ids {
		s.pins[id]++
	}
	return p, nil
}

// ReadAt implements io.ReaderAt across the files.
func (p *partFiles) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		i := sort.Search(len(p.starts), func(i int) bool { return p.starts[i] > off }) - 1
		if i < 0 || off >= p.starts[i]+p.sizes[i] {
			return n, io.EOF
		}
		if p.cur != i {
			if p.f != nil {
				p.f.Close()
				p.f = nil
			}
			f, err := p.s.fs.Open(p.s.blobPath(p.ids[i]))
			if err != nil {
				return n, fmt.Errorf("cloudstore: part body: %w", err)
			}
			p.f, p.cur = f, i
		}
		want := min(int64(len(b)-n), p.starts[i]+p.sizes[i]-off)
		m, err := p.f.ReadAt(b[n:n+int(want)], off-p.starts[i])
		n += m
		off += int64(m)
		if err != nil && !(err == io.EOF && int64(m) == want) {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // a file shorter than its part
			}
			return n, err
		}
	}
	return n, nil
}

// Close closes the open file and unpins the files, removing those that
// lost their last reference meanwhile.
func (p *partFiles) Close() error {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	return p.closeLocked()
}

// closeLocked is Close with s.mu held.
func (p *partFiles) closeLocked() error {
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
	if p.ids != nil {
		p.s.unpinLocked(p.ids)
		p.ids = nil
	}
	return nil
}
