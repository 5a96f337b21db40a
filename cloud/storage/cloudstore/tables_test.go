package cloudstore

import (
	"testing"

	"github.com/latticenet/lattice/internal/testkit/tabletest"
)

// TestTablesDeclaredOnce: every table's one-byte prefix is a const of its
// own, and no two tables share one (the legacy account tables included,
// until they are gone from every data directory).
func TestTablesDeclaredOnce(t *testing.T) {
	tabletest.CheckBytes(t, ".", 16)
}
