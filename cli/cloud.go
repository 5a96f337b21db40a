package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/latticenet/lattice/cloudapi"
	"github.com/latticenet/lattice/cloudstore"
	"github.com/latticenet/lattice/durablefile"
)

// cloudServer is an open cloud platform: its store, its REST API and the
// lifecycle sweeper, which close stops.
type cloudServer struct {
	st        *cloudstore.Store
	api       *cloudapi.Server
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
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	st, err := cloudstore.Open(filepath.Join(dir, "meta"), log)
	if err != nil {
		return nil, err
	}
	if err := st.OpenSecrets(filepath.Join(dir, "secret.key")); err != nil {
		st.Close()
		return nil, err
	}
	if err := st.OpenBlobs(filepath.Join(dir, "objects")); err != nil {
		st.Close()
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
	c := &cloudServer{st: st, api: cloudapi.New(st, cloudapi.Options{Logger: log}), stopSweep: cancel, swept: make(chan struct{})}
	go func() {
		defer close(c.swept)
		st.RunLifecycle(ctx, sweepInterval, time.Now, log)
	}()
	return c, nil
}

func (c *cloudServer) close() {
	c.stopSweep()
	<-c.swept
	c.api.Wait()
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
	f := newFlags(e, "cloud", "cloud [--data DIR] [--api ADDR]")
	data := f.string("data", "LATTICE_DATA", "data", homeDir(".lattice", "cloud"), "data directory")
	apiAddr := f.string("api", "LATTICE_API", "api", "127.0.0.1:8090", "REST API address")
	f.string("config", "LATTICE_CONFIG", "", "", "JSON config file with keys data, api, log_level")
	logLevel := f.string("log-level", "LATTICE_LOG_LEVEL", "log_level", "info", "log level: debug, info, warn, error")
	if err := f.parse(args); err != nil {
		return err
	}
	log, err := newLogger(e, *logLevel)
	if err != nil {
		return err
	}
	c, err := openCloud(e, *data, log)
	if err != nil {
		return err
	}
	defer c.close()
	return serve(ctx, e, log, *apiAddr, c.api, nil, func(url string) {
		fmt.Fprintf(e.stdout, "lattice cloud: REST API %s (data %s)\n", url, *data)
	})
}
