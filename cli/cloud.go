package cli

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/cdn/cdnstore"
	"github.com/latticenet/lattice/cloud/compute/computerules"
	"github.com/latticenet/lattice/cloud/platform"
	"github.com/latticenet/lattice/internal/run/httpserve"
	"github.com/latticenet/lattice/wallet"
)

// cloudConfig is what lattice cloud and lattice dev configure of the
// platform and its services.
type cloudConfig struct {
	platform.Config
	Storage platform.StorageConfig
	DNS     platform.DNSConfig
	CDN     platform.CDNConfig
	Compute platform.ComputeConfig
}

// newCloud returns the platform of cfg: storage, DNS, CDN and compute. The first
// start's admin key is printed on e.stdout, once.
func newCloud(e *env, cfg cloudConfig) (*platform.Platform, *platform.CDN) {
	cfg.AdminKey = func(path, secret string) {
		fmt.Fprintf(e.stdout, "created the admin API key (shown once, also in %s, mode 0600):\n  %s\n", path, secret)
	}
	storage := platform.NewStorage(cfg.Storage)
	dns := platform.NewDNS(cfg.DNS)
	cdn := platform.NewCDN(cfg.CDN, storage, dns)
	return platform.New(cfg.Config, storage, dns, cdn, platform.NewCompute(cfg.Compute)), cdn
}

func runCloud(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "apikey" {
		return runAPIKey(ctx, e, args[1:])
	}
	e = e.synced()
	f := newHelpFlags(e, "cloud", "cloud [--data DIR] [--api ADDR] [--s3 ADDR] [--s3-website ADDR] [--dns ADDR] [--cdn ADDR] [--public-url URL] [--metrics ADDR]", `
Runs the cloud platform: its REST API, its S3-compatible endpoint, its
authoritative DNS server and its CDN edge, over the data directory, until
interrupted. On
first start it writes an admin API key to DATA/admin-api-key. Flags also
come from the environment and from a JSON --config file.

Commands:
  apikey create|list|revoke   manage API keys (`+"`lattice cloud apikey -h`"+`)`, `  lattice cloud --data /var/lib/lattice-cloud
  lattice cloud --api 0.0.0.0:8090 --s3 0.0.0.0:9000 --public-url https://cloud.example.com
  lattice cloud --dns :53 --dns-ns ns1.example.net,ns2.example.net --dns-notify 192.0.2.53:53 --dns-transfer-from 192.0.2.53/32
  lattice cloud --cdn 0.0.0.0:80 --cdn-domain cdn.example.net
  lattice cloud apikey create --account alice --api-key $(cat ~/.lattice/cloud/admin-api-key)
`)
	if len(args) > 0 && args[0] == "help" {
		f.SetOutput(e.stdout)
		f.Usage()
		return nil
	}
	data := f.string("data", "LATTICE_DATA", "data", homeDir(".lattice", "cloud"), "data directory")
	apiAddr := f.string("api", "LATTICE_API", "api", "127.0.0.1:8090", "REST API address")
	storageFlags := addStorageFlags(f, "1m", "DATA")
	// Loopback and an unprivileged port, as every other default: serving
	// zones to the world on port 53 is asked for (--dns :53), with root
	// or CAP_NET_BIND_SERVICE (docs/operations.md).
	dnsFlags := addDNSFlags(f, "127.0.0.1:8053")
	cdnFlags := addCDNFlags(f, false)
	computeFlags := addComputeFlags(f, false, "DATA")
	leaseNode := f.string("compute-lease-node", "LATTICE_COMPUTE_LEASE_NODE", "compute_lease_node", "", "with --compute-backend lease: the URL of the ledger node's API the platform buys leases through")
	leaseKey := f.string("compute-lease-key", "LATTICE_COMPUTE_LEASE_KEY", "compute_lease_key", "", "with --compute-backend lease: the key file of the ledger account that pays for the leases and holds their machines' access key")
	leaseImage := f.string("compute-lease-image", "LATTICE_COMPUTE_LEASE_IMAGE", "compute_lease_image", "debian-12", "with --compute-backend lease: the image the network's providers run (lattice node --vm-image), the one VMs may ask for")
	publicURL := f.string("public-url", "LATTICE_PUBLIC_URL", "public_url", "", "the REST API's URL as clients reach it (behind a proxy), for presigned URLs; default http:// and the request's Host")
	metricsAddr := f.string("metrics", "LATTICE_METRICS", "metrics", "", "serve Prometheus metrics at http://ADDR/metrics instead of at the REST API's GET /metrics")
	proxies := proxyNetworksFlag(f)
	f.configFile()
	logLevel := f.string("log-level", "LATTICE_LOG_LEVEL", "log_level", "info", "log level: debug, info, warn, error")
	logFormat := f.string("log-format", "LATTICE_LOG_FORMAT", "log_format", "", "log format: text or json (default: text on a terminal, json otherwise)")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	if *publicURL != "" {
		u, err := url.Parse(*publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErr("--public-url %q: want http(s)://host[:port][/path]", *publicURL)
		}
	}
	spare, err := parseProxyNetworks(*proxies)
	if err != nil {
		return err
	}
	cfg := cloudConfig{Config: platform.Config{Dir: *data, API: *apiAddr, Metrics: *metricsAddr, PublicURL: *publicURL, Spare: spare}}
	if err := storageFlags.apply(&cfg); err != nil {
		return err
	}
	if err := dnsFlags.apply(&cfg); err != nil {
		return err
	}
	if err := cdnFlags.apply(&cfg); err != nil {
		return err
	}
	if err := computeFlags.apply(&cfg); err != nil {
		return err
	}
	if lb := cfg.Compute.Lease; lb != nil {
		if *leaseNode == "" || *leaseKey == "" {
			return usageErr("--compute-backend lease needs --compute-lease-node URL and --compute-lease-key FILE")
		}
		if u, err := url.Parse(*leaseNode); err != nil || u.Scheme != "http" || u.Host == "" {
			// The node's tunnels are plain HTTP upgrades: keep the node
			// on loopback or a trusted link.
			return usageErr("--compute-lease-node %q: want http://HOST:PORT, a node on this host or a trusted link", *leaseNode)
		}
		if err := checkVMImage(*leaseImage); err != nil {
			return err
		}
		key, err := wallet.LoadKey(*leaseKey)
		if err != nil {
			return fmt.Errorf("--compute-lease-key: %w", err)
		}
		lb.Market, lb.Image = newLeaseMarket(*leaseNode, key), *leaseImage
	}
	log, err := newLogger(e, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	cfg.Logger = log
	logProxies(log, spare)
	p, cdn := newCloud(e, cfg)
	defer p.Close()
	if err := p.Listen(); err != nil {
		return err
	}
	if err := p.Provision(); err != nil {
		return err
	}
	return p.Serve(ctx, func(u map[string]string) {
		fmt.Fprintf(e.stdout, "lattice cloud: REST API %s (data %s)%s\n", u["API"], *data, exposure(u["API"]))
		fmt.Fprintf(e.stdout, "lattice cloud: S3 endpoint %s (region %s)%s\n", u["S3"], platform.S3Region, exposure(u["S3"]))
		if u["S3 website"] != "" {
			fmt.Fprintf(e.stdout, "lattice cloud: S3 websites %s (bucket NAME's site: %s)%s\n", u["S3 website"], siteURL(u["S3 website"], cfg.Storage.WebsiteDomain), exposure(u["S3 website"]))
		}
		if u["DNS"] != "" {
			fmt.Fprintf(e.stdout, "lattice cloud: DNS %s (UDP and TCP)%s\n", u["DNS"], exposure(u["DNS"]))
		}
		if lb := cfg.Compute.Lease; lb != nil {
			fmt.Fprintf(e.stdout, "lattice cloud: compute: VMs on leases bought through %s (image %s)\n", *leaseNode, lb.Image)
		} else {
			fmt.Fprintf(e.stdout, "lattice cloud: compute: VMs with QEMU on this host (`lattice compute create NAME`)\n")
		}
		if u["CDN"] != "" {
			fmt.Fprintf(e.stdout, "lattice cloud: CDN edge %s (deployments answer at NAME.%s)%s\n", u["CDN"], cdn.Domain(), exposure(u["CDN"]))
		}
		fmt.Fprintf(e.stdout, "lattice cloud: metrics %s%s\n", u["Metrics"], exposure(u["Metrics"]))
	}, func() { fmt.Fprintln(e.stderr, "shutting down...") })
}

// computeFlags are the Compute service's flags, which cloud and dev
// share.
type computeFlags struct {
	accel, quota, capacity, images, outbound *string
	backend, leaseDuration                   *string
}

// addComputeFlags adds the Compute service's flags; outbound is whether
// guests may connect out through the host by default (yes for dev, whose
// VMs are its user's own); dataDir names the platform's data directory in
// the help (DATA, or DATA/cloud for dev).
func addComputeFlags(f *flags, outbound bool, dataDir string) computeFlags {
	return computeFlags{
		outbound: f.string("compute-outbound", "LATTICE_COMPUTE_OUTBOUND", "compute_outbound", strconv.FormatBool(outbound), "let VMs connect out through the host: to the internet and to the host's loopback services (true or false; false isolates them but for their SSH port)"),
		accel:    f.string("compute-accel", "LATTICE_COMPUTE_ACCEL", "compute_accel", "", "VM accelerator: kvm or tcg (default kvm where /dev/kvm works, else tcg)"),
		quota:    f.string("compute-quota", "LATTICE_COMPUTE_QUOTA", "compute_quota", "", "every account's compute quota: the figures given replace the defaults vms=10,vcpus=16,memory_mb=32768,disk_gb=200 (0 is no limit)"),
		images:   f.string("compute-images", "LATTICE_COMPUTE_IMAGES", "compute_images", "", "directory of the built VM images, which platforms on one host may share (default "+dataDir+"/machines/images)"),
		capacity: f.string("compute-capacity", "LATTICE_COMPUTE_CAPACITY", "compute_capacity", "", "what the host gives all VMs, such as vcpus=8,memory_mb=16384,disk_gb=500 (default 4 vCPUs a core, 80% of memory, 90% of the data disk)"),
		backend:  f.string("compute-backend", "LATTICE_COMPUTE_BACKEND", "compute_backend", "local", "where VMs run: local (QEMU on this host) or lease (each VM a lease bought from the ledger network's cheapest provider)"),
		leaseDuration: f.string("compute-lease-duration", "LATTICE_COMPUTE_LEASE_DURATION", "compute_lease_duration", "1h",
			"with --compute-backend lease: how long each VM's lease runs (60s to 365d, such as 90m, 12h, 30d)"),
	}
}

func (c computeFlags) apply(cfg *cloudConfig) error {
	switch *c.accel {
	case "", "kvm", "tcg":
	default:
		return usageErr("--compute-accel %q: want kvm or tcg", *c.accel)
	}
	outbound, err := strconv.ParseBool(*c.outbound)
	if err != nil {
		return usageErr("--compute-outbound %q: want true or false", *c.outbound)
	}
	quota, err := parseResources("compute-quota", *c.quota, computerules.DefaultQuota)
	if err != nil {
		return err
	}
	capacity, err := parseResources("compute-capacity", *c.capacity, computerules.Resources{})
	if err != nil {
		return err
	}
	cfg.Compute = platform.ComputeConfig{Accel: *c.accel, Quota: &quota, Capacity: capacity, ImageDir: *c.images, Outbound: outbound}
	switch *c.backend {
	case "local":
	case "lease":
		secs, err := parseLeaseDuration(*c.leaseDuration)
		if err != nil {
			return usageErr("--compute-lease-duration: %v", err)
		}
		cfg.Compute.Lease = &platform.LeaseBackend{Duration: time.Duration(secs) * time.Second}
	default:
		return usageErr("--compute-backend %q: want local or lease", *c.backend)
	}
	return nil
}

// parseResources reads "vms=N,vcpus=N,memory_mb=N,disk_gb=N" (any of
// them, in any order) over r: the figures it names replace r's.
func parseResources(flag, s string, r computerules.Resources) (computerules.Resources, error) {
	if s == "" {
		return r, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 {
			return r, usageErr("--%s %q: want NAME=N,... with vms, vcpus, memory_mb and disk_gb", flag, s)
		}
		switch k {
		case "vms":
			r.VMs = n
		case "vcpus":
			r.VCPUs = n
		case "memory_mb":
			r.MemoryMB = n
		case "disk_gb":
			r.DiskGB = n
		default:
			return r, usageErr("--%s: %q is not one of vms, vcpus, memory_mb, disk_gb", flag, k)
		}
	}
	return r, nil
}

// cdnFlags are the CDN edge's flags, which cloud and dev share.
type cdnFlags struct {
	addr, domain, private, ownDNS *string
}

// addCDNFlags adds the edge's flags; dev is whether origins may be
// loopback or private addresses, and custom domains are verified by the
// platform's own DNS server, by default (yes for dev).
func addCDNFlags(f *flags, dev bool) cdnFlags {
	return cdnFlags{
		addr:    f.string("cdn", "LATTICE_CDN", "cdn", "127.0.0.1:8088", `CDN edge address, HTTP ("" for none)`),
		domain:  f.string("cdn-domain", "LATTICE_CDN_DOMAIN", "cdn_domain", cdnstore.DefaultDomain, "the CDN's domain: deployment NAME answers at NAME.DOMAIN (point a wildcard DNS record for *.DOMAIN at the edge)"),
		private: f.string("cdn-private-origins", "LATTICE_CDN_PRIVATE_ORIGINS", "cdn_private_origins", strconv.FormatBool(dev), "let CDN origins be loopback, private or link-local addresses (true or false)"),
		ownDNS: f.string("cdn-verify-own-dns", "LATTICE_CDN_VERIFY_OWN_DNS", "cdn_verify_own_dns", strconv.FormatBool(dev),
			"verify CDN custom domains by asking this platform's DNS server instead of the system's resolver (true or false; true only where its zones are all the DNS there is)"),
	}
}

func (c cdnFlags) apply(cfg *cloudConfig) error {
	p, err := strconv.ParseBool(*c.private)
	if err != nil {
		return usageErr("--cdn-private-origins %q: want true or false", *c.private)
	}
	own, err := strconv.ParseBool(*c.ownDNS)
	if err != nil {
		return usageErr("--cdn-verify-own-dns %q: want true or false", *c.ownDNS)
	}
	cfg.CDN = platform.CDNConfig{Addr: *c.addr, Domain: *c.domain, PrivateOrigins: p, VerifyWithOwnDNS: own}
	return nil
}

// storageFlags are the storage service's flags, which cloud and dev
// share.
type storageFlags struct {
	s3, logInterval, kmsMaster, kmsPrevious *string
	website, websiteDomain                  *string
}

// addStorageFlags adds the Storage service's flags; dataDir names the
// platform's data directory in the help (DATA, or DATA/cloud for dev).
func addStorageFlags(f *flags, logInterval, dataDir string) storageFlags {
	return storageFlags{
		s3: f.string("s3", "LATTICE_S3", "s3", "127.0.0.1:9000", "S3-compatible endpoint address"),
		website: f.string("s3-website", "LATTICE_S3_WEBSITE", "s3_website", "127.0.0.1:9080",
			`S3 website endpoint address, HTTP: the static sites of buckets with a website configuration ("" for none)`),
		websiteDomain: f.string("s3-website-domain", "LATTICE_S3_WEBSITE_DOMAIN", "s3_website_domain", platform.DefaultWebsiteDomain,
			"the website endpoint's domain: bucket NAME's site answers at NAME.DOMAIN (point a wildcard DNS record for *.DOMAIN at the endpoint); any other host name is taken for a bucket's name"),
		logInterval: f.string("s3-access-log-interval", "LATTICE_S3_ACCESS_LOG_INTERVAL", "s3_access_log_interval", logInterval,
			"how often buckets' server access log records are delivered to their target buckets"),
		kmsMaster: f.string("kms-master-key", "LATTICE_KMS_MASTER_KEY_FILE", "kms_master_key", "",
			"file of the master key that seals SSE-KMS keys: 32 bytes, raw or base64 (default "+dataDir+"/kms-master.key, made on first start; the environment's LATTICE_KMS_MASTER_KEY, the key itself in base64, overrides both)"),
		kmsPrevious: f.string("kms-previous-master-key", "LATTICE_KMS_PREVIOUS_MASTER_KEY_FILE", "kms_previous_master_key", "",
			"file of the master key being rotated out: keys still sealed under it are sealed again under --kms-master-key at start"),
	}
}

// siteURL is where bucket NAME's site answers on the website endpoint
// at endpoint (http://HOST:PORT) under domain.
func siteURL(endpoint, domain string) string {
	host := "NAME." + domain
	if _, port, err := net.SplitHostPort(strings.TrimPrefix(endpoint, "http://")); err == nil && port != "80" {
		host += ":" + port
	}
	return "http://" + host + "/"
}

func (s storageFlags) apply(cfg *cloudConfig) error {
	d, err := time.ParseDuration(*s.logInterval)
	if err != nil || d < time.Second || d > 24*time.Hour {
		return usageErr("--s3-access-log-interval %q: want a duration from 1s to 24h, like 1m", *s.logInterval)
	}
	domain := strings.ToLower(strings.Trim(*s.websiteDomain, "."))
	if domain == "" || strings.ContainsAny(domain, "/:@ \t") {
		return usageErr("--s3-website-domain %q: want a domain name, like s3-website.example.com", *s.websiteDomain)
	}
	cfg.Storage = platform.StorageConfig{S3: *s.s3, AccessLogInterval: d, KMSMasterKey: *s.kmsMaster, KMSPreviousMasterKey: *s.kmsPrevious,
		Website: *s.website, WebsiteDomain: domain}
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

// apply checks the DNS flags and sets cfg.DNS.
func (d dnsFlags) apply(cfg *cloudConfig) error {
	o := platform.DNSConfig{Addr: *d.addr, Nameservers: splitList(*d.ns)}
	for _, t := range splitList(*d.notify) {
		if _, _, err := net.SplitHostPort(t); err != nil {
			return usageErr("--dns-notify %q: want HOST:PORT", t)
		}
		o.Notify = append(o.Notify, t)
	}
	for _, c := range splitList(*d.transferFrom) {
		// The server compares IPv4 addresses unmapped, as ParseNetwork
		// gives them.
		p, err := httpserve.ParseNetwork(c)
		if err != nil {
			return usageErr("--dns-transfer-from %v", err)
		}
		o.TransferFrom = append(o.TransferFrom, p)
	}
	cfg.DNS = o
	return nil
}

// exposure notes, after a banner line, that addr (a URL or host:port) is
// bound where other machines can reach it: every default is loopback, so
// a public address is one the operator asked for, and worth seeing.
func exposure(addr string) string {
	hostport := addr
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		hostport = u.Host
	}
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return ""
	}
	if host == "localhost" {
		return ""
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return ""
	}
	return ", public: reachable from other machines"
}
