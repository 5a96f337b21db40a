package deptest

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/latticenet/lattice"

// The house's rooms (README.md, "How the code is laid out"): the node's
// wing, the cloud's wing, the pure cores both stand on, and the helpers
// under internal/.
var (
	nodeWing  = module + "/node"
	cloudWing = module + "/cloud"
	cores     = []string{"ledger", "consensus", "chat", "directory", "signature", "pow", "wallet"}
)

func under(pkg, tree string) bool { return pkg == tree || strings.HasPrefix(pkg, tree+"/") }

// TestWingsApart holds the layout to its promise: the node's wing and the
// cloud's wing never import each other, in code or in tests; the shared
// cores and the machine layer import neither wing nor the command line;
// and the runtime helpers under internal/run belong to no wing. Only the
// command line (cli, cmd) and the benchmarks see both.
func TestWingsApart(t *testing.T) {
	cmd := exec.Command("go", "list", "-f",
		`{{.ImportPath}}|{{join .Deps " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, "./...")
	cmd.Dir = filepath.Join("..", "..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 50 {
		t.Fatalf("go list found %d packages; is the test run from its own folder?", len(lines))
	}
	seen := map[string]bool{}
	for _, line := range lines {
		parts := strings.SplitN(line, "|", 3)
		pkg := parts[0]
		seen[pkg] = true
		var forbidden []string
		switch {
		case under(pkg, nodeWing):
			forbidden = []string{cloudWing}
		case under(pkg, cloudWing):
			forbidden = []string{nodeWing}
		case under(pkg, module+"/internal/run"):
			forbidden = []string{nodeWing, cloudWing}
		case under(pkg, module+"/machine"):
			// Virtual machines serve both wings: the cloud's Compute and
			// the node's provider VMs.
			forbidden = []string{nodeWing, cloudWing, module + "/cli"}
		default:
			for _, c := range cores {
				if under(pkg, module+"/"+c) {
					forbidden = []string{nodeWing, cloudWing, module + "/cli"}
				}
			}
		}
		deps := strings.Fields(parts[1] + " " + parts[2])
		for _, f := range forbidden {
			for _, d := range deps {
				if under(d, f) && !under(d, pkg) {
					t.Errorf("%s depends on %s (%s is out of its bounds)", pkg, d, f)
					break
				}
			}
		}
	}
	for _, want := range []string{nodeWing, nodeWing + "/ledgernet", cloudWing + "/platform", cloudWing + "/storage/s3api", module + "/ledger"} {
		if !seen[want] {
			t.Errorf("go list did not list %s: the layout moved and this test did not", want)
		}
	}
}
