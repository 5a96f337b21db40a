package accounts

// Tests of the accounts store against a real Pebble database in a
// temporary directory: API keys (only hashes stored, revocation at once,
// the first admin key), accounts, durability across Close and Open, the
// import of what the object store kept before, and the tables' prefixes.

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/testkit/tabletest"
)

// t0 is the tests' clock: a fixed instant, so that every timestamp is known.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 123456789, time.UTC)

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

func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, Options{})
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
	if err := s.getJSON(tableAccount+"bad name", &acct); !errors.Is(err, ErrNotFound) {
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
	if err := s.getJSON(tableAccount+"acme", &acct); err != nil {
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

func TestKeyByID(t *testing.T) {
	s := newStore(t)
	k, _, err := s.CreateKey("acme", "ci", false, t0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.KeyByID(k.ID)
	if err != nil || got != k {
		t.Errorf("KeyByID = %+v, %v; want %+v", got, err, k)
	}
	if _, err := s.RevokeKey(k.ID, t0); err != nil {
		t.Fatal(err)
	}
	if got, err := s.KeyByID(k.ID); err != nil || !got.Revoked {
		t.Errorf("KeyByID of a revoked key = %+v, %v; want it, revoked", got, err)
	}
	if _, err := s.KeyByID("key_nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("KeyByID of an unknown id: %v, want ErrNotFound", err)
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

// TestDurability: keys and revocations survive Close and Open.
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
}

// tables are the store's table prefixes, each declared once.
var tables = []string{tableKeyByHash, tableKeyByID, tableAccount, tableMeta}

func TestTables(t *testing.T) {
	tabletest.Check(t, ".", tables, 4)
}

// TestImport: the rows the object store kept move in once, whole; the
// imported keys authenticate, the admin key is not made again, and a
// second Import (after a crash before the old rows were dropped) changes
// nothing.
func TestImport(t *testing.T) {
	src := newStore(t) // an old store's rows, made with this package's own code
	admin, adminSecret, err := src.EnsureAdmin(t0, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	key, secret, err := src.CreateKey("acme", "ci", false, t0)
	if err != nil {
		t.Fatal(err)
	}
	gone, goneSecret, err := src.CreateKey("acme", "old", false, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.RevokeKey(gone.ID, t0); err != nil {
		t.Fatal(err)
	}
	keys := map[string][]byte{}
	src.scan(tableKeyByHash, func(k, v []byte) error {
		keys[string(k[len(tableKeyByHash):])] = bytes.Clone(v)
		return nil
	})
	var accts [][]byte
	src.scan(tableAccount, func(_, v []byte) error {
		accts = append(accts, bytes.Clone(v))
		return nil
	})

	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.Import(keys, accts, admin.ID); err != nil {
		t.Fatalf("Import: %v", err)
	}
	for _, tc := range []struct {
		secret string
		id     string
		ok     bool
	}{{adminSecret, admin.ID, true}, {secret, key.ID, true}, {goneSecret, gone.ID, false}} {
		got, err := s.Authenticate(tc.secret)
		if tc.ok && (err != nil || got.ID != tc.id) || !tc.ok && !errors.Is(err, ErrUnauthorized) {
			t.Errorf("Authenticate(the secret of %s) after Import = %+v, %v; want ok %v", tc.id, got, err, tc.ok)
		}
		if k, err := s.KeyByID(tc.id); err != nil || k.ID != tc.id {
			t.Errorf("KeyByID(%s) after Import = %+v, %v", tc.id, k, err)
		}
	}
	if _, secret, err := s.EnsureAdmin(t0, func(string) error { return nil }); err != nil || secret != "" {
		t.Errorf("EnsureAdmin after importing an admin key: %q, %v; want no new key", secret, err)
	}
	var a Account
	if err := s.getJSON(tableAccount+"acme", &a); err != nil || !a.CreatedAt.Equal(t0) {
		t.Errorf("account acme after Import: %+v, %v", a, err)
	}
	// Once imported, never again: a second Import with other rows is a no-op.
	if err := s.Import(map[string][]byte{}, [][]byte{[]byte(`{"name":"late"}`)}, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.getJSON(tableAccount+"late", &a); !errors.Is(err, ErrNotFound) {
		t.Errorf("a second Import added an account: %v", err)
	}
	s.Close()
	// And it survives a restart.
	s = openStore(t, dir)
	defer s.Close()
	if got, err := s.Authenticate(secret); err != nil || got.ID != key.ID {
		t.Errorf("an imported key after reopening: %+v, %v", got, err)
	}
	// Bad rows are refused whole.
	bad := newStore(t)
	if err := bad.Import(map[string][]byte{"short": []byte(`{"id":"key_x"}`)}, nil, ""); err == nil {
		t.Errorf("Import of a key under a hash of the wrong length succeeded")
	}
	if keys, _ := bad.Keys(""); len(keys) != 0 {
		t.Errorf("a refused Import left %d keys", len(keys))
	}
}
