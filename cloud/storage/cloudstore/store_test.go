package cloudstore

// Tests of the metadata store against a real Pebble database in a temporary
// directory: name rules, buckets (global names, tenant isolation) and
// durability across Close and Open. API keys are package accounts'.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

// t0 is the tests' clock: a fixed instant, so that every timestamp is known.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 123456789, time.UTC)

func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return s
}

// newStore opens a store in a fresh directory and closes it when the test
// ends.
func newStore(t *testing.T) *Store {
	t.Helper()
	s := openStore(t, t.TempDir())
	t.Cleanup(func() { s.Close() })
	return s
}

func TestValidBucketName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		// Lengths.
		{"", false},
		{"a", false},
		{"ab", false},
		{"abc", true},
		{"a1b", true},
		{"123", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{strings.Repeat("a", 200), false},
		// Characters.
		{"my-bucket", true},
		{"my.bucket", true},
		{"my-bucket.v2.example", true},
		{"a-b", true},
		{"a.b", true},
		{"a--b", true},
		{"foo-.bar", false},
		{"foo.-bar", false},
		{"foo-.-bar", false},
		{"MyBucket", false},
		{"mybuckeT", false},
		{"ABC", false},
		{"my_bucket", false},
		{"my bucket", false},
		{"my/bucket", false},
		{"my:bucket", false},
		{"my+bucket", false},
		{"bucket!", false},
		{"caf\u00e9s", false},
		{"tab\tname", false},
		{"nul\x00name", false},
		// Ends.
		{"-abc", false},
		{"abc-", false},
		{".abc", false},
		{"abc.", false},
		{"-ab-", false},
		{"0abc9", true},
		// Dots.
		{"a..b", false},
		{"abc..def", false},
		{"a.-b", false}, // a label may not begin or end with a hyphen (S3 conformance tests)
		// IP addresses.
		{"192.168.1.1", false},
		{"01.2.3.4", false},
		{"999.1.1.1", false},
		{"10.0.0.255", false},
		{"1.2.3.4", false},
		{"0.0.0.0", false},
		{"192.168.1", true},
		{"192.168.1.1.5", true},
		{"192-168-1-1", true},
		// Reserved prefixes and suffixes.
		{"xn--abc", false},
		{"xn--", false},
		{"xn-abc", true},
		{"axn--abc", true},
		{"sthree-bucket", false},
		{"sthree", true},
		{"amzn-s3-demo-bucket", false},
		{"amzn-s3-demo", true},
		{"bucket-s3alias", false},
		{"bucket-s3alias-x", true},
		{"bucket--ol-s3", false},
		{"bucket.mrap", false},
		{"bucket.mrapx", true},
		{"bucket--x-s3", false},
		{"bucket--table-s3", false},
		{"bucket-table-s3", true},
	}
	for _, tt := range tests {
		err := storagenames.ValidBucketName(tt.name)
		if got := err == nil; got != tt.ok {
			t.Errorf("ValidBucketName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "bucket name") {
			t.Errorf("ValidBucketName(%q) error %q does not say what is wrong", tt.name, err)
		}
	}
}

func TestValidAccountName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"", false},
		{"a", true},
		{"acme", true},
		{"Acme", true},
		{"ACME", true},
		{"acme-corp", true},
		{"acme_corp", true},
		{"acme.corp", true},
		{"a1", true},
		{"-", true},
		{"_.-", true},
		{strings.Repeat("x", 64), true},
		{strings.Repeat("x", 65), false},
		{"acme corp", false},
		{"acme/corp", false},
		{"acme@corp", false},
		{"acme:corp", false},
		{"acme\x00", false},
		{"\u00e9cole", false},
		{"acme\n", false},
	}
	for _, tt := range tests {
		err := storagenames.ValidAccountName(tt.name)
		if got := err == nil; got != tt.ok {
			t.Errorf("ValidAccountName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

func bucketNames(bs []Bucket) string {
	var names []string
	for _, b := range bs {
		names = append(names, b.Name)
	}
	return strings.Join(names, ",")
}

func TestCreateBucket(t *testing.T) {
	s := newStore(t)
	b, err := s.CreateBucket("acme", "photos", "holiday", t0.In(time.FixedZone("X", -7200)))
	if err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	want := Bucket{Name: "photos", Account: "acme", Notes: "holiday", CreatedAt: t0, UpdatedAt: t0}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("CreateBucket = %+v, want %+v", b, want)
	}
	got, err := s.Bucket("acme", "photos")
	if err != nil {
		t.Fatalf("Bucket: %v", err)
	}
	if !got.CreatedAt.Equal(t0) || !got.UpdatedAt.Equal(t0) {
		t.Errorf("Bucket times = %v, %v; want %v", got.CreatedAt, got.UpdatedAt, t0)
	}
	got.CreatedAt, got.UpdatedAt = t0, t0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Bucket = %+v, want %+v", got, want)
	}

	// Names are global: taken for the same account and for every other.
	for _, acct := range []string{"acme", "globex"} {
		if _, err := s.CreateBucket(acct, "photos", "", t0); !errors.Is(err, ErrExists) {
			t.Errorf("CreateBucket(%s, photos) again = %v, want ErrExists", acct, err)
		}
	}
	// The failed attempts changed nothing.
	if got, err := s.Bucket("acme", "photos"); err != nil || got.Notes != "holiday" {
		t.Errorf("Bucket after failed creations = %+v, %v; want acme's, notes holiday", got, err)
	}
	if bs, _ := s.Buckets("globex"); len(bs) != 0 {
		t.Errorf("globex owns %s after a failed creation", bucketNames(bs))
	}
}

func TestBucketTenantIsolation(t *testing.T) {
	s := newStore(t)
	if _, err := s.CreateBucket("acme", "acme-data", "secret notes", t0); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		account, name string
		err           error
	}{
		{"acme", "acme-data", nil},
		{"globex", "acme-data", ErrNotFound},
		{"acm", "acme-data", ErrNotFound},
		{"", "acme-data", ErrNotFound},
		{"acme", "missing", ErrNotFound},
		{"globex", "missing", ErrNotFound},
	}
	for _, tt := range tests {
		b, err := s.Bucket(tt.account, tt.name)
		if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("Bucket(%q, %q) = %v, want %v", tt.account, tt.name, err, tt.err)
		}
		if err != nil && !reflect.DeepEqual(b, Bucket{}) {
			t.Errorf("Bucket(%q, %q) failed but returned %+v", tt.account, tt.name, b)
		}
	}

	// Another account can neither change nor delete it.
	called := false
	if _, err := s.UpdateBucket("globex", "acme-data", t0, func(b *Bucket) { called = true; b.Notes = "pwned" }); !errors.Is(err, ErrNotFound) {
		t.Errorf("UpdateBucket by another account = %v, want ErrNotFound", err)
	}
	if called {
		t.Errorf("UpdateBucket ran the update function for another account's bucket")
	}
	if err := s.DeleteBucket("globex", "acme-data"); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteBucket by another account = %v, want ErrNotFound", err)
	}
	if b, err := s.Bucket("acme", "acme-data"); err != nil || b.Notes != "secret notes" {
		t.Errorf("acme's bucket after another account's attempts = %+v, %v", b, err)
	}
}

func TestBucketsOrderAndScope(t *testing.T) {
	s := newStore(t)
	// Accounts whose names are prefixes of one another must not see each
	// other's buckets.
	owners := []struct{ account, bucket string }{
		{"a", "zeta"},
		{"ab", "ab-one"},
		{"a", "alpha"},
		{"a.b", "dot-one"},
		{"a", "mid.dle"},
		{"a", "0-first"},
		{"b", "b-one"},
		{"a", "alpha-2"},
	}
	for _, o := range owners {
		if _, err := s.CreateBucket(o.account, o.bucket, "", t0); err != nil {
			t.Fatalf("CreateBucket(%s, %s): %v", o.account, o.bucket, err)
		}
	}
	tests := []struct {
		account, want string
	}{
		{"a", "0-first,alpha,alpha-2,mid.dle,zeta"},
		{"ab", "ab-one"},
		{"a.b", "dot-one"},
		{"b", "b-one"},
		{"c", ""},
	}
	for _, tt := range tests {
		bs, err := s.Buckets(tt.account)
		if err != nil {
			t.Fatalf("Buckets(%s): %v", tt.account, err)
		}
		if got := bucketNames(bs); got != tt.want {
			t.Errorf("Buckets(%s) = %s, want %s", tt.account, got, tt.want)
		}
		for _, b := range bs {
			if b.Account != tt.account {
				t.Errorf("Buckets(%s) holds %s of %s", tt.account, b.Name, b.Account)
			}
		}
	}
}

func TestUpdateBucket(t *testing.T) {
	s := newStore(t)
	if _, err := s.CreateBucket("acme", "photos", "old", t0); err != nil {
		t.Fatal(err)
	}
	t1 := t0.Add(time.Hour)
	b, err := s.UpdateBucket("acme", "photos", t1, func(b *Bucket) { b.Notes, b.Public = "new", true })
	if err != nil {
		t.Fatalf("UpdateBucket: %v", err)
	}
	if b.Notes != "new" || !b.Public || !b.CreatedAt.Equal(t0) || !b.UpdatedAt.Equal(t1) || b.Name != "photos" || b.Account != "acme" {
		t.Errorf("UpdateBucket = %+v, want notes new, public, created %v, updated %v", b, t0, t1)
	}
	got, err := s.Bucket("acme", "photos")
	if err != nil {
		t.Fatal(err)
	}
	if got.Notes != "new" || !got.Public || !got.CreatedAt.Equal(t0) || !got.UpdatedAt.Equal(t1) {
		t.Errorf("Bucket after UpdateBucket = %+v", got)
	}
	if _, err := s.UpdateBucket("acme", "missing", t1, func(*Bucket) {}); !errors.Is(err, ErrNotFound) {
		t.Errorf("UpdateBucket(missing) = %v, want ErrNotFound", err)
	}
	// The list shows the change too.
	if bs, _ := s.Buckets("acme"); len(bs) != 1 || bs[0].Notes != "new" || !bs[0].Public {
		t.Errorf("Buckets after UpdateBucket = %+v", bs)
	}
}

func TestDeleteBucket(t *testing.T) {
	s := newStore(t)
	for _, name := range []string{"keep", "gone", "full"} {
		if _, err := s.CreateBucket("acme", name, "", t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteBucket("acme", "gone"); err != nil {
		t.Fatalf("DeleteBucket: %v", err)
	}
	if _, err := s.Bucket("acme", "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Bucket after DeleteBucket = %v, want ErrNotFound", err)
	}
	if err := s.DeleteBucket("acme", "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteBucket again = %v, want ErrNotFound", err)
	}

	// A bucket holding objects stays.
	if _, err := s.UpdateBucket("acme", "full", t0, func(b *Bucket) { b.Objects, b.Bytes = 1, 10 }); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket("acme", "full"); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("DeleteBucket(full) = %v, want ErrNotEmpty", err)
	}
	if bs, _ := s.Buckets("acme"); bucketNames(bs) != "full,keep" {
		t.Errorf("Buckets after deletions = %s, want full,keep", bucketNames(bs))
	}

	// The freed name is free for every account.
	b, err := s.CreateBucket("globex", "gone", "reborn", t0.Add(time.Hour))
	if err != nil {
		t.Fatalf("CreateBucket(globex, gone) after its deletion: %v", err)
	}
	if b.Account != "globex" || b.Objects != 0 {
		t.Errorf("recreated bucket = %+v", b)
	}
	if _, err := s.Bucket("acme", "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("acme sees globex's new bucket: %v", err)
	}
	if bs, _ := s.Buckets("acme"); bucketNames(bs) != "full,keep" {
		t.Errorf("acme's buckets after globex took a freed name = %s, want full,keep", bucketNames(bs))
	}
}

func TestDurability(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	if _, err := s.CreateBucket("acme", "kept", "notes", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateBucket("acme", "kept", t0.Add(time.Hour), func(b *Bucket) { b.Public = true }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBucket("acme", "deleted", "", t0); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket("acme", "deleted"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBucket("globex", "theirs", "", t0); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s = openStore(t, dir)
	defer s.Close()
	b, err := s.Bucket("acme", "kept")
	if err != nil {
		t.Fatalf("Bucket(kept) after reopening: %v", err)
	}
	if b.Notes != "notes" || !b.Public || !b.CreatedAt.Equal(t0) || !b.UpdatedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("Bucket(kept) after reopening = %+v", b)
	}
	if bs, _ := s.Buckets("acme"); bucketNames(bs) != "kept" {
		t.Errorf("Buckets(acme) after reopening = %s, want kept", bucketNames(bs))
	}
	if _, err := s.CreateBucket("acme", "theirs", "", t0); !errors.Is(err, ErrExists) {
		t.Errorf("CreateBucket of globex's name after reopening = %v, want ErrExists", err)
	}
	if _, err := s.CreateBucket("acme", "deleted", "", t0); err != nil {
		t.Errorf("CreateBucket of a deleted name after reopening = %v", err)
	}
}

func TestOpenLocked(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	defer s.Close()
	// A second Open of a directory in use fails (Pebble's lock) rather than
	// corrupting it.
	if s2, err := Open(dir, nil); err == nil {
		s2.Close()
		t.Errorf("a second Open of a store in use succeeded")
	}
}

func TestConcurrentCreateBucket(t *testing.T) {
	// However many accounts race for a name, exactly one gets it.
	s := newStore(t)
	const n = 16
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			_, err := s.CreateBucket(fmt.Sprintf("acct-%d", i), "contested", "", t0)
			errs <- err
		}(i)
	}
	won := 0
	for i := 0; i < n; i++ {
		switch err := <-errs; {
		case err == nil:
			won++
		case !errors.Is(err, ErrExists):
			t.Errorf("CreateBucket: %v, want nil or ErrExists", err)
		}
	}
	if won != 1 {
		t.Errorf("%d accounts created the bucket, want 1", won)
	}
	owners := 0
	for i := 0; i < n; i++ {
		if bs, _ := s.Buckets(fmt.Sprintf("acct-%d", i)); len(bs) > 0 {
			owners++
		}
	}
	if owners != 1 {
		t.Errorf("%d accounts list the bucket, want 1", owners)
	}
}

// TestS3SecretsSealed: S3 secrets decrypt only with the store's own
// secret key, and only for their own access key ID.
func TestS3SecretsSealed(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	keyFile := filepath.Join(t.TempDir(), "secret.key")
	if err := s.OpenSecrets(keyFile); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(keyFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secret key file: %v, %v; want mode 0600", st, err)
	}
	k, secret, err := s.CreateS3Key("acme", "ci", "read", "photos", t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, got, err := s.S3Secret(k.AccessKeyID); err != nil || got != secret {
		t.Fatalf("S3Secret = %q, %v; want %q", got, err, secret)
	}
	if strings.Contains(string(k.Sealed), secret) {
		t.Error("the sealed secret holds the secret in the clear")
	}
	if err := s.OpenSecrets(filepath.Join(t.TempDir(), "other.key")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.S3Secret(k.AccessKeyID); err == nil {
		t.Error("S3Secret decrypted with another secret key")
	}
	for _, bad := range [][2]string{{"admin", "*"}, {"read", "Bad"}} {
		if _, _, err := s.CreateS3Key("acme", "", bad[0], bad[1], t0); err == nil {
			t.Errorf("CreateS3Key(%q, %q) accepted", bad[0], bad[1])
		}
	}
}

// TestExistingBucketName: lookups accept the names buckets could be
// created with before the hyphen-next-to-dot rule, and nothing else more.
func TestExistingBucketName(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{{"a.-b", true}, {"foo-.bar", true}, {"photos", true}, {"a..b", false}, {"-ab", false}, {"AB", false}} {
		if err := storagenames.ExistingBucketName(tt.name); (err == nil) != tt.ok {
			t.Errorf("ExistingBucketName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
