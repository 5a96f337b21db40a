package s3api

import "testing"

// FuzzParseRange checks that any Range header either is ignored, is
// refused as unsatisfiable, or names bytes inside the object.
func FuzzParseRange(f *testing.F) {
	for _, v := range []string{"bytes=0-9", "bytes=-5", "bytes=10-", "bytes=5-2", "bytes=0-0,5-9", "items=1-2", "bytes=99999999999999999999-"} {
		f.Add(v, int64(100))
	}
	f.Fuzz(func(t *testing.T, v string, size int64) {
		if size < 0 {
			size = -size
		}
		if size < 0 { // math.MinInt64
			return
		}
		first, last, ok, err := parseRange(v, size)
		if err != nil || !ok {
			return
		}
		if first < 0 || last < first || last >= size {
			t.Fatalf("parseRange(%q, %d) = %d-%d", v, size, first, last)
		}
	})
}
