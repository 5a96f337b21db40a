// Package platform owns the cloud platform's life cycle. The platform is
// a REST API (accounts, API keys, the data/meta envelope, rate limits, the
// access log and metrics: package cloudapi) and services, each a module
// with one life cycle, as Caddy's modules have:
//
//  1. Listen: every service binds its own listeners (HTTP or not: DNS is
//     UDP and TCP), and the platform binds the REST API's, before any
//     state exists, so that a port in use fails before a data directory
//     or an admin key is made, naming the flag that moves it.
//  2. Provision: each service opens what it keeps under the data
//     directory, in the order the services were given (a service may
//     use what an earlier one provisioned).
//  3. Validate: each service checks that it can serve.
//  4. Routes: each service adds its REST routes to the API.
//  5. Serve: the API and every service serve until the context ends or
//     one of them fails; then all stop gracefully.
//  6. Close: what was provisioned is released, in reverse order.
//
// Storage is the first service and the API's base: its routes are
// cloudapi's own. DNS and CDN (and compute next) register theirs through
// cloudapi.Handle.
package platform

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/internal/run/durablefile"
	"github.com/latticenet/lattice/internal/run/httpmetrics"
	"github.com/latticenet/lattice/internal/run/httpserve"
)

// A Service is one part of the platform. Its methods are called in the
// order of the package comment, each at most once; Close is called for
// every service, whichever step failed, and releases what is open.
type Service interface {
	// Name names the service in errors and logs ("storage", "dns").
	Name() string
	// Listen binds the service's listeners.
	Listen() error
	// Provision opens what the service keeps, under p.Dir().
	Provision(p *Platform) error
	// Validate checks that the service can serve.
	Validate() error
	// Routes adds the service's REST routes to api.
	Routes(api *cloudapi.Server)
	// Serve serves the service's listeners until ctx ends, then stops
	// them gracefully and returns nil; or returns an error when serving
	// fails.
	Serve(ctx context.Context) error
	// Addrs says where the service serves, for the start-up banner:
	// "S3" → "http://127.0.0.1:9000"; nothing for a service without
	// listeners.
	Addrs() map[string]string
	// Close releases what Provision opened and the listeners.
	Close() error
}

// Config is the platform's own configuration; each service has its own.
type Config struct {
	Dir string // the data directory
	// API is the REST API's address; Metrics, if not "", an address of
	// the Prometheus metrics' own (else they are at the API's /metrics).
	API, Metrics string
	// PublicURL is the REST API's URL as clients reach it, for presigned
	// URLs; "" for the request's Host.
	PublicURL string
	// Spare is the networks spared the bounds on connections per address
	// besides loopback, private and link-local ones: the operator's
	// proxies and load balancers on public addresses (httpserve.Spare).
	Spare  httpserve.Spare
	Logger *slog.Logger
	// AdminKey is told the first admin key's secret and the file it is
	// in, when the platform's first start makes it.
	AdminKey func(path, secret string)
}

// Platform is the cloud platform: run it with Listen, Provision, Serve and
// Close.
type Platform struct {
	cfg      Config
	log      *slog.Logger
	storage  *Storage
	services []Service

	apiLn, metricsLn net.Listener
	accounts         *accounts.Store
	registry         *prometheus.Registry
	api              *cloudapi.Server
	closeOnce        sync.Once
}

// New returns the platform of storage and the other services, in the
// order they provision (a service given a pointer to another must come
// after it).
func New(cfg Config, storage *Storage, others ...Service) *Platform {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Platform{cfg: cfg, log: cfg.Logger.With("service", "cloud"), storage: storage,
		services: append([]Service{storage}, others...), registry: httpmetrics.NewRegistry()}
}

// SetLogger replaces the logger given in Config; call it before
// Provision (lattice dev opens its log file only once the listeners are
// bound).
func (p *Platform) SetLogger(l *slog.Logger) {
	p.cfg.Logger = l
	p.log = l.With("service", "cloud")
}

// Dir is the data directory.
func (p *Platform) Dir() string { return p.cfg.Dir }

// Spare is the networks the operator spares the bounds per address
// (Config.Spare), for the services' own servers.
func (p *Platform) Spare() httpserve.Spare { return p.cfg.Spare }

// Logger is the platform's base logger; services add "service".
func (p *Platform) Logger() *slog.Logger { return p.cfg.Logger }

// Accounts is the accounts store; set from Provision on.
func (p *Platform) Accounts() *accounts.Store { return p.accounts }

// Registry holds the platform's Prometheus metrics; services register
// their collectors in Provision.
func (p *Platform) Registry() *prometheus.Registry { return p.registry }

// API is the REST API; set once Provision has returned.
func (p *Platform) API() *cloudapi.Server { return p.api }

// Listen binds the REST API's address, the metrics' and every service's.
// After a failure, Close releases what was bound.
func (p *Platform) Listen() error {
	var err error
	if p.apiLn, err = httpserve.Listen(p.cfg.API, "api", "LATTICE_API"); err != nil {
		return err
	}
	if p.cfg.Metrics != "" {
		if p.metricsLn, err = httpserve.Listen(p.cfg.Metrics, "metrics", "LATTICE_METRICS"); err != nil {
			return err
		}
	}
	for _, s := range p.services {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	return nil
}

func (p *Platform) closeListeners() {
	for _, ln := range []net.Listener{p.apiLn, p.metricsLn} {
		if ln != nil {
			ln.Close()
		}
	}
}

// Provision creates the data directory, opens the accounts store,
// provisions and validates every service, makes the first admin key (on
// the first start) and builds the REST API with every service's routes.
// On an error, Close releases what was opened.
func (p *Platform) Provision() error {
	if err := os.MkdirAll(p.cfg.Dir, 0o700); err != nil {
		return fmt.Errorf("cloud: %w", err)
	}
	acc, err := accounts.Open(filepath.Join(p.cfg.Dir, "accounts"), accounts.Options{Logger: p.log})
	if err != nil {
		return err
	}
	p.accounts = acc
	for _, s := range p.services {
		if err := s.Provision(p); err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
	}
	for _, s := range p.services {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
	}
	path := filepath.Join(p.cfg.Dir, "admin-api-key")
	_, secret, err := acc.EnsureAdmin(time.Now(), func(secret string) error {
		return durablefile.Write(path, []byte(secret+"\n"), 0o600)
	})
	if err != nil {
		return err
	}
	if secret != "" && p.cfg.AdminKey != nil {
		p.cfg.AdminKey(path, secret)
	}
	var onAPI http.Handler // /metrics on the REST API, unless it has a listener of its own
	if p.metricsLn == nil {
		onAPI = httpmetrics.Handler(p.registry)
	}
	p.api = cloudapi.New(p.storage.Store(), acc, cloudapi.Options{Logger: p.log, S3Endpoint: p.storage.S3Addr(), Region: S3Region,
		PublicURL: p.cfg.PublicURL, Metrics: httpmetrics.New(p.registry, "cloud"), MetricsHandler: onAPI})
	for _, s := range p.services {
		s.Routes(p.api)
	}
	return nil
}

// S3Region is the region the S3 endpoint serves.
const S3Region = "us-east-1"

// Addrs says where the platform serves: "API", "Metrics" and each
// service's, as URLs (or host:port for what is not HTTP).
func (p *Platform) Addrs() map[string]string {
	m := map[string]string{"API": "http://" + p.apiLn.Addr().String(), "Metrics": "http://" + p.apiLn.Addr().String() + "/metrics"}
	if p.metricsLn != nil {
		m["Metrics"] = "http://" + p.metricsLn.Addr().String() + "/metrics"
	}
	for _, s := range p.services {
		for k, v := range s.Addrs() {
			m[k] = v
		}
	}
	return m
}

// Serve runs the REST API, the metrics and every service until ctx ends
// or one fails (then the others stop too), calls ready once all serve,
// and returns the first failure. stopping, if not nil, is called once as
// the shutdown begins. A service with nothing to serve may return nil at
// once; the others go on.
func (p *Platform) Serve(ctx context.Context, ready func(addrs map[string]string), stopping func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var once sync.Once
	stop := func() {
		if stopping != nil {
			once.Do(stopping)
		}
	}
	type run struct {
		name string
		fn   func(context.Context) error
	}
	runs := []run{{"api", func(ctx context.Context) error {
		err := httpserve.Serve(ctx, p.log, p.apiLn, p.api, httpserve.Options{Stopping: stop, Spare: p.cfg.Spare})
		p.api.Wait()
		return err
	}}}
	if p.metricsLn != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", httpmetrics.Handler(p.registry))
		runs = append(runs, run{"metrics", func(ctx context.Context) error {
			return httpserve.Serve(ctx, p.log, p.metricsLn, mux, httpserve.Options{Stopping: stop, Spare: p.cfg.Spare})
		}})
	}
	for _, s := range p.services {
		runs = append(runs, run{s.Name(), s.Serve})
	}
	done := make(chan error, len(runs))
	for _, r := range runs {
		go func() {
			err := r.fn(ctx)
			if err != nil {
				// One part failed: the others stop too.
				if !errors.Is(err, httpserve.ErrFailed) {
					err = fmt.Errorf("%s: %w", r.name, err)
				}
				cancel()
			}
			done <- err
		}()
	}
	ready(p.Addrs())
	var err error
	for range runs {
		if err2 := <-done; err == nil {
			err = err2
		}
	}
	return err
}

// Close releases what Provision opened, the services' in reverse order,
// then the accounts store and the listeners. It is safe to call after
// any step, and more than once.
func (p *Platform) Close() error {
	var errs []error
	p.closeOnce.Do(func() {
		for i := len(p.services) - 1; i >= 0; i-- {
			errs = append(errs, p.services[i].Close())
		}
		if p.accounts != nil {
			errs = append(errs, p.accounts.Close())
		}
		p.closeListeners()
	})
	return errors.Join(errs...)
}
