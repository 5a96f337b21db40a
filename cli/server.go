package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/latticenet/lattice/durablefile"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/nodeapi"
	"github.com/latticenet/lattice/wallet"
)

func version() string { return node.Version }

// Dev network parameters: 1e9 native units minted to the dev key.
const devSupplyUnits = "1000000000"

func runDev(ctx context.Context, e *env, args []string) error {
	e = e.synced()
	f := newFlags(e, "dev", "dev [flags]")
	data := f.string("data", "LATTICE_DATA", "data", homeDir(".lattice", "dev"), "directory for all dev state")
	httpAddr := f.string("http", "LATTICE_HTTP", "http", "127.0.0.1:8080", "node HTTP API address")
	apiAddr := f.string("api", "LATTICE_API", "api", "127.0.0.1:8090", "cloud REST API address")
	s3Addr := f.string("s3", "LATTICE_S3", "s3", "127.0.0.1:9000", "S3-compatible endpoint address")
	f.string("config", "LATTICE_CONFIG", "", "", "JSON config file with keys data, http, api, s3, log_level")
	logLevel := f.string("log-level", "LATTICE_LOG_LEVEL", "log_level", "warn", "log level: debug, info, warn, error")
	if err := f.parse(args); err != nil {
		return err
	}
	log, err := newLogger(e, *logLevel)
	if err != nil {
		return err
	}
	keyPath := filepath.Join(*data, "dev-key.json")
	net, err := devNetwork(*data, keyPath)
	if err != nil {
		return err
	}
	n, err := node.Open(node.Config{DataDir: filepath.Join(*data, "node"), Network: net, Logger: log})
	if err != nil {
		return err
	}
	defer n.Close()
	api := nodeapi.New(n, nodeapi.Options{})
	defer api.Wait() // runs before n.Close: no handler outlives the node

	// The cloud platform runs beside the node until either stops.
	cloudDir := filepath.Join(*data, "cloud")
	cloud, err := openCloud(e, cloudDir, log)
	if err != nil {
		return err
	}
	defer cloud.close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cloudURLs := make(chan [2]string, 1)
	cloudDone := make(chan error, 1)
	go func() {
		// The node's server says "shutting down..." for both.
		quiet := &env{stdout: e.stdout, stderr: io.Discard}
		cloudDone <- cloud.serve(ctx, quiet, log, *apiAddr, *s3Addr, func(api, s3 string) { cloudURLs <- [2]string{api, s3} })
		cancel()
	}()
	var urls [2]string
	select {
	case urls = <-cloudURLs:
	case err := <-cloudDone:
		return fmt.Errorf("cloud: %w", err)
	}
	apiURL, s3URL := urls[0], urls[1]
	err = serve(ctx, e, log, *httpAddr, api, n.Engine.Failed(), func(url string) {
		fmt.Fprintf(e.stdout, "lattice dev: single-node network %q and the cloud platform are running\n\n", net.Name)
		fmt.Fprintf(e.stdout, "  node API    %s\n", url)
		fmt.Fprintf(e.stdout, "  cloud API   %s  (admin key in %s)\n", apiURL, filepath.Join(cloudDir, "admin-api-key"))
		fmt.Fprintf(e.stdout, "  S3 endpoint %s  (region %s; keys from POST /api/storage/keys)\n", s3URL, s3Region)
		fmt.Fprintf(e.stdout, "  data        %s\n", *data)
		fmt.Fprintf(e.stdout, "  dev key     %s\n", keyPath)
		fmt.Fprintf(e.stdout, "  account     %s (genesis, %s native)\n\n", net.Genesis.Account, net.Genesis.Balance.Units())
		fmt.Fprintf(e.stdout, "Try, in another terminal:\n")
		fmt.Fprintf(e.stdout, "  export LATTICE_NODE=%s LATTICE_KEY=%s\n", url, keyPath)
		fmt.Fprintf(e.stdout, "  go run ./cmd/lattice balance\n\nStop with Ctrl-C.\n")
	})
	cancel()
	if cerr := <-cloudDone; err == nil {
		err = cerr
	}
	return err
}

// devNetwork returns the dev network of dir, creating its funded key and
// genesis file on first use.
func devNetwork(dir, keyPath string) (*node.Network, error) {
	genesisPath := filepath.Join(dir, "genesis.json")
	if net, err := node.LoadNetwork(genesisPath); err == nil {
		return net, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	key, err := wallet.LoadKey(keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		key = wallet.NewKey()
		err = wallet.SaveKey(keyPath, key)
	}
	if err != nil {
		return nil, err
	}
	supply, _ := ledger.ParseUnits(devSupplyUnits)
	net := &node.Network{Name: "dev", Work: ledger.DevWork,
		Genesis: ledger.NewGenesis(key.Private(), supply, time.Now().UnixMilli())}
	if err := writeFileAtomic(genesisPath, net, 0o644); err != nil {
		return nil, err
	}
	return net, nil
}

func runNode(ctx context.Context, e *env, args []string) error {
	e = e.synced()
	f := newFlags(e, "node", "node --data DIR [--genesis FILE] [flags]")
	data := f.string("data", "LATTICE_DATA", "data", homeDir(".lattice", "node"), "data directory")
	genesis := f.string("genesis", "LATTICE_GENESIS", "genesis", "", "genesis file; needed on first start only")
	httpAddr := f.string("http", "LATTICE_HTTP", "http", "127.0.0.1:8080", "HTTP API address")
	f.string("config", "LATTICE_CONFIG", "", "", "JSON config file with keys data, genesis, http, log_level, max_clock_skew")
	skew := f.string("max-clock-skew", "LATTICE_MAX_CLOCK_SKEW", "max_clock_skew", "10m", "how far a submitted block's timestamp may be from this node's clock")
	logLevel := f.string("log-level", "LATTICE_LOG_LEVEL", "log_level", "info", "log level: debug, info, warn, error")
	if err := f.parse(args); err != nil {
		return err
	}
	maxSkew, err := time.ParseDuration(*skew)
	if err != nil || maxSkew <= 0 {
		return usageErr("--max-clock-skew %q: want a positive duration like 10m", *skew)
	}
	log, err := newLogger(e, *logLevel)
	if err != nil {
		return err
	}
	var net *node.Network
	if *genesis != "" {
		if net, err = node.LoadNetwork(*genesis); err != nil {
			return err
		}
	}
	n, err := node.Open(node.Config{DataDir: *data, Network: net, Logger: log})
	if err != nil {
		return err
	}
	defer n.Close()
	api := nodeapi.New(n, nodeapi.Options{MaxClockSkew: maxSkew})
	defer api.Wait() // runs before n.Close: no handler outlives the node
	return serve(ctx, e, log, *httpAddr, api, n.Engine.Failed(), func(url string) {
		log.Info("node API listening", "url", url)
		fmt.Fprintf(e.stdout, "lattice node: network %q, API %s\n", n.Network.Name, url)
	})
}

func runGenesis(_ context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "new" {
		return usageErr("want `lattice genesis new --key FILE --out FILE`")
	}
	f := newFlags(e, "genesis new", "genesis new --key FILE --out FILE [flags]")
	keyPath := f.string("key", "LATTICE_KEY", "", "", "key file of the genesis account (created if missing)")
	out := f.string("out", "", "", "genesis.json", "where to write the genesis file")
	name := f.string("network", "", "", "", "network name")
	supply := f.string("supply", "", "", "1000000000", "native supply in units")
	work := f.string("work", "", "", "public", "proof-of-work thresholds: public or dev")
	if err := f.parse(args[1:]); err != nil {
		return err
	}
	if *keyPath == "" || *name == "" {
		return usageErr("--key and --network are required")
	}
	amt, err := ledger.ParseUnits(*supply)
	if err != nil || amt.IsZero() {
		return usageErr("--supply %q: want a positive amount of units", *supply)
	}
	w := ledger.PublicWork
	switch *work {
	case "public":
	case "dev":
		w = ledger.DevWork
	default:
		return usageErr("--work %q: want public or dev", *work)
	}
	if _, err := os.Stat(*out); err == nil {
		return fmt.Errorf("%s exists; not overwriting", *out)
	}
	key, err := wallet.LoadKey(*keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		key = wallet.NewKey()
		err = wallet.SaveKey(*keyPath, key)
	}
	if err != nil {
		return err
	}
	net := &node.Network{Name: *name, Work: w, Genesis: ledger.NewGenesis(key.Private(), amt, time.Now().UnixMilli())}
	if err := writeFileAtomic(*out, net, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "genesis %s written to %s: %s native to %s\n", net.Genesis.Hash, *out, amt.Units(), key.Address())
	return nil
}

// serve runs handler on addr until ctx ends or failed is closed, then shuts
// down gracefully. A nil failed never fires.
func serve(ctx context.Context, e *env, log *slog.Logger, addr string, handler http.Handler, failed <-chan struct{}, ready func(url string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	return serveOn(ctx, e, log, ln, handler, failed, ready)
}

// serveOn is serve on a listener the caller opened.
func serveOn(ctx context.Context, e *env, log *slog.Logger, ln net.Listener, handler http.Handler, failed <-chan struct{}, ready func(url string)) error {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// Streams of large lists take longer than a request; handlers
		// bound their own work.
		WriteTimeout: 10 * time.Minute,
		IdleTimeout:  2 * time.Minute,
		ErrorLog:     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	ready("http://" + ln.Addr().String())
	var failure error
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	case <-failed:
		failure = errors.New("storage failure: stopping so that a restart recovers what was synced")
	}
	log.Info("shutting down")
	fmt.Fprintln(e.stderr, "shutting down...")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// Requests still running after the grace period lose their
		// connections; their handlers then fail fast and return.
		log.Warn("graceful shutdown timed out; closing connections", "err", err)
		srv.Close()
	}
	return failure
}

func newLogger(e *env, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageErr("log level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewJSONHandler(e.stderr, &slog.HandlerOptions{Level: l})), nil
}

// writeFileAtomic writes v as indented JSON to path, durably and whole.
func writeFileAtomic(path string, v any, mode os.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return durablefile.Write(path, append(data, '\n'), mode)
}
