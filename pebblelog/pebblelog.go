// Package pebblelog sends Pebble's log messages to log/slog: its routine
// chatter at debug level, its errors as errors, tagged component=pebble.
package pebblelog

import (
	"fmt"
	"log/slog"
)

// Logger implements Pebble's Logger interface over a *slog.Logger.
type Logger struct{ Log *slog.Logger }

// Infof implements pebble.Logger.
func (l Logger) Infof(format string, args ...any) {
	l.Log.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

// Errorf implements pebble.Logger.
func (l Logger) Errorf(format string, args ...any) {
	l.Log.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf implements pebble.Logger: it logs, then panics, as Pebble expects
// Fatalf not to return.
func (l Logger) Fatalf(format string, args ...any) {
	l.Log.Error(fmt.Sprintf(format, args...), "component", "pebble")
	panic(fmt.Sprintf(format, args...))
}
