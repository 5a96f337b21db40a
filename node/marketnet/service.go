// Package marketnet is the compute marketplace on the network before a
// lease exists (its rules are package market): providers gossip signed
// capacity records, every node lists the providers it heard of, and a
// node asks the providers for signed offers on a consumer's request over
// direct libp2p streams, answering within a bounded time, cheapest first.
package marketnet

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/internal/strictjson"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
)

// Topic and protocol names, under the host's /lattice/<genesis>/ namespace.
const (
	topicCapacity = "providers/1"
	protocolOffer = "offer/1"
	// maxMessage bounds a request or an answer on an offer stream.
	maxMessage = 4096
	// MaxProviders bounds the records a node keeps: keys cost nothing to
	// make, so a flood of records must not grow without bound.
	MaxProviders = 1024
	// staleAfter is how many announce intervals a record lives without a
	// newer one: a provider that stopped is not asked for ever.
	staleAfter = 5
	// asksAtOnce bounds the streams one request for offers opens at once.
	asksAtOnce = 16
	// maxReason bounds a refusal's reason from a provider.
	maxReason = 200
	// requestsAtOnce bounds the requests for offers a node runs at once.
	requestsAtOnce = 8
	// askTimeout bounds one provider's answer, within the request's bound.
	askTimeout = 2 * time.Second
	// recordSkew is how far ahead of this node's clock a capacity record
	// may be stamped: little, since a record stamped ahead lives longer.
	recordSkew = time.Minute
)

// ErrBusy says the node runs as many requests for offers as it takes.
var ErrBusy = errors.New("marketnet: this node is answering as many requests for offers as it takes; retry shortly")

// Config configures a Service. Zero values take the defaults.
type Config struct {
	Host    *p2p.Host
	Network ledger.Hash
	// Provider, when set, makes this node a provider: it announces
	// Capacity under this key and answers requests for offers.
	Provider *wallet.Key
	Capacity market.Resources
	// Params returns the network's parameters in force and their
	// state-chain index (the state chain's tip).
	Params func() (statechain.Params, uint64, error)
	// Active returns what a provider's active leases take and how many
	// there are, from the ledger; nil means none (no lease exists yet).
	Active func(provider ledger.Address) (market.Resources, int, error)
	// Balance returns a provider's balance of the native asset on this
	// node's ledger, which ranks records when they are full (keep); nil
	// means none.
	Balance func(provider ledger.Address) (ledger.Amount, error)
	// Ready, when set, says whether a provider can run the VMs of the
	// leases it would be offered: while it returns an error the provider
	// makes no offer, and whoever asks is told why, rather than be paid
	// for a VM its host cannot boot.
	Ready  func() error
	Logger *slog.Logger
	Now    func() time.Time
	// Announce is how often a provider announces its record. Default 1
	// minute.
	Announce time.Duration
	// OfferTimeout bounds a request for offers. Default 3 seconds.
	OfferTimeout time.Duration
	// OfferTTL is how long an offer holds. Default 5 minutes.
	OfferTTL time.Duration
	// MaxClockSkew is how far ahead of this node's clock a record may be
	// stamped. Default 10 minutes.
	MaxClockSkew time.Duration
}

// Service is one node's part of the marketplace.
type Service struct {
	cfg   Config
	log   *slog.Logger
	h     *p2p.Host
	topic *p2p.Topic

	mu      sync.Mutex
	records map[ledger.Address]*market.Capacity
	ranks   map[ledger.Address]rank // of each record, for keep
	busy    chan struct{}           // a slot per request for offers running

	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// Start joins the providers' topic and, for a provider, announces its
// record and answers requests for offers.
func Start(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Announce == 0 {
		cfg.Announce = time.Minute
	}
	if cfg.OfferTimeout == 0 {
		cfg.OfferTimeout = 3 * time.Second
	}
	if cfg.OfferTTL == 0 {
		cfg.OfferTTL = 5 * time.Minute
	}
	if cfg.MaxClockSkew == 0 {
		cfg.MaxClockSkew = 10 * time.Minute
	}
	if cfg.Params == nil {
		return nil, errors.New("marketnet: Config.Params is required")
	}
	s := &Service{cfg: cfg, log: cfg.Logger.With("service", "market"), h: cfg.Host, records: map[ledger.Address]*market.Capacity{},
		ranks: map[ledger.Address]rank{}, busy: make(chan struct{}, requestsAtOnce)}
	if cfg.Provider != nil {
		if err := s.record().Check(cfg.Network); err != nil {
			return nil, fmt.Errorf("marketnet: --capacity: %w", err)
		}
	}
	var err error
	if s.topic, err = s.h.Join(topicCapacity, s.validate, s.deliver); err != nil {
		return nil, err
	}
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if cfg.Provider != nil {
		s.keep(s.record())
		s.h.Handle(protocolOffer, s.serveOffer)
		s.wg.Go(func() { s.announceLoop(ctx) })
		s.log.Info("providing compute", "provider", cfg.Provider.Address(), "capacity", cfg.Capacity.String())
	}
	return s, nil
}

// Close stops announcing and answering.
func (s *Service) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.wg.Wait()
	})
	return nil
}

// record returns this provider's capacity record, signed now.
func (s *Service) record() *market.Capacity {
	c := &market.Capacity{NodePeer: s.h.ID().String(), Total: s.cfg.Capacity, Timestamp: s.cfg.Now().UnixMilli()}
	c.Sign(s.cfg.Provider.Private(), s.cfg.Network)
	return c
}

// announceLoop publishes the record at once when the topic has peers,
// then every Announce, so that nodes that join later hear of it.
func (s *Service) announceLoop(ctx context.Context) {
	announced := false
	for {
		wait := s.cfg.Announce
		if !announced {
			wait = 250 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		r := s.record()
		s.keep(r) // renewed here whether or not anyone hears it
		if len(s.topic.Peers()) == 0 {
			continue
		}
		data, _ := json.Marshal(r)
		if err := s.topic.Publish(ctx, data); err != nil && ctx.Err() == nil {
			s.log.Debug("publish capacity", "err", err)
			continue
		}
		announced = true
	}
}

// judge decodes and checks a record from a peer.
func (s *Service) judge(data []byte) (*market.Capacity, error) {
	var c market.Capacity
	if err := strictjson.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%w: %v", market.ErrInvalid, err)
	}
	if err := c.Check(s.cfg.Network); err != nil {
		return nil, err
	}
	if c.Timestamp > s.cfg.Now().Add(recordSkew).UnixMilli() {
		return nil, errEarly
	}
	return &c, nil
}

var errEarly = errors.New("marketnet: a record stamped ahead of this node's clock")

// validate is the gossip validator: a record is forwarded when it is
// valid and newer than the one held.
func (s *Service) validate(_ context.Context, from peer.ID, data []byte) p2p.Verdict {
	if from == s.h.ID() {
		return p2p.Accept
	}
	c, err := s.judge(data)
	switch {
	case errors.Is(err, errEarly):
		return p2p.Ignore
	case err != nil:
		return p2p.Reject
	}
	if !s.keep(c) {
		return p2p.Ignore
	}
	return p2p.Accept
}

func (s *Service) deliver(peer.ID, []byte) {} // validate kept it

// keep holds c when it is newer than the record held for its provider.
//
// Keys cost nothing to make, so the records are bounded, and when they
// are full of fresh ones a newcomer takes the place of the lowest record
// only if it ranks above it (rank): a provider with live leases above one
// without, then the larger balance, then the record renewed later. A
// flood of fresh keys therefore displaces only providers that hold less
// on the ledger than each of the flood's keys, and stamping ahead of the
// clock gains nothing.
func (s *Service) keep(c *market.Capacity) bool {
	if c.Timestamp < s.staleBefore() {
		return false
	}
	r := s.rank(c) // reads the ledger: outside the lock
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.records[c.Provider]
	if ok && !c.Newer(old, s.cfg.Network) {
		return false
	}
	if !ok && len(s.records) >= MaxProviders {
		s.prune()
		if len(s.records) >= MaxProviders {
			var lowest ledger.Address
			var low rank
			first := true
			for k := range s.records {
				if rk := s.ranks[k]; first || rk.cmp(low) < 0 {
					lowest, low, first = k, rk, false
				}
			}
			if r.cmp(low) <= 0 {
				return false
			}
			delete(s.records, lowest)
			delete(s.ranks, lowest)
		}
	}
	s.records[c.Provider] = c
	s.ranks[c.Provider] = r
	return true
}

// rank is a record's standing when the records are full.
type rank struct {
	own     bool          // this node's own provider: always kept
	leased  bool          // the provider has live leases
	balance ledger.Amount // its native balance
	// renewed is the earlier of the record's stamp and its arrival here
	// (a record may be stamped a minute ahead of this node's clock).
	renewed int64
}

func (a rank) cmp(b rank) int {
	switch {
	case a.own != b.own:
		return cmpBool(a.own, b.own)
	case a.leased != b.leased:
		return cmpBool(a.leased, b.leased)
	case a.balance != b.balance:
		return a.balance.Cmp(b.balance)
	}
	return cmp.Compare(a.renewed, b.renewed)
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// rank reads c's provider's standing from the ledger; a failed read
// counts as none.
func (s *Service) rank(c *market.Capacity) rank {
	r := rank{renewed: min(c.Timestamp, s.cfg.Now().UnixMilli())}
	r.own = s.cfg.Provider != nil && c.Provider == s.cfg.Provider.Address()
	if s.cfg.Active != nil {
		if _, n, err := s.cfg.Active(c.Provider); err == nil {
			r.leased = n > 0
		}
	}
	if s.cfg.Balance != nil {
		if b, err := s.cfg.Balance(c.Provider); err == nil {
			r.balance = b
		}
	}
	return r
}

// staleBefore is the timestamp before which a record is stale.
func (s *Service) staleBefore() int64 {
	return s.cfg.Now().Add(-staleAfter * s.cfg.Announce).UnixMilli()
}

// prune drops stale records. Called with mu held.
func (s *Service) prune() {
	limit := s.staleBefore()
	for k, c := range s.records {
		if c.Timestamp < limit {
			delete(s.records, k)
			delete(s.ranks, k)
		}
	}
}

// Providers lists the providers this node heard of recently (a record
// not renewed for five announce intervals is dropped), by account: total
// as their records say, free and active leases as the ledger says.
func (s *Service) Providers() ([]market.Provider, error) {
	s.mu.Lock()
	s.prune()
	recs := make([]*market.Capacity, 0, len(s.records))
	for _, c := range s.records {
		recs = append(recs, c)
	}
	s.mu.Unlock()
	slices.SortFunc(recs, func(a, b *market.Capacity) int { return bytes.Compare(a.Provider[:], b.Provider[:]) })
	out := make([]market.Provider, 0, len(recs))
	for _, c := range recs {
		p, err := s.provider(c)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Provider is Providers' entry for the provider account a, if a record
// of it is held: its leases alone are read.
func (s *Service) Provider(a ledger.Address) (market.Provider, bool, error) {
	s.mu.Lock()
	s.prune()
	c := s.records[a]
	s.mu.Unlock()
	if c == nil {
		return market.Provider{}, false, nil
	}
	p, err := s.provider(c)
	return p, err == nil, err
}

// provider is the entry of c's provider, its free resources counted from
// the ledger's live leases.
func (s *Service) provider(c *market.Capacity) (market.Provider, error) {
	var used market.Resources
	n := 0
	if s.cfg.Active != nil {
		var err error
		if used, n, err = s.cfg.Active(c.Provider); err != nil {
			return market.Provider{}, fmt.Errorf("marketnet: the leases of %s: %w", c.Provider, err)
		}
	}
	return market.Provider{Account: c.Provider, Total: c.Total, Free: c.Total.Sub(used), ActiveLeases: n,
		NodePeer: c.NodePeer, UpdatedAt: c.Timestamp}, nil
}

// offerAnswer is a provider's answer on an offer stream: an offer, or the
// reason there is none.
type offerAnswer struct {
	Offer *market.Offer `json:"offer,omitempty"`
	Error string        `json:"error,omitempty"`
}

// RequestOffers asks every provider heard of for an offer on r, in
// parallel, and answers within OfferTimeout with the offers that came
// back valid, cheapest first. r must have passed Check.
func (s *Service) RequestOffers(ctx context.Context, r market.Request) (market.Offers, error) {
	select {
	case s.busy <- struct{}{}:
		defer func() { <-s.busy }()
	default:
		return market.Offers{}, ErrBusy
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.OfferTimeout)
	defer cancel()
	all, err := s.Providers()
	if err != nil {
		return market.Offers{}, err
	}
	out := market.Offers{Offers: []market.Offer{}, Refused: []market.Refusal{}}
	// One node is asked once, for all the records that name it: a
	// record's node_peer is the provider's word, so anyone may sign a
	// record naming another's node, and the node's answer then counts
	// for whichever of them signed the offer.
	var nodes []string
	byNode := map[string][]market.Provider{}
	for _, p := range all {
		if byNode[p.NodePeer] == nil {
			nodes = append(nodes, p.NodePeer)
		}
		byNode[p.NodePeer] = append(byNode[p.NodePeer], p)
	}
	out.Asked = len(nodes)
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, asksAtOnce)
	refuse := func(ps []market.Provider, reason string) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range ps {
			out.Refused = append(out.Refused, market.Refusal{Provider: p.Account, Reason: reason})
		}
	}
	for _, node := range nodes {
		ps := byNode[node]
		wg.Go(func() {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
				refuse(ps, "not asked in time")
				return
			}
			o, p, err := s.askNode(ctx, ps, r)
			if err != nil {
				refuse(ps, err.Error())
				return
			}
			mu.Lock()
			out.Offers = append(out.Offers, *o)
			mu.Unlock()
			refuse(slices.DeleteFunc(slices.Clone(ps), func(q market.Provider) bool { return q.Account == p.Account }),
				"its record names the node of "+p.Account.String()+", which answered for that provider")
		})
	}
	wg.Wait()
	slices.SortFunc(out.Offers, func(a, b market.Offer) int {
		if c := a.Cost.Cmp(b.Cost); c != 0 {
			return c
		}
		return bytes.Compare(a.Provider[:], b.Provider[:])
	})
	slices.SortFunc(out.Refused, func(a, b market.Refusal) int { return bytes.Compare(a.Provider[:], b.Provider[:]) })
	return out, nil
}

// askNode gets an offer on r from the node that the records ps all name,
// and returns it with the provider of ps that signed it: from this node
// itself when one of them is this node's provider, else over a stream.
func (s *Service) askNode(ctx context.Context, ps []market.Provider, r market.Request) (*market.Offer, market.Provider, error) {
	p := ps[0]
	var ans offerAnswer
	if i := slices.IndexFunc(ps, func(q market.Provider) bool {
		return s.cfg.Provider != nil && q.Account == s.cfg.Provider.Address()
	}); i >= 0 {
		p, ans = ps[i], s.offer(r)
	} else {
		ctx, cancel := context.WithTimeout(ctx, askTimeout)
		defer cancel()
		id, err := peer.Decode(p.NodePeer)
		if err != nil {
			return nil, p, fmt.Errorf("its record names no peer: %v", err)
		}
		st, err := s.h.Open(ctx, id, protocolOffer)
		if err != nil {
			return nil, p, fmt.Errorf("unreachable: %v", err)
		}
		defer st.Close()
		stop := context.AfterFunc(ctx, func() { st.Reset() })
		defer stop()
		req, _ := json.Marshal(r)
		if _, err := st.Write(req); err != nil {
			return nil, p, fmt.Errorf("unreachable: %v", err)
		}
		st.CloseWrite()
		data, err := io.ReadAll(io.LimitReader(st, maxMessage+1))
		if err != nil {
			return nil, p, fmt.Errorf("no answer: %v", err)
		}
		if len(data) > maxMessage {
			return nil, p, errors.New("an answer over the size bound")
		}
		if err := strictjson.Unmarshal(data, &ans); err != nil {
			return nil, p, fmt.Errorf("a malformed answer: %v", err)
		}
	}
	if ans.Offer == nil {
		return nil, p, errors.New(reason(ans.Error))
	}
	// The offer counts for whichever provider naming this node signed it.
	if i := slices.IndexFunc(ps, func(q market.Provider) bool { return q.Account == ans.Offer.Provider }); i >= 0 {
		p = ps[i]
	}
	o, err := s.judgeOffer(p, r, ans.Offer)
	return o, p, err
}

// judgeOffer keeps o, p's answer to r, only if it verifies, names p and
// exactly r, holds now and not for longer than offers do, and quotes the
// network's cost and stake at a state-chain index this node holds.
func (s *Service) judgeOffer(p market.Provider, r market.Request, o *market.Offer) (*market.Offer, error) {
	if err := o.Check(s.cfg.Network); err != nil {
		return nil, fmt.Errorf("an invalid offer: %v", err)
	}
	switch {
	case o.Provider != p.Account:
		return nil, fmt.Errorf("an offer signed by %s", o.Provider)
	case o.Request != r:
		return nil, errors.New("an offer for another request")
	case o.Expiry <= s.cfg.Now().UnixMilli():
		return nil, errors.New("an offer already expired")
	case o.Expiry > s.cfg.Now().Add(s.cfg.OfferTTL+s.cfg.MaxClockSkew).UnixMilli():
		return nil, errors.New("an offer that holds longer than offers do")
	}
	// The cost must be the network's price now: quoted at an index this
	// node holds, and equal to the quote at its tip (an offer at an
	// earlier index stands while the prices have not changed since).
	params, tip, err := s.cfg.Params()
	if err != nil {
		return nil, fmt.Errorf("this node cannot read the network's parameters: %v", err)
	}
	if o.StateIndex > tip {
		return nil, fmt.Errorf("an offer quoted at state-chain index %d, beyond this node's tip %d", o.StateIndex, tip)
	}
	cost, stake, err := market.Quote(params, r)
	if err != nil || cost != o.Cost || stake != o.Stake {
		return nil, fmt.Errorf("an offer whose cost or stake is not the network's (%s and %s at index %d)", cost, stake, tip)
	}
	return o, nil
}

// offer is this provider's answer to r.
func (s *Service) offer(r market.Request) offerAnswer {
	if err := r.Check(); err != nil {
		return offerAnswer{Error: err.Error()}
	}
	if s.cfg.Ready != nil {
		if err := s.cfg.Ready(); err != nil {
			return offerAnswer{Error: "the provider's host cannot run VMs now: " + err.Error()}
		}
	}
	var used market.Resources
	if s.cfg.Active != nil {
		var err error
		if used, _, err = s.cfg.Active(s.cfg.Provider.Address()); err != nil {
			return offerAnswer{Error: "the provider cannot read its leases"}
		}
	}
	if free := s.cfg.Capacity.Sub(used); !r.Resources().Fits(free) {
		return offerAnswer{Error: fmt.Sprintf("insufficient capacity: %s free, %s asked", free, r.Resources())}
	}
	params, index, err := s.cfg.Params()
	if err != nil {
		return offerAnswer{Error: "the provider cannot read the network's parameters"}
	}
	cost, stake, err := market.Quote(params, r)
	if err != nil {
		return offerAnswer{Error: err.Error()}
	}
	o := &market.Offer{NodePeer: s.h.ID().String(), Request: r, Cost: cost, Stake: stake, StateIndex: index,
		Expiry: s.cfg.Now().Add(s.cfg.OfferTTL).UnixMilli()}
	o.Sign(s.cfg.Provider.Private(), s.cfg.Network)
	return offerAnswer{Offer: o}
}

// serveOffer answers one request for an offer.
func (s *Service) serveOffer(st network.Stream) {
	defer st.Close()
	_ = st.SetDeadline(time.Now().Add(10 * time.Second))
	data, err := io.ReadAll(io.LimitReader(st, maxMessage+1))
	if err != nil || len(data) > maxMessage {
		st.Reset()
		return
	}
	var r market.Request
	ans := offerAnswer{Error: "a malformed request"}
	if strictjson.Unmarshal(data, &r) == nil {
		ans = s.offer(r)
	}
	out, _ := json.Marshal(ans)
	if _, err := st.Write(out); err != nil {
		st.Reset()
	}
}

// reason makes a provider's refusal fit to show: printable, bounded.
func reason(r string) string {
	r = strings.Map(func(c rune) rune {
		if unicode.IsControl(c) || unicode.Is(unicode.Cf, c) {
			return ' '
		}
		return c
	}, r)
	if r == "" {
		return "no offer"
	}
	if len(r) > maxReason {
		r = strings.ToValidUTF8(r[:maxReason], "") + "…"
	}
	return r
}
