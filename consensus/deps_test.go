package consensus_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func goList(t *testing.T, format string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", format, "github.com/latticenet/lattice/consensus").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// TestCoreIsPure keeps consensus a pure core like the ledger, so that every
// node tallies the same votes the same way and tests need no clock: it
// imports only the standard library and the ledger core, never the file
// system, the network, time, randomness or locks, and starts no goroutine.
func TestCoreIsPure(t *testing.T) {
	for _, imp := range goList(t, `{{join .Imports " "}}`) {
		switch imp {
		case "os", "io/fs", "net", "time", "math/rand", "math/rand/v2", "crypto/rand", "sync", "sync/atomic":
			t.Errorf("consensus imports %s", imp)
		}
	}
	// Beyond the standard library, consensus may depend on the ledger core
	// and on what the core depends on (signature verification), nothing else.
	allowed := map[string]bool{"github.com/latticenet/lattice/ledger": true}
	out, err := exec.Command("go", "list", "-f", `{{join .Deps " "}}`, "github.com/latticenet/lattice/ledger").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		allowed[dep] = true
	}
	for _, dep := range goList(t, `{{join .Deps " "}}`) {
		first, _, _ := strings.Cut(dep, "/")
		if strings.Contains(first, ".") && !allowed[dep] {
			t.Errorf("consensus depends on %s, which is neither the standard library nor the ledger core", dep)
		}
	}
	files := goList(t, `{{join .GoFiles " "}}`)
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Clean(name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				t.Errorf("%s: consensus starts a goroutine", fset.Position(g.Pos()))
			}
			return true
		})
	}
	if len(files) == 0 {
		t.Fatal("go list found no files in consensus")
	}
}
