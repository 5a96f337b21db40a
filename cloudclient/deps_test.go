package cloudclient_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestClientLinksNoServer keeps the client light: a program that talks to
// the cloud platform must not link its HTTP handlers, its stores or
// Pebble. The resources it needs are cloudwire's (and dnszone's, the pure
// rules of DNS records). The tests may still run a real server; only the
// package itself is checked.
func TestClientLinksNoServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Deps " "}}`, "github.com/latticenet/lattice/cloudclient").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{
		"github.com/latticenet/lattice/cloudapi",
		"github.com/latticenet/lattice/cloudstore",
		"github.com/latticenet/lattice/s3api",
		"github.com/latticenet/lattice/dnsapi",
		"github.com/latticenet/lattice/dnsstore",
		"github.com/latticenet/lattice/dnsserver",
		"github.com/cockroachdb/pebble",
	}
	deps := strings.Fields(string(out))
	for _, f := range forbidden {
		for _, dep := range deps {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("cloudclient depends on %s", dep)
				break
			}
		}
	}
}
