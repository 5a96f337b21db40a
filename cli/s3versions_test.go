package cli

// Tests of `lattice s3 versioning` and `lattice s3 versions` against a
// real cloud API.

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

func TestS3Versioning(t *testing.T) {
	s := newS3Cloud(t)
	mustRun(t, "s3", "mb", "drafts")
	put := func(key, body string) {
		t.Helper()
		if _, err := s.c.Upload(t.Context(), "drafts", key, "text/plain", strings.NewReader(body), int64(len(body))); err != nil {
			t.Fatal(err)
		}
	}
	put("old.txt", "old")

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"drafts"}, "s3://drafts has never kept versions: turn it on with `lattice s3 versioning drafts on`\n"},
		{[]string{"drafts", "on"}, "s3://drafts keeps versions: a write keeps the object it replaces, a delete leaves a delete marker\nnoncurrent versions (delete markers included): 0, 0 B\n"},
		{[]string{"s3://drafts", "suspend"}, "s3://drafts: versioning suspended: writes replace the null version; the versions kept stay\nnoncurrent versions (delete markers included): 0, 0 B\n"},
		{[]string{"drafts", "ON"}, "s3://drafts keeps versions: a write keeps the object it replaces, a delete leaves a delete marker\nnoncurrent versions (delete markers included): 0, 0 B\n"},
	} {
		if r := mustRun(t, append([]string{"s3", "versioning"}, tt.args...)...); r.stdout != tt.want {
			t.Errorf("versioning %v printed %q, want %q", tt.args, r.stdout, tt.want)
		}
	}
	put("essay.txt", "first")
	put("essay.txt", "second!")
	if err := s.c.DeleteObject(t.Context(), "drafts", "essay.txt"); err != nil {
		t.Fatal(err)
	}
	var b cloudwire.Bucket
	decode(t, mustRun(t, "s3", "versioning", "drafts", "--json"), &b)
	if b.Versioning != "Enabled" || *b.NoncurrentVersionCount != 3 || *b.NoncurrentSizeBytes != 12 {
		t.Errorf("versioning --json = %+v", b)
	}

	// The listing: each key's newest first, the marker latest.
	r := mustRun(t, "s3", "versions", "drafts")
	want := regexp.MustCompile(`^KEY +VERSION +LATEST +SIZE +MODIFIED\n` +
		`essay\.txt +[0-9a-f]{24} +yes +\(delete marker\) +\S+ \S+\n` +
		`essay\.txt +[0-9a-f]{24} +7 B +\S+ \S+\n` +
		`essay\.txt +[0-9a-f]{24} +5 B +\S+ \S+\n` +
		`old\.txt +null +yes +3 B +\S+ \S+\n$`)
	if !want.MatchString(r.stdout) {
		t.Errorf("versions printed:\n%s", r.stdout)
	}
	var vs []cloudwire.ObjectVersion
	decode(t, mustRun(t, "s3", "versions", "drafts", "--prefix", "essay", "--json"), &vs)
	if len(vs) != 3 || !vs[0].DeleteMarker || vs[1].Size != 7 || vs[2].Size != 5 {
		t.Errorf("versions --prefix essay --json = %+v", vs)
	}
	vs = nil
	decode(t, mustRun(t, "s3", "versions", "s3://drafts/old", "--json"), &vs)
	if len(vs) != 1 || vs[0].VersionID != "null" || !vs[0].IsLatest {
		t.Errorf("versions s3://drafts/old --json = %+v", vs)
	}
	if r := mustRun(t, "s3", "versions", "drafts", "--prefix", "nothing/"); r.stdout != "no versions under s3://drafts/nothing/\n" {
		t.Errorf("versions of an empty prefix printed %q", r.stdout)
	}
	vs = nil
	decode(t, mustRun(t, "s3", "versions", "drafts", "--prefix", "nothing/", "--json"), &vs)
	if vs == nil || len(vs) != 0 {
		t.Errorf("versions --json of an empty prefix = %v, want []", vs)
	}

	// More than a page: the markers are followed to the end.
	for i := range cloudwire.MaxPerPage {
		put("many", fmt.Sprint(i))
	}
	vs = nil
	decode(t, mustRun(t, "s3", "versions", "drafts", "--prefix", "many", "--json"), &vs)
	if len(vs) != cloudwire.MaxPerPage || !vs[0].IsLatest || vs[0].ETag == vs[1].ETag {
		t.Errorf("versions of many: %d, want %d, the newest first", len(vs), cloudwire.MaxPerPage)
	}
	put("many", "one more")
	vs = nil
	decode(t, mustRun(t, "s3", "versions", "drafts", "--json"), &vs)
	if got, want := len(vs), 3+1+cloudwire.MaxPerPage+1; got != want {
		t.Errorf("versions of the bucket: %d, want %d", got, want)
	}

	// rb refuses a bucket that holds versions only; --force deletes them.
	if err := s.c.DeleteObject(t.Context(), "drafts", "old.txt"); err != nil {
		t.Fatal(err)
	}
	if err := s.c.DeleteObject(t.Context(), "drafts", "many"); err != nil {
		t.Fatal(err)
	}
	wantFail(t, run(t, "s3", "rb", "drafts"), 1, `bucket "drafts" is not empty`, "lattice s3 versions drafts", "rb --force")
	r = mustRun(t, "s3", "rb", "drafts", "--force")
	if got, want := strings.Count(r.stdout, " (version "), 3+2+cloudwire.MaxPerPage+2; got != want || !strings.HasSuffix(r.stdout, "remove_bucket: drafts\n") {
		t.Errorf("rb --force: %d versions deleted, want %d:\n%s", got, want, r.stdout)
	}
}

func TestS3VersioningErrors(t *testing.T) {
	s := newS3Cloud(t)
	mustRun(t, "s3", "mb", "drafts")
	for _, tt := range []struct {
		args []string
		code int
		msgs []string
	}{
		{[]string{"versioning"}, 2, []string{"want a bucket", "lattice s3 versioning -h"}},
		{[]string{"versioning", "drafts", "on", "now"}, 2, []string{"want a bucket"}},
		{[]string{"versioning", "drafts", "off"}, 2, []string{"cannot be turned off", "suspend"}},
		{[]string{"versioning", "drafts", "maybe"}, 2, []string{`want on or suspend, not "maybe"`}},
		{[]string{"versioning", "s3://drafts/key", "on"}, 2, []string{"want a bucket, not an object"}},
		{[]string{"versioning", "nope", "on"}, 1, []string{`bucket "nope" not found`}},
		{[]string{"versioning", "nope"}, 1, []string{`bucket "nope" not found`}},
		{[]string{"versions"}, 2, []string{"want a bucket"}},
		{[]string{"versions", "s3://drafts/a/", "--prefix", "b/"}, 2, []string{"give the prefix once"}},
		{[]string{"versions", "nope"}, 1, []string{`bucket "nope" not found`}},
	} {
		wantFail(t, run(t, append([]string{"s3"}, tt.args...)...), tt.code, tt.msgs...)
	}
	// Another account's bucket is not found, as a missing one.
	_, other, err := s.acc.CreateKey("other", "", false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LATTICE_API_KEY", other)
	wantFail(t, run(t, "s3", "versions", "drafts"), 1, `bucket "drafts" not found`)
	wantFail(t, run(t, "s3", "versioning", "drafts", "on"), 1, `bucket "drafts" not found`)
	t.Setenv("LATTICE_API_KEY", "lat_live_nope")
	wantFail(t, run(t, "s3", "versions", "drafts"), 1, "check --api-key")
}

func TestS3VersionsHelp(t *testing.T) {
	cleanEnv(t)
	for _, tt := range []struct{ cmd, usage, example string }{
		{"versioning", "Usage: lattice s3 versioning BUCKET [on|suspend]", "lattice s3 versioning drafts on"},
		{"versions", "Usage: lattice s3 versions BUCKET[/PREFIX] [--prefix P]", "lattice s3 versions drafts --prefix essays/"},
	} {
		r := run(t, "s3", tt.cmd, "-h")
		if r.code != 0 || !strings.Contains(r.stdout, tt.usage) || !strings.Contains(r.stdout, tt.example) {
			t.Errorf("s3 %s -h: exit %d, stdout %q", tt.cmd, r.code, r.stdout)
		}
	}
}
