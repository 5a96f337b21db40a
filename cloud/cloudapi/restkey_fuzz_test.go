package cloudapi

import (
	"path"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

// FuzzRestKey: a key the REST API accepts survives URL path cleaning, so
// the path that names it names nothing else.
func FuzzRestKey(f *testing.F) {
	for _, s := range []string{"a/b", "a//b", "../x", "/lead", "a/./b", "dir/", "a/b/..", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if cloudwire.ValidRESTKey(key) != nil {
			return
		}
		p := "/api/storage/buckets/b/download/" + key
		cleaned := path.Clean(p)
		if strings.HasSuffix(p, "/") {
			cleaned += "/"
		}
		if cleaned != p {
			t.Fatalf("restKey accepted %q, whose path cleans to %q", key, cleaned)
		}
	})
}
