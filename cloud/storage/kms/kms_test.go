package kms

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

var ctx = context.Background()

func key32(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

// openDB opens a database on fs (a test's memory file system), which
// outlives the database so that a test can reopen it.
func openDB(t *testing.T, fs vfs.FS) *pebble.DB {
	t.Helper()
	db, err := pebble.Open("db", &pebble.Options{FS: fs, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func open(t *testing.T, db *pebble.DB, master, previous []byte) *Local {
	t.Helper()
	l, err := OpenLocal(db, 'K', master, previous)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestParseRef(t *testing.T) {
	const id = "1234abcd-12ab-34cd-56ef-1234567890ab"
	for _, c := range []struct{ ref, id, name string }{
		{id, id, ""},
		{"arn:aws:kms:us-east-1:acct:key/" + id, id, ""},
		{"arn:aws:kms:us-east-1:acct:alias/logs", "", "logs"},
		{"alias/logs", "", "logs"},
		{"alias/aws/s3", "", "aws/s3"},
		{"logs", "", "logs"},
		{"testkey-1", "", "testkey-1"},
		{"1234ABCD-12AB-34CD-56EF-1234567890AB", "", "1234ABCD-12AB-34CD-56EF-1234567890AB"}, // ids are lower case
	} {
		if id, name := ParseRef(c.ref); id != c.id || name != c.name {
			t.Errorf("ParseRef(%q) = %q, %q; want %q, %q", c.ref, id, name, c.id, c.name)
		}
	}
}

func TestValidName(t *testing.T) {
	for name, ok := range map[string]bool{
		"logs": true, "team/logs_2-b": true, "": false, "aws/s3": false, "has space": false,
		string(bytes.Repeat([]byte("a"), 250)): true, string(bytes.Repeat([]byte("a"), 251)): false, "é": false,
		"1234abcd-12ab-34cd-56ef-1234567890ab": false, // an id's form: ParseRef would read it as one
	} {
		if err := ValidName(name); (err == nil) != ok {
			t.Errorf("ValidName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}

// withKey opens a service under master key32(1) on a new database (closed
// with the test) and makes alice's key "logs" in it.
func withKey(t *testing.T, description string) (*pebble.DB, *Local, Key) {
	t.Helper()
	db := openDB(t, vfs.NewMem())
	t.Cleanup(func() { db.Close() })
	l := open(t, db, key32(1), nil)
	k, err := l.Create(ctx, "alice", "logs", description)
	if err != nil {
		t.Fatal(err)
	}
	return db, l, k
}

func TestLifecycle(t *testing.T) {
	db, l, k := withKey(t, "for the log bucket")
	if !isUUID(k.ID) || !k.Enabled || k.Versions != 1 || k.Managed {
		t.Fatalf("created %+v", k)
	}
	if _, err := l.Create(ctx, "alice", "logs", ""); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	if _, err := l.Create(ctx, "bob", "logs", ""); err != nil {
		t.Fatalf("another account's key of the same name: %v", err)
	}
	if _, err := l.Create(ctx, "alice", "aws/s3", ""); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("reserved name: %v", err)
	}
	for _, ref := range []string{k.ID, "logs", "alias/logs", ARN("us-east-1", "alice", k.ID), "arn:aws:kms:r:alice:alias/logs"} {
		got, err := l.Resolve(ctx, "alice", ref)
		if err != nil || got.ID != k.ID {
			t.Errorf("Resolve(%q) = %v, %v", ref, got.ID, err)
		}
	}
	for _, ref := range []string{"nope", "alias/nope", newID()} {
		if _, err := l.Resolve(ctx, "alice", ref); !errors.Is(err, ErrNotFound) {
			t.Errorf("Resolve(%q): %v, want ErrNotFound", ref, err)
		}
	}
	if _, err := l.Resolve(ctx, "bob", k.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another account's key by id: %v, want ErrNotFound", err)
	}

	encCtx := []byte(`{"aws:s3:arn":"arn:aws:s3:::b/k"}`)
	plain, sealed, err := l.GenerateDataKey(ctx, k.ID, encCtx)
	if err != nil || len(plain) != 32 {
		t.Fatal(err)
	}
	got, err := l.Decrypt(ctx, k.ID, sealed, encCtx)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Decrypt: %v", err)
	}
	bad := bytes.Clone(sealed)
	bad[len(bad)-1] ^= 1
	for name, c := range map[string]struct {
		id      string
		sealed  []byte
		context []byte
	}{
		"another context":  {k.ID, sealed, []byte(`{"aws:s3:arn":"arn:aws:s3:::b/other"}`)},
		"no context":       {k.ID, sealed, nil},
		"altered":          {k.ID, bad, encCtx},
		"truncated":        {k.ID, sealed[:len(sealed)-1], encCtx},
		"another key":      {l.List(ctx, "bob")[0].ID, sealed, encCtx},
		"unknown version":  {k.ID, append([]byte("LK1\x00\x00\x00\x09"), sealed[7:]...), encCtx},
		"version zero":     {k.ID, append([]byte("LK1\x00\x00\x00\x00"), sealed[7:]...), encCtx},
		"not a sealed key": {k.ID, bytes.Repeat([]byte{'x'}, len(sealed)), encCtx},
	} {
		if _, err := l.Decrypt(ctx, c.id, c.sealed, c.context); !errors.Is(err, ErrInvalidCiphertext) {
			t.Errorf("%s: %v, want ErrInvalidCiphertext", name, err)
		}
	}

	// Disabled: nothing opens, nothing is sealed; enabled again, it all works.
	if k, err = l.SetEnabled(ctx, "alice", "logs", false); err != nil || k.Enabled {
		t.Fatalf("disable: %+v, %v", k, err)
	}
	if _, err := l.Decrypt(ctx, k.ID, sealed, encCtx); !errors.Is(err, ErrDisabled) {
		t.Fatalf("decrypt under a disabled key: %v", err)
	}
	if _, _, err := l.GenerateDataKey(ctx, k.ID, encCtx); !errors.Is(err, ErrDisabled) {
		t.Fatalf("generate under a disabled key: %v", err)
	}
	if _, err := l.Rotate(ctx, "alice", "logs"); !errors.Is(err, ErrDisabled) {
		t.Fatalf("rotating a disabled key: %v", err)
	}
	if _, err := l.SetEnabled(ctx, "alice", "logs", true); err != nil {
		t.Fatal(err)
	}

	// Rotation: new seals use version 2, old ones still open.
	if k, err = l.Rotate(ctx, "alice", k.ID); err != nil || k.Versions != 2 || k.RotatedAt.IsZero() {
		t.Fatalf("rotate: %+v, %v", k, err)
	}
	plain2, sealed2, err := l.GenerateDataKey(ctx, k.ID, encCtx)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := sealedVersion(sealed2); v != 2 {
		t.Fatalf("sealed after rotation under version %d", v)
	}
	for _, c := range []struct{ sealed, plain []byte }{{sealed, plain}, {sealed2, plain2}} {
		if got, err := l.Decrypt(ctx, k.ID, c.sealed, encCtx); err != nil || !bytes.Equal(got, c.plain) {
			t.Fatalf("after rotation: %v", err)
		}
	}

	// The default key: made on first use, the same after, never disabled.
	d, err := l.Resolve(ctx, "alice", "")
	if err != nil || d.Name != DefaultKeyName || !d.Managed {
		t.Fatalf("default key: %+v, %v", d, err)
	}
	if again, _ := l.Resolve(ctx, "alice", "alias/aws/s3"); again.ID != d.ID {
		t.Fatalf("default key made twice: %s, %s", d.ID, again.ID)
	}
	if _, err := l.SetEnabled(ctx, "alice", d.ID, false); !errors.Is(err, ErrManaged) {
		t.Fatal("the default key was disabled")
	}
	if names := l.List(ctx, "alice"); len(names) != 2 || names[0].Name != "aws/s3" || names[1].Name != "logs" {
		t.Fatalf("List: %+v", names)
	}

	// Reopened: the same keys, and what was sealed still opens.
	l2 := open(t, db, key32(1), nil)
	if got, err := l2.Decrypt(ctx, k.ID, sealed, encCtx); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("after reopening: %v", err)
	}
	if got, _ := l2.Get(ctx, "alice", "logs"); got != k {
		t.Fatalf("after reopening: %+v, want %+v", got, k)
	}
}

func TestMasterKeyRotation(t *testing.T) {
	db, l, k := withKey(t, "")
	plain, sealed, err := l.GenerateDataKey(ctx, k.ID, nil)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := OpenLocal(db, 'K', key32(2), nil); !errors.Is(err, ErrMasterKey) {
		t.Fatalf("opened with the wrong master key: %v", err)
	}
	if _, err := OpenLocal(db, 'K', key32(2), key32(3)); !errors.Is(err, ErrMasterKey) {
		t.Fatalf("opened with the wrong master and previous keys: %v", err)
	}
	if _, err := OpenLocal(db, 'K', []byte("short"), nil); err == nil {
		t.Fatal("opened with a short master key")
	}
	// New master, old one as previous: keys are sealed again under the new.
	l2 := open(t, db, key32(2), key32(1))
	if got, err := l2.Decrypt(ctx, k.ID, sealed, nil); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("after the master key's rotation: %v", err)
	}
	if n := l2.Resealed(); n != 1 {
		t.Errorf("the rotation sealed %d keys again, want 1", n)
	}
	// The previous key given again: nothing is left under it.
	if n := open(t, db, key32(2), key32(1)).Resealed(); n != 0 {
		t.Errorf("a second start with the previous key sealed %d keys again, want 0", n)
	}
	// From now on the new master key alone opens them, the old no more.
	l3 := open(t, db, key32(2), nil)
	if got, err := l3.Decrypt(ctx, k.ID, sealed, nil); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("with the new master key alone: %v", err)
	}
	if _, err := OpenLocal(db, 'K', key32(1), nil); !errors.Is(err, ErrMasterKey) {
		t.Fatalf("the old master key still opens the keys: %v", err)
	}
}

// TestSealVector pins the sealed forms: a data key sealed by hand, as
// docs/s3.md describes it, opens with the service.
func TestSealVector(t *testing.T) {
	material := key32(7)
	id := "1234abcd-12ab-44cd-96ef-1234567890ab"
	dataKey := key32(9)
	encCtx := []byte(`{"aws:s3:arn":"arn:aws:s3:::b/k"}`)
	sealed, err := sealDataKey(material, id, 3, dataKey, encCtx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sealed) != 3+4+12+32+16 || string(sealed[:7]) != "LK1\x00\x00\x00\x03" {
		t.Fatalf("sealed form %x", sealed)
	}
	aead, _ := gcm(material)
	got, err := aead.Open(nil, sealed[7:19], sealed[19:], append([]byte("lattice/kms/datakey/v1\x00"+id+"\x00"), encCtx...))
	if err != nil || !bytes.Equal(got, dataKey) {
		t.Fatalf("opening by hand: %v", err)
	}
	if fp := Fingerprint(key32(1)); len(fp) != 16 {
		t.Fatalf("fingerprint %q", fp)
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"alias/x", "arn:aws:kms:r:a:key/1234abcd-12ab-34cd-56ef-1234567890ab", "arn:", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		id, name := ParseRef(ref)
		if id != "" && name != "" {
			t.Fatalf("ParseRef(%q) gave both %q and %q", ref, id, name)
		}
		if id != "" && !isUUID(id) && !bytes.Contains([]byte(ref), []byte("key/")) {
			t.Fatalf("ParseRef(%q) gave id %q", ref, id)
		}
	})
}

// TestPowerLoss: every change the service answered (a key made, disabled,
// rotated; the keys sealed again under a new master key) is there after
// the machine loses power right after the answer (a crash image that
// keeps nothing unsynced), and a data key sealed before opens after.
func TestPowerLoss(t *testing.T) {
	fs := vfs.NewCrashableMem()
	db := openDB(t, fs)
	l := open(t, db, key32(1), nil)
	k, err := l.Create(ctx, "alice", "logs", "")
	if err != nil {
		t.Fatal(err)
	}
	plain, sealed, err := l.GenerateDataKey(ctx, k.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	type image struct {
		fs         vfs.FS
		master     []byte
		versions   int
		enabled    bool
		sealedNext []byte // sealed after this point, if any
	}
	snap := func(master []byte, versions int, enabled bool) image {
		return image{fs: fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0}), master: master, versions: versions, enabled: enabled}
	}
	images := []image{snap(key32(1), 1, true)}
	if _, err := l.SetEnabled(ctx, "alice", "logs", false); err != nil {
		t.Fatal(err)
	}
	images = append(images, snap(key32(1), 1, false))
	l.SetEnabled(ctx, "alice", "logs", true)
	if _, err := l.Rotate(ctx, "alice", "logs"); err != nil {
		t.Fatal(err)
	}
	images = append(images, snap(key32(1), 2, true))
	db.Close()

	// The master key rotated on a copy of the last image.
	copyFS := images[2].fs.(*vfs.MemFS).CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	db2 := openDB(t, copyFS)
	if _, err := OpenLocal(db2, 'K', key32(2), key32(1)); err != nil {
		t.Fatal(err)
	}
	rotated := copyFS.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	db2.Close()
	images = append(images, image{fs: rotated, master: key32(2), versions: 2, enabled: true})

	for i, img := range images {
		db := openDB(t, img.fs)
		l, err := OpenLocal(db, 'K', img.master, nil)
		if err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
		got, err := l.Get(ctx, "alice", "logs")
		if err != nil || got.Versions != img.versions || got.Enabled != img.enabled {
			t.Errorf("image %d: %+v %v, want %d versions, enabled %v", i, got, err, img.versions, img.enabled)
		}
		if img.enabled {
			if k, err := l.Decrypt(ctx, got.ID, sealed, nil); err != nil || !bytes.Equal(k, plain) {
				t.Errorf("image %d: the data key sealed before: %v", i, err)
			}
		}
		db.Close()
	}
}

// quiet is a Pebble logger that says nothing (tests reopen databases
// many times).
type quiet struct{}

func (quiet) Infof(string, ...any)  {}
func (quiet) Errorf(string, ...any) {}
func (quiet) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}
