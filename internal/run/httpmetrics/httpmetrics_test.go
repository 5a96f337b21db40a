package httpmetrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestObserve(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, "node")
	m.Observe("GET /node", 200, time.Millisecond, 0, 120)
	m.Observe("GET /node", 200, time.Millisecond, 0, 80)
	m.Observe("POST /blocks/send", 400, time.Millisecond, 300, 40)
	m.Observe("", 404, time.Millisecond, 0, 10)

	for _, tt := range []struct {
		name string
		c    prometheus.Collector
		want float64
	}{
		{"GET /node 200", m.requests.WithLabelValues("GET /node", "200"), 2},
		{"POST 400", m.requests.WithLabelValues("POST /blocks/send", "400"), 1},
		{"no op is unknown", m.requests.WithLabelValues("unknown", "404"), 1},
		{"bytes out of GET /node", m.bytesOut.WithLabelValues("GET /node"), 200},
		{"bytes in of POST", m.bytesIn.WithLabelValues("POST /blocks/send"), 300},
	} {
		if got := testutil.ToFloat64(tt.c); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := testutil.CollectAndCount(m.seconds); got != 3 {
		t.Errorf("duration series: got %d, want 3 (one an op)", got)
	}
	err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP lattice_http_request_bytes_total Request body bytes read, by operation.
# TYPE lattice_http_request_bytes_total counter
lattice_http_request_bytes_total{op="POST /blocks/send",server="node"} 300
`), "lattice_http_request_bytes_total")
	if err != nil {
		t.Error(err)
	}
}

func TestNilCountsNothing(t *testing.T) {
	var m *Metrics
	m.Observe("GET /node", 200, time.Second, 1, 1) // must not panic
}
