package s3api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// FuzzParseTagging checks that a Tagging document or an x-amz-tagging
// header either is refused or gives tags that keep S3's rules: within the
// count, every key and value one checkTag accepts.
func FuzzParseTagging(f *testing.F) {
	f.Add([]byte(`<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag></TagSet></Tagging>`), "a=1&b=two+words")
	f.Add([]byte(`<Tagging><TagSet></TagSet></Tagging>`), "k")
	f.Add([]byte(`<Tagging><TagSet><Tag><Key>aws:x</Key><Value></Value></Tag></TagSet></Tagging>`), "a=1&a=2")
	f.Add([]byte(`<Tagging/>`), "%zz=1;x")
	f.Fuzz(func(t *testing.T, doc []byte, header string) {
		check := func(what string, tags map[string]string, max int) {
			if len(tags) > max {
				t.Fatalf("%s: got %d tags, want at most %d", what, len(tags), max)
			}
			for k, v := range tags {
				if err := checkTag(k, v); err != nil {
					t.Fatalf("%s: got tag %q=%q, which checkTag refuses: %v", what, k, v, err)
				}
			}
		}
		if tags, err := parseTagging(doc, cloudstore.MaxObjectTags); err == nil {
			check(fmt.Sprintf("parseTagging(%q)", doc), tags, cloudstore.MaxObjectTags)
		}
		if tags, err := parseTagHeader(header); err == nil {
			check(fmt.Sprintf("parseTagHeader(%q)", header), tags, cloudstore.MaxObjectTags)
		}
	})
}

// FuzzCopyRange checks that an x-amz-copy-source-range either is refused
// or names a non-empty span of non-negative offsets, and that only the
// form bytes=first-last is taken.
func FuzzCopyRange(f *testing.F) {
	for _, v := range []string{"bytes=0-9", "bytes=5-2", "bytes=-5", "bytes=10-", "bytes=+1-2", "bytes=0-9223372036854775807", " bytes=1-1 "} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		first, last, err := copyRange(v)
		if err != nil {
			return
		}
		if first < 0 || last < first || !strings.Contains(v, "bytes=") {
			t.Fatalf("copyRange(%q) = %d-%d, want 0 <= first <= last from bytes=first-last", v, first, last)
		}
	})
}
