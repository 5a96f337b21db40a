package nodewire_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps nodewire a package any client can import cheaply: only
// the standard library and the pure cores (ledger, chat, directory,
// statechain, market, timekeeping, and strictjson, which they use), never
// the server, the node or the store.
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "github.com/latticenet/lattice/node/nodewire").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pure := map[string]bool{
		"github.com/latticenet/lattice/ledger":      true,
		"github.com/latticenet/lattice/chat":        true,
		"github.com/latticenet/lattice/directory":   true,
		"github.com/latticenet/lattice/statechain":  true,
		"github.com/latticenet/lattice/market":      true,
		"github.com/latticenet/lattice/timekeeping": true,
		// The strict JSON decoder the cores use (standard library only).
		"github.com/latticenet/lattice/internal/strictjson": true,
	}
	for _, imp := range strings.Fields(string(out)) {
		first, _, _ := strings.Cut(imp, "/")
		if !pure[imp] && strings.Contains(first, ".") {
			t.Errorf("nodewire imports %s; it may import only the standard library and the pure cores", imp)
		}
	}
}
