package s3api

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/latticenet/lattice/internal/run/ratelimit"
)

// Limits keep one account, or one source address, from taking the
// endpoint from the others. Zero fields take the defaults; a negative one
// turns that limit off.
type Limits struct {
	// RequestsPerSecond and RequestBurst bound one account's requests
	// (anonymous reads of public buckets count for the bucket's owner).
	// Past them: 503 SlowDown, as S3 answers. Defaults 300 and 600.
	RequestsPerSecond float64
	RequestBurst      int
	// Transfers bounds one account's requests that carry a body in or out
	// (PutObject, GetObject, UploadPart, ...) running at once: past it,
	// 503 SlowDown. Default 16.
	Transfers int
	// MinTransferRate is the slowest an upload's body may arrive, in bytes
	// a second, measured over TransferWindow: a body slower than that is
	// cut off with RequestTimeout. Defaults 1 KiB a second over 20 s.
	MinTransferRate int64
	TransferWindow  time.Duration
	// AuthFailures a minute, in bursts of AuthFailures, may come from one
	// source address: past them its requests answer 503 SlowDown before
	// any signature is checked. Default 60.
	AuthFailures int
}

func (l *Limits) setDefaults() {
	if l.RequestsPerSecond == 0 {
		l.RequestsPerSecond, l.RequestBurst = 300, 600
	}
	if l.Transfers == 0 {
		l.Transfers = 16
	}
	if l.MinTransferRate == 0 {
		l.MinTransferRate = 1 << 10
	}
	if l.TransferWindow == 0 {
		l.TransferWindow = 20 * time.Second
	}
	if l.AuthFailures == 0 {
		l.AuthFailures = 60
	}
}

var errSlowDown = s3err(http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate.")

// fairUse holds the limits' state.
type fairUse struct {
	lim       Limits
	requests  *ratelimit.Limiter[string] // by account
	failures  *ratelimit.Limiter[string] // by source address
	mu        sync.Mutex
	transfers map[string]int // running, by account
}

func newFairUse(l Limits) *fairUse {
	f := &fairUse{lim: l, transfers: make(map[string]int)}
	if l.RequestsPerSecond > 0 {
		f.requests = ratelimit.New[string](l.RequestsPerSecond, l.RequestBurst)
	}
	if l.AuthFailures > 0 {
		f.failures = ratelimit.New[string](float64(l.AuthFailures)/60, l.AuthFailures)
	}
	return f
}

// source is the address a request comes from.
func source(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// authBlocked reports whether the request's address has failed
// authentication too often to be heard now.
func (f *fairUse) authBlocked(r *http.Request, now time.Time) bool {
	if f.failures == nil {
		return false
	}
	blocked, _ := f.failures.Exhausted(source(r), now)
	return blocked
}

// authFailed counts a failed authentication against the address.
func (f *fairUse) authFailed(r *http.Request, now time.Time) {
	if f.failures != nil {
		f.failures.Allow(source(r), now)
	}
}

// admit takes a request of account's; for a transfer it also takes one
// of its transfer slots, which the returned done gives back.
func (f *fairUse) admit(account string, transfer bool, now time.Time) (done func(), err *Error) {
	if f.requests != nil {
		if ok, _ := f.requests.Allow(account, now); !ok {
			return nil, errSlowDown
		}
	}
	if !transfer || f.lim.Transfers < 0 {
		return func() {}, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.transfers[account] >= f.lim.Transfers {
		return nil, errSlowDown
	}
	f.transfers[account]++
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.transfers[account]--; f.transfers[account] == 0 {
			delete(f.transfers, account)
		}
	}, nil
}

// minRate reads a request body and cuts it off when a window passes with
// less than the window's share of the minimum rate: a client that
// trickles a byte now and then holds no connection and no transfer slot
// for long. The connection's read deadline is the current window's end;
// a window ends early, and the next begins, as soon as enough arrived, so
// the deadline fires only on a body too slow. (A read deadline that fires
// ends the request: net/http gives up a connection whose read failed.)
type minRate struct {
	r        io.Reader
	rc       *http.ResponseController
	window   time.Duration
	min      int64 // bytes a window
	rate     int64
	now      func() time.Time
	ends     time.Time
	got      int64 // in this window
	deadline time.Time
	err      error
}

func newMinRate(r io.Reader, w http.ResponseWriter, l Limits, now func() time.Time) io.Reader {
	if l.MinTransferRate < 0 {
		return r
	}
	m := &minRate{r: r, rc: http.NewResponseController(w), window: l.TransferWindow,
		min: max(1, int64(float64(l.MinTransferRate)*l.TransferWindow.Seconds())), rate: l.MinTransferRate, now: now}
	m.ends = now().Add(m.window)
	return m
}

func (m *minRate) Read(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	if m.deadline != m.ends {
		m.rc.SetReadDeadline(m.ends)
		m.deadline = m.ends
	}
	n, err := m.r.Read(p)
	m.got += int64(n)
	now := m.now()
	var ne net.Error
	switch {
	case m.got >= m.min:
		m.got, m.ends = 0, now.Add(m.window)
	case !now.Before(m.ends) || errors.As(err, &ne) && ne.Timeout():
		m.err = fmt.Errorf("s3api: %d bytes of the body arrived in %s, slower than %d bytes a second: %w",
			m.got, m.window, m.rate, os.ErrDeadlineExceeded)
		return n, m.err
	}
	return n, err
}
