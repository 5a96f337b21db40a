package durablefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteAndCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	p := filepath.Join(dir, "f")
	if err := Create(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Create(p, []byte("two"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over an existing file: got %v, want ErrExist", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "one" {
		t.Errorf("after a refused Create the file holds %q, want one", got)
	}
	if err := Write(p, []byte("three"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(got) != "three" || st.Mode().Perm() != 0o644 {
		t.Errorf("after Write: %q mode %04o, want three 0644", got, st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files left in the directory, want 1 (no temporary files)", len(entries))
	}
	if err := SyncDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("SyncDir of a missing directory succeeded")
	}
}
