package cloudstore

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestBucketConfig: a configuration is kept per bucket and kind, a refused
// change changes nothing, and it goes with its bucket.
func TestBucketConfig(t *testing.T) {
	s := tagStore(t)
	if data, err := s.BucketConfig("alice", "tags", ConfigPolicy); err != nil || data != nil {
		t.Fatalf("a bucket without a policy: got %q, %v, want nil", data, err)
	}
	policy, cors := []byte(`{"Statement":[]}`), []byte(`<CORSConfiguration/>`)
	if err := s.SetBucketConfig("alice", "tags", ConfigPolicy, policy); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBucketConfig("alice", "tags", ConfigCORS, cors); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, account, bucket string
		kind                  ConfigKind
		data                  []byte
		want                  error
	}{
		{"too large", "alice", "tags", ConfigPolicy, []byte(strings.Repeat("x", MaxConfigSize+1)), ErrConfigTooLarge},
		{"another account's bucket", "bob", "tags", ConfigPolicy, []byte("x"), ErrNotFound},
		{"another account's bucket, cleared", "bob", "tags", ConfigCORS, nil, ErrNotFound},
		{"a missing bucket", "alice", "nope", ConfigPolicy, []byte("x"), ErrNotFound},
	} {
		if err := s.SetBucketConfig(tc.account, tc.bucket, tc.kind, tc.data); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := s.SetBucketConfig("alice", "tags", "replication", []byte("x")); err == nil {
		t.Errorf("an unknown kind was stored")
	}
	for kind, want := range map[ConfigKind][]byte{ConfigPolicy: policy, ConfigCORS: cors} {
		if data, err := s.BucketConfig("alice", "tags", kind); err != nil || !bytes.Equal(data, want) {
			t.Errorf("%s after refused changes: got %q, %v, want %q", kind, data, err, want)
		}
	}
	if _, err := s.BucketConfig("bob", "tags", ConfigPolicy); !errors.Is(err, ErrNotFound) {
		t.Errorf("bob's read of alice's policy: got %v, want %v", err, ErrNotFound)
	}
	bk, data, err := s.BucketWithConfig("tags", ConfigPolicy)
	if err != nil || bk.Account != "alice" || !bytes.Equal(data, policy) {
		t.Errorf("BucketWithConfig: got %+v, %q, %v", bk, data, err)
	}
	if _, _, err := s.BucketWithConfig("nope", ConfigPolicy); !errors.Is(err, ErrNotFound) {
		t.Errorf("BucketWithConfig of a missing bucket: got %v, want %v", err, ErrNotFound)
	}
	for kind, want := range map[ConfigKind]string{ConfigPolicy: "tags", ConfigCORS: "tags", ConfigLogging: ""} {
		if names, err := s.BucketsWithConfig(kind); err != nil || strings.Join(names, ",") != want {
			t.Errorf("BucketsWithConfig(%s): got %q, %v, want %q", kind, names, err, want)
		}
	}
	if err := s.SetBucketConfig("alice", "tags", ConfigCORS, nil); err != nil {
		t.Fatal(err)
	}
	if data, _ := s.BucketConfig("alice", "tags", ConfigCORS); data != nil {
		t.Errorf("cleared: got %q, want nil", data)
	}
	// Deleted with the bucket: the name taken again, by another account,
	// has none; a bucket whose name extends it keeps its own.
	if _, err := s.CreateBucket("alice", "tags2", "", t0); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBucketConfig("alice", "tags2", ConfigPolicy, policy); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete("alice", "tags", "obj", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket("alice", "tags"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBucket("bob", "tags", "", t0); err != nil {
		t.Fatal(err)
	}
	if data, err := s.BucketConfig("bob", "tags", ConfigPolicy); err != nil || data != nil {
		t.Errorf("the name taken again: got %q, %v, want no policy", data, err)
	}
	if data, _ := s.BucketConfig("alice", "tags2", ConfigPolicy); !bytes.Equal(data, policy) {
		t.Errorf("tags2's policy after tags was deleted: got %q, want %q", data, policy)
	}
}

// TestBucketConfigSurvivesPowerLoss: a configuration acknowledged is on
// disk (synced), not only in the write-ahead log's buffers.
func TestBucketConfigSurvivesPowerLoss(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := openWithBucket(t, fs)
	if err := s.SetBucketConfig("acme", "pics", ConfigPolicy, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	after := afterPowerLoss(t, fs, s)
	if data, err := after.BucketConfig("acme", "pics", ConfigPolicy); err != nil || string(data) != "kept" {
		t.Errorf("after the crash: got %q, %v, want %q", data, err, "kept")
	}
}
