package s3api_test

// Tests of the Prometheus metrics: real S3 requests, then the registry
// scraped, each request counted under its operation's name and status
// with the bytes it moved each way.

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latticenet/lattice/cloud/storage/s3api"
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
	e := startEnv(t, false, s3api.Options{Metrics: httpmetrics.New(reg, "s3")})
	body := strings.Repeat("y", 3000)
	tests := []struct {
		name         string
		method, path string
		signed       bool
		body         string
		wantStatus   int
		wantOp       string
	}{
		{"create a bucket", "PUT", "/met", true, "", 200, "CreateBucket"},
		{"put an object", "PUT", "/met/k", true, body, 200, "PutObject"},
		{"get it", "GET", "/met/k", true, "", 200, "GetObject"},
		{"get it again", "GET", "/met/k", true, "", 200, "GetObject"},
		{"head it", "HEAD", "/met/k", true, "", 200, "HeadObject"},
		{"get a missing object", "GET", "/met/nope", true, "", 404, "GetObject"},
		{"get anonymously", "GET", "/met/k", false, "", 403, "GetObject"},
		{"list", "GET", "/met?list-type=2", true, "", 200, "ListObjectsV2"},
		{"an unknown write parameter", "PUT", "/met/k?whatever=1", true, "", 501, "Unsupported"},
		{"a known unsupported subresource", "PUT", "/met?replication", true, "", 501, "Unsupported:replication"},
		{"delete it", "DELETE", "/met/k", true, "", 204, "DeleteObject"},
	}
	type series struct {
		op     string
		status int
	}
	count := map[series]float64{}
	in, out := map[string]float64{}, map[string]float64{}
	for _, tt := range tests {
		var err error
		var rd io.Reader
		if tt.body != "" {
			rd = strings.NewReader(tt.body)
		}
		var r *http.Request
		if tt.signed {
			r = e.signed(t, tt.method, tt.path, rd, sha(tt.body), nil)
		} else if r, err = http.NewRequest(tt.method, e.srv.URL+tt.path, rd); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.wantStatus {
			t.Fatalf("%s: %s %s: got %d, want %d: %s", tt.name, tt.method, tt.path, resp.StatusCode, tt.wantStatus, got)
		}
		count[series{tt.wantOp, tt.wantStatus}]++
		in[tt.wantOp] += float64(len(tt.body))
		out[tt.wantOp] += float64(len(got))
	}
	for s, want := range count {
		labels := map[string]string{"server": "s3", "op": s.op, "status": strconv.Itoa(s.status)}
		if got := sample(t, reg, "lattice_http_requests_total", labels); got != want {
			t.Errorf("requests_total%v: got %v, want %v", labels, got, want)
		}
	}
	for op, want := range in {
		labels := map[string]string{"server": "s3", "op": op}
		if got := sample(t, reg, "lattice_http_request_bytes_total", labels); got != want {
			t.Errorf("request_bytes_total{op=%q}: got %v, want %v", op, got, want)
		}
		if got := sample(t, reg, "lattice_http_response_bytes_total", labels); got != out[op] {
			t.Errorf("response_bytes_total{op=%q}: got %v, want %v", op, got, out[op])
		}
	}
	if got, want := in["PutObject"], float64(len(body)); got != want {
		t.Errorf("request bytes of PutObject: got %v, want %v", got, want)
	}
	if got, want := out["GetObject"], float64(2*len(body)); got < want {
		t.Errorf("response bytes of GetObject: got %v, want at least two bodies, %v", got, want)
	}
	if got, want := sample(t, reg, "lattice_http_request_duration_seconds", map[string]string{"op": "GetObject"}), 4.0; got != want {
		t.Errorf("request_duration_seconds_count{op=GetObject}: got %v, want %v", got, want)
	}
	if got := sample(t, reg, "lattice_http_requests_total", map[string]string{"op": "Unsupported:whatever"}); got != 0 {
		t.Errorf("an unknown parameter made a series of its own: %v requests", got)
	}
}
