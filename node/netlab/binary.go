package netlab

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// BinaryEnv names the environment variable that gives a lattice binary to
// run instead of building one (for example one built from another tree).
const BinaryEnv = "LATTICE_BIN"

// buildTimeout bounds `go build` of the binary, a cold cache included.
const buildTimeout = 10 * time.Minute

var build struct {
	once sync.Once
	dir  string // the temp dir Binary built into; "" when LATTICE_BIN is used
	path string
	err  error

	mu    sync.Mutex
	flags map[string]string // "<binary> <command>" → its -h output
}

// Binary returns the path of the lattice binary labs run: $LATTICE_BIN
// when set, otherwise the module's cmd/lattice, built once per test binary
// into a temp dir that RemoveBinary removes. ctx bounds the build of the
// first caller; later callers get its result.
func Binary(ctx context.Context) (string, error) {
	build.once.Do(func() {
		if p := os.Getenv(BinaryEnv); p != "" {
			if build.path, build.err = filepath.Abs(p); build.err == nil {
				if _, err := os.Stat(build.path); err != nil {
					build.err = fmt.Errorf("netlab: $%s: %w", BinaryEnv, err)
				}
			}
			return
		}
		dir, err := os.MkdirTemp("", "netlab-bin-")
		if err != nil {
			build.err = fmt.Errorf("netlab: %w", err)
			return
		}
		build.dir, build.path = dir, filepath.Join(dir, "lattice")
		touchSources()
		ctx, cancel := context.WithTimeout(ctx, buildTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "build", "-o", build.path, "github.com/latticenet/lattice/cmd/lattice").CombinedOutput()
		if err != nil {
			build.err = fmt.Errorf("netlab: go build of cmd/lattice: %w\n%s", err, out)
		}
	})
	return build.path, build.err
}

// touchSources reads the modification times of the module's Go files and
// go.mod, from the test process itself: go test caches a result by the
// files its test opened or stat'ed, and the binary is built by a child
// process it cannot see, so without this a change to the node would leave
// a cached pass of these tests in place.
func touchSources() {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return
	}
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && p != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") || d.Name() == "go.mod" || d.Name() == "go.sum") {
			_, _ = os.Stat(p)
		}
		return nil
	})
}

// RemoveBinary removes the binary Binary built, if it built one. TestMain
// calls it after the tests.
func RemoveBinary() {
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
}

// hasFlag reports whether `bin command -h` mentions flag (given without
// dashes), so that a test can use a flag another change is adding only
// once the binary has it. The answer is cached per binary and command.
func hasFlag(ctx context.Context, bin, command, flag string) (bool, error) {
	key := bin + " " + command
	build.mu.Lock()
	help, ok := build.flags[key]
	build.mu.Unlock()
	if !ok {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, command, "-h")
		cmd.Env = cleanEnv()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		// -h exits 0 or 2 depending on the flag package; only the text
		// matters, but a binary that cannot run at all is an error.
		if err := cmd.Run(); err != nil && out.Len() == 0 {
			return false, fmt.Errorf("netlab: %s %s -h: %w", bin, command, err)
		}
		help = out.String()
		build.mu.Lock()
		if build.flags == nil {
			build.flags = map[string]string{}
		}
		build.flags[key] = help
		build.mu.Unlock()
	}
	return strings.Contains(help, "-"+flag+" ") || strings.Contains(help, "-"+flag+"\n") || strings.Contains(help, "-"+flag+"="), nil
}
