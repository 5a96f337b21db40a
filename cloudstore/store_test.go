package cloudstore

// Tests of the metadata store against a real Pebble database in a temporary
// directory: name rules, API keys (only hashes stored, revocation at once,
// the first admin key), buckets (global names, tenant isolation) and
// durability across Close and Open.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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
		err := ValidBucketName(tt.name)
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
		err := ValidAccountName(tt.name)
		if got := err == nil; got != tt.ok {
			t.Errorf("ValidAccountName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

var (
	secretPattern = regexp.MustCompile(`^lat_live_[0-9A-Za-z]{40}$`)
	keyIDPattern  = regexp.MustCompile(`^key_[0-9A-Za-z]{16}$`)
)

// allData returns every key and value in the store, to look for secrets.
func allData(t *testing.T, s *Store) []byte {
	t.Helper()
	var all []byte
	it, err := s.db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		all = append(all, it.Key()...)
		all = append(all, 0xff)
		all = append(all, it.Value()...)
		all = append(all, 0xff)
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return all
}

func TestCreateKeyAndAuthenticate(t *testing.T) {
	s := newStore(t)
	key, secret, err := s.CreateKey("acme", "ci", false, t0.In(time.FixedZone("X", 3600)))
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	if !secretPattern.MatchString(secret) {
		t.Errorf("secret = %q, want lat_live_ and 40 base62 characters", secret)
	}
	if !strings.HasPrefix(secret, KeyPrefix) {
		t.Errorf("secret %q does not start with KeyPrefix %q", secret, KeyPrefix)
	}
	if !keyIDPattern.MatchString(key.ID) {
		t.Errorf("key ID = %q, want key_ and 16 base62 characters", key.ID)
	}
	if got, want := key.Prefix, secret[:len(KeyPrefix)+4]; got != want {
		t.Errorf("key prefix = %q, want %q", got, want)
	}
	if key.Account != "acme" || key.Name != "ci" || key.Admin || key.Revoked || !key.RevokedAt.IsZero() {
		t.Errorf("key = %+v, want account acme, name ci, not admin, not revoked", key)
	}
	if !key.CreatedAt.Equal(t0) || key.CreatedAt.Location() != time.UTC {
		t.Errorf("key created at %v, want %v in UTC", key.CreatedAt, t0)
	}

	got, err := s.Authenticate(secret)
	if err != nil {
		t.Fatalf("Authenticate(secret): %v", err)
	}
	if got.ID != key.ID || got.Account != "acme" || got.Name != "ci" || got.Admin || got.Prefix != key.Prefix || !got.CreatedAt.Equal(t0) {
		t.Errorf("Authenticate = %+v, want %+v", got, key)
	}

	// Anything but the exact secret fails.
	for _, bad := range []string{
		"",
		KeyPrefix,
		secret[:len(secret)-1],
		secret + "0",
		strings.ToUpper(secret),
		KeyPrefix + strings.Repeat("0", 40),
		"Bearer " + secret,
		" " + secret,
	} {
		if _, err := s.Authenticate(bad); !errors.Is(err, ErrUnauthorized) {
			t.Errorf("Authenticate(%q) = %v, want ErrUnauthorized", bad, err)
		}
	}

	// Only the hash is stored: no record and no byte of the database holds
	// the secret, or even its random part; the SHA-256 is there.
	keys, err := s.Keys("")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		data, _ := json.Marshal(k)
		if bytes.Contains(data, []byte(secret[len(KeyPrefix):])) {
			t.Errorf("Keys record %s holds the secret", data)
		}
	}
	all := allData(t, s)
	if bytes.Contains(all, []byte(secret[len(KeyPrefix):])) {
		t.Errorf("the database holds the secret %q", secret)
	}
	if !bytes.Contains(all, hashSecret(secret)) {
		t.Errorf("the database does not hold the secret's hash")
	}

	// A second key: another secret, another ID, same account.
	key2, secret2, err := s.CreateKey("acme", "", false, t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if secret2 == secret || key2.ID == key.ID {
		t.Errorf("second key repeats the first: %s %s", key2.ID, secret2)
	}
	if got, err := s.Authenticate(secret2); err != nil || got.ID != key2.ID {
		t.Errorf("Authenticate(second secret) = %s, %v; want %s", got.ID, err, key2.ID)
	}
	if got, err := s.Authenticate(secret); err != nil || got.ID != key.ID {
		t.Errorf("Authenticate(first secret) after a second key = %s, %v; want %s", got.ID, err, key.ID)
	}
}

func TestCreateKeyValidation(t *testing.T) {
	s := newStore(t)
	tests := []struct {
		account, name string
		ok            bool
	}{
		{"acme", "", true},
		{"acme", strings.Repeat("n", 100), true},
		{"acme", strings.Repeat("n", 101), false},
		{"", "x", false},
		{"bad name", "x", false},
		{strings.Repeat("a", 65), "x", false},
	}
	for _, tt := range tests {
		_, secret, err := s.CreateKey(tt.account, tt.name, false, t0)
		if got := err == nil; got != tt.ok {
			t.Errorf("CreateKey(%q, %d-byte name) = %v, want ok %v", tt.account, len(tt.name), err, tt.ok)
		}
		if err != nil && secret != "" {
			t.Errorf("CreateKey(%q) failed but returned a secret", tt.account)
		}
	}
	// The failed calls created no account and no key.
	keys, err := s.Keys("")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Errorf("Keys = %d keys, want the 2 that were valid", len(keys))
	}
	var acct Account
	if err := s.getJSON(k(tAccount, "bad name"), &acct); !errors.Is(err, ErrNotFound) {
		t.Errorf("an invalid CreateKey created account %+v (%v)", acct, err)
	}
}

func TestCreateKeyCreatesAccountOnce(t *testing.T) {
	s := newStore(t)
	for i := 0; i < 3; i++ {
		if _, _, err := s.CreateKey("acme", "", false, t0.Add(time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	var acct Account
	if err := s.getJSON(k(tAccount, "acme"), &acct); err != nil {
		t.Fatalf("account acme: %v", err)
	}
	if acct.Name != "acme" || !acct.CreatedAt.Equal(t0) {
		t.Errorf("account = %+v, want acme created at %v (the first key)", acct, t0)
	}
}

func TestKeysFilterAndOrder(t *testing.T) {
	s := newStore(t)
	type made struct {
		account string
		at      time.Time
	}
	for _, m := range []made{
		{"acme", t0},
		{"globex", t0.Add(2 * time.Second)},
		{"acme", t0.Add(3 * time.Second)},
		{"acme", t0.Add(1 * time.Second)},
		{"acme-corp", t0.Add(4 * time.Second)},
	} {
		if _, _, err := s.CreateKey(m.account, "", false, m.at); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		account string
		want    []string // creation times, as offsets in seconds from t0, newest first
	}{
		{"", []string{"4s", "3s", "2s", "1s", "0s"}},
		{"acme", []string{"3s", "1s", "0s"}},
		{"globex", []string{"2s"}},
		{"acme-corp", []string{"4s"}},
		{"nobody", nil},
	}
	for _, tt := range tests {
		keys, err := s.Keys(tt.account)
		if err != nil {
			t.Fatalf("Keys(%q): %v", tt.account, err)
		}
		var got []string
		for _, k := range keys {
			if tt.account != "" && k.Account != tt.account {
				t.Errorf("Keys(%q) holds a key of %q", tt.account, k.Account)
			}
			got = append(got, k.CreatedAt.Sub(t0).String())
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("Keys(%q) created at %v, want %v (newest first)", tt.account, got, tt.want)
		}
	}

	// Keys made at the same instant come in ID order.
	s2 := newStore(t)
	for i := 0; i < 5; i++ {
		if _, _, err := s2.CreateKey("acme", "", false, t0); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := s2.Keys("acme")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(keys); i++ {
		if keys[i-1].ID >= keys[i].ID {
			t.Errorf("keys of one instant are not in ID order: %s before %s", keys[i-1].ID, keys[i].ID)
		}
	}
}

func TestRevokeKey(t *testing.T) {
	s := newStore(t)
	key, secret, err := s.CreateKey("acme", "ci", false, t0)
	if err != nil {
		t.Fatal(err)
	}
	other, otherSecret, err := s.CreateKey("acme", "other", false, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(secret); err != nil {
		t.Fatalf("Authenticate before revoking: %v", err)
	}
	revokedAt := t0.Add(time.Minute)
	got, err := s.RevokeKey(key.ID, revokedAt)
	if err != nil {
		t.Fatalf("RevokeKey: %v", err)
	}
	if got.ID != key.ID || !got.Revoked || !got.RevokedAt.Equal(revokedAt) || got.Account != "acme" {
		t.Errorf("RevokeKey = %+v, want %s revoked at %v", got, key.ID, revokedAt)
	}
	// At once: the very next call fails.
	if _, err := s.Authenticate(secret); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("Authenticate after RevokeKey = %v, want ErrUnauthorized", err)
	}
	// Other keys keep working.
	if k, err := s.Authenticate(otherSecret); err != nil || k.ID != other.ID {
		t.Errorf("Authenticate(other key) after revoking another = %v, %v", k.ID, err)
	}
	// Revoking again changes nothing.
	again, err := s.RevokeKey(key.ID, revokedAt.Add(time.Hour))
	if err != nil {
		t.Fatalf("second RevokeKey: %v", err)
	}
	if !again.Revoked || !again.RevokedAt.Equal(revokedAt) {
		t.Errorf("second RevokeKey = %+v, want the first revocation time %v", again, revokedAt)
	}
	// The list shows the revocation.
	keys, err := s.Keys("acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if want := k.ID == key.ID; k.Revoked != want {
			t.Errorf("Keys: %s revoked = %v, want %v", k.ID, k.Revoked, want)
		}
	}
	// Unknown IDs.
	for _, id := range []string{"", "key_nope", other.ID + "x", "k"} {
		if _, err := s.RevokeKey(id, t0); !errors.Is(err, ErrNotFound) {
			t.Errorf("RevokeKey(%q) = %v, want ErrNotFound", id, err)
		}
	}
}

func TestEnsureAdmin(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	key, secret, err := s.EnsureAdmin(t0, func(string) error { return nil })
	if err != nil {
		t.Fatalf("EnsureAdmin: %v", err)
	}
	if !secretPattern.MatchString(secret) {
		t.Errorf("admin secret = %q, want lat_live_ and 40 base62 characters", secret)
	}
	if key.Account != "admin" || !key.Admin || key.Revoked || !keyIDPattern.MatchString(key.ID) {
		t.Errorf("admin key = %+v, want an admin key of account admin", key)
	}
	if k, err := s.Authenticate(secret); err != nil || k.ID != key.ID || !k.Admin {
		t.Errorf("Authenticate(admin secret) = %+v, %v", k, err)
	}

	// A second call creates nothing and shows no secret.
	key2, secret2, err := s.EnsureAdmin(t0.Add(time.Hour), func(string) error { return nil })
	if err != nil {
		t.Fatalf("second EnsureAdmin: %v", err)
	}
	if secret2 != "" || key2.ID != "" {
		t.Errorf("second EnsureAdmin = %+v, %q; want no key and no secret", key2, secret2)
	}
	if keys, _ := s.Keys(""); len(keys) != 1 {
		t.Errorf("after two EnsureAdmin calls there are %d keys, want 1", len(keys))
	}

	// Nor after reopening: the admin key survives and still works.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir)
	defer s.Close()
	key3, secret3, err := s.EnsureAdmin(t0.Add(2*time.Hour), func(string) error { return nil })
	if err != nil {
		t.Fatalf("EnsureAdmin after reopening: %v", err)
	}
	if secret3 != "" || key3.ID != "" {
		t.Errorf("EnsureAdmin after reopening = %+v, %q; want no new key", key3, secret3)
	}
	if k, err := s.Authenticate(secret); err != nil || k.ID != key.ID || !k.Admin {
		t.Errorf("Authenticate(admin secret) after reopening = %+v, %v", k, err)
	}
	keys, err := s.Keys("admin")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].ID != key.ID {
		t.Errorf("Keys(admin) after reopening = %+v, want only %s", keys, key.ID)
	}

	// Even once the admin key is revoked, no new one appears by itself.
	if _, err := s.RevokeKey(key.ID, t0); err != nil {
		t.Fatal(err)
	}
	if _, secret4, err := s.EnsureAdmin(t0, func(string) error { return nil }); err != nil || secret4 != "" {
		t.Errorf("EnsureAdmin after revoking the admin key = %q, %v; want nothing", secret4, err)
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
	if b != want {
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
	if got != want {
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
		if err != nil && b != (Bucket{}) {
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
	_, adminSecret, err := s.EnsureAdmin(t0, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	live, liveSecret, err := s.CreateKey("acme", "live", false, t0)
	if err != nil {
		t.Fatal(err)
	}
	dead, deadSecret, err := s.CreateKey("acme", "dead", false, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RevokeKey(dead.ID, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
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
	if k, err := s.Authenticate(adminSecret); err != nil || !k.Admin {
		t.Errorf("admin key after reopening = %+v, %v", k, err)
	}
	if k, err := s.Authenticate(liveSecret); err != nil || k.ID != live.ID || k.Name != "live" {
		t.Errorf("live key after reopening = %+v, %v", k, err)
	}
	if _, err := s.Authenticate(deadSecret); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("revoked key after reopening = %v, want ErrUnauthorized", err)
	}
	keys, err := s.Keys("acme")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Errorf("Keys(acme) after reopening = %d keys, want 2", len(keys))
	}
	for _, k := range keys {
		if k.ID == dead.ID && (!k.Revoked || !k.RevokedAt.Equal(t0.Add(time.Minute))) {
			t.Errorf("revoked key after reopening = %+v", k)
		}
	}
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

// TestEnsureAdminPersistFails: if the secret cannot be saved, the key is
// revoked and not marked as created, so the next start makes a new one.
func TestEnsureAdminPersistFails(t *testing.T) {
	s := openStore(t, t.TempDir())
	boom := errors.New("disk full")
	_, _, err := s.EnsureAdmin(t0, func(string) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("EnsureAdmin with a failing persist: got %v, want %v", err, boom)
	}
	var saved string
	key, secret, err := s.EnsureAdmin(t0, func(sec string) error { saved = sec; return nil })
	if err != nil || secret == "" || secret != saved || !key.Admin {
		t.Fatalf("second EnsureAdmin: %+v %q %v; want a new admin key, persisted", key, secret, err)
	}
	keys, _ := s.Keys("admin")
	live := 0
	for _, k := range keys {
		if !k.Revoked {
			live++
		}
	}
	if live != 1 {
		t.Errorf("%d live admin keys, want 1 (the unsaved one revoked)", live)
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

// TestEnsureAdminRevokesUnrecordedKeys: an admin key left by a first start
// that crashed before recording it is revoked when the next start makes
// the real one.
func TestEnsureAdminRevokesUnrecordedKeys(t *testing.T) {
	s := openStore(t, t.TempDir())
	orphan, orphanSecret, err := s.CreateKey("admin", "admin", true, t0) // as if the crash came here
	if err != nil {
		t.Fatal(err)
	}
	if _, secret, err := s.EnsureAdmin(t0, func(string) error { return nil }); err != nil || secret == "" {
		t.Fatalf("EnsureAdmin: %q, %v", secret, err)
	}
	if _, err := s.Authenticate(orphanSecret); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("the unrecorded admin key %s still authenticates: %v", orphan.ID, err)
	}
}

// TestExistingBucketName: lookups accept the names buckets could be
// created with before the hyphen-next-to-dot rule, and nothing else more.
func TestExistingBucketName(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{{"a.-b", true}, {"foo-.bar", true}, {"photos", true}, {"a..b", false}, {"-ab", false}, {"AB", false}} {
		if err := ExistingBucketName(tt.name); (err == nil) != tt.ok {
			t.Errorf("ExistingBucketName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
