// Package nodeapi serves the ledger node's HTTP API (docs/api.md and the
// API description in the spec): thin handlers that parse and validate
// requests, then read the store or submit to the engine. The JSON resources
// it reads and writes are package nodewire's, which clients share.
package nodeapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/docs/openapi"
	"github.com/latticenet/lattice/internal/run/accesslog"
	"github.com/latticenet/lattice/internal/run/drain"
	"github.com/latticenet/lattice/internal/run/httpmetrics"
	"github.com/latticenet/lattice/internal/run/httpserve"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/govnet"
	"github.com/latticenet/lattice/node/leasenet"
	"github.com/latticenet/lattice/node/ledgernet"
	"github.com/latticenet/lattice/node/ledgerstore"
	"github.com/latticenet/lattice/node/marketnet"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/node/vmnet"
	"github.com/latticenet/lattice/pow"
	"github.com/latticenet/lattice/statechain"
)

// Options tune the API. Zero values take the defaults.
type Options struct {
	// RequestTimeout bounds the work of a submission. Default 30 s.
	RequestTimeout time.Duration
	// ReadTimeout bounds a GET, including streaming a long list.
	// Default 10 minutes.
	ReadTimeout time.Duration
	// PoWTimeout bounds POST /pow. Default 2 minutes.
	PoWTimeout time.Duration
	// Network is the node's peer-to-peer side, or nil when it runs alone.
	Network Network
	// Chat serves the Chat and Directory endpoints; without it they are
	// absent.
	Chat *chatnet.Service
	// StateChain serves the State chain endpoints; without it they are
	// absent.
	StateChain *govnet.Service
	// Leases serves attestation requests, the timekeepers and settling;
	// without it those endpoints are absent.
	Leases *leasenet.Service
	// VMs serves the leases' machines: GET /vms, exec and the tunnel;
	// without it they are absent.
	VMs *vmnet.Service
	// Market serves GET /providers and POST /lease/request; without it
	// they are absent.
	Market *marketnet.Service
	// Metrics counts the API's requests; nil counts nothing.
	Metrics *httpmetrics.Metrics
	// MetricsHandler, when set, is served at GET /metrics (the node's
	// Prometheus registry); without it /metrics is absent.
	MetricsHandler http.Handler
	// Spare is the networks spared the bounds per address besides
	// loopback, private and link-local ones: the operator's proxies and
	// load balancers on public addresses (httpserve.Spare). It bounds the
	// requests that hold something (event streams, proof of work, offers)
	// here, and the connections in the server that serves the API.
	Spare httpserve.Spare
}

// Network is what the API shows of the node's life on the network.
type Network interface {
	PeerID() string
	Addrs() []string
	Elections() []ledgernet.ElectionInfo
	Stats() ledgernet.Stats
	Quorum() ledgernet.QuorumStatus
	Splits() []ledgernet.Split
	// Reachability is what AutoNAT learned: public, private or unknown.
	Reachability() string
}

func (o *Options) setDefaults() {
	if o.RequestTimeout == 0 {
		o.RequestTimeout = 30 * time.Second
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = 10 * time.Minute
	}
	if o.PoWTimeout == 0 {
		o.PoWTimeout = 2 * time.Minute
	}
}

// ExecRequestTimeout bounds POST /vms/{leaseHash}/exec: the command's
// own timeout (vmnet.Config.ExecTimeout, 30 s) and the trip to the
// provider.
const ExecRequestTimeout = 2 * time.Minute

// noBlockType is the pattern that answers block types this node does not
// accept; it does not make POST an allowed method elsewhere.
const noBlockType = "POST /blocks/{type}"

// Server is the node's HTTP API.
type Server struct {
	n    *node.Node
	opts Options
	mux  *http.ServeMux
	// patterns are the routes of the API, for Routes.
	patterns []string
	// shadowed are the GET patterns that answer 405 for a submission's
	// path (shadow).
	shadowed []string
	// powSlot admits one POST /pow at a time: a search already uses every
	// core, so running two at once only makes both slower.
	powSlot chan struct{}

	// powTurns bounds the POST /pow requests searching or waiting for
	// their turn.
	powTurns *inflight
	// offerAsks bounds one address's POST /lease/request at once (the
	// market service bounds the node's).
	offerAsks *inflight
	// streams bounds the open chat event streams.
	streams *inflight
	// tunnels are the open tunnels' connections.
	tunnels tunnelSet
	// gate admits handlers until Wait, so the node is closed only after
	// the last one returns.
	gate drain.Gate
}

// New returns the API of n.
func New(n *node.Node, opts Options) *Server {
	opts.setDefaults()
	s := &Server{n: n, opts: opts, mux: http.NewServeMux(), powSlot: make(chan struct{}, 1),
		powTurns: newInflight(opts.Spare, MaxPoWWaiting, 1, "5",
			fmt.Sprintf("%d proof-of-work requests are waiting for their turn, the most this node holds: retry later", MaxPoWWaiting),
			"a proof-of-work request from this address is already searching or waiting for its turn: one address has one at a time"),
		offerAsks: newInflight(opts.Spare, math.MaxInt, MaxOfferRequestsPerSource, "1", "",
			fmt.Sprintf("%d requests for offers are open from this address, the most one address may have at once", MaxOfferRequestsPerSource)),
		streams: newInflight(opts.Spare, MaxEventStreams, MaxEventStreamsPerSource, "10",
			fmt.Sprintf("the node holds %d event streams, the most it serves: retry later", MaxEventStreams),
			fmt.Sprintf("%d event streams are open from this address, the most one address may have", MaxEventStreamsPerSource))}
	m := routes{s.mux, &s.patterns}
	m.HandleFunc("GET /accounts", s.accounts)
	m.HandleFunc("GET /accounts/{address}", s.accountInfo)
	m.HandleFunc("GET /accounts/{address}/balance", s.balance)
	m.HandleFunc("GET /accounts/{address}/chain", s.chain)
	m.HandleFunc("GET /accounts/{address}/keyset", s.keyset)
	// One route per type the ledger's rules accept (ledger.AcceptedTypes,
	// every type today); a type the rules do not accept would be absent:
	// a 404 that says what is accepted.
	var accepted []string
	for _, t := range ledger.AcceptedTypes() {
		m.HandleFunc("POST /blocks/"+t.String(), s.submit(t))
		accepted = append(accepted, t.String())
	}
	notAccepted := "this node accepts " + strings.Join(accepted[:len(accepted)-1], ", ") + " and " + accepted[len(accepted)-1] + " blocks"
	s.mux.HandleFunc(noBlockType, func(w http.ResponseWriter, r *http.Request) {
		if _, err := ledger.ParseBlockType(r.PathValue("type")); err != nil {
			s.notFound(w, r) // POST /blocks/recent, /blocks/<hash>: wrong method
			return
		}
		writeError(w, http.StatusNotFound, "no endpoint POST "+r.URL.Path+": "+notAccepted)
	})
	m.HandleFunc("GET /blocks/recent", s.recent)
	m.HandleFunc("GET /blocks/{hash}", s.block)
	m.HandleFunc("POST /pow", s.pow)
	m.HandleFunc("GET /node", s.nodeInfo)
	m.HandleFunc("GET /pending", s.pendingAll)
	m.HandleFunc("GET /pending/{address}", s.pendingFor)
	m.HandleFunc("GET /frontiers", s.frontiers)
	m.HandleFunc("GET /conflicts", s.conflicts)
	m.HandleFunc("GET /conflicts/{account}", s.conflicts)
	m.HandleFunc("GET /network", s.networkInfo)
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	m.HandleFunc("GET /readyz", s.readyz)
	m.HandleFunc("GET /openapi.json", serveDocument)
	if opts.MetricsHandler != nil {
		m.Handle("GET /metrics", opts.MetricsHandler)
	}
	if opts.Chat != nil {
		s.chatRoutes(m)
	}
	if opts.StateChain != nil {
		s.stateRoutes(m)
	}
	s.leaseRoutes(m)
	if opts.Leases != nil {
		s.leaseNetRoutes(m)
	}
	if opts.VMs != nil {
		s.vmRoutes(m)
	}
	if opts.Market != nil {
		m.HandleFunc("GET /providers", s.providers)
		m.HandleFunc("POST /lease/request", s.leaseRequest)
	}
	s.shadow()
	s.mux.HandleFunc("/", s.notFound)
	return s
}

// shadow gives the literal path of each POST route that a GET route's
// wildcard also matches (/blocks/send under GET /blocks/{hash},
// /directory/register under GET /directory/{account}) a GET route of
// its own that answers 405 with Allow: POST, as every other method on it
// does: it names a submission, not a block hash or an account, and a
// client that GETs it means the submission.
func (s *Server) shadow() {
	for _, p := range s.patterns {
		path, ok := strings.CutPrefix(p, http.MethodPost+" ")
		if !ok || strings.Contains(path, "{") {
			continue
		}
		_, get := s.mux.Handler(&http.Request{Method: http.MethodGet, URL: &url.URL{Path: path}})
		if strings.HasPrefix(get, http.MethodGet+" ") && strings.Contains(get, "{") {
			pattern := http.MethodGet + " " + path
			s.mux.HandleFunc(pattern, s.notFound)
			s.shadowed = append(s.shadowed, pattern)
		}
	}
}

// Routes are the patterns of the endpoints this server answers ("GET
// /accounts/{address}"), as docs/openapi/node.json describes them.
func (s *Server) Routes() []string { return slices.Clone(s.patterns) }

// routes registers handlers on a mux and keeps their patterns.
type routes struct {
	mux      *http.ServeMux
	patterns *[]string
}

func (r routes) HandleFunc(pattern string, h http.HandlerFunc) { r.Handle(pattern, h) }

func (r routes) Handle(pattern string, h http.Handler) {
	*r.patterns = append(*r.patterns, pattern)
	r.mux.Handle(pattern, h)
}

// serveDocument answers GET /openapi.json: the API's OpenAPI document.
func serveDocument(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(openapi.Node))
}

// ServeHTTP implements http.Handler: it bounds the request's time, recovers
// from panics and logs the request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.gate.Enter() {
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusServiceUnavailable, "the node is shutting down")
		return
	}
	defer s.gate.Leave()
	start := time.Now()
	timeout := s.opts.RequestTimeout
	switch {
	case r.URL.Path == "/pow":
		timeout = s.opts.PoWTimeout
	case r.Method == http.MethodGet:
		timeout = s.opts.ReadTimeout
	case strings.HasPrefix(r.URL.Path, "/vms/"):
		timeout = max(timeout, ExecRequestTimeout) // a command runs for up to its own timeout
	}
	var ctx context.Context
	var cancel context.CancelFunc
	if r.URL.Path == "/chat/events" {
		// An event stream lasts as long as its client stays; it ends
		// when the client goes or the node stops (StopStreams).
		ctx, cancel = context.WithCancel(r.Context())
	} else {
		ctx, cancel = context.WithTimeout(r.Context(), timeout)
	}
	defer cancel()
	rec := accesslog.New(w)
	_, op := s.mux.Handler(r) // the route pattern: a bounded label
	var read int64
	if r.Body != nil {
		// On a copy of the request: net/http drains a body it does not
		// recognise on the original before it answers.
		r = r.WithContext(r.Context())
		r.Body = &countingBody{r.Body, &read}
	}
	defer func() {
		s.opts.Metrics.Observe(op, rec.Status, time.Since(start), read, rec.Bytes)
	}()
	defer func() {
		p := recover()
		aborted := p == http.ErrAbortHandler
		if p != nil && !aborted {
			s.n.Log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", p)
			if !rec.Wrote {
				writeError(rec, http.StatusInternalServerError, "internal error")
			}
		}
		s.n.Log.Info("http", "method", r.Method, "path", r.URL.Path, "status", rec.Status,
			"bytes", rec.Bytes, "duration", time.Since(start), "remote", r.RemoteAddr, "aborted", aborted)
		if aborted {
			panic(p) // net/http closes the connection without logging
		}
	}()
	s.mux.ServeHTTP(rec, r.WithContext(ctx))
}

// StopStreams ends the event streams, which otherwise last as long as
// their clients: call it when the HTTP server starts shutting down
// (http.Server.RegisterOnShutdown).
func (s *Server) StopStreams() {
	s.tunnels.closeAll()
	if s.opts.Chat != nil {
		s.opts.Chat.StopStreams()
	}
}

// countingBody counts the bytes read from a request body.
type countingBody struct {
	io.ReadCloser
	n *int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	*c.n += int64(n)
	return n, err
}

// Wait blocks until every running handler has returned. Call it after
// http.Server.Shutdown (or Close) and before closing the node.
func (s *Server) Wait() { s.gate.Close() }

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		_, pattern := s.mux.Handler(probe)
		if slices.Contains(s.shadowed, pattern) {
			continue
		}
		switch pattern {
		case "", "/", noBlockType:
			continue
		case "GET /blocks/{hash}":
			// Only a hash makes this a block's URL; /blocks/send is not.
			if _, err := ledger.ParseHash(strings.TrimPrefix(r.URL.Path, "/blocks/")); err != nil {
				continue
			}
		}
		allowed = append(allowed, m)
	}
	if len(allowed) > 0 {
		list := strings.Join(allowed, ", ")
		w.Header().Set("Allow", list)
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s is not allowed; use %s", r.Method, r.URL.Path, list))
		return
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path))
}

func pathAddress(w http.ResponseWriter, r *http.Request, name string) (ledger.Address, bool) {
	a, err := ledger.ParseAddress(r.PathValue(name))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid %s in path: %v", name, err))
		return a, false
	}
	return a, true
}

func (s *Server) internal(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		writeError(w, http.StatusServiceUnavailable, "request timed out; the node is busy, retry")
		return
	}
	if errors.Is(err, node.ErrFailed) {
		writeError(w, http.StatusInternalServerError, "the node's storage failed; it accepts no blocks until it is restarted")
		return
	}
	s.n.Log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, "internal error")
}

// account loads the path's account, answering 400 or 404 itself.
func (s *Server) account(w http.ResponseWriter, r *http.Request) (ledger.Account, bool) {
	a, ok := pathAddress(w, r, "address")
	if !ok {
		return ledger.Account{}, false
	}
	acct, found, err := s.n.Store.Account(a)
	if err != nil {
		s.internal(w, r, err)
		return acct, false
	}
	if !found {
		writeError(w, http.StatusNotFound, "account not found: "+a.String())
		return acct, false
	}
	return acct, true
}

func (s *Server) accounts(w http.ResponseWriter, r *http.Request) {
	st := s.newStream(w, '[', ']')
	st.end(s.n.Store.Accounts(func(a ledger.Account) error {
		if err := r.Context().Err(); err != nil {
			return err
		}
		return st.elem(accountJSON(&a))
	}))
}

// accountInfo answers GET /accounts/{address}, an addition to the API
// description: one Account, so a wallet need not list them all to learn its
// frontier.
func (s *Server) accountInfo(w http.ResponseWriter, r *http.Request) {
	if acct, ok := s.account(w, r); ok {
		writeJSON(w, http.StatusOK, accountJSON(&acct))
	}
}

func (s *Server) balance(w http.ResponseWriter, r *http.Request) {
	if acct, ok := s.account(w, r); ok {
		writeJSON(w, http.StatusOK, nodewire.BalanceMap(&acct))
	}
}

func (s *Server) chain(w http.ResponseWriter, r *http.Request) {
	acct, ok := s.account(w, r)
	if !ok {
		return
	}
	done, _, _, err := s.n.Store.Confirmed(acct.Address)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	st := s.newStream(w, '[', ']')
	st.end(s.n.Store.Chain(acct.Address, func(e *ledger.Entry) error {
		if err := r.Context().Err(); err != nil {
			return err
		}
		return st.elem(nodewire.Block{Block: e.Block, Confirmed: e.Height <= done})
	}))
}

func (s *Server) keyset(w http.ResponseWriter, r *http.Request) {
	acct, ok := s.account(w, r)
	if !ok {
		return
	}
	if acct.Keyset == nil {
		writeError(w, http.StatusNotFound, "account is not multisig: "+acct.Address.String())
		return
	}
	writeJSON(w, http.StatusOK, acct.Keyset)
}

// submit answers POST /blocks/{type}.
// decodeSubmitted reads and parses a submitted block
// (nodewire.ParseSubmitted: a block as the API returns it is accepted).
func decodeSubmitted(r io.Reader) (*ledger.Block, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading the block: %w", err)
	}
	return nodewire.ParseSubmitted(data)
}

func (s *Server) submit(t ledger.BlockType) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := decodeSubmitted(http.MaxBytesReader(w, r.Body, ledger.MaxBlockJSON))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) || errors.As(errors.Unwrap(err), &mbe) {
				err = fmt.Errorf("body exceeds %d bytes", ledger.MaxBlockJSON)
			}
			writeError(w, http.StatusBadRequest, "invalid block: "+err.Error())
			return
		}
		if b.Type != t {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid block: /blocks/%s takes %s blocks, got %s", t, t, b.Type))
			return
		}
		if err := s.n.Engine.Err(); err != nil {
			// Not even a resubmission is answered: what the store shows
			// may not be durable.
			s.internal(w, r, err)
			return
		}
		// The genesis block is in every ledger but never passes the rules
		// for ordinary blocks; resubmitting it is idempotent too.
		if b.Hash == s.n.Network.Genesis.Hash && b.ComputeHash() == b.Hash {
			writeJSON(w, http.StatusOK, nodewire.BlockHashResponse{Hash: b.Hash})
			return
		}
		// The node's admission policy (node.Admission): a new submission
		// must be stamped within the clock skew either way.
		now, adm := s.n.Now(), s.n.Admission
		// A lease account's block is stamped with the time its lease's
		// course fixes (protocol.md §24.4), however long ago: only a
		// block stamped ahead of the clock is refused.
		late := adm.Late(b, now) && b.Type != ledger.TypeLeaseSettle
		if adm.Early(b, now) || late {
			// Resubmitting a block already in the ledger is idempotent,
			// even once its timestamp has aged past the skew window.
			if h := b.ComputeHash(); h == b.Hash {
				if _, found, err := s.n.Store.Entry(h); err != nil {
					s.internal(w, r, err)
					return
				} else if found {
					writeJSON(w, http.StatusOK, nodewire.BlockHashResponse{Hash: h})
					return
				}
			}
			skew := adm.Skew(b, now)
			writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid block: timestamp %d is %s from the node's clock (%d); at most %s is allowed",
				b.Timestamp, max(skew, -skew), now.UnixMilli(), adm.MaxClockSkew))
			return
		}
		if msg := s.leaseAdmission(b, now); msg != "" {
			writeError(w, http.StatusBadRequest, "invalid block: "+msg)
			return
		}
		res, err := s.n.Engine.Submit(r.Context(), b)
		switch {
		case err == nil:
			writeJSON(w, http.StatusOK, nodewire.BlockHashResponse{Hash: res.Hash})
		case ledger.IsRule(err):
			writeError(w, http.StatusBadRequest, "invalid block: "+err.Error())
		default:
			s.internal(w, r, err)
		}
	}
}

// StaleIndexGrace is how long a state-chain index stays good for new lease
// blocks submitted over the API after the next index superseded it: a
// consumer who asked for offers just before a governance change may still
// use them. It is admission, not a ledger rule: a block that comes by the
// network is judged by the index it names, however old (docs/protocol.md).
const StaleIndexGrace = time.Minute

// sameTerms reports whether lease block b has the same terms at the
// index it names as at index tip: cost, stake, acceptance timeout and
// timekeeper committee. An offer at an older index stands while they are.
func sameTerms(gov *govnet.Service, b *ledger.Block, tip uint64) bool {
	at := func(i uint64) (statechain.Params, bool) {
		st, ok := gov.StateAt(i)
		if !ok {
			return statechain.Params{}, false
		}
		p, err := st.Params()
		return p, err == nil
	}
	p, ok1 := at(b.StateChainIndex)
	q, ok2 := at(tip)
	if !ok1 || !ok2 || p.AcceptTimeoutMS != q.AcceptTimeoutMS || !reflect.DeepEqual(p.Timekeepers, q.Timekeepers) {
		return false
	}
	r := market.Request{VCPUs: int64(b.VCPUs), MemoryMB: int64(b.MemoryMB), DiskGB: int64(b.DiskGB), Duration: int64(b.Duration)}
	c1, s1, err1 := market.Quote(p, r)
	c2, s2, err2 := market.Quote(q, r)
	return err1 == nil && err2 == nil && c1 == c2 && s1 == s2
}

// leaseAdmission explains why the node will not admit lease block b, or
// returns "": it names an index superseded more than StaleIndexGrace ago
// whose terms for it differ from the tip's,
// or asks more than its provider has free (when the node knows the
// provider's capacity record). Resubmissions are idempotent.
func (s *Server) leaseAdmission(b *ledger.Block, now time.Time) string {
	if b.Type != ledger.TypeLease {
		return ""
	}
	if _, found, err := s.n.Store.Entry(b.Hash); err == nil && found {
		return ""
	}
	if gov := s.opts.StateChain; gov != nil {
		next, ok := gov.Block(b.StateChainIndex + 1)
		if ok && now.UnixMilli()-next.Timestamp > StaleIndexGrace.Milliseconds() && !sameTerms(gov, b, gov.Tip().Index) {
			tip := gov.Tip()
			return fmt.Sprintf("state-chain index %d is stale: index %d superseded it at %d, more than %s ago, and the lease's terms changed since; quote at the tip, index %d",
				b.StateChainIndex, next.Index, next.Timestamp, StaleIndexGrace, tip.Index)
		}
	}
	if s.opts.Market != nil {
		// The named provider's leases alone: the block's own checks
		// (hash, work, signature) come after this, in Submit.
		p, found, err := s.opts.Market.Provider(b.Destination)
		if err != nil || !found {
			return ""
		}
		if want := (market.Resources{VCPUs: int64(b.VCPUs), MemoryMB: int64(b.MemoryMB), DiskGB: int64(b.DiskGB)}); !want.Fits(p.Free) {
			return fmt.Sprintf("provider %s has %s free, the lease asks %s", p.Account, p.Free, want)
		}
	}
	return ""
}

func (s *Server) block(w http.ResponseWriter, r *http.Request) {
	h, err := ledger.ParseHash(r.PathValue("hash"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid block hash in path: "+err.Error())
		return
	}
	e, found, confirmed, err := s.n.Store.EntryConfirmed(h)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if !found {
		writeError(w, http.StatusNotFound, "block not found: "+h.String())
		return
	}
	writeJSON(w, http.StatusOK, nodewire.Block{Block: e.Block, Confirmed: confirmed})
}

// MaxRecent bounds GET /blocks/recent?limit.
const MaxRecent = 500

func (s *Server) recent(w http.ResponseWriter, r *http.Request) {
	q, ok := queryParams(w, r, "limit")
	if !ok {
		return
	}
	limit := 20
	if q.Has("limit") {
		v, err := strconv.Atoi(q.Get("limit"))
		if err != nil || v < 1 || v > MaxRecent {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit must be an integer from 1 to %d, got %q", MaxRecent, q.Get("limit")))
			return
		}
		limit = v
	}
	st := s.newStream(w, '[', ']')
	// One snapshot: a block and its confirmation read apart could show a
	// fork's rolled-back loser as confirmed (ledgerstore.EntryConfirmed).
	snap := s.n.Store.Snapshot()
	defer snap.Close()
	st.end(snap.Recent(limit, func(e *ledger.Entry) error {
		confirmed, err := snap.IsConfirmed(e)
		if err != nil {
			return err
		}
		return st.elem(nodewire.Block{Block: e.Block, Confirmed: confirmed})
	}))
}

// Bounds of POST /pow: the node runs one search at a time, and holds at
// most MaxPoWWaiting requests searching or waiting for their turn, one of
// them from each public address. Without the second bound a
// client that keeps a few requests queued would hold the node's one
// search for as long as it likes, and every other client would wait out
// its 2 minutes.
const MaxPoWWaiting = 64

func (s *Server) pow(w http.ResponseWriter, r *http.Request) {
	var req nodewire.PoWRequest
	if err := decodeLimited(w, r, &req, 4<<10); err != nil {
		writeError(w, http.StatusBadRequest, "invalid request: want {\"hash\": \"<64 hex characters>\"}: "+err.Error())
		return
	}
	if req.Hash.IsZero() {
		writeError(w, http.StatusBadRequest, "invalid request: hash is required")
		return
	}
	release, ok := s.powTurns.admit(w, r)
	if !ok {
		return
	}
	defer release()
	select {
	case s.powSlot <- struct{}{}:
		defer func() { <-s.powSlot }()
	case <-r.Context().Done():
		s.internal(w, r, r.Context().Err())
		return
	}
	// One core fewer than the machine has, so that a stream of /pow
	// requests cannot starve block verification.
	nonce, err := pow.SolveN(r.Context(), req.Hash, s.n.Network.Work.Max(), max(1, runtime.GOMAXPROCS(0)-1))
	if err != nil {
		s.internal(w, r, r.Context().Err())
		return
	}
	writeJSON(w, http.StatusOK, nodewire.PoWResponse{Nonce: nonce})
}

func (s *Server) nodeInfo(w http.ResponseWriter, r *http.Request) {
	peerID, addrs := "", []string{}
	var quorum *nodewire.Quorum
	if nw := s.opts.Network; nw != nil {
		peerID, addrs = nw.PeerID(), p2pAddrs(nw)
		q := nw.Quorum()
		quorum = &nodewire.Quorum{Total: q.Total, Quorum: q.Quorum, Online: q.Online, Reachable: q.Reachable}
	}
	writeJSON(w, http.StatusOK, nodewire.NodeInfo{
		Quorum:        quorum,
		Version:       node.Version,
		PeerID:        peerID,
		P2PAddrs:      addrs,
		Account:       s.n.Key.Address(),
		UptimeSeconds: int64(s.n.Now().Sub(s.n.Started).Seconds()),
		Network:       s.n.Network.Name,
		Genesis:       s.n.Network.Genesis.Hash,
		Work:          s.n.Network.Work,
	})
}

func (s *Server) pendingAll(w http.ResponseWriter, r *http.Request) {
	st := s.newStream(w, '[', ']')
	st.end(s.n.Store.Pendings(func(p ledger.Pending) error {
		if err := r.Context().Err(); err != nil {
			return err
		}
		return st.elem(pendingJSON(p))
	}))
}

func (s *Server) pendingFor(w http.ResponseWriter, r *http.Request) {
	a, ok := pathAddress(w, r, "address")
	if !ok {
		return
	}
	st := s.newStream(w, '[', ']')
	st.end(s.n.Store.PendingTo(a, func(p ledger.Pending) error { return st.elem(pendingJSON(p)) }))
}

func (s *Server) frontiers(w http.ResponseWriter, r *http.Request) {
	st := s.newStream(w, '{', '}')
	st.end(s.n.Store.Accounts(func(a ledger.Account) error {
		if err := r.Context().Err(); err != nil {
			return err
		}
		return st.field(a.Address.String(), a.Frontier)
	}))
}

func (s *Server) conflicts(w http.ResponseWriter, r *http.Request) {
	var only *ledger.Address
	if r.PathValue("account") != "" {
		a, ok := pathAddress(w, r, "account")
		if !ok {
			return
		}
		only = &a
	}
	elections := map[consensus.Root]ledgernet.ElectionInfo{}
	if nw := s.opts.Network; nw != nil {
		for _, e := range nw.Elections() {
			elections[e.Root] = e
		}
	}
	// Conflicting confirmations come first: they are what an operator
	// must see.
	var splits []nodewire.Conflict
	if nw := s.opts.Network; nw != nil {
		for _, sp := range nw.Splits() {
			if only != nil && *only != sp.Account {
				continue
			}
			splits = append(splits, nodewire.Conflict{AccountAddress: sp.Account, PreviousHash: sp.Previous,
				BlockHashes: []ledger.Hash{sp.Confirmed, sp.Other}, DetectedAt: msTime(sp.DetectedAt),
				Split: &nodewire.Split{Confirmed: sp.Confirmed, Other: sp.Other, Voters: sp.Voters}})
		}
	}
	st := s.newStream(w, '[', ']')
	for _, c := range splits {
		if err := st.elem(c); err != nil {
			st.end(err)
			return
		}
	}
	st.end(s.n.Store.Conflicts(only, func(c ledgerstore.Conflict) error {
		cj := conflictJSON(c)
		if e, ok := elections[consensus.Root{Account: c.Account, Previous: c.Previous}]; ok {
			cj.Election = &nodewire.Election{Quorum: e.Quorum, Online: e.Online, Round: e.Round, Tallies: []nodewire.Tally{}}
			for _, t := range e.Tallies {
				cj.Election.Tallies = append(cj.Election.Tallies, nodewire.Tally{Hash: t.Hash, Weight: t.Tally, Final: t.Final})
			}
		}
		return st.elem(cj)
	}))
}

// networkInfo answers GET /network, an extension of the API description:
// the node's peers and the counters of its network service.
func (s *Server) networkInfo(w http.ResponseWriter, r *http.Request) {
	nw := s.opts.Network
	if nw == nil {
		writeError(w, http.StatusNotFound, "this node runs without a peer-to-peer network")
		return
	}
	writeJSON(w, http.StatusOK, struct {
		PeerID       string   `json:"peer_id"`
		Addrs        []string `json:"p2p_addrs"`
		Reachability string   `json:"reachability"`
		ledgernet.Stats
	}{nw.PeerID(), p2pAddrs(nw), nw.Reachability(), nw.Stats()})
}

// p2pAddrs are nw's addresses, [] rather than null when it has none.
func p2pAddrs(nw Network) []string {
	if a := nw.Addrs(); a != nil {
		return a
	}
	return []string{}
}

func msTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// readyz is 200 while the node accepts blocks, and 503 with the reason
// once a failed write has stopped its engine (the node then shuts down and
// exits 1, see docs/operations.md).
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	if err := s.n.Engine.Err(); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "failed", "reason": err.Error()})
		return
	}
	if nw := s.opts.Network; nw != nil {
		if q := nw.Quorum(); !q.Reachable {
			// Blocks are still accepted, but none is confirmed until
			// representatives holding a quorum are heard again.
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "no_quorum",
				"reason": fmt.Sprintf("representatives heard online hold %s of the %s needed to confirm", q.Online, q.Quorum)})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
