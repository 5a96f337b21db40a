// Package golden keeps test vectors in testdata files: a test makes the
// vectors from the code, and File holds them to the file, or rewrites it
// when the test runs with -update.
package golden

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// JSON writes v as indented JSON (with a final newline) to path when
// update is set, then fails t unless the file holds exactly that, and
// returns the file's bytes for the test to read back as a client would.
func JSON(t testing.TB, path string, v any, update bool) []byte {
	t.Helper()
	want, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Fatalf("%s differs from what the code makes; if the protocol changed on purpose, rerun with -update", path)
	}
	return have
}
