package cloudstore

import (
	"fmt"
	"testing"
)

// TestMultipartCount: the number of parts an ETag tells, one included;
// anything that is not "…-N" with N at least 1 tells none.
func TestMultipartCount(t *testing.T) {
	for _, tc := range []struct {
		etag string
		want int
	}{
		{"0123456789abcdef0123456789abcdef", 0},
		{"0123456789abcdef0123456789abcdef-1", 1},
		{"0123456789abcdef0123456789abcdef-2", 2},
		{"0123456789abcdef0123456789abcdef-10000", 10000},
		{"0123456789abcdef0123456789abcdef-0", 0},
		{"0123456789abcdef0123456789abcdef--1", 0},
		{"0123456789abcdef0123456789abcdef-x", 0},
		{"", 0},
	} {
		if got := (Object{ETag: tc.etag}).MultipartCount(); got != tc.want {
			t.Errorf("MultipartCount of %q: got %d, want %d", tc.etag, got, tc.want)
		}
	}
}

// TestObjectPart: the offset and size of each part, the first and the
// last included, and none outside them or when the sizes are not kept.
func TestObjectPart(t *testing.T) {
	obj := Object{PartSizes: []int64{5, 3, 7}}
	for _, tc := range []struct {
		obj  Object
		n    int
		want string // offset size ok
	}{
		{obj, 0, "0 0 false"},
		{obj, 1, "0 5 true"},
		{obj, 2, "5 3 true"},
		{obj, 3, "8 7 true"},
		{obj, 4, "0 0 false"},
		{obj, -1, "0 0 false"},
		{Object{}, 1, "0 0 false"},
	} {
		offset, size, ok := tc.obj.Part(tc.n)
		if got := fmt.Sprint(offset, size, ok); got != tc.want {
			t.Errorf("Part(%d) of sizes %v: got %s, want %s", tc.n, tc.obj.PartSizes, got, tc.want)
		}
	}
}
