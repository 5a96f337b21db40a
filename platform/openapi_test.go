package platform

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/latticenet/lattice/internal/openapitest"
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
	got := p.API().Routes()
	want := openapitest.Cloud.Checker(t).Patterns()
	for _, r := range got {
		if !slices.Contains(want, r) {
			t.Errorf("route %q is not in docs/openapi/cloud.json", r)
		}
	}
	for _, r := range want {
		if !slices.Contains(got, r) {
			t.Errorf("docs/openapi/cloud.json describes %q, which the platform does not route", r)
		}
	}
}
