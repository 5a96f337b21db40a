package cloudstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/cloud/storage/s3acl"
	"github.com/latticenet/lattice/cloud/storage/storagenames"
	"github.com/latticenet/lattice/internal/pebblekv"
)

// Object limits.
const (
	MaxKeyLen = storagenames.MaxKeyLen // bytes of UTF-8, as in S3
	// InlineMax is the largest body kept inside the metadata record: small
	// objects then cost one Pebble write, not a file and two fsyncs.
	InlineMax = 64 << 10
)

// ErrTooLarge reports a body over the limit given to PutObject.
var ErrTooLarge = errors.New("cloudstore: object too large")

// ErrBody wraps a failure to read an upload's body (a client that went
// away, a truncated form); nothing was stored.
var ErrBody = errors.New("cloudstore: reading the body")

// Object is an object's metadata.
type Object struct {
	Key          string    `json:"key"`
	Size         int64     `json:"size"`
	ETag         string    `json:"etag"` // hex MD5 of the body, as S3 gives single-part objects
	ContentType  string    `json:"content_type"`
	LastModified time.Time `json:"last_modified"`
	// Meta holds what S3 clients set and get back: x-amz-meta-* user
	// metadata (lower-case names without the prefix) under "x-amz-meta-",
	// and the standard headers Cache-Control, Content-Disposition,
	// Content-Encoding, Content-Language and Expires under their
	// canonical names.
	Meta   map[string]string `json:"meta,omitempty"`
	Blob   string            `json:"blob,omitempty"`   // body file id, when not inline
	Inline []byte            `json:"inline,omitempty"` // body, when small
	// Blobs are the body files of an object completed from a multipart
	// upload: its parts' files, in order, kept as they were uploaded
	// (PartSizes says how much each holds), so that a completion writes
	// no byte again. Blob and Inline are then empty.
	Blobs []string `json:"blobs,omitempty"`
	// PartSizes are the sizes of the parts, in order, of an object
	// completed from a multipart upload, for reads of one part
	// (partNumber) and GetObjectAttributes. Objects uploaded whole have
	// none; so have objects completed before the store kept them, whose
	// ETag alone tells they had parts (MultipartCount).
	PartSizes []int64 `json:"part_sizes,omitempty"`
	// Checksum is the object's additional checksum, if it was uploaded
	// with one. PartChecksums are its parts' values, all of
	// PartChecksumAlgorithm, when every part was uploaded with a checksum
	// of that one algorithm.
	Checksum              *Checksum `json:"checksum,omitempty"`
	PartChecksums         []string  `json:"part_checksums,omitempty"`
	PartChecksumAlgorithm string    `json:"part_checksum_algorithm,omitempty"`
	// Tags are the object's tag set (S3 object tagging), at most
	// MaxObjectTags; records written before tags were kept have none.
	Tags map[string]string `json:"tags,omitempty"`
	// VersionID is the version's id in a bucket that keeps versions; ""
	// is the null version (every object of a bucket never versioned).
	// Seq orders the versions of a key; DeleteMarker marks a version that
	// is a delete marker (no body). See versions.go.
	VersionID    string `json:"version_id,omitempty"`
	Seq          uint64 `json:"seq,omitempty"`
	DeleteMarker bool   `json:"delete_marker,omitempty"`
	// Encryption is how the body is encrypted at rest; nil for none.
	Encryption *Encryption `json:"encryption,omitempty"`
	// Owner is the account that owns the object when it is not the
	// bucket's owner: its writer, in a bucket whose ACLs are enabled
	// (Bucket.Ownership). Under BucketOwnerEnforced the bucket owner owns
	// every object, whatever Owner says.
	Owner string `json:"owner,omitempty"`
	// ACL is the object's ACL when one was set (nil: its owner's
	// FULL_CONTROL alone). It takes effect while the bucket's ACLs are
	// enabled.
	ACL []s3acl.Grant `json:"acl,omitzero"`
	// Retention and LegalHold are the version's Object Lock
	// (objectlock.go): none, in a bucket without it. LegalHoldSet tells
	// that the version was given a legal hold status, ON or OFF, by its
	// upload or later: S3 names the status only of such a version
	// (LegalHoldStatus).
	Retention    *Retention `json:"retention,omitempty"`
	LegalHold    bool       `json:"legal_hold,omitempty"`
	LegalHoldSet bool       `json:"legal_hold_set,omitempty"`
	// Versioned, not stored, tells whether the object was read from (or
	// written to) a bucket that keeps versions, where S3 names even the
	// null version to clients.
	Versioned bool `json:"-"`
}

// bodyFiles are the ids of the body files obj's body is in, in order.
func (o Object) bodyFiles() []string {
	if len(o.Blobs) > 0 {
		return o.Blobs
	}
	if o.Blob != "" {
		return []string{o.Blob}
	}
	return nil
}

// MultipartCount is the number of parts an object was completed from, as
// its ETag tells ("…-N"), or 0 for an object uploaded whole.
func (o Object) MultipartCount() int {
	_, n, ok := strings.Cut(o.ETag, "-")
	if !ok {
		return 0
	}
	c, err := strconv.Atoi(n)
	if err != nil || c < 1 {
		return 0
	}
	return c
}

// Part returns the offset and size of part n (1-based) of an object
// completed from a multipart upload whose part sizes are kept; ok is false
// when there is no such part or the sizes are not known.
func (o Object) Part(n int) (offset, size int64, ok bool) {
	if n < 1 || n > len(o.PartSizes) {
		return 0, 0, false
	}
	for _, s := range o.PartSizes[:n-1] {
		offset += s
	}
	return offset, o.PartSizes[n-1], true
}

// PutOptions describe an upload beyond its key and body.
type PutOptions struct {
	ContentType string
	Meta        map[string]string
	Max         int64     // the body may hold at most Max bytes
	Now         time.Time // the object's LastModified
	If          Preconditions
	// Checksum, if not nil, is called once the body was read to its
	// end, and gives the checksum to keep with the object (nil for
	// none).
	Checksum func() *Checksum
	// Tags is the new object's tag set (none when empty).
	Tags map[string]string
	// Encrypt, if not nil, encrypts the body at rest; without it, the
	// bucket's default encryption applies.
	Encrypt *SSE
	// ChecksumAlgorithm and ChecksumType are, for CreateUpload only, the
	// checksum the upload's parts and object have (Upload's fields of
	// those names; UploadChecksumType says which go together).
	ChecksumAlgorithm, ChecksumType string
	// Owner and ACL are the new object's (Object's fields of those
	// names).
	Owner string
	ACL   []s3acl.Grant
	// Lock, if not nil, is the new version's Object Lock; without it,
	// the bucket's default retention applies (objectlock.go).
	Lock *Lock
}

// ErrPrecondition is returned by a conditional write whose condition does
// not hold; nothing was written.
var ErrPrecondition = errors.New("cloudstore: the write's precondition does not hold")

// Preconditions make a write depend on the object it would replace, as
// S3's If-Match and If-None-Match on PutObject and on multipart completion
// do. They are checked under the store's lock, in the same atomic step as
// the write, so that of two writes with If-None-Match: * only one creates
// the object.
type Preconditions struct {
	// IfMatch is the ETag (unquoted) the current object must have; "*"
	// asks only that one exists. When none exists, the error wraps both
	// ErrPrecondition and ErrNotFound.
	IfMatch string
	// IfNoneMatch "*" asks that no object exists under the key.
	IfNoneMatch string
	// IfMatchSize, when set, is the size in bytes the current object
	// must have, and IfMatchModified, when set, the time it must have
	// been last modified, to the second (HTTP dates have no finer
	// precision). They are for deletes only (S3's x-amz-if-match-size
	// and x-amz-if-match-last-modified-time), and unlike IfMatch they
	// hold when there is no object: deleting nothing succeeds.
	IfMatchSize     *int64
	IfMatchModified *time.Time
}

// check tests the preconditions against the object in place (exists
// false when there is none).
func (p Preconditions) check(old Object, exists bool) error {
	if p.IfNoneMatch == "*" && exists {
		return fmt.Errorf("%w: an object exists under the key (If-None-Match: *)", ErrPrecondition)
	}
	if p.IfMatch != "" {
		if !exists {
			return fmt.Errorf("%w: %w: no object to match (If-Match)", ErrPrecondition, ErrNotFound)
		}
		if p.IfMatch != "*" && p.IfMatch != old.ETag {
			return fmt.Errorf("%w: the object's ETag is %s (If-Match)", ErrPrecondition, old.ETag)
		}
	}
	if !exists {
		return nil
	}
	if p.IfMatchSize != nil && *p.IfMatchSize != old.Size {
		return fmt.Errorf("%w: the object's size is %d bytes (x-amz-if-match-size)", ErrPrecondition, old.Size)
	}
	if p.IfMatchModified != nil && !p.IfMatchModified.Truncate(time.Second).Equal(old.LastModified.Truncate(time.Second)) {
		return fmt.Errorf("%w: the object was last modified at %s (x-amz-if-match-last-modified-time)",
			ErrPrecondition, old.LastModified.UTC().Format(time.RFC3339))
	}
	return nil
}

const (
	tObject = 'O' // O | bucket | 0 | key -> Object
	tBlob   = 'R' // R | blob id -> reference count (decimal)
)

// Put stores body as key in account's bucket, replacing any object there,
// as o says. When it returns nil the object is on disk (fsync'd); until
// then it is not visible, and an interrupted upload leaves nothing that
// OpenBlobs does not remove. A body of up to InlineMax bytes is
// read into memory and kept in the metadata record, so a small object
// costs one Pebble commit and no file; a larger one is written to a file
// that is fsync'd before the record naming it is committed.
func (s *Store) Put(ctx context.Context, account, bucket, key string, body io.Reader, o PutOptions) (Object, error) {
	if err := storagenames.ValidObjectKey(key); err != nil {
		return Object{}, err
	}
	if err := checkTags(o.Tags, MaxObjectTags); err != nil {
		return Object{}, err
	}
	bk, err := s.Bucket(account, bucket)
	if err != nil {
		return Object{}, err
	}
	if o.Lock != nil && bk.ObjectLock == nil {
		return Object{}, ErrNoObjectLock // before the body is read; the commit checks it again
	}
	if o.If != (Preconditions{}) {
		// Fail before the body is read when the condition already does
		// not hold; the commit checks it again, atomically. The bucket
		// was read just above.
		old, err := s.objectIn(bucket, key)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return Object{}, err
		}
		if err := o.If.check(old, err == nil); err != nil {
			return Object{}, err
		}
	}
	target := o.Encrypt
	if target == nil {
		target = defaultSSE(bk)
	}
	enc, dataKey, err := s.newEncryption(ctx, target, bk.Account, bucket, key)
	if err != nil {
		return Object{}, err
	}
	sb, err := s.storeBody(ctx, body, o.Max, enc, dataKey, true)
	if err != nil {
		return Object{}, err
	}
	obj := Object{Key: key, ContentType: o.ContentType, Meta: o.Meta, LastModified: o.Now.UTC(), Tags: tagsOrNil(o.Tags), Owner: o.Owner, ACL: o.ACL,
		Size: sb.size, ETag: sb.etag, Inline: sb.inline, Blob: sb.blob, Encryption: sealedAs(enc, sb.prefix)}
	if o.Checksum != nil {
		obj.Checksum = o.Checksum()
	}
	if err := s.commitObject(account, bucket, &obj, o.If, o.Lock); err != nil {
		s.discardBlob(obj.Blob, err)
		return Object{}, err
	}
	return obj, nil
}

// commitObject records obj in the bucket, replacing what was there if pre
// allows, and keeps the bucket's counters and the body reference counts
// right.
func (s *Store) commitObject(account, bucket string, obj *Object, pre Preconditions, lock *Lock) error {
	return s.write(func(t *tx) error {
		bk, err := s.Bucket(account, bucket)
		if err != nil {
			return err // deleted while the body was uploading
		}
		return s.commitEventTx(t, bk, obj, Event{Type: EventObjectCreated, Time: obj.LastModified, Key: obj.Key, Size: obj.Size}, pre, lock, nil)
	})
}

// commitEventTx records obj in bk, logging ev for the change, in t (s.mu
// held; bk read under it, in t). In a bucket that keeps versions, obj becomes a new version (its
// VersionID and Seq are set here) and the one it replaces is kept, as
// versionWrite.retire says. Its Object Lock is lock, or the bucket's
// default retention (applyLock). also, when set, adds to the same batch
// and reference counts what must change with the object in one commit.
func (s *Store) commitEventTx(t *tx, bk Bucket, obj *Object, ev Event, pre Preconditions, lock *Lock, also func(*pebble.Batch, refDeltas) error) error {
	bucket := bk.Name
	if err := applyLock(bk, obj, lock); err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer t.closeUnapplied(b)
	var old Object
	err := s.getJSON(k(tObject, bucket, obj.Key), &old)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	exists := err == nil
	if err := pre.check(old, exists); err != nil {
		return err
	}
	refs := refDeltas{}
	obj.VersionID, obj.Seq = "", 0
	if bk.Versioning != "" {
		w := versionWrite{s: s, b: b, bk: &bk, refs: refs}
		seq, err := w.retire(obj.Key, old, exists)
		if err != nil {
			return err
		}
		obj.Seq = seq
		if bk.Versioning == VersioningEnabled {
			obj.VersionID = newVersionID(seq)
		}
	} else if exists {
		bk.Objects--
		bk.Bytes -= old.Size
		refs.addFiles(old, -1)
	}
	refs.addFiles(*obj, 1)
	if also != nil {
		if err := also(b, refs); err != nil {
			return err
		}
	}
	if err := refs.write(s, b, t); err != nil {
		return err
	}
	bk.Objects++
	bk.Bytes += obj.Size
	bk.UpdatedAt = obj.LastModified
	if err := setJSON(b, k(tObject, bucket, obj.Key), obj); err != nil {
		return err
	}
	if err := setJSON(b, k(tBucket, bucket), bk); err != nil {
		return err
	}
	ev.VersionID = obj.VersionID
	if err := s.logEventsLocked(b, bucket, ev); err != nil {
		return err
	}
	if err := s.apply(t, b); err != nil {
		return err
	}
	obj.Versioned = bk.Versioning != ""
	return nil
}

// Object returns an object's metadata.
func (s *Store) Object(account, bucket, key string) (Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.objectLocked(account, bucket, key)
}

// objectLocked is Object with s.mu held: the ownership check and the read
// see the same bucket.
func (s *Store) objectLocked(account, bucket, key string) (Object, error) {
	if _, err := s.Bucket(account, bucket); err != nil {
		return Object{}, err
	}
	var obj Object
	err := s.getJSON(k(tObject, bucket, key), &obj)
	return obj, err
}

// objectIn returns key's current object in bucket, for a caller that has
// read the bucket (and so checked its owner) already.
func (s *Store) objectIn(bucket, key string) (Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var obj Object
	err := s.getJSON(k(tObject, bucket, key), &obj)
	return obj, err
}

// Body is an open object body.
type Body interface {
	io.ReadSeeker
	io.Closer
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// OpenObject returns an object and its body; the caller closes the body.
func (s *Store) OpenObject(ctx context.Context, account, bucket, key string) (Object, Body, error) {
	// Under the lock, so that an overwrite or delete cannot remove the
	// body file between reading the record and opening the file; once
	// open, the file stays readable even if it is then removed.
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, err := s.objectLocked(account, bucket, key)
	if err != nil {
		return Object{}, nil, err
	}
	return s.openLocked(ctx, bucket, obj, nil)
}

// openLocked opens obj's body (s.mu held), decrypting it with what
// customerKey unseals, or the store's key.
func (s *Store) openLocked(ctx context.Context, bucket string, obj Object, customerKey []byte) (Object, Body, error) {
	key, err := s.dataKey(ctx, obj.Encryption, customerKey)
	if err != nil {
		return Object{}, nil, err
	}
	if len(obj.Blobs) > 0 {
		files, err := s.openParts(obj, key)
		if err != nil {
			return Object{}, nil, fmt.Errorf("cloudstore: body of %s/%s: %w", bucket, obj.Key, err)
		}
		if key == nil {
			return obj, sectionBody{io.NewSectionReader(files, 0, obj.Size), files}, nil
		}
		body, err := decryptBody(key, files, files, streamSizes(obj), obj.Encryption.Streams)
		if err != nil {
			files.closeLocked()
			return Object{}, nil, fmt.Errorf("cloudstore: body of %s/%s: %w", bucket, obj.Key, err)
		}
		return obj, body, nil
	}
	if key != nil {
		var src io.ReaderAt = bytes.NewReader(obj.Inline)
		var closer io.Closer
		if obj.Blob != "" {
			f, err := s.fs.Open(s.blobPath(obj.Blob))
			if err != nil {
				return Object{}, nil, fmt.Errorf("cloudstore: body of %s/%s: %w", bucket, obj.Key, err)
			}
			src, closer = f, f
		}
		body, err := decryptBody(key, src, closer, streamSizes(obj), obj.Encryption.Streams)
		if err != nil {
			if closer != nil {
				closer.Close()
			}
			return Object{}, nil, fmt.Errorf("cloudstore: body of %s/%s: %w", bucket, obj.Key, err)
		}
		return obj, body, nil
	}
	if obj.Blob == "" {
		return obj, nopCloser{bytes.NewReader(obj.Inline)}, nil
	}
	body, err := s.openBody(obj.Blob, obj.Size)
	if err != nil {
		return Object{}, nil, fmt.Errorf("cloudstore: body of %s/%s: %w", bucket, obj.Key, err)
	}
	return obj, body, nil
}

// DeleteOptions describe a delete beyond its key.
type DeleteOptions struct {
	// If makes the delete depend on the key's current object, checked in
	// the same atomic step as the delete: S3's conditional delete,
	// If-Match with the object's ETag, or * for any object, and its size
	// and last modification time. IfNoneMatch is not meaningful here.
	// With IfMatch, a key without a current object (none, or a delete
	// marker) fails with an error wrapping both ErrPrecondition and
	// ErrNotFound, and nothing is deleted or marked; the size and time
	// conditions hold for a key without one.
	If Preconditions
}

// Delete deletes an object and says what it did: in a bucket that keeps
// versions, the latest version becomes a delete marker (made even when
// the key has no current version, as in S3); in a suspended bucket the
// marker is the null version, and replaces the one there was. Elsewhere
// the object is deleted; a missing one is ErrNotFound.
func (s *Store) Delete(account, bucket, key string, o DeleteOptions) (Deletion, error) {
	return s.deleteObject(account, bucket, key, Event{Type: EventObjectDeleted, Time: s.now()}, o.If)
}

func (s *Store) deleteObject(account, bucket, key string, ev Event, pre Preconditions) (Deletion, error) {
	var del Deletion
	err := s.write(func(t *tx) error {
		var err error
		del, err = s.deleteObjectTx(t, account, bucket, key, ev, pre)
		return err
	})
	return del, err
}

func (s *Store) deleteObjectTx(t *tx, account, bucket, key string, ev Event, pre Preconditions) (Deletion, error) {
	bk, err := s.Bucket(account, bucket)
	if err != nil {
		return Deletion{}, err
	}
	var obj Object
	err = s.getJSON(k(tObject, bucket, key), &obj)
	exists := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Deletion{}, err
	}
	if perr := pre.check(obj, exists); perr != nil {
		return Deletion{}, perr
	}
	if err != nil && bk.Versioning == "" {
		return Deletion{}, err
	}
	b := s.db.NewBatch()
	defer t.closeUnapplied(b)
	refs := refDeltas{}
	var del Deletion
	if bk.Versioning != "" {
		w := versionWrite{s: s, b: b, bk: &bk, refs: refs}
		seq, err := w.retire(key, obj, exists)
		if err != nil {
			return Deletion{}, err
		}
		marker := Object{Key: key, LastModified: ev.Time.UTC(), Seq: seq, DeleteMarker: true}
		if bk.Versioning == VersioningEnabled {
			marker.VersionID = newVersionID(seq)
		}
		if err := w.keep(marker); err != nil {
			return Deletion{}, err
		}
		del = Deletion{VersionID: marker.VersionID, DeleteMarker: true, Versioned: true}
		ev.VersionID = marker.VersionID
	} else {
		if err := b.Delete(k(tObject, bucket, key), nil); err != nil {
			return Deletion{}, err
		}
		refs.addFiles(obj, -1)
		bk.Objects--
		bk.Bytes -= obj.Size
	}
	if err := refs.write(s, b, t); err != nil {
		return Deletion{}, err
	}
	if err := setJSON(b, k(tBucket, bucket), bk); err != nil {
		return Deletion{}, err
	}
	if exists {
		if err := b.Delete(topKey(bucket, key), nil); err != nil {
			return Deletion{}, err
		}
	}
	ev.Key, ev.Size = key, obj.Size
	if err := s.logEventsLocked(b, bucket, ev); err != nil {
		return Deletion{}, err
	}
	return del, s.apply(t, b)
}

// CopyOptions say what a copy takes other than from its source.
type CopyOptions struct {
	// Replace, if not nil, gives the copy its content type and metadata
	// instead of the source's.
	Replace *PutOptions
	// ReplaceTags gives the copy Tags (none when empty) instead of the
	// source's tags.
	ReplaceTags bool
	Tags        map[string]string
	// SourceVersion, if not "", copies that version of the source (as
	// ObjectVersion names it) rather than its current one.
	SourceVersion string
	// SourceKey is the source's SSE-C key, if it is encrypted with one.
	SourceKey []byte
	// Encrypt is how the copy is encrypted. Without it, KeepEncryption
	// keeps the source's mode (with SourceKey for SSE-C); otherwise the
	// destination bucket's default applies. A copy encrypted as its
	// source (SSE-S3, or SSE-C with the same key) shares its body; any
	// other is decrypted and written anew.
	Encrypt        *SSE
	KeepEncryption bool
	// If makes the copy depend on the object it would replace at the
	// destination, as Put's do (S3's If-Match and If-None-Match on
	// CopyObject), checked in the step that writes it.
	If Preconditions
	// Owner and ACL are the copy's (Object's fields of those names), not
	// the source's.
	Owner string
	ACL   []s3acl.Grant
	// CheckSource, if not nil, judges the source version under the lock
	// that reads it (a caller's permission to read it): an error refuses
	// the copy, which then writes nothing.
	CheckSource func(Object) error
	// SourceAccount, if not "", is the account whose bucket the source
	// is in, when it is not the destination's (a copy another account's
	// grant allows; the caller has judged it).
	SourceAccount string
	// Lock is the copy's Object Lock, as Put's; the source's retention
	// and legal hold are never copied, as in S3.
	Lock *Lock
	// WebsiteRedirect, when not nil, is the copy's website redirect
	// (MetaWebsiteRedirect; "" for none) rather than its source's: S3's
	// CopyObject never keeps the source's, the redirect belonging to the
	// object, not to its content. Nil keeps the metadata as the copy has
	// it (the source's, or Replace's).
	WebsiteRedirect *string
}

// MetaWebsiteRedirect is the metadata entry of an object's website
// redirect (S3's x-amz-website-redirect-location), kept with its other
// headers.
const MetaWebsiteRedirect = "X-Amz-Website-Redirect-Location"

// Copy copies an object to another key, in the same bucket or in another
// of the account's buckets (or, with o.SourceAccount, from another
// account's), sharing its body, as o says.
func (s *Store) Copy(ctx context.Context, account, srcBucket, src, dstBucket, dst string, now time.Time, o CopyOptions) (Object, error) {
	if err := storagenames.ValidObjectKey(dst); err != nil {
		return Object{}, err
	}
	if o.ReplaceTags {
		if err := checkTags(o.Tags, MaxObjectTags); err != nil {
			return Object{}, err
		}
	}
	// Read the source and apply the copy under one lock, so that the
	// source's body cannot be deleted in between. A copy that encrypts
	// otherwise than its source opens the source's body under the lock
	// and writes the new one after it.
	var (
		obj     Object
		target  *SSE
		rewrite Body
		owner   string // the destination bucket's
	)
	srcAccount := account
	if o.SourceAccount != "" {
		srcAccount = o.SourceAccount
	}
	err := s.write(func(t *tx) error {
		var err error
		if obj, err = s.versionLocked(srcAccount, srcBucket, src, o.SourceVersion); err != nil {
			return err
		}
		if obj.DeleteMarker {
			return &DeleteMarkerError{VersionID: obj.VersionID}
		}
		if o.CheckSource != nil {
			if err := o.CheckSource(obj); err != nil {
				return err
			}
		}
		dbk, err := s.Bucket(account, dstBucket)
		if err != nil {
			return err
		}
		if o.If != (Preconditions{}) {
			// Checked here too, so that a copy bound to fail is not
			// rewritten first.
			var cur Object
			err := s.getJSON(k(tObject, dstBucket, dst), &cur)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			if err := o.If.check(cur, err == nil); err != nil {
				return err
			}
		}
		if _, err := s.dataKey(ctx, obj.Encryption, o.SourceKey); err != nil {
			return err
		}
		switch target = o.Encrypt; {
		case target != nil:
		case o.KeepEncryption && obj.Encryption != nil:
			target = &SSE{Mode: obj.Encryption.Mode, CustomerKey: o.SourceKey, KMSKey: obj.Encryption.KeyID, BucketKey: obj.Encryption.BucketKey}
			if obj.Encryption.UsesKMS() {
				target.Context = kmsPairs(obj.Encryption.Context)
			}
		default:
			target = defaultSSE(dbk)
		}
		owner = dbk.Account
		obj.Key, obj.LastModified = dst, now.UTC()
		obj.Owner, obj.ACL = o.Owner, o.ACL
		if o.Replace != nil {
			obj.ContentType, obj.Meta = o.Replace.ContentType, o.Replace.Meta
		}
		if o.WebsiteRedirect != nil {
			obj.Meta = maps.Clone(obj.Meta)
			delete(obj.Meta, MetaWebsiteRedirect)
			if *o.WebsiteRedirect != "" {
				if obj.Meta == nil {
					obj.Meta = map[string]string{}
				}
				obj.Meta[MetaWebsiteRedirect] = *o.WebsiteRedirect
			}
		}
		if o.ReplaceTags {
			obj.Tags = tagsOrNil(o.Tags)
		}
		if !sameKey(obj.Encryption, o.SourceKey, target) {
			_, rewrite, err = s.openLocked(ctx, srcBucket, obj, o.SourceKey)
			return err
		}
		return s.commitEventTx(t, dbk, &obj, copyEvent(obj, srcBucket, src, dstBucket, now), o.If, o.Lock, nil)
	})
	if err != nil || rewrite == nil {
		if err != nil {
			return Object{}, err
		}
		return obj, nil
	}
	defer rewrite.Close()
	enc, dataKey, err := s.newEncryption(ctx, target, owner, dstBucket, dst)
	if err != nil {
		return Object{}, err
	}
	sb, err := s.storeBody(ctx, rewrite, obj.Size, enc, dataKey, true)
	switch {
	case err != nil && ctx.Err() != nil:
		return Object{}, fmt.Errorf("cloudstore: copying: %w", ctx.Err())
	case errors.Is(err, ErrBody) || errors.Is(err, ErrTooLarge):
		return Object{}, fmt.Errorf("cloudstore: copying: %v", err) // our own file: ours, not the client's
	case err != nil:
		return Object{}, err
	}
	// One body now, of one stream: the copy of an object made of parts
	// is a single-part object, as in S3, and keeps only a checksum of
	// the whole object.
	if len(obj.PartSizes) > 0 || obj.MultipartCount() > 0 {
		obj.Checksum = nil
	}
	obj.Inline, obj.Blob, obj.Blobs, obj.Size, obj.ETag, obj.Encryption = sb.inline, sb.blob, nil, sb.size, sb.etag, sealedAs(enc, sb.prefix)
	obj.PartSizes, obj.PartChecksums, obj.PartChecksumAlgorithm = nil, nil, ""
	err = s.write(func(t *tx) error {
		dbk, err := s.Bucket(account, dstBucket)
		if err != nil {
			return err // deleted while the body was rewritten
		}
		return s.commitEventTx(t, dbk, &obj, copyEvent(obj, srcBucket, src, dstBucket, now), o.If, o.Lock, nil)
	})
	if err != nil {
		s.discardBlob(obj.Blob, err)
		return Object{}, err
	}
	return obj, nil
}

// copyEvent is the event of a copy of src into obj.
func copyEvent(obj Object, srcBucket, src, dstBucket string, now time.Time) Event {
	ev := Event{Type: EventObjectCopied, Time: now, Key: obj.Key, Size: obj.Size, SourceKey: src}
	if srcBucket != dstBucket {
		ev.SourceBucket = srcBucket
	}
	return ev
}

// Listing is one page of a bucket listing.
type Listing struct {
	Objects    []Object // metadata only: Inline is cleared
	Prefixes   []string // common prefixes, with a delimiter
	NextMarker string   // continue after this key; "" when done
}

// ListObjects lists keys after marker that start with prefix, in key
// order, up to max entries (objects plus common prefixes). With a
// delimiter, keys that hold it after the prefix roll up into one common
// prefix each, as in S3.
func (s *Store) ListObjects(account, bucket, prefix, delimiter, marker string, max int) (Listing, error) {
	l, _, err := s.list(account, bucket, prefix, delimiter, marker, 0, max, false)
	return l, err
}

// ListPage is ListObjects for pages: it skips the first skip entries
// (objects and common prefixes, in key order) after marker, lists the
// next n, and counts them all. Only the page is decoded and kept, so a
// page of a large bucket costs a walk over its keys, not its records in
// memory. NextMarker is set when entries follow the page.
func (s *Store) ListPage(account, bucket, prefix, delimiter, marker string, skip, n int) (Listing, int, error) {
	return s.list(account, bucket, prefix, delimiter, marker, skip, n, true)
}

// list walks the entries after marker, keeps those from skip on, at most
// max of them, and with countAll goes on to count the rest.
func (s *Store) list(account, bucket, prefix, delimiter, marker string, skip, max int, countAll bool) (Listing, int, error) {
	// One snapshot for the ownership check and the listing, so both see
	// the same bucket even if its name is freed and taken meanwhile.
	snap := s.db.NewSnapshot()
	defer snap.Close()
	var bk Bucket
	if err := getJSONFrom(snap, k(tBucket, bucket), &bk); err != nil {
		return Listing{}, 0, err
	}
	if bk.Account != account {
		return Listing{}, 0, ErrNotFound
	}
	var l Listing
	base := append(k(tObject, bucket), 0)
	lower := append(bytes.Clone(base), prefix...)
	if marker != "" {
		// Strictly after marker; a marker that is a common prefix (the
		// NextMarker of a delimited page) skips everything under it.
		after := append(append(bytes.Clone(base), marker...), 0)
		if delimiter != "" && strings.HasPrefix(marker, prefix) && strings.HasSuffix(marker[len(prefix):], delimiter) {
			// Of base and marker together: base ends in 0, so this
			// has a successor even when the marker is all 0xff.
			after = pebblekv.PrefixEnd(append(bytes.Clone(base), marker...))
		}
		if bytes.Compare(after, lower) > 0 {
			lower = after
		}
	}
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: pebblekv.PrefixEnd(append(bytes.Clone(base), prefix...))})
	if err != nil {
		return l, 0, fmt.Errorf("cloudstore: %w", err)
	}
	defer it.Close()
	n, kept := 0, 0 // entries seen, entries kept
	for ok := it.First(); ok; n++ {
		key := string(it.Key()[len(base):])
		if kept == max && l.NextMarker == "" && n >= skip {
			l.NextMarker = lastOf(l)
			if !countAll {
				break
			}
		}
		keep := n >= skip && kept < max
		if delimiter != "" {
			if i := strings.Index(key[len(prefix):], delimiter); i >= 0 {
				cp := key[:len(prefix)+i+len(delimiter)]
				if keep {
					l.Prefixes = append(l.Prefixes, cp)
					kept++
				}
				// Skip every key under this common prefix.
				ok = it.SeekGE(pebblekv.PrefixEnd(append(bytes.Clone(base), cp...)))
				continue
			}
		}
		if keep {
			var meta objectMeta // no Inline field: bodies are not decoded
			if err := json.Unmarshal(it.Value(), &meta); err != nil {
				return l, n, err
			}
			l.Objects = append(l.Objects, Object(meta.withoutBody()))
			kept++
		}
		ok = it.Next()
	}
	return l, n, it.Error()
}

// objectMeta is Object without its inline body, for listings.
type objectMeta struct {
	Key          string            `json:"key"`
	Size         int64             `json:"size"`
	ETag         string            `json:"etag"`
	ContentType  string            `json:"content_type"`
	LastModified time.Time         `json:"last_modified"`
	Meta         map[string]string `json:"meta,omitempty"`
	Blob         string            `json:"blob,omitempty"`
	Blobs        []string          `json:"blobs,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	Owner        string            `json:"owner,omitempty"`
}

func (m objectMeta) withoutBody() Object {
	return Object{Key: m.Key, Size: m.Size, ETag: m.ETag, ContentType: m.ContentType, LastModified: m.LastModified, Meta: m.Meta, Blob: m.Blob, Blobs: m.Blobs,
		Tags: m.Tags, Owner: m.Owner}
}

// lastOf is the greatest key or common prefix listed.
func lastOf(l Listing) string {
	last := ""
	if len(l.Objects) > 0 {
		last = l.Objects[len(l.Objects)-1].Key
	}
	if len(l.Prefixes) > 0 && l.Prefixes[len(l.Prefixes)-1] > last {
		last = l.Prefixes[len(l.Prefixes)-1]
	}
	return last
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
