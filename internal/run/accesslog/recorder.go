// Package accesslog provides what the HTTP servers' access logs need
// from a response: a ResponseWriter wrapper that remembers the status and
// counts the bytes written.
package accesslog

import (
	"net/http"
	"time"
)

// Recorder wraps a ResponseWriter and remembers what was answered. It
// unwraps for http.ResponseController, so deadlines and flushes reach the
// connection.
type Recorder struct {
	http.ResponseWriter
	Status int   // the status written; 200 until then
	Bytes  int64 // body bytes written
	Wrote  bool  // whether the header (or any body) was written
	// First is when the header (or any body) was first written: the
	// answer's first byte, for a turn-around time.
	First time.Time
}

// New wraps w.
func New(w http.ResponseWriter) *Recorder {
	return &Recorder{ResponseWriter: w, Status: http.StatusOK}
}

// WriteHeader records the first status written.
func (r *Recorder) WriteHeader(code int) {
	if !r.Wrote {
		r.Status, r.Wrote, r.First = code, true, time.Now()
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *Recorder) Write(p []byte) (int, error) {
	if !r.Wrote {
		r.Wrote, r.First = true, time.Now()
	}
	n, err := r.ResponseWriter.Write(p)
	r.Bytes += int64(n)
	return n, err
}

// Unwrap returns the wrapped ResponseWriter.
func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
