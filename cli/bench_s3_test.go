package cli

import (
	"strings"
	"testing"
)

// TestBenchS3Flags checks that bench s3 refuses phases it does not know
// and copy parts S3 would refuse before it starts anything, and that a
// short run of chosen phases prints their tables and nothing else.
func TestBenchS3Flags(t *testing.T) {
	wantFail(t, run(t, "bench", "s3", "--phases", "large-putt"), 2, "--phases", "large-putt")
	wantFail(t, run(t, "bench", "s3", "--phases", "copy", "--copy-size", "8MiB"), 2, "5 MiB")
	wantFail(t, run(t, "bench", "s3", "--quiet-wait", "-1s"), 2, "--quiet-wait")

	r := run(t, "bench", "s3", "--phases", "small-get,versioned", "--count", "20", "--rounds", "1", "--quiet", "0", "--dir", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"small-put (ops/s)", "small-get (ops/s)", "versioned-put (ops/s)", "versioned: 20 PUTs over 8 keys"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "large-put") {
		t.Errorf("output has a phase not asked for:\n%s", r.stdout)
	}
}
