package mutation_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// mutant is one realistic bug: the text From in File replaced by To, and
// the tests (Package, -run Run) that must fail because of it.
type mutant struct {
	Name    string `json:"name"`
	File    string `json:"file"`
	From    string `json:"from"`
	To      string `json:"to"`
	Package string `json:"package"`
	Run     string `json:"run"`
	Why     string `json:"why"` // the promise the mutant breaks
}

// loadMutants reads testdata/mutants.json and the repository's root.
func loadMutants(t *testing.T) (root string, mutants []mutant) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "mutants.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &mutants); err != nil {
		t.Fatalf("testdata/mutants.json: %v", err)
	}
	root, err = filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root, mutants
}

// readTarget is m's file, failing the test unless m's From text occurs in
// it exactly once (otherwise the entry is stale: the code moved on).
func readTarget(t *testing.T, root string, m mutant) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, m.File))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(src, []byte(m.From)); n != 1 {
		t.Fatalf("%s holds the mutated text %d times, want once: the entry is stale", m.File, n)
	}
	return src
}

// TestMutantsApply runs in the ordinary suite (no build tag), in
// milliseconds: every mutant still applies to exactly one place. Without
// it a change that copies or removes a mutant's text is found only by the
// mutation stage, after the whole suite, in CI.
func TestMutantsApply(t *testing.T) {
	root, mutants := loadMutants(t)
	names := make(map[string]bool, len(mutants))
	for _, m := range mutants {
		if m.Name == "" || m.File == "" || m.From == "" || m.Package == "" || m.Why == "" {
			t.Errorf("mutant %q: name, file, from, package and why are required (an empty run runs every test)", m.Name)
			continue
		}
		if names[m.Name] {
			t.Errorf("mutant %q is listed twice", m.Name)
		}
		names[m.Name] = true
		t.Run(m.Name, func(t *testing.T) { readTarget(t, root, m) })
	}
}
