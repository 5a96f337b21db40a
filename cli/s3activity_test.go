package cli

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

// TestS3LifecycleEventsMetrics drives lattice s3 lifecycle, events and
// metrics against a real cloud API and checks what they show against
// what was done.
func TestS3LifecycleEventsMetrics(t *testing.T) {
	s := newS3Cloud(t)
	mustRun(t, "s3", "mb", "logs")
	dir := t.TempDir()
	for _, name := range []string{"a.txt", "b.txt", "c.png"} {
		writeFile(t, filepath.Join(dir, name), []byte("data of "+name))
		mustRun(t, "s3", "cp", filepath.Join(dir, name), "s3://logs/tmp/"+name)
	}
	mustRun(t, "s3", "cp", "s3://logs/tmp/a.txt", filepath.Join(dir, "back.txt"))
	mustRun(t, "s3", "rm", "s3://logs/tmp/b.txt")

	// Lifecycle.
	if r := mustRun(t, "s3", "lifecycle", "ls", "logs"); !strings.Contains(r.stdout, "no lifecycle rules") {
		t.Errorf("lifecycle ls of a bucket without rules: %q", r.stdout)
	}
	r := mustRun(t, "s3", "lifecycle", "add", "logs", "--expire-days", "30", "--prefix", "tmp/")
	m := regexp.MustCompile(`^rule (\S+): objects under tmp/ of s3://logs expire 30 days`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("lifecycle add: %q", r.stdout)
	}
	id := m[1]
	var rules []cloudwire.LifecycleRule
	if err := json.Unmarshal([]byte(mustRun(t, "s3", "lifecycle", "ls", "logs", "--json").stdout), &rules); err != nil ||
		len(rules) != 1 || rules[0].ID != id || rules[0].ExpireDays != 30 || rules[0].Prefix != "tmp/" {
		t.Errorf("lifecycle ls --json: %+v, %v", rules, err)
	}
	// --output json is --json; --output table the default.
	if a, b := mustRun(t, "s3", "lifecycle", "ls", "logs", "--output", "json").stdout, mustRun(t, "s3", "lifecycle", "ls", "logs", "--json").stdout; a != b {
		t.Errorf("--output json printed %q, --json %q", a, b)
	}
	if r := mustRun(t, "s3", "lifecycle", "ls", "logs", "--json", "--output", "table"); !strings.HasPrefix(r.stdout, "ID ") {
		t.Errorf("--output table after --json: %q", r.stdout)
	}
	wantFail(t, run(t, "s3", "lifecycle", "ls", "logs", "--output", "yaml"), 2, "want table or json")
	wantFail(t, run(t, "s3", "lifecycle", "add", "logs"), 2, "--expire-days is required")
	wantFail(t, run(t, "s3", "lifecycle", "add", "logs", "--expire-days", "100000"), 1, "expire_days")
	wantFail(t, run(t, "s3", "lifecycle", "add", "nosuch", "--expire-days", "3"), 1, "nosuch")
	wantFail(t, run(t, "s3", "lifecycle", "frob", "logs"), 2, "unknown command")
	mustRun(t, "s3", "lifecycle", "rm", "logs", id)
	wantFail(t, run(t, "s3", "lifecycle", "rm", "logs", id), 1)

	// Events: newest first, every change above, none for the download.
	var evs cloudwire.List[cloudwire.Event]
	if err := json.Unmarshal([]byte(mustRun(t, "s3", "events", "logs", "--json").stdout), &evs); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range evs.Data {
		types = append(types, ev.Type)
	}
	want := []string{"lifecycle.rule_removed", "lifecycle.rule_added", "object.deleted", "object.created", "object.created", "object.created", "bucket.created"}
	if !slices.Equal(types, want) || evs.Meta.Total != len(want) {
		t.Errorf("events: %v (total %d), want %v", types, evs.Meta.Total, want)
	}
	text := mustRun(t, "s3", "events", "logs", "--limit", "2").stdout
	if !strings.Contains(text, "lifecycle.rule_removed") || strings.Contains(text, "object.deleted") ||
		!strings.Contains(text, "(2 of 7 events; --page 2 for more)") {
		t.Errorf("events --limit 2:\n%s", text)
	}
	if text := mustRun(t, "s3", "events", "logs", "--limit", "2", "--page", "2").stdout; !strings.Contains(text, "tmp/b.txt") {
		t.Errorf("events page 2 lacks the deletion of tmp/b.txt:\n%s", text)
	}
	wantFail(t, run(t, "s3", "events", "logs", "--limit", "0"), 2, "--limit")

	// Metrics: the summary, the top objects and the types.
	var sum cloudwire.MetricsSummary
	if err := json.Unmarshal([]byte(mustRun(t, "s3", "metrics", "logs", "--json").stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Requests.Put != 3 || sum.Requests.Get != 1 || sum.Requests.Delete != 1 || sum.ObjectCount != 2 {
		t.Errorf("metrics summary: %+v, want 3 puts, 1 get, 1 delete, 2 objects", sum)
	}
	if text := mustRun(t, "s3", "metrics", "logs").stdout; !strings.Contains(text, "stored now:") || !strings.Contains(text, "2 objects") {
		t.Errorf("metrics:\n%s", text)
	}
	if text := mustRun(t, "s3", "metrics", "logs", "--top").stdout; !strings.Contains(text, "tmp/a.txt") {
		t.Errorf("metrics --top lacks tmp/a.txt:\n%s", text)
	}
	if text := mustRun(t, "s3", "metrics", "logs", "--types").stdout; !regexp.MustCompile(`(?m)^txt +1 `).MatchString(text) ||
		!regexp.MustCompile(`(?m)^png +1 `).MatchString(text) {
		t.Errorf("metrics --types:\n%s", text)
	}
	if text := mustRun(t, "s3", "metrics", "logs", "--hourly", "--hours", "2").stdout; !strings.HasPrefix(text, "HOUR") {
		t.Errorf("metrics --hourly:\n%s", text)
	}
	wantFail(t, run(t, "s3", "metrics", "logs", "--top", "--types"), 2, "one view")
	wantFail(t, run(t, "s3", "metrics", "logs", "--hours", "0"), 2, "--hours")

	// Another account sees none of it.
	_, other, err := s.acc.CreateKey("globex", "", false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LATTICE_API_KEY", other)
	wantFail(t, run(t, "s3", "events", "logs"), 1, "logs")
	wantFail(t, run(t, "s3", "metrics", "logs"), 1, "logs")
	wantFail(t, run(t, "s3", "lifecycle", "ls", "logs"), 1, "logs")
}

// TestS3ZipAndMove checks lattice s3 zip (a real ZIP of the objects under
// a prefix) and lattice s3 mv in its three directions.
func TestS3ZipAndMove(t *testing.T) {
	s := newS3Cloud(t)
	mustRun(t, "s3", "mb", "box")
	dir := t.TempDir()
	files := map[string]string{"day1/a.txt": "alpha", "day1/b.txt": "beta", "day2/c.txt": "gamma"}
	for k, v := range files {
		writeFile(t, filepath.Join(dir, "up.txt"), []byte(v))
		mustRun(t, "s3", "cp", filepath.Join(dir, "up.txt"), "s3://box/"+k)
	}

	out := filepath.Join(dir, "day1.zip")
	mustRun(t, "s3", "zip", "s3://box/day1/", out)
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatalf("the ZIP: %v", err)
	}
	got := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		got[f.Name] = string(b)
	}
	zr.Close()
	if len(got) != 2 || got["day1/a.txt"] != "alpha" || got["day1/b.txt"] != "beta" {
		t.Errorf("the ZIP of day1/ holds %v", got)
	}
	wantFail(t, run(t, "s3", "zip", "s3://box/nothing/", filepath.Join(dir, "x.zip")), 1, "no objects")
	wantFail(t, run(t, "s3", "zip", "box", filepath.Join(dir, "x.zip")), 2, "s3://")
	if _, err := os.Stat(filepath.Join(dir, "x.zip")); !os.IsNotExist(err) {
		t.Errorf("a failed zip left a file (%v)", err)
	}

	// Within the bucket.
	if r := mustRun(t, "s3", "mv", "s3://box/day2/c.txt", "s3://box/archive/c.txt"); !strings.HasPrefix(r.stdout, "move: s3://box/day2/c.txt to s3://box/archive/c.txt") {
		t.Errorf("mv says %q, want a move: line", r.stdout)
	}
	if b, _ := s.object(t, "box", "archive/c.txt"); string(b) != "gamma" {
		t.Errorf("after mv: archive/c.txt = %q", b)
	}
	if keys := s.keys(t, "box"); slices.Contains(keys, "day2/c.txt") {
		t.Errorf("mv left its source: %v", keys)
	}
	// An upload removes the local file.
	local := filepath.Join(dir, "report.txt")
	writeFile(t, local, []byte("report"))
	mustRun(t, "s3", "mv", local, "s3://box/report.txt")
	if _, err := os.Stat(local); !os.IsNotExist(err) {
		t.Errorf("mv of a local file left it (%v)", err)
	}
	// A download removes the object.
	mustRun(t, "s3", "mv", "s3://box/report.txt", filepath.Join(dir, "back.txt"))
	if b, err := os.ReadFile(filepath.Join(dir, "back.txt")); err != nil || string(b) != "report" {
		t.Errorf("mv download: %q, %v", b, err)
	}
	if keys := s.keys(t, "box"); slices.Contains(keys, "report.txt") {
		t.Errorf("mv download left the object: %v", keys)
	}
	// A failed copy deletes nothing.
	wantFail(t, run(t, "s3", "mv", "s3://box/nosuch.txt", filepath.Join(dir, "n.txt")), 1)
	wantFail(t, run(t, "s3", "mv", filepath.Join(dir, "missing.txt"), "s3://box/m.txt"), 1)
	wantFail(t, run(t, "s3", "mv", "s3://box/day1/", dir), 2, "one object")
	wantFail(t, run(t, "s3", "mv", "-", "s3://box/x"), 2, "lattice s3 cp")
	if keys := s.keys(t, "box"); len(keys) != 3 {
		t.Errorf("after the refused moves the bucket holds %v, want 3 objects", keys)
	}
}
