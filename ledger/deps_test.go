package ledger_test

import (
	"os/exec"
	"strings"
	"testing"
)

func goList(t *testing.T, format string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", format, "github.com/latticenet/lattice/ledger").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// TestCoreIsPure keeps the ledger core free of I/O and of the clock, so
// that it stays deterministic and every node reaches the same ledger: it
// may not import the file system, the network or time, directly, nor
// depend on storage or networking packages at any depth.
func TestCoreIsPure(t *testing.T) {
	for _, imp := range goList(t, `{{join .Imports " "}}`) {
		switch imp {
		case "os", "io/fs", "net", "time", "math/rand", "math/rand/v2", "crypto/rand":
			t.Errorf("the ledger core imports %s", imp)
		}
	}
	for _, dep := range goList(t, `{{join .Deps " "}}`) {
		for _, f := range []string{"net/http", "database/sql", "github.com/cockroachdb/pebble", "github.com/libp2p"} {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("the ledger core depends on %s", dep)
			}
		}
	}
}
