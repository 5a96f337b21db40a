package netaudit_test

import (
	"testing"

	"github.com/latticenet/lattice/internal/testkit/deptest"
)

// TestAuditLinksNoServer: the network audit reads nodes through their API
// only, like any client; it must not link the node, its store or Pebble.
func TestAuditLinksNoServer(t *testing.T) {
	deptest.Forbid(t, "github.com/latticenet/lattice/node/netaudit",
		"github.com/latticenet/lattice/node/nodeapi",
		"github.com/latticenet/lattice/node",
		"github.com/latticenet/lattice/node/ledgerstore",
		"github.com/cockroachdb/pebble/...",
	)
}
