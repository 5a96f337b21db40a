package s3acl_test

import (
	"testing"

	"github.com/latticenet/lattice/internal/testkit/deptest"
)

// TestPure keeps the rules pure: no network, no disk, no store.
func TestPure(t *testing.T) {
	deptest.Forbid(t, "github.com/latticenet/lattice/cloud/storage/s3acl",
		"net/http", "github.com/cockroachdb/pebble/...", "github.com/latticenet/lattice/cloud/storage/cloudstore")
}
