package platform

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latticenet/lattice/cloud/cdn/cdnapi"
	"github.com/latticenet/lattice/cloud/cdn/cdnedge"
	"github.com/latticenet/lattice/cloud/cdn/cdnstore"
	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/internal/run/httpserve"
)

// CDNConfig configures the CDN service.
type CDNConfig struct {
	// Addr is the edge's address (HTTP); "" runs no edge (the API still
	// keeps deployments).
	Addr string
	// Domain is the CDN's own domain: deployment NAME answers at
	// NAME.Domain (default cdnstore.DefaultDomain).
	Domain string
	// PrivateOrigins lets origins be loopback or private addresses.
	PrivateOrigins bool
	// VerifyWithOwnDNS verifies custom domains by asking the platform's
	// own DNS server rather than the system's resolver: for lattice dev,
	// whose zones are all the DNS there is. Elsewhere a zone held here
	// proves nothing until the domain is delegated to this platform.
	VerifyWithOwnDNS bool
}

// CDN is the CDN service: deployments and custom domains (DATA/cdn),
// their REST routes, and the caching edge (its disk tier in
// DATA/cdn-cache). Bucket origins are read from storage's store, and
// custom domains attached through the DNS service's zones.
type CDN struct {
	cfg     CDNConfig
	storage *Storage
	dns     *DNS
	log     *slog.Logger
	spare   httpserve.Spare
	ln      net.Listener
	store   *cdnstore.Store
	edge    *cdnedge.Edge
}

// NewCDN returns the CDN service, which provisions after storage and dns.
func NewCDN(cfg CDNConfig, storage *Storage, dns *DNS) *CDN {
	return &CDN{cfg: cfg, storage: storage, dns: dns}
}

func (c *CDN) Name() string { return "cdn" }

func (c *CDN) Listen() (err error) {
	if c.cfg.Addr != "" {
		c.ln, err = httpserve.Listen(c.cfg.Addr, "cdn", "LATTICE_CDN")
	}
	return err
}

func (c *CDN) Provision(p *Platform) error {
	c.log, c.spare = p.Logger().With("service", "cdn"), p.Spare()
	st, err := cdnstore.Open(filepath.Join(p.Dir(), "cdn"), cdnstore.Options{Domain: c.cfg.Domain, Logger: c.log})
	if err != nil {
		return err
	}
	c.store = st
	c.edge, err = cdnedge.New(cdnedge.Options{Store: st, Buckets: c.storage.Store(), CacheDir: filepath.Join(p.Dir(), "cdn-cache"),
		AllowPrivateOrigins: c.cfg.PrivateOrigins, Logger: c.log})
	if err != nil {
		return err
	}
	p.Registry().MustRegister(cdnCollector{c.edge})
	return nil
}

func (c *CDN) Validate() error { return nil }

func (c *CDN) Routes(api *cloudapi.Server) {
	opts := cdnapi.Options{Store: c.store, Edge: c.edge, Buckets: c.storage.Store(), DNS: c.dns.Store(), AllowPrivateOrigins: c.cfg.PrivateOrigins}
	if c.cfg.VerifyWithOwnDNS {
		opts.Resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			addr, ok := c.dns.Addrs()["DNS"]
			if !ok {
				return nil, errors.New("the platform runs no DNS server (--dns \"\")")
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}}
	}
	cdnapi.Register(api, opts)
}

// Serve runs the edge, if it has an address: fresh hits on its fast
// path, the rest through net/http.
func (c *CDN) Serve(ctx context.Context) error {
	if c.ln == nil {
		return nil
	}
	// Bounded underneath the edge's fast path too, which serves cache
	// hits on connections Serve's own bounds never see.
	return httpserve.Serve(ctx, c.log, c.edge.Listener(httpserve.LimitConns(c.ln, c.log, c.spare)), c.edge, httpserve.Options{Spare: c.spare})
}

func (c *CDN) Addrs() map[string]string {
	if c.ln == nil {
		return nil
	}
	return map[string]string{"CDN": "http://" + c.ln.Addr().String()}
}

// Domain is the CDN's domain, as the store has it; valid from Provision on.
func (c *CDN) Domain() string { return c.store.CDNDomain() }

func (c *CDN) Close() error {
	if c.edge != nil {
		c.edge.Close()
	}
	if c.ln != nil {
		c.ln.Close()
	}
	if c.store != nil {
		return c.store.Close()
	}
	return nil
}

// cdnCollector gives Prometheus the edge's figures.
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
