// Package pebblelog sends Pebble's log messages to log/slog: its routine
// chatter at debug level, its errors as errors, tagged db=pebble.
// Errors are rate-limited: a failing disk makes Pebble retry a flush in a
// loop, hundreds of times a second, and each retry logs.
package pebblelog

import (
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// errorInterval is how often an error line is logged at most; the lines
// dropped in between are counted in the next one.
const errorInterval = time.Second

// Logger implements Pebble's Logger interface over a *slog.Logger. Make
// one with New.
type Logger struct {
	log *slog.Logger

	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// New returns a Logger writing to log.
func New(log *slog.Logger) *Logger { return &Logger{log: log} }

// Infof implements pebble.Logger.
func (l *Logger) Infof(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...), "db", "pebble")
}

// Errorf implements pebble.Logger, at most once per errorInterval.
func (l *Logger) Errorf(format string, args ...any) {
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.last) < errorInterval {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	suppressed := l.suppressed
	l.last, l.suppressed = now, 0
	l.mu.Unlock()
	attrs := []any{"db", "pebble"}
	if suppressed > 0 {
		attrs = append(attrs, "suppressed", suppressed)
	}
	l.log.Error(fmt.Sprintf(format, args...), attrs...)
}

// Fatalf implements pebble.Logger: it logs, then panics, as Pebble expects
// Fatalf not to return. The stores recover the panic and stop writing.
func (l *Logger) Fatalf(format string, args ...any) {
	l.log.Error(fmt.Sprintf(format, args...), "db", "pebble")
	panic(fmt.Sprintf(format, args...))
}
