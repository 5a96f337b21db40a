package cloudclient_test

import (
	"testing"

	"github.com/latticenet/lattice/internal/testkit/deptest"
)

// TestClientLinksNoServer keeps the client light: a program that talks to
// the cloud platform must not link its HTTP handlers, its stores or
// Pebble. The resources it needs, the CDN's among them, are cloudwire's
// (and dnszone's, the pure rules of DNS records). The tests may still run
// a real server; only the package itself is checked.
func TestClientLinksNoServer(t *testing.T) {
	deptest.Forbid(t, "github.com/latticenet/lattice/cloud/cloudclient",
		"github.com/latticenet/lattice/cloud/cloudapi",
		"github.com/latticenet/lattice/cloud/storage/cloudstore",
		"github.com/latticenet/lattice/cloud/storage/s3api",
		"github.com/latticenet/lattice/cloud/dns/dnsapi",
		"github.com/latticenet/lattice/cloud/dns/dnsstore",
		"github.com/latticenet/lattice/cloud/dns/dnsserver",
		"github.com/latticenet/lattice/cloud/cdn/cdnapi",
		"github.com/latticenet/lattice/cloud/cdn/cdnstore",
		"github.com/latticenet/lattice/cloud/cdn/cdnedge",
		"github.com/latticenet/lattice/cloud/compute/computeapi",
		"github.com/latticenet/lattice/cloud/compute/computestore",
		"github.com/latticenet/lattice/cloud/compute/vmhost",
		"github.com/latticenet/lattice/machine/...",
		"github.com/cockroachdb/pebble/...",
	)
}
