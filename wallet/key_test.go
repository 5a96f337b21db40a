package wallet

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKeyFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "key.json")
	k := NewKey()
	if err := SaveKey(path, k); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o600 {
		t.Errorf("key file mode = %04o, want 0600", got)
	}
	got, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Address() != k.Address() {
		t.Errorf("loaded address %s, want %s", got.Address(), k.Address())
	}
	if err := SaveKey(path, NewKey()); !errors.Is(err, ErrKeyExists) {
		t.Errorf("overwriting a key file: got %v, want ErrKeyExists", err)
	}
	if again, _ := LoadKey(path); again.Address() != k.Address() {
		t.Error("a refused overwrite changed the key file")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d files after saving, want only the key", len(entries))
	}
}

func TestLoadKeyRefuses(t *testing.T) {
	k := NewKey()
	other := NewKey()
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		want    string
	}{
		{"readable by others", `{"address":"` + k.Address().String() + `","private_key":"` + hexSeed(k) + `"}`, 0o644, "chmod 600"},
		{"not JSON", `not json`, 0o600, "is not a lattice key file"},
		{"not a key, readable by others", `{"network":"dev","supply":"1"}`, 0o644, "is not a lattice key file"},
		{"unknown field", `{"address":"` + k.Address().String() + `","private_key":"` + hexSeed(k) + `","x":1}`, 0o600, "unknown field"},
		{"short seed", `{"address":"` + k.Address().String() + `","seed":"abcd"}`, 0o600, "seed must be 32 bytes"},
		{"non-hex seed", `{"address":"` + k.Address().String() + `","seed":"zz"}`, 0o600, "seed is not hex"},
		{"short legacy private_key", `{"address":"` + k.Address().String() + `","private_key":"abcd"}`, 0o600, "private_key must be 32 bytes (a seed) or 64"},
		{"non-hex legacy private_key", `{"address":"` + k.Address().String() + `","private_key":"zz"}`, 0o600, "private_key is not hex"},
		{"private_key with another public key", `{"address":"` + k.Address().String() + `","private_key":"` + hexSeed(k) + other.Address().String() + `"}`, 0o600, "not the public key of its seed"},
		{"both fields", `{"address":"` + k.Address().String() + `","seed":"` + hexSeed(k) + `","private_key":"` + hexSeed(k) + `"}`, 0o600, "both seed and private_key"},
		{"no key", `{"address":"` + k.Address().String() + `"}`, 0o600, "no seed"},
		{"address of another key", `{"address":"` + other.Address().String() + `","seed":"` + hexSeed(k) + `"}`, 0o600, "does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "key.json")
			if err := os.WriteFile(path, []byte(tt.content), tt.mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(path, tt.mode)
			_, err := LoadKey(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("LoadKey: got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := LoadKey(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadKey of a missing file: got %v, want ErrNotExist", err)
	}
}

// TestKeyFileForms reads the three forms a key file may take: the seed
// SaveKey writes, and the private_key of earlier versions, as a seed or as
// a seed followed by its public key (the vectors' and most libraries'
// form).
func TestKeyFileForms(t *testing.T) {
	k := NewKey()
	addr := k.Address().String()
	tests := []struct{ name, content string }{
		{"seed", `{"address":"` + addr + `","seed":"` + hexSeed(k) + `"}`},
		{"legacy private_key, a seed", `{"address":"` + addr + `","private_key":"` + hexSeed(k) + `"}`},
		{"legacy private_key, seed and public key", `{"address":"` + addr + `","private_key":"` + hexSeed(k) + addr + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "key.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := LoadKey(path)
			if err != nil {
				t.Fatalf("LoadKey: %v", err)
			}
			if got.Address() != k.Address() {
				t.Errorf("LoadKey: got address %s, want %s", got.Address(), addr)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "key.json")
	if err := SaveKey(path, k); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := "{\n  \"address\": \"" + addr + "\",\n  \"seed\": \"" + hexSeed(k) + "\"\n}\n"
	if string(data) != want {
		t.Errorf("SaveKey wrote %q, want %q", data, want)
	}
}

func hexSeed(k Key) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	for _, c := range k.Seed() {
		b.WriteByte(digits[c>>4])
		b.WriteByte(digits[c&15])
	}
	return b.String()
}
