package cloudclient_test

import (
	"testing"

	"github.com/latticenet/lattice/internal/deptest"
)

// TestClientLinksNoServer keeps the client light: a program that talks to
// the cloud platform must not link its HTTP handlers, its stores or
// Pebble. The resources it needs, the CDN's among them, are cloudwire's
// (and dnszone's, the pure rules of DNS records). The tests may still run
// a real server; only the package itself is checked.
func TestClientLinksNoServer(t *testing.T) {
	deptest.Forbid(t, "github.com/latticenet/lattice/cloudclient",
		"github.com/latticenet/lattice/cloudapi",
		"github.com/latticenet/lattice/cloudstore",
		"github.com/latticenet/lattice/s3api",
		"github.com/latticenet/lattice/dnsapi",
		"github.com/latticenet/lattice/dnsstore",
		"github.com/latticenet/lattice/dnsserver",
		"github.com/latticenet/lattice/cdnapi",
		"github.com/latticenet/lattice/cdnstore",
		"github.com/latticenet/lattice/cdnedge",
		"github.com/cockroachdb/pebble",
	)
}
