package computeapi

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

// TestCreateBodyMatchesVMInput: the server reads a create body as
// createBody and clients write it as cloudwire.VMInput: a field added to
// one and not the other would be a field clients send and the server
// refuses (or the reverse).
func TestCreateBodyMatchesVMInput(t *testing.T) {
	names := func(v any) []string {
		var out []string
		for f := range reflect.TypeOf(v).Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			out = append(out, name)
		}
		slices.Sort(out)
		return out
	}
	if got, want := names(createBody{}), names(cloudwire.VMInput{}); !slices.Equal(got, want) {
		t.Errorf("createBody's fields %v, cloudwire.VMInput's %v", got, want)
	}
}
