package netaudit_test

import (
	"testing"

	"github.com/latticenet/lattice/internal/deptest"
)

// TestAuditLinksNoServer: the network audit reads nodes through their API
// only, like any client; it must not link the node, its store or Pebble.
func TestAuditLinksNoServer(t *testing.T) {
	deptest.Forbid(t, "github.com/latticenet/lattice/netaudit",
		"github.com/latticenet/lattice/nodeapi",
		"github.com/latticenet/lattice/node",
		"github.com/latticenet/lattice/ledgerstore",
		"github.com/cockroachdb/pebble",
	)
}
