package platform

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/dns/dnsapi"
	"github.com/latticenet/lattice/cloud/dns/dnsserver"
	"github.com/latticenet/lattice/cloud/dns/dnsstore"
)

// DNSConfig configures the DNS service.
type DNSConfig struct {
	// Addr is the authoritative server's address, UDP and TCP; "" runs
	// no server (the API still keeps zones).
	Addr string
	// Nameservers name the platform's DNS servers (every zone's apex NS
	// records); default ns1.lattice.test.
	Nameservers []string
	// TransferFrom may transfer zones; Notify are told of changes.
	TransferFrom []netip.Prefix
	Notify       []string
}

// DNS is the DNS service: zones and records (DATA/dns), their REST
// routes, and the authoritative server.
type DNS struct {
	cfg    DNSConfig
	log    *slog.Logger
	udp    []net.PacketConn
	tcp    net.Listener
	store  *dnsstore.Store
	server *dnsserver.Server // nil when Addr is ""
}

// NewDNS returns the DNS service.
func NewDNS(cfg DNSConfig) *DNS { return &DNS{cfg: cfg} }

func (d *DNS) Name() string { return "dns" }

func (d *DNS) Listen() error {
	if d.cfg.Addr == "" {
		return nil
	}
	udp, tcp, err := dnsserver.Listen(d.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen %s (DNS): %w (choose another address with --dns or LATTICE_DNS; \"\" runs no DNS server)", d.cfg.Addr, err)
	}
	d.udp, d.tcp = udp, tcp
	return nil
}

func (d *DNS) Provision(p *Platform) error {
	d.log = p.Logger().With("service", "dns")
	st, err := dnsstore.Open(filepath.Join(p.Dir(), "dns"), dnsstore.Options{Nameservers: d.cfg.Nameservers, Logger: d.log})
	if err != nil {
		return err
	}
	d.store = st
	if d.tcp != nil {
		d.server = dnsserver.New(dnsserver.Options{TransferFrom: d.cfg.TransferFrom, Notify: d.cfg.Notify, Logger: d.log})
		st.Watch(d.server.Update)
		p.Registry().MustRegister(dnsCollector{d.server})
	}
	return nil
}

func (d *DNS) Validate() error { return nil }

func (d *DNS) Routes(api *cloudapi.Server) { dnsapi.Register(api, d.store) }

// Serve runs the authoritative server, if there is one, until ctx ends.
func (d *DNS) Serve(ctx context.Context) error {
	if d.server == nil {
		return nil
	}
	return d.server.Serve(ctx, d.udp[0], d.tcp, d.udp[1:]...)
}

func (d *DNS) Addrs() map[string]string {
	if d.tcp == nil {
		return nil
	}
	return map[string]string{"DNS": d.tcp.Addr().String()}
}

// Store is the zones' store; set from Provision on.
func (d *DNS) Store() *dnsstore.Store { return d.store }

func (d *DNS) Close() error {
	for _, pc := range d.udp {
		pc.Close()
	}
	if d.tcp != nil {
		d.tcp.Close()
	}
	if d.store != nil {
		return d.store.Close()
	}
	return nil
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
