package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// smallDisk mounts a tmpfs of size bytes at a new directory and unmounts
// it when the test ends. It needs root; without it the test is skipped,
// except in CI (CI=true), where that is a failure.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	tooltest.NeedRoot(t, "mounting a tmpfs")
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mounting a %s tmpfs: %v %s", size, err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestCloudFullDisk fills the disk under a real `lattice cloud`: uploads
// answer 503 once it is full (never hang, never 500), what was uploaded
// before still downloads, SIGTERM stops the process promptly, and once
// there is room again a restart takes uploads again with every
// acknowledged object intact.
func TestCloudFullDisk(t *testing.T) {
	disk := smallDisk(t, "48m")
	dir := filepath.Join(disk, "cloud")
	p := startCloud(t, dir)
	r, err := p.call("POST", "/api/admin/keys", p.admin, "application/json", []byte(`{"account":"full","name":"test"}`))
	if err != nil || r.status != http.StatusCreated {
		t.Fatalf("create API key: %v %d %s", err, r.status, r.body)
	}
	var created struct{ Secret string }
	json.Unmarshal(r.body, &created)
	key := created.Secret
	if r, err := p.call("POST", "/api/storage/buckets", key, "application/json", []byte(`{"name":"full"}`)); err != nil || r.status != http.StatusCreated {
		t.Fatalf("create bucket: %v %d %s", err, r.status, r.body)
	}
	base := "/api/storage/buckets/full"
	acked := map[string][]byte{}
	upload := func(name string, body []byte) cloudResp {
		t.Helper()
		start := time.Now()
		r, err := p.call("POST", base+"/upload?key="+name, key, "application/octet-stream", body)
		if err != nil {
			t.Fatalf("upload %s: %v", name, err)
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("upload %s took %s", name, d)
		}
		if r.status == http.StatusCreated {
			acked[name] = body
		}
		return r
	}
	body := func(i, size int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, size) }
	if r := upload("before", body(0, 100<<10)); r.status != http.StatusCreated {
		t.Fatalf("first upload: %d %s", r.status, r.body)
	}

	// Fill the disk with 2 MiB uploads until one is refused.
	var refused cloudResp
	for i := 1; i < 100; i++ {
		r := upload(fmt.Sprintf("fill-%02d", i), body(i, 2<<20))
		if r.status != http.StatusCreated {
			refused = r
			break
		}
	}
	if refused.status != http.StatusServiceUnavailable || !strings.Contains(string(refused.body), `"unavailable"`) {
		t.Fatalf("an upload to a full disk: got %d %s, want 503 unavailable", refused.status, refused.body)
	}
	// Fill what is left, so that the database's own log cannot grow
	// either, then upload objects small enough to live in the database
	// until its log fails: they too are refused with 503, and from then
	// on every write is, at once.
	filler, err := os.Create(filepath.Join(disk, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for chunk := make([]byte, 1<<20); ; {
		if _, err := filler.Write(chunk); err != nil {
			break
		}
	}
	filler.Close()
	refused = cloudResp{}
	for i := 0; i < 2000 && refused.status == 0; i++ {
		if r := upload(fmt.Sprintf("inline-%04d", i), body(i, 60<<10)); r.status != http.StatusCreated {
			refused = r
		}
	}
	if refused.status != http.StatusServiceUnavailable {
		t.Fatalf("an inline upload to a full disk: got %d %s, want 503", refused.status, refused.body)
	}
	for i := range 3 {
		if r := upload(fmt.Sprintf("late-%d", i), []byte("tiny")); r.status != http.StatusServiceUnavailable {
			t.Errorf("a small upload once the store failed: got %d %s, want 503", r.status, r.body)
		}
	}
	// The probes say so: alive, not ready.
	if r, err := p.call("GET", "/healthz", "", "", nil); err != nil || r.status != http.StatusOK {
		t.Errorf("/healthz of a read-only platform: %v %d %s, want 200", err, r.status, r.body)
	}
	if r, err := p.call("GET", "/readyz", "", "", nil); err != nil || r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.body), "read-only") {
		t.Errorf("/readyz of a read-only platform: %v %d %s, want 503 read-only", err, r.status, r.body)
	}
	// Reads go on.
	checkAll := func(p *cloudProc) {
		t.Helper()
		for name, want := range acked {
			r, err := p.call("GET", base+"/download/"+name, key, "", nil)
			if err != nil || r.status != http.StatusOK || !bytes.Equal(r.body, want) {
				t.Errorf("download %s: %v %d, %d bytes; want %d", name, err, r.status, len(r.body), len(want))
			}
		}
	}
	checkAll(p)
	p.stop(t)
	if t.Failed() {
		t.Logf("lattice cloud's log:\n%s", p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "taking no more writes") {
		t.Errorf("the store's failure was not logged:\n%s", p.stderr.String())
	}
	if strings.Contains(p.stderr.String(), "no space left") && strings.Count(p.stderr.String(), "\n") > 200 {
		t.Errorf("%d log lines on a full disk: the errors are not rate-limited", strings.Count(p.stderr.String(), "\n"))
	}

	// Room again, and a restart: writes resume, nothing acknowledged is lost.
	os.Remove(filepath.Join(disk, "filler"))
	if out, err := exec.Command("mount", "-o", "remount,size=256m", disk).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	p = startCloud(t, dir)
	checkAll(p)
	if r := upload("after", body(1, 3<<20)); r.status != http.StatusCreated {
		t.Errorf("upload after the restart: %d %s", r.status, r.body)
	}
	p.stop(t)
}
