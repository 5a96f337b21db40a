package cdnrules

import (
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

func TestParseOrigin(t *testing.T) {
	for _, tt := range []struct {
		in, canonical, err string
	}{
		{"https://Example.com/base/", "https://Example.com/base", ""},
		{"http://a.example:8080", "http://a.example:8080", ""},
		{"s3://bucket", "s3://bucket", ""},
		{"s3://bucket/pre/fix", "s3://bucket/pre/fix", ""},
		{"", "", "want http(s)"},
		{"ftp://a.example", "", "want http(s)"},
		{"http:///x", "", "no host"},
		{"http://a.example:0", "", "bad port"},
		{"http://u:p@a.example", "", "no user"},
		{"http://a.example/?x=1", "", "no user, query"},
		{"http://a.example/#f", "", "no user, query"},
		{"s3://A_B", "", "bucket"},
		{"s3://bucket:9000", "", "want s3://"},
	} {
		o, err := ParseOrigin(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseOrigin(%q) = %v, %v; want an error saying %q", tt.in, o, err, tt.err)
		case tt.err == "" && (err != nil || o.String() != tt.canonical):
			t.Errorf("ParseOrigin(%q) = %q, %v; want %q", tt.in, o, err, tt.canonical)
		}
	}
}

func TestCheckDeploymentName(t *testing.T) {
	for name, ok := range map[string]bool{
		"site": true, "a": true, "a-1": true, strings.Repeat("a", 63): true,
		"": false, strings.Repeat("a", 64): false, "Site": false, "a.b": false, "-a": false, "a-": false, "a_b": false,
	} {
		if err := CheckDeploymentName(name); (err == nil) != ok {
			t.Errorf("CheckDeploymentName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func TestCheckDefaultTTL(t *testing.T) {
	for ttl, ok := range map[int]bool{0: true, DefaultTTL: true, MaxDefaultTTL: true, -1: false, MaxDefaultTTL + 1: false} {
		if err := CheckDefaultTTL(ttl); (err == nil) != ok {
			t.Errorf("CheckDefaultTTL(%d) = %v, want ok=%v", ttl, err, ok)
		}
	}
}

// FuzzParseOrigin: any string either fails or gives an origin that is a
// URL of http(s) with a host, or a bucket whose name the store accepts;
// its canonical form parses back to itself.
func FuzzParseOrigin(f *testing.F) {
	for _, s := range []string{"https://example.com/a", "http://h:1/", "s3://bucket/p", "s3://b", "http://[::1]:80", "https://x/%2F", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOrigin(s)
		if err != nil {
			return
		}
		if o.URL != nil {
			if (o.URL.Scheme != "http" && o.URL.Scheme != "https") || o.URL.Hostname() == "" {
				t.Fatalf("ParseOrigin(%q) took %q", s, o)
			}
		} else if storagenames.ExistingBucketName(o.Bucket) != nil {
			t.Fatalf("ParseOrigin(%q) took bucket %q", s, o.Bucket)
		}
		again, err := ParseOrigin(o.String())
		if err != nil || again.String() != o.String() {
			t.Fatalf("ParseOrigin(%q) = %q, which parses to %q, %v", s, o, again, err)
		}
	})
}
