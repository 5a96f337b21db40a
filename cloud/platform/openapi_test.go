package platform

import (
	"path/filepath"
	"testing"

	"github.com/latticenet/lattice/internal/testkit/openapitest"
)

// TestOpenAPIDescribesEveryRoute holds docs/openapi/cloud.json to the
// routes of the whole platform (storage, DNS, CDN), both ways.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	p, _ := newTest(t, filepath.Join(t.TempDir(), "cloud"))
	if err := p.Listen(); err != nil {
		t.Fatal(err)
	}
	if err := p.Provision(); err != nil {
		t.Fatal(err)
	}
	openapitest.Cloud.Describes(t, p.API().Routes())
}
