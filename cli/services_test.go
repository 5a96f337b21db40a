package cli

import (
	"strings"
	"testing"
)

// TestAddressesAndWrongServices: a host:port is taken for a URL; a client
// pointed at the other service (or the S3 endpoint) says so instead of
// printing that service's raw answer; an unreachable cloud API gets the
// same hint as an unreachable node.
func TestAddressesAndWrongServices(t *testing.T) {
	tn := newTestNode(t)
	cloud := newS3Cloud(t)
	hostPort := strings.TrimPrefix(tn.url, "http://")

	// host:port for the node.
	r := run(t, "balance", "--node", hostPort, "--key", tn.gkey)
	if r.code != 0 || !strings.Contains(r.stdout, "native") {
		t.Errorf("balance --node %s: exit %d, %q %q; want the balance", hostPort, r.code, r.stdout, r.stderr)
	}
	// host:port for the cloud API.
	r = run(t, "s3", "ls", "--api", strings.TrimPrefix(cloud.url, "http://"))
	if r.code != 0 {
		t.Errorf("s3 ls --api host:port: exit %d, %q", r.code, r.stderr)
	}

	// The wallet pointed at the cloud API.
	wantFail(t, run(t, "balance", "--node", cloud.url, "--key", tn.gkey), 1, "answers as the Lattice cloud API", "--node")
	// The s3 commands pointed at the node.
	wantFail(t, run(t, "s3", "ls", "--api", tn.url), 1, "answers as a Lattice ledger node", "--api")
	// An unreachable cloud API.
	wantFail(t, run(t, "s3", "ls", "--api", deadURL(t)), 1, "cannot reach the cloud API", "lattice dev")
}
