package pebblelog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestErrorsRateLimited: a burst of errors logs one line, and the next
// line after the interval says how many were dropped.
func TestErrorsRateLimited(t *testing.T) {
	var buf bytes.Buffer
	l := New(slog.New(slog.NewTextHandler(&buf, nil)))
	for range 500 {
		l.Errorf("flush failed: %s", "no space left on device")
	}
	if n := strings.Count(buf.String(), "flush failed"); n != 1 {
		t.Fatalf("500 errors in a burst logged %d lines, want 1:\n%s", n, buf.String())
	}
	l.mu.Lock()
	l.last = l.last.Add(-errorInterval)
	l.mu.Unlock()
	l.Errorf("flush failed again")
	if !strings.Contains(buf.String(), "suppressed=499") {
		t.Errorf("the line after the interval does not count the 499 dropped:\n%s", buf.String())
	}
}
