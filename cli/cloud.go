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

	"github.com/latticenet/lattice/cloudapi"
	"github.com/latticenet/lattice/cloudstore"
	"github.com/latticenet/lattice/durablefile"
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
	stopSweep context.CancelFunc
	swept     chan struct{}
}

// sweepInterval is how often expired objects are deleted.
const sweepInterval = 10 * time.Minute

// openCloud opens the cloud platform in dir, creating the admin API key on
// first start: printed once and written to dir/admin-api-key (0600).
func openCloud(e *env, dir string, log *slog.Logger) (*cloudServer, error) {
	if log == nil {
		log = slog.Default()
	}
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
	c := &cloudServer{st: st, log: log, stopSweep: cancel, swept: make(chan struct{})}
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

// serve runs the REST API on apiLn and the S3 endpoint on s3Ln until ctx
// ends or either fails, and closes both. Both are bound before either
// serves, so the REST API's endpoint record names the S3 address really
// bound.
func (c *cloudServer) serve(ctx context.Context, e *env, log *slog.Logger, apiLn, s3Ln net.Listener, ready func(apiURL, s3URL string)) error {
	c.api = cloudapi.New(c.st, cloudapi.Options{Logger: log, S3Endpoint: s3Ln.Addr().String(), Region: s3Region, PublicURL: c.publicURL})
	c.s3 = s3api.New(c.st, s3api.Options{Logger: log, Region: s3Region})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	urls := make(chan string, 2)
	done := make(chan error, 2)
	quiet := &env{stdout: e.stdout, stderr: io.Discard} // one "shutting down..." is enough
	for _, srv := range []struct {
		ln net.Listener
		h  http.Handler
		e  *env
	}{{apiLn, c.api, e}, {s3Ln, c.s3, quiet}} {
		go func() {
			done <- serveOn(ctx, srv.e, log, srv.ln, srv.h, nil, func(url string) { urls <- url })
			cancel()
		}()
	}
	ready("http://"+apiLn.Addr().String(), "http://"+s3Ln.Addr().String())
	err := <-done
	if err2 := <-done; err == nil {
		err = err2
	}
	return err
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
	f := newFlags(e, "cloud", "cloud [--data DIR] [--api ADDR] [--s3 ADDR] [--public-url URL]")
	data := f.string("data", "LATTICE_DATA", "data", homeDir(".lattice", "cloud"), "data directory")
	apiAddr := f.string("api", "LATTICE_API", "api", "127.0.0.1:8090", "REST API address")
	s3Addr := f.string("s3", "LATTICE_S3", "s3", "127.0.0.1:9000", "S3-compatible endpoint address")
	publicURL := f.string("public-url", "LATTICE_PUBLIC_URL", "public_url", "", "the REST API's URL as clients reach it (behind a proxy), for presigned URLs; default http:// and the request's Host")
	f.string("config", "LATTICE_CONFIG", "", "", "JSON config file with keys data, api, s3, public_url, log_level")
	logLevel := f.string("log-level", "LATTICE_LOG_LEVEL", "log_level", "info", "log level: debug, info, warn, error")
	if err := f.parse(args); err != nil {
		return err
	}
	if *publicURL != "" {
		u, err := url.Parse(*publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErr("--public-url %q: want http(s)://host[:port][/path]", *publicURL)
		}
	}
	log, err := newLogger(e, *logLevel)
	if err != nil {
		return err
	}
	apiLn, s3Ln, err := listenCloud(*apiAddr, *s3Addr)
	if err != nil {
		return err
	}
	c, err := openCloud(e, *data, log)
	if err != nil {
		apiLn.Close()
		s3Ln.Close()
		return err
	}
	defer c.close()
	c.publicURL = *publicURL
	return c.serve(ctx, e, log, apiLn, s3Ln, func(apiURL, s3URL string) {
		fmt.Fprintf(e.stdout, "lattice cloud: REST API %s (data %s)\n", apiURL, *data)
		fmt.Fprintf(e.stdout, "lattice cloud: S3 endpoint %s (region %s)\n", s3URL, s3Region)
	})
}
