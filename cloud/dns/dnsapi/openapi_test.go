package dnsapi_test

import (
	"os"
	"testing"

	"github.com/latticenet/lattice/internal/testkit/openapitest"
)

// TestMain fails the package when one of its documented operations was
// answered by no test: every one is validated against a real response.
func TestMain(m *testing.M) {
	os.Exit(openapitest.Cloud.Covered(m.Run(), "/api/dns/"))
}
