package s3bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/kms"
	"github.com/latticenet/lattice/cloud/storage/s3api"
)

// Lattice is the lattice S3 endpoint served in this process, as `lattice
// cloud` serves it, on a loopback listener over a store in a directory of
// its own. Close stops it and removes the directory.
type Lattice struct {
	dir    string
	st     *cloudstore.Store
	s3     *s3api.Server
	srv    *http.Server
	served chan struct{}
	target Target
	phase  atomic.Pointer[context.Context] // pprof labels of the phase being measured

	closeOnce sync.Once
	closeErr  error
}

// StartLattice opens a store in a new directory under parent (the
// system's temporary directory if empty), makes an account with a
// read-write S3 key and serves the S3 endpoint on 127.0.0.1. Logs at
// warning level and above go to log, if not nil.
func StartLattice(parent string, log *slog.Logger) (l *Lattice, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir, err := os.MkdirTemp(parent, "lattice-s3bench-")
	if err != nil {
		return nil, fmt.Errorf("s3bench: %w", err)
	}
	l = &Lattice{dir: dir, served: make(chan struct{})}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	if l.st, err = cloudstore.OpenDir(dir, log); err != nil {
		return nil, err
	}
	// The key service, as the platform opens it, for the kms phases.
	master, err := kms.LoadMasterKey(filepath.Join(dir, "kms-master.key"), true)
	if err != nil {
		return nil, err
	}
	if _, err = l.st.OpenKMS(master, nil); err != nil {
		return nil, err
	}
	const account = "bench"
	now := time.Now()
	key, secret, err := l.st.CreateS3Key(account, "s3bench", cloudstore.PermReadWrite, "*", now)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("s3bench: %w", err)
	}
	// The benchmark measures the endpoint's capacity against MinIO's, which
	// limits no account: the per-account limits are off.
	l.s3 = s3api.New(l.st, s3api.Options{Logger: log, Region: "us-east-1",
		Limits: s3api.Limits{RequestsPerSecond: -1, Transfers: -1}})
	// The timeouts of `lattice cloud` (cli's serveOn).
	l.srv = &http.Server{
		Handler:           http.HandlerFunc(l.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      10 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() {
		defer close(l.served)
		l.srv.Serve(ln)
	}()
	l.target = Target{Name: "lattice", Endpoint: "http://" + ln.Addr().String(), AccessKey: key.AccessKeyID,
		SecretKey: secret, Region: "us-east-1", phase: l.setPhase}
	return l, nil
}

// Target is the endpoint to measure.
func (l *Lattice) Target() Target { return l.target }

func (l *Lattice) setPhase(name string) {
	if name == "" {
		l.phase.Store(nil)
		return
	}
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("target", l.target.Name, "phase", name, "side", "server"))
	l.phase.Store(&ctx)
}

// serveHTTP serves a request under the labels of the phase being
// measured, so that a CPU profile can be cut by phase on the server side
// as well (`go tool pprof -tagfocus=side=server`).
func (l *Lattice) serveHTTP(w http.ResponseWriter, r *http.Request) {
	p := l.phase.Load()
	if p == nil {
		l.s3.ServeHTTP(w, r)
		return
	}
	defer pprof.SetGoroutineLabels(r.Context())
	pprof.SetGoroutineLabels(*p)
	l.s3.ServeHTTP(w, r)
}

// Close stops the endpoint, closes the store and removes its directory.
// Calls after the first return the first one's result.
func (l *Lattice) Close() error {
	l.closeOnce.Do(func() { l.closeErr = l.close() })
	return l.closeErr
}

func (l *Lattice) close() error {
	var errs []error
	if l.srv != nil {
		errs = append(errs, l.srv.Close())
		<-l.served
		l.s3.Wait()
	}
	if l.st != nil {
		errs = append(errs, l.st.Close())
	}
	errs = append(errs, os.RemoveAll(l.dir))
	return errors.Join(errs...)
}
