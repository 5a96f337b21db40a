package s3api

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// TestReadPartOfOldMultipartObject: an object completed before the store
// kept part sizes (its ETag says 3 parts, no sizes recorded) is read as
// one part, the whole object, so that a client downloading part by part
// from part 1 and x-amz-mp-parts-count still gets every byte.
func TestReadPartOfOldMultipartObject(t *testing.T) {
	old := cloudstore.Object{Key: "k", Size: 11 << 20, ETag: "0123456789abcdef0123456789abcdef-3"}
	current := old
	current.PartSizes = []int64{5 << 20, 5 << 20, 1 << 20}
	for _, tt := range []struct {
		name  string
		obj   cloudstore.Object
		query string
		want  string
	}{
		{"old, part 1", old, "partNumber=1", fmt.Sprintf("&{0 %d 0 1} <nil>", 11<<20)},
		{"old, part 2", old, "partNumber=2", "<nil> InvalidPartNumber: The requested partnumber is not satisfiable"},
		{"kept sizes, part 3", current, "partNumber=3", fmt.Sprintf("&{%d %d 3 3} <nil>", 10<<20, 1<<20)},
		{"no partNumber", old, "", "<nil> <nil>"},
	} {
		r := &request{Request: httptest.NewRequest("GET", "/b/k?"+tt.query, nil)}
		p, err := readPart(r, tt.obj)
		if got := fmt.Sprint(p, " ", err); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := old.MultipartCount(); got != 3 {
		t.Errorf("MultipartCount: got %v, want %v", got, 3)
	}
}
