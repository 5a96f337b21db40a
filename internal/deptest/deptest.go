// Package deptest holds a package to the dependencies it may have: a
// client must not link the server it talks to.
package deptest

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// Forbid fails t for each package or package tree in forbidden that pkg
// depends on. The go command is the one running the test: go test puts
// its own GOROOT/bin first on PATH.
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
		// One error per forbidden package or tree: Pebble alone is dozens
		// of packages.
		for _, dep := range deps {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("%s depends on %s", pkg, dep)
				break
			}
		}
	}
}
