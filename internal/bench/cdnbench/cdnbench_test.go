package cdnbench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/bench/program"
)

// RunLatticeEnv, set to 1 in the environment, makes the test binary
// `lattice` (see TestMain in main_test.go).
const RunLatticeEnv = "CDNBENCH_TEST_RUN_LATTICE"

func TestParseWrk(t *testing.T) {
	for _, tt := range []struct {
		file    string
		want    Result
		wantErr string
	}{
		{"wrk-4.1.0.txt", Result{RequestsPerSec: 90131.19, Requests: 90427, P50ms: 0.123, P99ms: 4.81}, ""},
		{"wrk-4.1.0-socket-errors.txt", Result{RequestsPerSec: 38095.20, Requests: 80004, P50ms: 0.033, P99ms: 0.90, SocketErrors: 79621}, ""},
		{"wrk-4.1.0-non2xx.txt", Result{}, "827 of 82712 responses were not 2xx or 3xx"},
	} {
		out, err := os.ReadFile("testdata/" + tt.file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseWrk(string(out))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseWrk(%s): got error %v, want %q", tt.file, err, tt.wantErr)
			}
			continue
		}
		near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
		if err != nil || !near(got.RequestsPerSec, tt.want.RequestsPerSec) || got.Requests != tt.want.Requests ||
			!near(got.P50ms, tt.want.P50ms) || !near(got.P99ms, tt.want.P99ms) || got.SocketErrors != tt.want.SocketErrors {
			t.Errorf("parseWrk(%s): got %+v, %v; want %+v", tt.file, got, err, tt.want)
		}
	}
	if _, err := parseWrk("unable to connect to 127.0.0.1:1 Connection refused\n"); err == nil || !strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("parseWrk of an error: got %v, want an error quoting wrk's last line", err)
	}
}

func TestOrigin(t *testing.T) {
	o, err := startOrigin(3, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer o.close()
	get := func(path, inm string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, o.url+path, nil)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get("/obj/2", "")
	if resp.StatusCode != 200 || len(body) != 1000 || !strings.HasPrefix(body, "object 2\n") {
		t.Errorf("GET /obj/2: %s, %d bytes starting %.10q; want 200, 1000 bytes of object 2", resp.Status, len(body), body)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=3600" {
		t.Errorf("GET /obj/2: Cache-Control %q", cc)
	}
	etag := resp.Header.Get("ETag")
	if resp, _ := get("/obj/2", etag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("GET /obj/2 If-None-Match %s: %s, want 304", etag, resp.Status)
	}
	if _, body1 := get("/obj/1", ""); body1 == body {
		t.Errorf("objects 1 and 2 have the same body")
	}
	for _, path := range []string{"/obj/3", "/obj/-1", "/obj/01", "/other"} {
		if resp, _ := get(path, ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", path, resp.Status)
		}
	}
	if got := o.requests.Load(); got != 6 { // those for /obj/
		t.Errorf("origin counted %d requests, want 6", got)
	}
}

// TestWarmWantsHits checks that warming fails when the second request
// for an object is not a cache hit.
func TestWarmWantsHits(t *testing.T) {
	for _, tt := range []struct {
		xcache  string
		wantErr bool
	}{{"HIT", false}, {"MISS", true}, {"", true}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Host != Host {
				http.Error(w, "wrong host", http.StatusNotFound)
				return
			}
			w.Header().Set("X-Cache", tt.xcache)
			w.Write(objectBody(0, 10))
		}))
		err := warm(context.Background(), srv.Client(), srv.URL, 2, 10)
		srv.Close()
		if (err != nil) != tt.wantErr {
			t.Errorf("warm with X-Cache %q: got %v, want an error: %v", tt.xcache, err, tt.wantErr)
		}
	}
}

func TestNGINXConf(t *testing.T) {
	conf := nginxConf("/tmp/x", 2, 8080, "127.0.0.1:9", false)
	for _, want := range []string{"worker_processes 2;", "listen 127.0.0.1:8080;", "server 127.0.0.1:9;", "access_log off;",
		`proxy_cache_path "/tmp/x/cache"`, "proxy_cache_lock on;", "add_header X-Cache $upstream_cache_status always;"} {
		if !strings.Contains(conf, want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
	if strings.Contains(conf, "user ") {
		t.Errorf("nginx.conf names a user when not run as root")
	}
	if !strings.HasPrefix(nginxConf("/tmp/x", 2, 8080, "127.0.0.1:9", true), "user root;\n") {
		t.Errorf("nginx.conf run as root: want user root")
	}
}

// TestRunSmoke runs the whole benchmark briefly against lattice (this
// test binary as `lattice cloud`) and nginx; it asserts nothing about
// speed.
func TestRunSmoke(t *testing.T) {
	for _, tool := range []string{"wrk", "nginx"} {
		if _, err := program.Find("", tool, ""); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing; CI installs it (.ci/run)", tool)
			}
			t.Skipf("%s is not installed (Debian package %s)", tool, tool)
		}
	}
	t.Setenv(RunLatticeEnv, "1")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := Run(ctx, Config{Objects: 10, ObjectSize: 2000, Duration: time.Second, Rounds: 2, Connections: 4, Threads: 1, Lattice: self})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rounds) != 2 {
		t.Fatalf("%d rounds, want 2", len(r.Rounds))
	}
	for i, x := range r.Rounds {
		for name, res := range map[string]Result{"lattice": x.Lattice, "nginx": x.NGINX} {
			if res.RequestsPerSec <= 0 || res.Requests <= 0 || res.P50ms <= 0 || res.P99ms < res.P50ms {
				t.Errorf("round %d %s: inconsistent figures %+v", i+1, name, res)
			}
		}
		if x.Ratio <= 0 || x.Ratio < r.RatioMin || x.Ratio > r.RatioMax {
			t.Errorf("round %d: ratio %v outside the range %v..%v", i+1, x.Ratio, r.RatioMin, r.RatioMax)
		}
	}
	if r.Median.Lattice.RequestsPerSec <= 0 || r.Median.NGINX.RequestsPerSec <= 0 || r.NGINXVersion == "" {
		t.Errorf("median or version missing: %+v", r)
	}
}
