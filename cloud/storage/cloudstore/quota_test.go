package cloudstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// TestBucketQuota: an account holds at most MaxBucketsPerAccount buckets;
// past that, a create is ErrQuota and changes nothing, while another
// account still creates, and a deleted bucket frees its place.
func TestBucketQuota(t *testing.T) {
	s := newStore(t)
	// All but one of the places, written in one batch as the index
	// CreateBucket keeps (k(tOwned, ...)): counting is what is tested.
	b := s.db.NewBatch()
	for i := range MaxBucketsPerAccount - 1 {
		b.Set(k(tOwned, "alice", fmt.Sprintf("filler-%05d", i)), nil, nil)
	}
	if err := s.commit(b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBucket("alice", "the-last", "", t0); err != nil {
		t.Fatalf("the last place: %v", err)
	}
	if _, err := s.CreateBucket("alice", "one-more", "", t0); !errors.Is(err, ErrQuota) {
		t.Fatalf("past the limit: %v", err)
	}
	if _, err := s.Bucket("alice", "one-more"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused bucket exists: %v", err)
	}
	if _, err := s.CreateBucket("bob", "one-more", "", t0); err != nil {
		t.Fatalf("another account: %v", err)
	}
	if err := s.DeleteBucket("alice", "the-last"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBucket("alice", "again", "", t0); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
}

// TestS3KeyQuota: an account holds at most MaxS3KeysPerAccount S3 keys.
func TestS3KeyQuota(t *testing.T) {
	s := newStore(t)
	if err := s.OpenSecrets(filepath.Join(t.TempDir(), "secret.key")); err != nil {
		t.Fatal(err)
	}
	var last S3Key
	for i := range MaxS3KeysPerAccount {
		key, _, err := s.CreateS3Key("alice", fmt.Sprintf("k%d", i), PermReadWrite, "*", t0)
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		last = key
	}
	if _, _, err := s.CreateS3Key("alice", "one-more", PermReadWrite, "*", t0); !errors.Is(err, ErrQuota) {
		t.Fatalf("past the limit: %v", err)
	}
	if keys, err := s.S3Keys("alice"); err != nil || len(keys) != MaxS3KeysPerAccount {
		t.Fatalf("after the refusal alice has %d keys (%v)", len(keys), err)
	}
	if _, _, err := s.CreateS3Key("bob", "k", PermReadWrite, "*", t0); err != nil {
		t.Fatalf("another account: %v", err)
	}
	if err := s.DeleteS3Key("alice", last.AccessKeyID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateS3Key("alice", "again", PermReadWrite, "*", t0); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
}
