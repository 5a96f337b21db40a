package nodeapi

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/latticenet/lattice/internal/run/httpserve"
)

// errNodeFull and errSourceFull say why an inflight limit refused a
// request: the node holds as many as it serves, or the request's address
// holds as many as one address may.
var (
	errNodeFull   = errors.New("node full")
	errSourceFull = errors.New("address full")
)

// inflight bounds requests that hold something while they run (an event
// stream's goroutine and socket, a proof-of-work search's turn, a request
// for offers): at most total at once on the node, and at most perSource
// of them from one public address (an IPv4 address or an IPv6 /64, as
// httpserve.AddressKey counts them). Loopback, private and link-local
// addresses (httpserve.Spared), and the networks the operator spares
// (Options.Spare), are the operator's own clients and the reverse proxies
// that carry every user's requests from one address: they are bounded by
// total alone.
type inflight struct {
	total, perSource int
	spare            httpserve.Spare
	// The refusals admit answers: Retry-After, in seconds, and the
	// messages of a full node (503) and of a full address (429).
	retryAfter           string
	nodeFull, sourceFull string

	mu  sync.Mutex
	all int
	by  map[string]int
}

func newInflight(spare httpserve.Spare, total, perSource int, retryAfter, nodeFull, sourceFull string) *inflight {
	return &inflight{total: total, perSource: perSource, spare: spare, retryAfter: retryAfter, nodeFull: nodeFull, sourceFull: sourceFull, by: map[string]int{}}
}

// admit counts r, or answers it 503 (the node is full) or 429 (its
// address is), both with Retry-After, and says false.
func (l *inflight) admit(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	release, err := l.acquire(source(r))
	if err == nil {
		return release, true
	}
	w.Header().Set("Retry-After", l.retryAfter)
	if errors.Is(err, errNodeFull) {
		writeError(w, http.StatusServiceUnavailable, l.nodeFull)
	} else {
		writeError(w, http.StatusTooManyRequests, l.sourceFull)
	}
	return nil, false
}

// acquire counts one request from source (an address, as source gives
// it), or answers errNodeFull or errSourceFull; release uncounts it and
// may be called more than once.
func (l *inflight) acquire(source string) (release func(), err error) {
	ip := net.ParseIP(source)
	spared := l.spare.Spares(ip)
	if !spared {
		source = httpserve.AddressKey(ip)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.all >= l.total:
		return nil, fmt.Errorf("%w: %d at once", errNodeFull, l.all)
	case l.by[source] >= l.perSource && !spared:
		return nil, fmt.Errorf("%w: %d at once", errSourceFull, l.by[source])
	}
	l.by[source]++
	l.all++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.by[source]--; l.by[source] == 0 {
				delete(l.by, source)
			}
			l.all--
		})
	}, nil
}

// held is how many requests are counted, in all and from how many
// addresses.
func (l *inflight) held() (all, sources int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all, len(l.by)
}

// source is the network address a request comes from, for its limits.
func source(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
