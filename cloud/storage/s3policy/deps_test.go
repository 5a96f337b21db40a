package s3policy_test

import (
	"testing"

	"github.com/latticenet/lattice/internal/testkit/deptest"
)

// TestPure keeps the evaluator pure: no network, no disk, no store.
func TestPure(t *testing.T) {
	deptest.Forbid(t, "github.com/latticenet/lattice/cloud/storage/s3policy",
		"net/http", "crypto/tls", "github.com/cockroachdb/pebble/...", "github.com/latticenet/lattice/cloud/storage/cloudstore")
}
