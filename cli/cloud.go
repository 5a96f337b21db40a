package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latticenet/lattice/accounts"
	"github.com/latticenet/lattice/cdnapi"
	"github.com/latticenet/lattice/cdnedge"
	"github.com/latticenet/lattice/cdnstore"
	"github.com/latticenet/lattice/cloudapi"
	"github.com/latticenet/lattice/cloudstore"
	"github.com/latticenet/lattice/dnsapi"
	"github.com/latticenet/lattice/dnsserver"
	"github.com/latticenet/lattice/dnsstore"
	"github.com/latticenet/lattice/httpmetrics"
	"github.com/latticenet/lattice/internal/durablefile"
	"github.com/latticenet/lattice/s3api"
)

// cloudServer is an open cloud platform: its store, its REST API and the
// lifecycle sweeper, which close stops.
type cloudServer struct {
	st        *cloudstore.Store
	acc       *accounts.Store
	dns       *dnsstore.Store
	cdn       *cdnstore.Store
	edge      *cdnedge.Edge
	opts      cloudOptions
	log       *slog.Logger
	publicURL string           // the REST API's URL as clients reach it, for presigned URLs; "" for the request's Host
	api       *cloudapi.Server // set by serve
	s3        *s3api.Server    // set by serve
	// reg holds the platform's metrics: the store's, and those of both
	// servers once serve runs. They are served at GET /metrics on the
	// REST API, or on metricsLn alone if it is set (--metrics).
	reg       *prometheus.Registry
	stopSweep context.CancelFunc
	swept     chan struct{}
}

// sweepInterval is how often expired objects are deleted.
const sweepInterval = 10 * time.Minute

// cloudOptions are the cloud platform's settings beyond its addresses.
type cloudOptions struct {
	// PublicURL is the REST API's URL as clients reach it, for presigned
	// URLs; "" for the request's Host.
	PublicURL string
	// Nameservers name the platform's DNS servers (every zone's apex NS
	// records); default ns1.lattice.test.
	Nameservers []string
	// DNSTransferFrom may transfer zones; DNSNotify are told of changes.
	DNSTransferFrom []netip.Prefix
	DNSNotify       []string
	// CDNDomain is the CDN's own domain (deployment NAME answers at
	// NAME.CDNDomain); CDNPrivateOrigins lets origins be loopback or
	// private addresses.
	CDNDomain         string
	CDNPrivateOrigins bool
}

// openCloud opens the cloud platform in dir, creating the admin API key on
// first start: printed once and written to dir/admin-api-key (0600). log
// is the base logger (see newLogger): the cloud's lines add "service".
func openCloud(e *env, dir string, log *slog.Logger, opts cloudOptions) (*cloudServer, error) {
	if log == nil {
		log = slog.Default()
	}
	log = log.With("service", "cloud")
	st, err := cloudstore.OpenDir(dir, log)
	if err != nil {
		return nil, err
	}
	acc, err := openAccounts(dir, st, log)
	if err != nil {
		st.Close()
		return nil, err
	}
	dns, err := dnsstore.Open(filepath.Join(dir, "dns"), dnsstore.Options{Nameservers: opts.Nameservers, Logger: log.With("service", "dns")})
	if err != nil {
		st.Close()
		return nil, err
	}
	cdn, err := cdnstore.Open(filepath.Join(dir, "cdn"), cdnstore.Options{Domain: opts.CDNDomain, Logger: log.With("service", "cdn")})
	if err != nil {
		dns.Close()
		acc.Close()
		st.Close()
		return nil, err
	}
	edge, err := cdnedge.New(cdnedge.Options{Store: cdn, Buckets: st, CacheDir: filepath.Join(dir, "cdn-cache"),
		AllowPrivateOrigins: opts.CDNPrivateOrigins, Logger: log.With("service", "cdn")})
	if err != nil {
		cdn.Close()
		dns.Close()
		acc.Close()
		st.Close()
		return nil, err
	}
	path := filepath.Join(dir, "admin-api-key")
	_, secret, err := acc.EnsureAdmin(time.Now(), func(secret string) error { return writeSecretFile(path, secret) })
	if err != nil {
		edge.Close()
		cdn.Close()
		dns.Close()
		acc.Close()
		st.Close()
		return nil, err
	}
	if secret != "" {
		fmt.Fprintf(e.stdout, "created the admin API key (shown once, also in %s, mode 0600):\n  %s\n", path, secret)
	}
	ctx, cancel := context.WithCancel(context.Background())
	reg := httpmetrics.NewRegistry()
	reg.MustRegister(storeCollector{st: st, log: log}, cdnCollector{edge})
	c := &cloudServer{st: st, acc: acc, dns: dns, cdn: cdn, edge: edge, opts: opts, log: log, reg: reg, stopSweep: cancel, swept: make(chan struct{})}
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

// cloudAddrs are the addresses the cloud platform serves on; DNS ""
// runs no DNS server (the API still keeps zones), CDN "" no edge (the
// API still keeps deployments), Metrics "" serves the metrics on the
// REST API.
type cloudAddrs struct{ API, S3, DNS, CDN, Metrics string }

// cloudListeners are the platform's bound sockets.
type cloudListeners struct {
	api, s3, cdn, metrics net.Listener
	dnsUDP                []net.PacketConn
	dnsTCP                net.Listener
}

// listenCloud binds every address of a. The commands bind every listener
// before they create any state, so that a port in use fails before a data
// directory or an admin key is made.
func listenCloud(a cloudAddrs) (_ *cloudListeners, err error) {
	l := &cloudListeners{}
	defer func() {
		if err != nil {
			l.close()
		}
	}()
	if l.api, err = listenFor(a.API, "api", "LATTICE_API"); err != nil {
		return nil, err
	}
	if l.s3, err = listenFor(a.S3, "s3", "LATTICE_S3"); err != nil {
		return nil, err
	}
	if a.DNS != "" {
		if l.dnsUDP, l.dnsTCP, err = listenDNS(a.DNS); err != nil {
			return nil, err
		}
	}
	if a.CDN != "" {
		if l.cdn, err = listenFor(a.CDN, "cdn", "LATTICE_CDN"); err != nil {
			return nil, err
		}
	}
	if a.Metrics != "" {
		if l.metrics, err = listenFor(a.Metrics, "metrics", "LATTICE_METRICS"); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// listenDNS binds addr for the DNS server (dnsserver.Listen), naming the
// flag in the error.
func listenDNS(addr string) ([]net.PacketConn, net.Listener, error) {
	udp, tcp, err := dnsserver.Listen(addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen %s (DNS): %w (choose another address with --dns or LATTICE_DNS; \"\" runs no DNS server)", addr, err)
	}
	return udp, tcp, nil
}

func (l *cloudListeners) close() {
	for _, ln := range []net.Listener{l.api, l.s3, l.cdn, l.metrics, l.dnsTCP} {
		if ln != nil {
			ln.Close() // a no-op once served and closed
		}
	}
	for _, pc := range l.dnsUDP {
		pc.Close()
	}
}

// cloudURLs are where the platform serves, for the banner: DNS is the
// server's host:port ("" when none runs), CDN the edge's URL ("" when
// none runs).
type cloudURLs struct{ API, S3, DNS, CDN, Metrics string }

// serve runs the REST API, the S3 endpoint, the DNS server and (if it has
// a listener of its own) the metrics on l until ctx ends or one fails,
// and closes them all. All are bound before any serves, so the REST API's
// endpoint record names the S3 address really bound.
func (c *cloudServer) serve(ctx context.Context, e *env, base *slog.Logger, l *cloudListeners, ready func(cloudURLs)) error {
	log := base.With("service", "cloud")
	var onAPI http.Handler // /metrics on the REST API, unless it has a listener of its own
	if l.metrics == nil {
		onAPI = httpmetrics.Handler(c.reg)
	}
	c.api = cloudapi.New(c.st, c.acc, cloudapi.Options{Logger: log, S3Endpoint: l.s3.Addr().String(), Region: s3Region, PublicURL: c.opts.PublicURL,
		Metrics: httpmetrics.New(c.reg, "cloud"), MetricsHandler: onAPI})
	dnsapi.Register(c.api, c.dns)
	cdnapi.Register(c.api, cdnapi.Options{Store: c.cdn, Edge: c.edge, Buckets: c.st, DNS: c.dns, AllowPrivateOrigins: c.opts.CDNPrivateOrigins})
	c.s3 = s3api.New(c.st, s3api.Options{Logger: base.With("service", "s3"), Region: s3Region, Metrics: httpmetrics.New(c.reg, "s3")})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	quiet := &env{stdout: e.stdout, stderr: io.Discard} // one "shutting down..." is enough
	type server struct {
		ln net.Listener
		h  http.Handler
		e  *env
	}
	servers := []server{{l.api, c.api, e}, {l.s3, c.s3, quiet}}
	urls := cloudURLs{API: "http://" + l.api.Addr().String(), S3: "http://" + l.s3.Addr().String()}
	urls.Metrics = urls.API + "/metrics"
	if l.cdn != nil {
		servers = append(servers, server{c.edge.Listener(l.cdn), c.edge, quiet}) // fresh hits on the edge's fast path
		urls.CDN = "http://" + l.cdn.Addr().String()
	}
	if l.metrics != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", httpmetrics.Handler(c.reg))
		servers = append(servers, server{l.metrics, mux, quiet})
		urls.Metrics = "http://" + l.metrics.Addr().String() + "/metrics"
	}
	done := make(chan error, len(servers)+1)
	for _, srv := range servers {
		go func() {
			done <- serveOn(ctx, srv.e, log, srv.ln, srv.h, nil, func(string) {})
			cancel()
		}()
	}
	running := len(servers)
	if l.dnsTCP != nil {
		dns := dnsserver.New(dnsserver.Options{TransferFrom: c.opts.DNSTransferFrom, Notify: c.opts.DNSNotify, Logger: base.With("service", "dns")})
		c.dns.Watch(dns.Update)
		c.reg.MustRegister(dnsCollector{dns})
		running++
		urls.DNS = l.dnsTCP.Addr().String()
		go func() {
			err := dns.Serve(ctx, l.dnsUDP[0], l.dnsTCP, l.dnsUDP[1:]...)
			if err != nil {
				err = fmt.Errorf("dns: %w", err)
			}
			done <- err
			cancel()
		}()
	}
	ready(urls)
	var err error
	for range running {
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

// dnsCollector gives Prometheus the DNS server's counters.
type dnsCollector struct{ srv *dnsserver.Server }

var (
	dnsQueries  = prometheus.NewDesc("lattice_dns_queries_total", "DNS messages the server answered, UDP and TCP (zone transfers included).", nil, nil)
	dnsRefused  = prometheus.NewDesc("lattice_dns_refused_total", "Messages answered REFUSED: zones not served, transfers not allowed, NOTIFYs.", nil, nil)
	dnsNXDomain = prometheus.NewDesc("lattice_dns_nxdomain_total", "Queries answered NXDOMAIN.", nil, nil)
	dnsZones    = prometheus.NewDesc("lattice_dns_zones", "Zones the server answers for.", nil, nil)
)

func (dnsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{dnsQueries, dnsRefused, dnsNXDomain, dnsZones} {
		ch <- d
	}
}

func (c dnsCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.srv.Stats()
	ch <- prometheus.MustNewConstMetric(dnsQueries, prometheus.CounterValue, float64(st.Queries))
	ch <- prometheus.MustNewConstMetric(dnsRefused, prometheus.CounterValue, float64(st.Refused))
	ch <- prometheus.MustNewConstMetric(dnsNXDomain, prometheus.CounterValue, float64(st.NXDomain))
	ch <- prometheus.MustNewConstMetric(dnsZones, prometheus.GaugeValue, float64(st.Zones))
}

func (c *cloudServer) close() {
	c.stopSweep()
	<-c.swept
	if c.api != nil {
		c.api.Wait()
		c.s3.Wait()
	}
	c.edge.Close()
	c.cdn.Close()
	c.dns.Close()
	c.acc.Close()
	c.st.Close()
}

// openAccounts opens the accounts store in dir/accounts and moves into it,
// once, the accounts and API keys that versions before it kept in the
// object store.
func openAccounts(dir string, st *cloudstore.Store, log *slog.Logger) (*accounts.Store, error) {
	acc, err := accounts.Open(filepath.Join(dir, "accounts"), accounts.Options{Logger: log})
	if err != nil {
		return nil, err
	}
	old, err := st.Legacy()
	if err == nil {
		err = acc.Import(old.Keys, old.Accounts, old.AdminKeyID)
	}
	if err == nil && (len(old.Keys) > 0 || len(old.Accounts) > 0 || old.AdminKeyID != "") {
		log.Info("moved the accounts and API keys out of the object store", "keys", len(old.Keys), "accounts", len(old.Accounts))
		err = st.DropLegacy()
	}
	if err != nil {
		acc.Close()
		return nil, fmt.Errorf("moving the accounts and API keys to %s: %w", filepath.Join(dir, "accounts"), err)
	}
	return acc, nil
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
	f := newHelpFlags(e, "cloud", "cloud [--data DIR] [--api ADDR] [--s3 ADDR] [--dns ADDR] [--cdn ADDR] [--public-url URL] [--metrics ADDR]", `
Runs the cloud platform: its REST API, its S3-compatible endpoint, its
authoritative DNS server and its CDN edge, over the data directory, until
interrupted. On
first start it writes an admin API key to DATA/admin-api-key. Flags also
come from the environment and from a JSON --config file.

Commands:
  apikey create|list|revoke   manage API keys (`+"`lattice cloud apikey -h`"+`)`, `  lattice cloud --data /var/lib/lattice-cloud
  lattice cloud --api 0.0.0.0:8090 --s3 0.0.0.0:9000 --public-url https://cloud.example.com
  lattice cloud --dns 0.0.0.0:53 --dns-ns ns1.example.net,ns2.example.net --dns-notify 192.0.2.53:53 --dns-transfer-from 192.0.2.53/32
  lattice cloud --cdn 0.0.0.0:80 --cdn-domain cdn.example.net
  lattice cloud apikey create --account alice --api-key $(cat ~/.lattice/cloud/admin-api-key)
`)
	if len(args) > 0 && args[0] == "help" {
		f.Usage()
		return nil
	}
	data := f.string("data", "LATTICE_DATA", "data", homeDir(".lattice", "cloud"), "data directory")
	apiAddr := f.string("api", "LATTICE_API", "api", "127.0.0.1:8090", "REST API address")
	s3Addr := f.string("s3", "LATTICE_S3", "s3", "127.0.0.1:9000", "S3-compatible endpoint address")
	dnsFlags := addDNSFlags(f, "0.0.0.0:53")
	cdnFlags := addCDNFlags(f, false)
	publicURL := f.string("public-url", "LATTICE_PUBLIC_URL", "public_url", "", "the REST API's URL as clients reach it (behind a proxy), for presigned URLs; default http:// and the request's Host")
	metricsAddr := f.string("metrics", "LATTICE_METRICS", "metrics", "", "serve Prometheus metrics at http://ADDR/metrics instead of at the REST API's GET /metrics")
	f.string("config", "LATTICE_CONFIG", "", "", "JSON config file with keys data, api, s3, dns, dns_ns, dns_notify, dns_transfer_from, cdn, cdn_domain, cdn_private_origins, public_url, metrics, log_level, log_format")
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
	opts, err := dnsFlags.options()
	if err != nil {
		return err
	}
	if err := cdnFlags.apply(&opts); err != nil {
		return err
	}
	opts.PublicURL = *publicURL
	log, err := newLogger(e, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	lns, err := listenCloud(cloudAddrs{API: *apiAddr, S3: *s3Addr, DNS: *dnsFlags.addr, CDN: *cdnFlags.addr, Metrics: *metricsAddr})
	if err != nil {
		return err
	}
	defer lns.close()
	c, err := openCloud(e, *data, log, opts)
	if err != nil {
		return err
	}
	defer c.close()
	return c.serve(ctx, e, log, lns, func(u cloudURLs) {
		fmt.Fprintf(e.stdout, "lattice cloud: REST API %s (data %s)\n", u.API, *data)
		fmt.Fprintf(e.stdout, "lattice cloud: S3 endpoint %s (region %s)\n", u.S3, s3Region)
		if u.DNS != "" {
			fmt.Fprintf(e.stdout, "lattice cloud: DNS %s (UDP and TCP)\n", u.DNS)
		}
		if u.CDN != "" {
			fmt.Fprintf(e.stdout, "lattice cloud: CDN edge %s (deployments answer at NAME.%s)\n", u.CDN, c.cdn.CDNDomain())
		}
		fmt.Fprintf(e.stdout, "lattice cloud: metrics %s\n", u.Metrics)
	})
}

// cdnFlags are the CDN edge's flags, which cloud and dev share.
type cdnFlags struct {
	addr, domain, private *string
}

// addCDNFlags adds the edge's flags; private is whether origins may be
// loopback or private addresses by default (yes for dev).
func addCDNFlags(f *flags, private bool) cdnFlags {
	return cdnFlags{
		addr:    f.string("cdn", "LATTICE_CDN", "cdn", "127.0.0.1:8088", `CDN edge address, HTTP ("" for none)`),
		domain:  f.string("cdn-domain", "LATTICE_CDN_DOMAIN", "cdn_domain", cdnstore.DefaultDomain, "the CDN's domain: deployment NAME answers at NAME.DOMAIN (point a wildcard DNS record for *.DOMAIN at the edge)"),
		private: f.string("cdn-private-origins", "LATTICE_CDN_PRIVATE_ORIGINS", "cdn_private_origins", strconv.FormatBool(private), "let CDN origins be loopback, private or link-local addresses (true or false)"),
	}
}

func (c cdnFlags) apply(o *cloudOptions) error {
	o.CDNDomain = *c.domain
	p, err := strconv.ParseBool(*c.private)
	if err != nil {
		return usageErr("--cdn-private-origins %q: want true or false", *c.private)
	}
	o.CDNPrivateOrigins = p
	return nil
}

// dnsFlags are the DNS server's flags, which cloud and dev share.
type dnsFlags struct {
	addr, ns, notify, transferFrom *string
}

func addDNSFlags(f *flags, def string) dnsFlags {
	return dnsFlags{
		addr:         f.string("dns", "LATTICE_DNS", "dns", def, `authoritative DNS server address, UDP and TCP ("" for none)`),
		ns:           f.string("dns-ns", "LATTICE_DNS_NS", "dns_ns", "ns1.lattice.test", "the platform's name server names, comma-separated: every zone's apex NS records"),
		notify:       f.string("dns-notify", "LATTICE_DNS_NOTIFY", "dns_notify", "", "secondaries (HOST:PORT,...) sent a NOTIFY after every zone change"),
		transferFrom: f.string("dns-transfer-from", "LATTICE_DNS_TRANSFER_FROM", "dns_transfer_from", "", "networks (CIDR,...) allowed to transfer zones (AXFR, IXFR); none by default"),
	}
}

// options checks the DNS flags.
func (d dnsFlags) options() (cloudOptions, error) {
	var o cloudOptions
	o.Nameservers = splitList(*d.ns)
	for _, t := range splitList(*d.notify) {
		if _, _, err := net.SplitHostPort(t); err != nil {
			return o, usageErr("--dns-notify %q: want HOST:PORT", t)
		}
		o.DNSNotify = append(o.DNSNotify, t)
	}
	for _, c := range splitList(*d.transferFrom) {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			a, aerr := netip.ParseAddr(c)
			if aerr != nil {
				return o, usageErr("--dns-transfer-from %q: want an address or a network such as 192.0.2.0/24", c)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			// ::ffff:192.0.2.53 is how an IPv4 client looks on an IPv6
			// socket; the server compares IPv4 addresses unmapped.
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		o.DNSTransferFrom = append(o.DNSTransferFrom, p.Masked())
	}
	return o, nil
}

// cdnCollector gives Prometheus the edge cache's sizes.
type cdnCollector struct{ edge *cdnedge.Edge }

var (
	cdnObjects   = prometheus.NewDesc("lattice_cdn_cached_objects", "Responses the CDN edge holds, of all deployments.", nil, nil)
	cdnMemBytes  = prometheus.NewDesc("lattice_cdn_cache_memory_bytes", "Bytes of response bodies in the edge's memory tier.", nil, nil)
	cdnDiskBytes = prometheus.NewDesc("lattice_cdn_cache_disk_bytes", "Bytes of response bodies in the edge's disk tier (DATA/cdn-cache).", nil, nil)
	cdnFastHits  = prometheus.NewDesc("lattice_cdn_fast_path_hits_total", "Fresh cache hits the edge answered on its fast path, without net/http.", nil, nil)
)

func (cdnCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cdnObjects, cdnMemBytes, cdnDiskBytes, cdnFastHits} {
		ch <- d
	}
}

func (c cdnCollector) Collect(ch chan<- prometheus.Metric) {
	t := c.edge.Totals()
	ch <- prometheus.MustNewConstMetric(cdnObjects, prometheus.GaugeValue, float64(t.Objects))
	ch <- prometheus.MustNewConstMetric(cdnMemBytes, prometheus.GaugeValue, float64(t.MemoryBytes))
	ch <- prometheus.MustNewConstMetric(cdnDiskBytes, prometheus.GaugeValue, float64(t.DiskBytes))
	ch <- prometheus.MustNewConstMetric(cdnFastHits, prometheus.CounterValue, float64(t.FastPathHits))
}
