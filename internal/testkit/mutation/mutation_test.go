//go:build mutation

package mutation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMutants applies each mutant of testdata/mutants.json in turn, through
// go test's -overlay (the tree is never changed), and runs its tests, which
// must fail. A mutant whose From text is not found exactly once, or that
// does not compile, is a stale entry and fails too.
func TestMutants(t *testing.T) {
	root, mutants := loadMutants(t)
	for _, m := range mutants {
		t.Run(m.Name, func(t *testing.T) {
			// Two at a time (go test's -parallel is GOMAXPROCS): most of
			// a mutant's time is one package's compile and link, or a
			// test waiting on fsync and sockets, which overlap well.
			t.Parallel()
			src := readTarget(t, root, m)
			dir := t.TempDir()
			mutated := filepath.Join(dir, filepath.Base(m.File))
			if err := os.WriteFile(mutated, bytes.Replace(src, []byte(m.From), []byte(m.To), 1), 0o600); err != nil {
				t.Fatal(err)
			}
			overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(root, m.File): mutated}})
			overlayPath := filepath.Join(dir, "overlay.json")
			if err := os.WriteFile(overlayPath, overlay, 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			// The overlay goes in GOFLAGS rather than on the command line,
			// so that binaries the tests build themselves (cmd/lattice's
			// TestMain) are mutated too.
			// -failfast: one failing test kills the mutant; the rest of
			// Run need not run.
			cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-failfast", "-run", m.Run, m.Package)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -overlay="+overlayPath))
			out, err := cmd.CombinedOutput()
			switch {
			case ctx.Err() != nil:
				t.Fatalf("the tests did not finish in time: %s", out)
			case err == nil:
				t.Errorf("mutant survived: %s\n(%s)\n%s", m.Why, m.File, out)
			case strings.Contains(string(out), "[build failed]") || strings.Contains(string(out), "[setup failed]"):
				t.Fatalf("the mutant does not compile: the entry is stale:\n%s", out)
			case !strings.Contains(string(out), "--- FAIL"):
				t.Fatalf("go test failed without a failing test:\n%s", out)
			default:
				t.Logf("killed by %s", firstFailure(string(out)))
			}
		})
	}
}

// firstFailure is the name of the first test go test reports failed.
func firstFailure(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if f, ok := strings.CutPrefix(strings.TrimSpace(line), "--- FAIL: "); ok {
			name, _, _ := strings.Cut(f, " ")
			return name
		}
	}
	return "?"
}
