package nodeclient_test

import (
	"testing"

	"github.com/latticenet/lattice/internal/testkit/deptest"
)

// TestClientLinksNoServer keeps the client light: a program that talks to
// a node must not link the node, its HTTP handlers, its store or Pebble.
// The resource types it needs are nodewire's. The tests may still run a
// real node; only the package itself is checked.
func TestClientLinksNoServer(t *testing.T) {
	deptest.Forbid(t, "github.com/latticenet/lattice/node/nodeclient",
		"github.com/latticenet/lattice/node/nodeapi",
		"github.com/latticenet/lattice/node",
		"github.com/latticenet/lattice/node/ledgerstore",
		"github.com/cockroachdb/pebble/...",
	)
}
