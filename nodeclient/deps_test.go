package nodeclient_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestClientLinksNoServer keeps the client light: a program that talks to
// a node must not link the node, its HTTP handlers, its store or Pebble.
// The resource types it needs are nodewire's. The tests may still run a
// real node; only the package itself is checked.
//
// The go command is the one running the test: go test puts its own
// GOROOT/bin first on PATH.
func TestClientLinksNoServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Deps " "}}`, "github.com/latticenet/lattice/nodeclient").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{
		"github.com/latticenet/lattice/nodeapi",
		"github.com/latticenet/lattice/node",
		"github.com/latticenet/lattice/ledgerstore",
		"github.com/cockroachdb/pebble",
	}
	deps := strings.Fields(string(out))
	for _, f := range forbidden {
		// One error per forbidden package or tree: Pebble alone is dozens
		// of packages.
		for _, dep := range deps {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("nodeclient depends on %s", dep)
				break
			}
		}
	}
}
