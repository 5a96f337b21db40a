package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latticenet/lattice/cloudapi"
	"github.com/latticenet/lattice/cloudstore"
	"github.com/latticenet/lattice/durablefile"
	"github.com/latticenet/lattice/httpmetrics"
	"github.com/latticenet/lattice/s3api"
)

// cloudServer is an open cloud platform: its store, its REST API and the
// lifecycle sweeper, which close stops.
type cloudServer struct {
	st        *cloudstore.Store
	log       *slog.Logger
	publicURL string           // the REST API's URL as clients reach it, for presigned URLs; "" for the request's Host
	api       *cloudapi.Server // set by serve
	s3        *s3api.Server    // set by serve
	// reg holds the platform's metrics: the store's, and those of both
	// servers once serve runs. They are served at GET /metrics on the
	// REST API, or on metricsLn alone if it is set (--metrics).
	reg       *prometheus.Registry
	metricsLn net.Listener
	stopSweep context.CancelFunc
	swept     chan struct{}
}

// sweepInterval is how often expired objects are deleted.
const sweepInterval = 10 * time.Minute

// openCloud opens the cloud platform in dir, creating the admin API key on
// first start: printed once and written to dir/admin-api-key (0600). log
// is the base logger (see newLogger): the cloud's lines add "service".
func openCloud(e *env, dir string, log *slog.Logger) (*cloudServer, error) {
	if log == nil {
		log = slog.Default()
	}
	log = log.With("service", "cloud")
	st, err := cloudstore.OpenDir(dir, log)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "admin-api-key")
	_, secret, err := st.EnsureAdmin(time.Now(), func(secret string) error { return writeSecretFile(path, secret) })
	if err != nil {
		st.Close()
		return nil, err
	}
	if secret != "" {
		fmt.Fprintf(e.stdout, "created the admin API key (shown once, also in %s, mode 0600):\n  %s\n", path, secret)
	}
	ctx, cancel := context.WithCancel(context.Background())
	reg := httpmetrics.NewRegistry()
	reg.MustRegister(storeCollector{st: st, log: log})
	c := &cloudServer{st: st, log: log, reg: reg, stopSweep: cancel, swept: make(chan struct{})}
	go func() {
		defer close(c.swept)
		st.RunLifecycle(ctx, sweepInterval, time.Now, log)
	}()
	return c, nil
}

// s3Region is the region the S3 endpoint serves.
const s3Region = "us-east-1"

// listenFor binds addr for the service that flag (and env) configure, and
// names them in the error, so that a port in use says how to pick another.
func listenFor(addr, flag, env string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w (choose another address with --%s or %s)", addr, err, flag, env)
	}
	return ln, nil
}

// listenCloud binds the REST API's and the S3 endpoint's addresses. The
// commands bind every listener before they create any state, so that a
// port in use fails before a data directory or an admin key is made.
func listenCloud(apiAddr, s3Addr string) (apiLn, s3Ln net.Listener, err error) {
	if apiLn, err = listenFor(apiAddr, "api", "LATTICE_API"); err != nil {
		return nil, nil, err
	}
	if s3Ln, err = listenFor(s3Addr, "s3", "LATTICE_S3"); err != nil {
		apiLn.Close()
		return nil, nil, err
	}
	return apiLn, s3Ln, nil
}

// serve runs the REST API on apiLn and the S3 endpoint on s3Ln (and the
// metrics on c.metricsLn, if set) until ctx ends or one fails, and closes
// them all. All are bound before any serves, so the REST API's endpoint
// record names the S3 address really bound.
func (c *cloudServer) serve(ctx context.Context, e *env, base *slog.Logger, apiLn, s3Ln net.Listener, ready func(apiURL, s3URL string)) error {
	log := base.With("service", "cloud")
	var onAPI http.Handler // /metrics on the REST API, unless it has a listener of its own
	if c.metricsLn == nil {
		onAPI = httpmetrics.Handler(c.reg)
	}
	c.api = cloudapi.New(c.st, cloudapi.Options{Logger: log, S3Endpoint: s3Ln.Addr().String(), Region: s3Region, PublicURL: c.publicURL,
		Metrics: httpmetrics.New(c.reg, "cloud"), MetricsHandler: onAPI})
	c.s3 = s3api.New(c.st, s3api.Options{Logger: base.With("service", "s3"), Region: s3Region, Metrics: httpmetrics.New(c.reg, "s3")})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	quiet := &env{stdout: e.stdout, stderr: io.Discard} // one "shutting down..." is enough
	type server struct {
		ln net.Listener
		h  http.Handler
		e  *env
	}
	servers := []server{{apiLn, c.api, e}, {s3Ln, c.s3, quiet}}
	if c.metricsLn != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", httpmetrics.Handler(c.reg))
		servers = append(servers, server{c.metricsLn, mux, quiet})
	}
	done := make(chan error, len(servers))
	for _, srv := range servers {
		go func() {
			done <- serveOn(ctx, srv.e, log, srv.ln, srv.h, nil, func(string) {})
			cancel()
		}()
	}
	ready("http://"+apiLn.Addr().String(), "http://"+s3Ln.Addr().String())
	var err error
	for range servers {
		if err2 := <-done; err == nil {
			err = err2
		}
	}
	return err
}

// storeCollector gives Prometheus the cloud store's sizes, read at each
// scrape (docs/operations.md lists them).
type storeCollector struct {
	st  *cloudstore.Store
	log *slog.Logger
}

var (
	storeDiskBytes = prometheus.NewDesc("lattice_cloud_store_disk_bytes",
		"Bytes the metadata database (Pebble, in DATA/meta) takes on disk; object bodies over 64 KiB, in DATA/objects, are not included.", nil, nil)
	storeBuckets = prometheus.NewDesc("lattice_cloud_store_buckets",
		"Buckets, of all accounts.", nil, nil)
	storeObjects = prometheus.NewDesc("lattice_cloud_store_objects",
		"Objects in all buckets.", nil, nil)
	storeObjectBytes = prometheus.NewDesc("lattice_cloud_store_object_bytes",
		"Sum of the sizes of all objects (a copy counts again, though it shares its body on disk).", nil, nil)
	storeReadOnly = prometheus.NewDesc("lattice_cloud_store_read_only",
		"1 once a failed disk write has made the store read-only (until a restart), else 0.", nil, nil)
)

func (storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{storeDiskBytes, storeBuckets, storeObjects, storeObjectBytes, storeReadOnly} {
		ch <- d
	}
}

func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	readOnly := 0.0
	if c.st.Err() != nil {
		readOnly = 1
	}
	ch <- prometheus.MustNewConstMetric(storeReadOnly, prometheus.GaugeValue, readOnly)
	ch <- prometheus.MustNewConstMetric(storeDiskBytes, prometheus.GaugeValue, float64(c.st.DiskUsage()))
	t, err := c.st.Totals()
	if err != nil {
		// The scrape goes on without the totals rather than failing.
		c.log.Warn("metrics: reading the store's totals", "err", err)
		return
	}
	ch <- prometheus.MustNewConstMetric(storeBuckets, prometheus.GaugeValue, float64(t.Buckets))
	ch <- prometheus.MustNewConstMetric(storeObjects, prometheus.GaugeValue, float64(t.Objects))
	ch <- prometheus.MustNewConstMetric(storeObjectBytes, prometheus.GaugeValue, float64(t.Bytes))
}

func (c *cloudServer) close() {
	c.stopSweep()
	<-c.swept
	if c.api != nil {
		c.api.Wait()
		c.s3.Wait()
	}
	c.st.Close()
}

// writeSecretFile writes a secret to a 0600 file, durably, replacing a
// stale one (a key file left over from a wiped database).
func writeSecretFile(path, secret string) error {
	return durablefile.Write(path, []byte(secret+"\n"), 0o600)
}

func runCloud(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "apikey" {
		return runAPIKey(ctx, e, args[1:])
	}
	e = e.synced()
	f := newHelpFlags(e, "cloud", "cloud [--data DIR] [--api ADDR] [--s3 ADDR] [--public-url URL] [--metrics ADDR]", `
Runs the cloud platform: its REST API and its S3-compatible endpoint, over
the data directory, until interrupted. On first start it writes an admin
API key to DATA/admin-api-key. Flags also come from the environment
and from a JSON --config file.

Commands:
  apikey create|list|revoke   manage API keys (`+"`lattice cloud apikey -h`"+`)`, `  lattice cloud --data /var/lib/lattice-cloud
  lattice cloud --api 0.0.0.0:8090 --s3 0.0.0.0:9000 --public-url https://cloud.example.com
  lattice cloud apikey create --account alice --api-key $(cat ~/.lattice/cloud/admin-api-key)
`)
	if len(args) > 0 && args[0] == "help" {
		f.Usage()
		return nil
	}
	data := f.string("data", "LATTICE_DATA", "data", homeDir(".lattice", "cloud"), "data directory")
	apiAddr := f.string("api", "LATTICE_API", "api", "127.0.0.1:8090", "REST API address")
	s3Addr := f.string("s3", "LATTICE_S3", "s3", "127.0.0.1:9000", "S3-compatible endpoint address")
	publicURL := f.string("public-url", "LATTICE_PUBLIC_URL", "public_url", "", "the REST API's URL as clients reach it (behind a proxy), for presigned URLs; default http:// and the request's Host")
	metricsAddr := f.string("metrics", "LATTICE_METRICS", "metrics", "", "serve Prometheus metrics at http://ADDR/metrics instead of at the REST API's GET /metrics")
	f.string("config", "LATTICE_CONFIG", "", "", "JSON config file with keys data, api, s3, public_url, metrics, log_level, log_format")
	logLevel := f.string("log-level", "LATTICE_LOG_LEVEL", "log_level", "info", "log level: debug, info, warn, error")
	logFormat := f.string("log-format", "LATTICE_LOG_FORMAT", "log_format", "", "log format: text or json (default: text on a terminal, json otherwise)")
	if err := f.parse(args); err != nil {
		return err
	}
	if *publicURL != "" {
		u, err := url.Parse(*publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErr("--public-url %q: want http(s)://host[:port][/path]", *publicURL)
		}
	}
	log, err := newLogger(e, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	apiLn, s3Ln, err := listenCloud(*apiAddr, *s3Addr)
	if err != nil {
		return err
	}
	var metricsLn net.Listener
	if *metricsAddr != "" {
		if metricsLn, err = listenFor(*metricsAddr, "metrics", "LATTICE_METRICS"); err != nil {
			apiLn.Close()
			s3Ln.Close()
			return err
		}
	}
	c, err := openCloud(e, *data, log)
	if err != nil {
		apiLn.Close()
		s3Ln.Close()
		if metricsLn != nil {
			metricsLn.Close()
		}
		return err
	}
	defer c.close()
	c.publicURL = *publicURL
	c.metricsLn = metricsLn
	return c.serve(ctx, e, log, apiLn, s3Ln, func(apiURL, s3URL string) {
		fmt.Fprintf(e.stdout, "lattice cloud: REST API %s (data %s)\n", apiURL, *data)
		fmt.Fprintf(e.stdout, "lattice cloud: S3 endpoint %s (region %s)\n", s3URL, s3Region)
		metricsURL := apiURL + "/metrics"
		if metricsLn != nil {
			metricsURL = "http://" + metricsLn.Addr().String() + "/metrics"
		}
		fmt.Fprintf(e.stdout, "lattice cloud: metrics %s\n", metricsURL)
	})
}
