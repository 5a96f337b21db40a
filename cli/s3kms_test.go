package cli

import (
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

// TestS3KMS: lattice s3 kms against the API: create, list, show, disable,
// enable and rotate, as text and JSON, and the mistakes a person makes.
func TestS3KMS(t *testing.T) {
	s := newS3Cloud(t)
	r := mustRun(t, "s3", "kms", "create", "logs", "--description", "for logs")
	k, err := s.st.KMS().Resolve(t.Context(), "acme", "logs")
	if err != nil || strings.TrimSpace(r.stdout) != "arn:aws:kms:us-east-1:acme:key/"+k.ID || !strings.Contains(r.stderr, "alias/logs") {
		t.Fatalf("create printed %q / %q (%+v, %v)", r.stdout, r.stderr, k, err)
	}
	var j cloudwire.KMSKey
	decode(t, mustRun(t, "s3", "kms", "create", "team/billing", "--json"), &j)
	if j.Name != "team/billing" || !j.Enabled || j.Versions != 1 {
		t.Fatalf("create --json = %+v", j)
	}
	lines := strings.Split(strings.TrimSpace(mustRun(t, "s3", "kms", "list").stdout), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "ID NAME STATE VERSIONS CREATED" ||
		!strings.Contains(lines[1], "logs") || !strings.Contains(lines[1], "enabled") || !strings.Contains(lines[2], "team/billing") {
		t.Fatalf("list printed:\n%s", strings.Join(lines, "\n"))
	}
	if out := mustRun(t, "s3", "kms", "disable", "logs").stdout; !strings.Contains(out, "disabled") {
		t.Errorf("disable printed %q", out)
	}
	if k, _ := s.st.KMS().Resolve(t.Context(), "acme", "logs"); k.Enabled {
		t.Error("disable left the key enabled")
	}
	mustRun(t, "s3", "kms", "enable", k.ID)
	if out := mustRun(t, "s3", "kms", "rotate", "logs").stdout; !strings.Contains(out, "ROTATED") || !strings.Contains(out, "VERSIONS     2") {
		t.Errorf("rotate printed %q", out)
	}
	decode(t, mustRun(t, "s3", "kms", "show", j.ID, "--json"), &j)
	if j.Name != "team/billing" {
		t.Errorf("show --json = %+v", j)
	}

	wantFail(t, run(t, "s3", "kms", "show", "nope"), 1, `key "nope" not found`)
	wantFail(t, run(t, "s3", "kms", "create", "logs"), 1, "a key of that name exists")
	wantFail(t, run(t, "s3", "kms", "create", "aws/mine"), 1, "reserved")
	wantFail(t, run(t, "s3", "kms", "create"), 2, "one key NAME")
	wantFail(t, run(t, "s3", "kms", "disable", "logs", "extra"), 2, "one KEY")
	wantFail(t, run(t, "s3", "kms", "list", "extra"), 2, "no arguments")
	wantFail(t, run(t, "s3", "kms", "destroy", "logs"), 2, "kms create NAME")
	if k, _ := s.st.KMS().Resolve(t.Context(), "acme", "logs"); !k.Enabled || k.Versions != 2 {
		t.Errorf("a refused command changed the key: %+v", k)
	}
}
