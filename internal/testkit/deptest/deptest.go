// Package deptest holds a package to the dependencies it may have: a
// client must not link the server it talks to.
package deptest

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// Forbid fails t for each package in forbidden that pkg depends on. An
// entry ending in "/..." names a tree, as go list's patterns do
// ("github.com/cockroachdb/pebble/..." is every Pebble package); any other
// names one package ("github.com/latticenet/lattice/node" is the engine,
// not the wing under it). The go command is the one running the test: go
// test puts its own GOROOT/bin first on PATH.
func Forbid(t *testing.T, pkg string, forbidden ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{join .Deps " "}}`, pkg).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, f := range forbidden {
		tree, isTree := strings.CutSuffix(f, "/...")
		// One error per forbidden package or tree: Pebble alone is dozens
		// of packages.
		for _, dep := range deps {
			if dep == tree || isTree && strings.HasPrefix(dep, tree+"/") {
				t.Errorf("%s depends on %s", pkg, dep)
				break
			}
		}
	}
}
