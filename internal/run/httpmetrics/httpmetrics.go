// Package httpmetrics gives a server's HTTP requests to Prometheus: how
// many by operation and status, how long they took, and the bytes they
// carried each way. The servers (the node API, the cloud REST API, the S3
// endpoint) name the operation: a route pattern or an S3 operation name,
// never a raw path, so the number of series stays bounded.
package httpmetrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Metrics counts one server's requests. A nil *Metrics counts nothing.
type Metrics struct {
	requests *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
	bytesIn  *prometheus.CounterVec
	bytesOut *prometheus.CounterVec
}

// New registers the request metrics of the server named server ("node",
// "cloud", "s3") with reg, under the namespace lattice:
//
//	lattice_http_requests_total{server,op,status}
//	lattice_http_request_duration_seconds{server,op}
//	lattice_http_request_bytes_total{server,op}
//	lattice_http_response_bytes_total{server,op}
func New(reg prometheus.Registerer, server string) *Metrics {
	labels := prometheus.Labels{"server": server}
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "lattice", Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests answered, by operation and status code.", ConstLabels: labels}, []string{"op", "status"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "lattice", Subsystem: "http", Name: "request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, by operation.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}, ConstLabels: labels}, []string{"op"}),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "lattice", Subsystem: "http", Name: "request_bytes_total",
			Help: "Request body bytes read, by operation.", ConstLabels: labels}, []string{"op"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "lattice", Subsystem: "http", Name: "response_bytes_total",
			Help: "Response body bytes written, by operation.", ConstLabels: labels}, []string{"op"}),
	}
	reg.MustRegister(m.requests, m.seconds, m.bytesIn, m.bytesOut)
	return m
}

// Observe counts one request of operation op.
func (m *Metrics) Observe(op string, status int, d time.Duration, in, out int64) {
	if m == nil {
		return
	}
	if op == "" {
		op = "unknown"
	}
	m.requests.WithLabelValues(op, strconv.Itoa(status)).Inc()
	m.seconds.WithLabelValues(op).Observe(d.Seconds())
	if in > 0 {
		m.bytesIn.WithLabelValues(op).Add(float64(in))
	}
	if out > 0 {
		m.bytesOut.WithLabelValues(op).Add(float64(out))
	}
}

// NewRegistry returns a registry holding the Go runtime's and the
// process's collectors, for one server's /metrics.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves reg in Prometheus' text format (or OpenMetrics, when
// asked). Its own errors go to the scraper as 500s.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}

// Sample returns the value of the first series of family name whose
// labels include want: a counter's or gauge's value, a histogram's count;
// 0 if there is none. For tests and tools that read a registry.
func Sample(g prometheus.Gatherer, name string, want map[string]string) (float64, error) {
	fams, err := g.Gather()
	if err != nil {
		return 0, err
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue series
				}
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				return m.GetCounter().GetValue(), nil
			case dto.MetricType_GAUGE:
				return m.GetGauge().GetValue(), nil
			case dto.MetricType_HISTOGRAM:
				return float64(m.GetHistogram().GetSampleCount()), nil
			}
		}
	}
	return 0, nil
}
