// Package stack assembles a ledger node and owns its life cycle: the
// engine (package node), the peer-to-peer host, the services that ride on
// it as modules, and the HTTP API. lattice node, lattice dev and the test
// cluster (package nettest) all build their nodes here, in one order, as
// the cloud's platform builds the cloud:
//
//  1. Listen: the HTTP API's listener and the metrics' are bound, and the
//     peer-to-peer port is checked free, before any state exists, so
//     that a port in use fails before a data directory or a key is made,
//     naming the flag that moves it.
//  2. Provision: the node opens its data directory and ledger, the host
//     joins the network, then each module starts, in the order given (a
//     module may use what an earlier one started).
//  3. Validate: the engine must be healthy, and each module that can
//     check itself (Validator) must pass.
//  4. Routes: each module gives the API its part, and the API is built.
//  5. Serve: the API (and the metrics listener) serve until the context
//     ends, the engine fails or serving fails; then they stop gracefully.
//  6. Close: what was provisioned is released in reverse order: the API's
//     handlers are waited for, the modules close (last first), then the
//     host, then the node. It runs whichever step failed.
//
// The modules today are the ledger network (ledgernet: gossip, sync,
// votes, elections) and chat with the directory (chatnet); timekeepers,
// providers, VMs and the tunnel come as modules of their own.
package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latticenet/lattice/internal/run/httpmetrics"
	"github.com/latticenet/lattice/internal/run/httpserve"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/nodeapi"
	"github.com/latticenet/lattice/node/p2p"
)

// A Module is a service of the node. Provision is called at most once,
// after the node and the host are open; API once every module is
// provisioned; Close for every module whose Provision was called, even
// when it failed, last first.
type Module interface {
	// Name names the module in errors and logs ("ledgernet", "chat").
	Name() string
	// Provision opens what the module keeps and starts it, on s's node
	// and host.
	Provision(ctx context.Context, s *Stack) error
	// API gives the module's part of the HTTP API.
	API(o *nodeapi.Options)
	// Close stops the module and releases what it holds.
	Close() error
}

// A Validator is a module that can check, once every module is
// provisioned, that it can serve.
type Validator interface {
	Validate() error
}

// Config configures a node's stack.
type Config struct {
	// Node is the engine's configuration: data directory, network,
	// logger, admission policy. Its Metrics is set by the stack.
	Node node.Config
	// HTTP is the API's address; HTTPListener, when set, is a listener
	// bound already (lattice dev binds every node's before any starts),
	// which the stack owns from New on.
	HTTP         string
	HTTPListener net.Listener
	// Metrics, when not "", is an address of the Prometheus metrics' own;
	// otherwise they are at the API's GET /metrics.
	Metrics string
	// P2P are the multiaddrs the host listens on; Bootstrap the peers it
	// joins through.
	P2P, Bootstrap []string
	// Relay makes the node a circuit relay for peers behind NAT, and
	// Reachability tells it whether it is reachable (see p2p.Config).
	Relay        bool
	Reachability string
	// API tunes the HTTP API; the stack and the modules fill in the rest.
	API nodeapi.Options
	// Wrap, if set, wraps the API's handler (tests check its answers).
	Wrap func(http.Handler) http.Handler
}

// Stack is one node, assembled: run it with Listen, Provision, Serve and
// Close.
type Stack struct {
	cfg     Config
	modules []Module
	log     *slog.Logger

	httpLn, metricsLn net.Listener
	registry          *prometheus.Registry
	node              *node.Node
	host              *p2p.Host
	api               *nodeapi.Server
	handler           http.Handler
	provisioned       int // modules whose Provision was called
	closeOnce         sync.Once
}

// New returns the stack of a node with its modules, in the order they
// provision.
func New(cfg Config, modules ...Module) *Stack {
	if cfg.Node.Logger == nil {
		cfg.Node.Logger = slog.New(slog.DiscardHandler)
	}
	return &Stack{cfg: cfg, modules: modules, log: cfg.Node.Logger, httpLn: cfg.HTTPListener,
		registry: httpmetrics.NewRegistry()}
}

// Node is the engine; set from Provision on.
func (s *Stack) Node() *node.Node { return s.node }

// Host is the peer-to-peer host; set from Provision on.
func (s *Stack) Host() *p2p.Host { return s.host }

// Logger is the node's logger.
func (s *Stack) Logger() *slog.Logger { return s.log }

// Dir is the node's data directory; modules keep their state under it.
func (s *Stack) Dir() string { return s.cfg.Node.DataDir }

// Registry holds the node's Prometheus metrics; modules register their
// collectors in Provision.
func (s *Stack) Registry() *prometheus.Registry { return s.registry }

// API is the HTTP API; set once Provision has returned.
func (s *Stack) API() *nodeapi.Server { return s.api }

// Handler is what serves the API: the API, wrapped as Config.Wrap says.
func (s *Stack) Handler() http.Handler { return s.handler }

// URL is the API's URL, once Listen has bound it.
func (s *Stack) URL() string { return "http://" + s.httpLn.Addr().String() }

// Listen binds the API's address and the metrics', and checks that the
// peer-to-peer ports are free. After a failure, Close releases what was
// bound.
func (s *Stack) Listen() error {
	var err error
	if s.httpLn == nil {
		if s.httpLn, err = httpserve.Listen(s.cfg.HTTP, "http", "LATTICE_HTTP"); err != nil {
			return err
		}
	}
	if s.cfg.Metrics != "" {
		if s.metricsLn, err = httpserve.Listen(s.cfg.Metrics, "metrics", "LATTICE_METRICS"); err != nil {
			return err
		}
	}
	for _, addr := range s.cfg.P2P {
		if err := CheckP2P(addr); err != nil {
			return err
		}
	}
	return nil
}

// CheckP2P checks that a peer-to-peer listen address's port is free
// (p2p.PortFree), naming the flag that moves it: lattice dev checks every
// node's before the first one starts.
func CheckP2P(addr string) error {
	if err := p2p.PortFree(addr); err != nil {
		return fmt.Errorf("%w (choose another address with --p2p or LATTICE_P2P)", err)
	}
	return nil
}

// Provision opens the node, joins the network, provisions and validates
// every module and builds the API. On an error, Close releases what was
// opened.
func (s *Stack) Provision(ctx context.Context) error {
	ncfg := s.cfg.Node
	ncfg.Metrics = s.registry
	n, err := node.Open(ncfg)
	if err != nil {
		return err
	}
	s.node = n
	if s.host, err = p2p.New(ctx, p2p.Config{
		Dir:          filepath.Join(ncfg.DataDir, "p2p"),
		Listen:       s.cfg.P2P,
		Bootstrap:    s.cfg.Bootstrap,
		Network:      n.Network.Genesis.Hash.String(),
		Logger:       s.log,
		Relay:        s.cfg.Relay,
		Reachability: s.cfg.Reachability,
	}); err != nil {
		return err
	}
	for _, m := range s.modules {
		s.provisioned++
		if err := m.Provision(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", m.Name(), err)
		}
	}
	if err := n.Engine.Err(); err != nil {
		return err
	}
	for _, m := range s.modules {
		if v, ok := m.(Validator); ok {
			if err := v.Validate(); err != nil {
				return fmt.Errorf("%s: %w", m.Name(), err)
			}
		}
	}
	opts := s.cfg.API
	opts.Metrics = httpmetrics.New(s.registry, "node")
	if s.metricsLn == nil {
		opts.MetricsHandler = httpmetrics.Handler(s.registry)
	}
	for _, m := range s.modules {
		m.API(&opts)
	}
	s.api = nodeapi.New(n, opts)
	s.handler = s.api
	if s.cfg.Wrap != nil {
		s.handler = s.cfg.Wrap(s.api)
	}
	return nil
}

// Serve serves the API (and the metrics on their own listener) until ctx
// ends, the engine fails or serving fails, calling ready with the API's
// URL once it serves, and stopping, if not nil, as the shutdown begins.
// It returns httpserve.ErrFailed when the engine failed.
func (s *Stack) Serve(ctx context.Context, ready func(url string), stopping func()) error {
	if s.metricsLn != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", httpmetrics.Handler(s.registry))
		mctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = httpserve.Serve(mctx, s.log, s.metricsLn, mux, httpserve.Options{Spare: s.cfg.API.Spare})
		}()
		s.log.Info("metrics listening", "url", "http://"+s.metricsLn.Addr().String()+"/metrics")
		defer func() { cancel(); <-done }()
	}
	if ready != nil {
		ready(s.URL())
	}
	// The API's event streams end at shutdown, also when Wrap hides the
	// API's StopStreams behind another handler.
	h := withStreams{Handler: s.handler, stop: s.api.StopStreams}
	return httpserve.Serve(ctx, s.log, s.httpLn, h, httpserve.Options{Failed: s.node.Engine.Failed(), Stopping: stopping, Spare: s.cfg.API.Spare})
}

// withStreams is the API's handler, wrapped or not, with the API's
// StopStreams, which httpserve calls when its server shuts down.
type withStreams struct {
	http.Handler
	stop func()
}

func (w withStreams) StopStreams() { w.stop() }

// Close releases what Provision opened, in reverse order, and the
// listeners: it waits for the API's handlers (its server has stopped),
// closes the modules, last first, then the host and the node. It is safe
// to call after any step, and more than once.
func (s *Stack) Close() error {
	var errs []error
	s.closeOnce.Do(func() {
		for _, ln := range []net.Listener{s.httpLn, s.metricsLn} {
			if ln != nil {
				ln.Close() // closed by its server already, unless it never served
			}
		}
		if s.api != nil {
			s.api.Wait()
		}
		for i := s.provisioned - 1; i >= 0; i-- {
			errs = append(errs, s.modules[i].Close())
		}
		if s.host != nil {
			errs = append(errs, s.host.Close())
		}
		if s.node != nil {
			errs = append(errs, s.node.Close())
		}
	})
	return errors.Join(errs...)
}
