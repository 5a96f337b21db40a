package cloudstore

import (
	"errors"
	"slices"
	"testing"
)

// TestPublicAccessGuardsWrites: the writes that Block Public Access
// settings forbid are refused by the store, under the lock of the write,
// and change nothing.
func TestPublicAccessGuardsWrites(t *testing.T) {
	s := newStore(t)
	for _, name := range []string{"pics", "open"} {
		if _, err := s.CreateBucket("acme", name, "", t0); err != nil {
			t.Fatal(err)
		}
	}
	// A bucket made public before the settings stays public: they refuse
	// new public access, as S3's BlockPublicAcls does.
	if _, err := s.UpdateBucket("acme", "open", t0, func(b *Bucket) { b.Public = true }); err != nil {
		t.Fatal(err)
	}
	block := &PublicAccessBlock{BlockPublicAcls: true, BlockPublicPolicy: true}
	for _, name := range []string{"pics", "open"} {
		if err := s.SetPublicAccessBlock("acme", name, block); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := s.UpdateBucket("acme", "pics", t0, func(b *Bucket) { b.Public = true }); !errors.Is(err, ErrPublicAccessBlocked) {
		t.Errorf("making a bucket public under BlockPublicAcls: %v, want ErrPublicAccessBlocked", err)
	}
	if bk, _ := s.Bucket("acme", "pics"); bk.Public {
		t.Error("the refused change made the bucket public")
	}
	for _, tc := range []struct {
		name, bucket string
		fn           func(*Bucket)
	}{
		{"notes of a private bucket", "pics", func(b *Bucket) { b.Notes = "n" }},
		{"private again", "pics", func(b *Bucket) { b.Public = false }},
		{"notes of a bucket public before", "open", func(b *Bucket) { b.Notes = "n" }},
		{"a public bucket made private", "open", func(b *Bucket) { b.Public = false }},
	} {
		if _, err := s.UpdateBucket("acme", tc.bucket, t0, tc.fn); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}

	// SetBucketConfigChecked hands the check the settings of the moment,
	// and writes nothing when it refuses.
	refused := errors.New("refused")
	var seen *PublicAccessBlock
	err := s.SetBucketConfigChecked("acme", "pics", ConfigPolicy, []byte(`{}`), func(b *PublicAccessBlock) error {
		seen = b
		return refused
	})
	if !errors.Is(err, refused) {
		t.Errorf("SetBucketConfigChecked with a refusing check: %v, want its error", err)
	}
	if seen == nil || *seen != *block {
		t.Errorf("the check saw %+v, want %+v", seen, block)
	}
	if data, err := s.BucketConfig("acme", "pics", ConfigPolicy); err != nil || data != nil {
		t.Errorf("after a refused write the policy is %q, %v; want none", data, err)
	}
	if err := s.SetPublicAccessBlock("acme", "pics", nil); err != nil {
		t.Fatal(err)
	}
	seen = block
	if err := s.SetBucketConfigChecked("acme", "pics", ConfigPolicy, []byte(`{}`), func(b *PublicAccessBlock) error {
		seen = b
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if seen != nil {
		t.Errorf("without settings the check saw %+v, want nil", seen)
	}
	if data, _ := s.BucketConfig("acme", "pics", ConfigPolicy); string(data) != "{}" {
		t.Errorf("policy %q after an accepted write, want {}", data)
	}
	if _, err := s.UpdateBucket("acme", "pics", t0, func(b *Bucket) { b.Public = true }); err != nil {
		t.Errorf("making a bucket public without settings: %v", err)
	}
	if err := s.SetBucketConfigChecked("acme", "nope", ConfigPolicy, []byte(`{}`), func(*PublicAccessBlock) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Errorf("a missing bucket: %v, want ErrNotFound", err)
	}
}

// TestCreatePublicBucket: a bucket public from the start is made in one
// write, with both events, and takes a name only once.
func TestCreatePublicBucket(t *testing.T) {
	s := newStore(t)
	bk, err := s.CreatePublicBucket("acme", "site", "n", t0)
	if err != nil || !bk.Public || bk.Account != "acme" {
		t.Fatalf("CreatePublicBucket = %+v, %v; want acme's public bucket", bk, err)
	}
	if got, err := s.PublicBucket("site"); err != nil || got.Name != "site" {
		t.Errorf("PublicBucket after CreatePublicBucket: %+v, %v", got, err)
	}
	evs, _, err := s.Events("acme", "site", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, string(e.Type))
	}
	if !slices.Contains(types, string(EventBucketCreated)) || !slices.Contains(types, string(EventBucketPublic)) {
		t.Errorf("events %v, want the bucket's creation and its being made public", types)
	}
	if _, err := s.CreatePublicBucket("other", "site", "", t0); !errors.Is(err, ErrExists) {
		t.Errorf("CreatePublicBucket of a taken name: %v, want ErrExists", err)
	}
}

// TestAccountPublicAccessBlockStore: an account's own settings hold for
// every bucket it owns, with the bucket's, the most restrictive of the
// two, checked under the lock of the writes they guard; another
// account's buckets are not affected; they are kept across a restart.
func TestAccountPublicAccessBlockStore(t *testing.T) {
	b := newBlobStore(t)
	if _, err := b.CreateBucket("other", "theirs", "", t0); err != nil {
		t.Fatal(err)
	}
	if got, err := b.AccountPublicAccessBlock("acme"); err != nil || got != nil {
		t.Fatalf("an account without settings: %+v, %v", got, err)
	}
	acct := &PublicAccessBlock{BlockPublicAcls: true, IgnorePublicAcls: true}
	if err := b.SetAccountPublicAccessBlock("acme", acct); err != nil {
		t.Fatal(err)
	}
	if _, err := b.UpdateBucket("acme", "pics", t0, func(bk *Bucket) { bk.Public = true }); !errors.Is(err, ErrPublicAccessBlocked) {
		t.Errorf("making a bucket public under the account's BlockPublicAcls: %v", err)
	}
	if _, err := b.UpdateBucket("other", "theirs", t0, func(bk *Bucket) { bk.Public = true }); err != nil {
		t.Errorf("another account's bucket: %v", err)
	}
	if _, err := b.PublicBucket("theirs"); err != nil {
		t.Errorf("another account's public bucket: %v", err)
	}
	if err := b.SetPublicAccessBlock("acme", "pics", &PublicAccessBlock{BlockPublicPolicy: true}); err != nil {
		t.Fatal(err)
	}
	b.reopen()
	want := PublicAccessBlock{BlockPublicAcls: true, IgnorePublicAcls: true, BlockPublicPolicy: true}
	if got, err := b.PublicAccessBlock("pics"); err != nil || got == nil || *got != want {
		t.Errorf("the settings that hold: %+v, %v; want %+v", got, err, want)
	}
	if got, err := b.BucketPublicAccessBlock("pics"); err != nil || got == nil || *got != (PublicAccessBlock{BlockPublicPolicy: true}) {
		t.Errorf("the bucket's own: %+v, %v", got, err)
	}
	var seen *PublicAccessBlock
	if err := b.SetBucketConfigChecked("acme", "pics", ConfigPolicy, []byte(`{}`), func(p *PublicAccessBlock) error { seen = p; return nil }); err != nil {
		t.Fatal(err)
	}
	if seen == nil || *seen != want {
		t.Errorf("a checked write saw %+v, want %+v", seen, want)
	}
	if err := b.SetAccountPublicAccessBlock("acme", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.UpdateBucket("acme", "pics", t0, func(bk *Bucket) { bk.Public = true }); err != nil {
		t.Errorf("making a bucket public once the account's settings are gone: %v", err)
	}
	if _, err := b.PublicBucket("pics"); err != nil {
		t.Errorf("the public bucket: %v", err)
	}
	if err := b.SetAccountPublicAccessBlock("acme", &PublicAccessBlock{IgnorePublicAcls: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PublicBucket("pics"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a public bucket under the account's IgnorePublicAcls: %v, want ErrNotFound", err)
	}
}
