package s3website_test

import (
	"testing"

	"github.com/latticenet/lattice/internal/testkit/deptest"
)

// TestPure keeps website routing pure: no network, no store.
func TestPure(t *testing.T) {
	deptest.Forbid(t, "github.com/latticenet/lattice/cloud/storage/s3website",
		"net/http", "crypto/tls", "github.com/cockroachdb/pebble/...", "github.com/latticenet/lattice/cloud/storage/cloudstore")
}
