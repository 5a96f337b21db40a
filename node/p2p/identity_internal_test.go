package p2p

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIdentityKeyMode: the identity key is made 0600 and read back as the
// same key; one that group or others may read is refused, saying how to
// fix it, as every key file of lattice's is.
func TestIdentityKeyMode(t *testing.T) {
	dir := t.TempDir()
	key, err := loadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, keyFile)
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the new identity key's mode: %v, %v", st.Mode(), err)
	}
	again, err := loadOrCreateKey(dir)
	if err != nil || !again.Equals(key) {
		t.Fatalf("read back: %v", err)
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := loadOrCreateKey(dir); err == nil || !strings.Contains(err.Error(), "run chmod 600 "+path) {
			t.Errorf("mode %04o: %v, want a refusal naming chmod 600", mode, err)
		}
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	if _, err := loadOrCreateKey(dir); err != nil {
		t.Errorf("mode 0400: %v", err)
	}
}
