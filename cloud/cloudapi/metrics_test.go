package cloudapi_test

// Tests of the Prometheus metrics: real requests, then the registry
// scraped, each request counted under its route's pattern and status with
// the bytes it moved each way; GET /metrics served without an API key when
// a handler is set, and an ordinary unknown path when not.

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/internal/run/httpmetrics"
)

// sample is httpmetrics.Sample, failing the test on a gather error.
func sample(t *testing.T, reg prometheus.Gatherer, name string, want map[string]string) float64 {
	t.Helper()
	v, err := httpmetrics.Sample(reg, name, want)
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	return v
}

func TestPrometheusMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := newObjAPI(t, cloudapi.Options{Metrics: httpmetrics.New(reg, "cloud"), MetricsHandler: httpmetrics.Handler(reg)})
	body := strings.Repeat("x", 1000)
	const (
		putRoute      = "PUT /api/storage/buckets/{name}/objects/{key...}"
		downloadRoute = "GET /api/storage/buckets/{name}/download/{key...}"
		bucketsRoute  = "POST /api/storage/buckets"
		listRoute     = "GET /api/storage/buckets"
	)
	tests := []struct {
		name         string
		method, path string
		acme         bool // whether to send acme's key
		body         string
		wantStatus   int
		wantOp       string
	}{
		{"put an object", "PUT", "/api/storage/buckets/pics/objects/a.txt", true, body, 201, putRoute},
		{"download it", "GET", "/api/storage/buckets/pics/download/a.txt", true, "", 200, downloadRoute},
		{"download a missing object", "GET", "/api/storage/buckets/pics/download/nope", true, "", 404, downloadRoute},
		{"create a bucket", "POST", "/api/storage/buckets", true, `{"name":"docs"}`, 201, bucketsRoute},
		{"no key", "GET", "/api/storage/buckets", false, "", 401, listRoute},
		{"unknown path", "GET", "/api/nope", true, "", 404, "unmatched"},
		{"wrong method", "DELETE", "/api/storage/endpoint", true, "", 405, "unmatched"},
		{"unclean path", "GET", "/api/storage/buckets/pics/download/x/../a.txt", true, "", 404, "unmatched"},
		{"liveness", "GET", "/healthz", false, "", 200, "healthz"},
		{"readiness", "GET", "/readyz", false, "", 200, "readyz"},
		{"metrics need no key", "GET", "/metrics", false, "", 200, "metrics"},
		{"metrics are only read", "POST", "/metrics", false, "", 405, "metrics"},
	}
	// The setup's requests count too: the test checks what the table's
	// add to what was there before it.
	type series struct {
		op     string
		status int
	}
	reqLabels := func(s series) map[string]string {
		return map[string]string{"server": "cloud", "op": s.op, "status": strconv.Itoa(s.status)}
	}
	opLabels := func(op string) map[string]string { return map[string]string{"server": "cloud", "op": op} }
	count := map[series]float64{}
	in, out, took := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for _, tt := range tests {
		s := series{tt.wantOp, tt.wantStatus}
		count[s] = sample(t, reg, "lattice_http_requests_total", reqLabels(s))
		in[tt.wantOp] = sample(t, reg, "lattice_http_request_bytes_total", opLabels(tt.wantOp))
		out[tt.wantOp] = sample(t, reg, "lattice_http_response_bytes_total", opLabels(tt.wantOp))
		took[tt.wantOp] = sample(t, reg, "lattice_http_request_duration_seconds", opLabels(tt.wantOp))
	}
	for _, tt := range tests {
		key := ""
		if tt.acme {
			key = a.acme
		}
		var hdr []string
		if tt.method == "PUT" {
			hdr = []string{"Content-Type", "text/plain"}
		}
		r := a.do(tt.method, tt.path, key, tt.body, hdr...)
		if r.status != tt.wantStatus {
			t.Fatalf("%s: %s %s: got %d, want %d: %s", tt.name, tt.method, tt.path, r.status, tt.wantStatus, r.body)
		}
		count[series{tt.wantOp, tt.wantStatus}]++
		in[tt.wantOp] += float64(len(tt.body))
		took[tt.wantOp]++
		if tt.wantOp == "metrics" {
			// The client asked for gzip: the bytes sent are not those read.
			out[tt.wantOp] = -1
		} else if out[tt.wantOp] >= 0 {
			out[tt.wantOp] += float64(len(r.body))
		}
		if tt.name == "metrics need no key" && !strings.Contains(string(r.body), `lattice_http_requests_total{op="`+putRoute+`",server="cloud",status="201"} 1`) {
			t.Errorf("GET /metrics lacks the PUT's counter:\n%s", r.body)
		}
	}
	for s, want := range count {
		if got := sample(t, reg, "lattice_http_requests_total", reqLabels(s)); got != want {
			t.Errorf("requests_total%v: got %v, want %v", reqLabels(s), got, want)
		}
	}
	for op, want := range in {
		if got := sample(t, reg, "lattice_http_request_bytes_total", opLabels(op)); got != want {
			t.Errorf("request_bytes_total{op=%q}: got %v, want %v", op, got, want)
		}
		if got, want := sample(t, reg, "lattice_http_request_duration_seconds", opLabels(op)), took[op]; got != want {
			t.Errorf("request_duration_seconds_count{op=%q}: got %v, want %v", op, got, want)
		}
		if want := out[op]; want >= 0 {
			if got := sample(t, reg, "lattice_http_response_bytes_total", opLabels(op)); got != want {
				t.Errorf("response_bytes_total{op=%q}: got %v, want %v", op, got, want)
			}
		}
	}
	if got, want := in[putRoute], float64(len(body)); got != want {
		t.Errorf("request bytes of the PUT: got %v, want %v", got, want)
	}
	if got, want := out[downloadRoute], float64(len(body)); got < want {
		t.Errorf("response bytes of the downloads: got %v, want at least the object's %v", got, want)
	}
	// Every op is a route's pattern (a method, then a path) or a fixed
	// name: never a request's path, which would make series without bound.
	fixed := map[string]bool{"unmatched": true, "healthz": true, "readyz": true, "metrics": true}
	fams, _ := reg.Gather()
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if op := l.GetValue(); l.GetName() == "op" && !fixed[op] && !regexp.MustCompile(`^[A-Z]+ /`).MatchString(op) {
					t.Errorf("%s has op %q, want a pattern or a fixed name", f.GetName(), op)
				}
			}
		}
	}
}

// TestMetricsOffTheAPI: without a MetricsHandler, /metrics is a path like
// any other: it needs a key, and is not found.
func TestMetricsOffTheAPI(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := newAPI(t, cloudapi.Options{Metrics: httpmetrics.New(reg, "cloud")})
	acme, _ := a.newKey("acme")
	tests := []struct {
		name, key string
		want      int
	}{
		{"no key", "", http.StatusUnauthorized},
		{"a key", acme, http.StatusNotFound},
	}
	for _, tt := range tests {
		if got := a.do("GET", "/metrics", tt.key, "").status; got != tt.want {
			t.Errorf("%s: GET /metrics: got %d, want %d", tt.name, got, tt.want)
		}
	}
	if got := sample(t, reg, "lattice_http_requests_total", map[string]string{"op": "unmatched", "status": "404"}); got != 1 {
		t.Errorf("requests_total{op=unmatched,status=404}: got %v, want 1", got)
	}
}
