// Package httpserve runs the servers' HTTP listeners with the timeouts and
// the graceful shutdown every one of them shares.
package httpserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// ErrFailed is returned when failed fired: a store failed under the
// server, which stopped so that a restart recovers what was synced.
var ErrFailed = errors.New("storage failure: stopping so that a restart recovers what was synced")

// Grace is how long a shutdown waits for running requests.
const Grace = 15 * time.Second

// Options are what a server's owner adds to Serve; the zero Options
// serve.
type Options struct {
	// Failed, when closed, shuts the server down and makes Serve return
	// ErrFailed; nil never fires.
	Failed <-chan struct{}
	// Stopping, if not nil, is called as the shutdown begins.
	Stopping func()
	// Spare is the networks spared the bounds on connections besides the
	// built-in ones (Spared).
	Spare Spare
}

// Serve serves handler on ln, which the caller bound before creating any
// state, until ctx ends, opt.Failed is closed or the server fails, then
// shuts down gracefully: new requests are refused, running ones get Grace
// to finish. Connections are bounded in all and per address (MaxConns,
// MaxConnsPerAddress). A handler with StopStreams has it called at
// shutdown (long-lived streams end), and a listener with Wait (the CDN
// edge's, which serves connections of its own) is drained in the same
// grace period.
func Serve(ctx context.Context, log *slog.Logger, ln net.Listener, handler http.Handler, opt Options) error {
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
	if ss, ok := handler.(interface{ StopStreams() }); ok {
		srv.RegisterOnShutdown(ss.StopStreams)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(limitConns(ln, MaxConns, MaxConnsPerAddress, log, opt.Spare.Spares)) }()
	var failure error
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	case <-opt.Failed:
		failure = ErrFailed
	}
	log.Info("shutting down")
	if opt.Stopping != nil {
		opt.Stopping()
	}
	sctx, cancel := context.WithTimeout(context.Background(), Grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// Requests still running after the grace period lose their
		// connections; their handlers then fail fast and return.
		log.Warn("graceful shutdown timed out; closing connections", "err", err)
		srv.Close()
	}
	if w, ok := ln.(interface{ Wait(context.Context) error }); ok {
		if err := w.Wait(sctx); err != nil {
			log.Warn("graceful shutdown timed out; closed the edge's connections", "err", err)
		}
	}
	return failure
}

// Listen binds addr on TCP for the server or service that flag (and env)
// configure, and names them in the error, so that a port in use says how
// to pick another.
func Listen(addr, flag, env string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w (choose another address with --%s or %s)", addr, err, flag, env)
	}
	return ln, nil
}
