// Package leasenet runs leases on the network (their rules are in
// packages ledger, market and timekeeping):
//
//   - a timekeeper node (--timekeeper-key) answers attestation requests,
//     signing each lease and purpose at most once (a start once per half
//     precision window) and keeping what it signed, and announces where it
//     answers;
//   - any node gathers a committee's attestations over direct streams and
//     builds the lease account's blocks (start, refund, end, stake
//     return, early end at the consumer's notice and its remainder,
//     bounce), which anyone may: POST /leases/{hash}/settle;
//   - a provider node (--provider-key) accepts the leases that name it
//     while it has the capacity, starts them, ends them when their time
//     is up or at their consumer's notice, refunds those it never
//     accepted, takes its payouts in, and picks all of that up again
//     after a restart from the ledger;
//   - every node records timekeepers' equivocations it sees in blocks.
package leasenet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/internal/pebblekv"
	"github.com/latticenet/lattice/internal/run/pebblelog"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/wallet"
)

// Config configures a Service. Zero values take the defaults.
type Config struct {
	Node *node.Node
	Host *p2p.Host
	// Dir holds the service's store (DATA/leases); FS is its file system,
	// nil meaning the operating system's.
	Dir string
	FS  vfs.FS
	// Terms reads the state chain (its Network is the ledger's); TipIndex
	// is its tip.
	Terms    market.Terms
	TipIndex func() uint64
	// Timekeeper, when set, makes the node a timekeeper with this key.
	Timekeeper *wallet.Key
	// Provider, when set, makes the node run its provider's leases;
	// Capacity is what the provider's machines have in all.
	Provider *wallet.Key
	Capacity market.Resources
	Logger   *slog.Logger
	Now      func() time.Time
	// Announce is how often a timekeeper announces its node. Default 1
	// minute.
	Announce time.Duration
	// Tick is how often a provider looks over its leases for what is due.
	// Default 1 second.
	Tick time.Duration
	// GatherTimeout bounds gathering a committee's attestations. Default 3
	// seconds.
	GatherTimeout time.Duration
	// RefundGrace is how long past a lease's acceptance deadline a
	// provider's node leaves the refund of a lease it never accepted to
	// its consumer before making it itself. Default DefaultRefundGrace.
	RefundGrace time.Duration
}

// DefaultRefundGrace is Config.RefundGrace's default.
const DefaultRefundGrace = time.Minute

// Service is one node's part in leases.
type Service struct {
	cfg Config
	log *slog.Logger
	n   *node.Node
	h   *p2p.Host
	db  *pebble.DB

	tk tkState

	mu       sync.Mutex // serialises this node's own blocks (the provider's chain)
	evidence evidenceState

	// settling holds the leases whose lease-account block is being made
	// (Settle, providerStep): one lease's at a time, whoever asks. work
	// admits one proof-of-work search for Settle's blocks at a time.
	settlingMu sync.Mutex
	settling   map[ledger.Hash]chan struct{} // closed when the block is made or given up
	work       chan struct{}

	strays strayState

	kick   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// Start opens the store and starts what the node's roles need.
func Start(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Node == nil || cfg.Host == nil || cfg.Terms.StateAt == nil {
		return nil, errors.New("leasenet: Config.Node, Host and Terms are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Announce == 0 {
		cfg.Announce = time.Minute
	}
	if cfg.Tick == 0 {
		cfg.Tick = time.Second
	}
	if cfg.GatherTimeout == 0 {
		cfg.GatherTimeout = 3 * time.Second
	}
	if cfg.RefundGrace == 0 {
		cfg.RefundGrace = DefaultRefundGrace
	}
	if cfg.FS == nil {
		cfg.FS = vfs.Default
	}
	db, err := pebblekv.Open(cfg.Dir, &pebble.Options{FS: cfg.FS, Logger: pebblelog.New(cfg.Logger), FormatMajorVersion: pebble.FormatNewest})
	if err != nil {
		return nil, fmt.Errorf("leasenet: open %s: %w", filepath.Base(cfg.Dir), err)
	}
	s := &Service{cfg: cfg, log: cfg.Logger.With("service", "leases"), n: cfg.Node, h: cfg.Host, db: db,
		kick: make(chan struct{}, 1), settling: map[ledger.Hash]chan struct{}{}, work: make(chan struct{}, 1)}
	s.tk.records, s.tk.heard = map[ledger.Address]*announcement{}, map[ledger.Address]int64{}
	if err := s.startTimekeeping(); err != nil {
		db.Close()
		return nil, err
	}
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	sub := s.n.Engine.Subscribe(1 << 12)
	s.wg.Go(func() { s.watch(ctx, sub) })
	if cfg.Timekeeper != nil {
		s.wg.Go(func() { s.announceLoop(ctx) })
		s.log.Info("keeping time for leases", "key", cfg.Timekeeper.Address())
	}
	if cfg.Provider != nil {
		s.wg.Go(func() { s.providerLoop(ctx) })
	}
	return s, nil
}

// Close stops the service and closes its store.
func (s *Service) Close() error {
	var err error
	s.once.Do(func() {
		if s.cancel != nil {
			s.cancel()
		}
		s.wg.Wait()
		err = s.db.Close()
	})
	return err
}

func (s *Service) now() int64 { return s.cfg.Now().UnixMilli() }

// watch follows the engine's changes: attestations in new blocks go to the
// evidence check, and a provider looks at once at leases that concern it.
func (s *Service) watch(ctx context.Context, sub *node.Subscription) {
	sub.Follow(ctx, func(c *node.Change) {
		if c == nil { // changes were missed: the provider looks at everything
			s.poke()
			return
		}
		for _, e := range c.Applied {
			s.observe(e.Block)
			if s.cfg.Provider != nil {
				s.strays.seen(e.Block, s.cfg.Provider.Address())
			}
		}
		for _, b := range c.Contenders { // a refused contender's attestations count too
			s.observe(b)
		}
		if s.cfg.Provider != nil && len(c.Applied) > 0 {
			s.poke()
		}
	})
}

func (s *Service) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// lease reads a lease's record from the ledger.
func (s *Service) lease(h ledger.Hash) (*ledger.LeaseRecord, bool, error) {
	return ledger.GetLease(s.n.Store, h)
}

// notice returns a notice of r's consumer to end r early, if the ledger
// holds one: a send of native from the consumer to the lease account,
// still pending there (the one of lowest hash, when it sent several).
func (s *Service) notice(r *ledger.LeaseRecord) (ledger.Pending, bool, error) {
	var n ledger.Pending
	found := false
	err := s.n.Store.PendingTo(ledger.LeaseAccount(r.Hash), func(p ledger.Pending) error {
		if found || p.Source != r.Consumer || p.Asset != ledger.Native {
			return nil
		}
		e, ok, err := s.n.Store.Entry(p.Send)
		if err != nil || !ok || e.Block.Type != ledger.TypeSend {
			return err
		}
		n, found = p, true
		return nil
	})
	return n, found, err
}

// stray returns a send pending at r's account that r's course will not
// take in (the one of lowest hash, so that nodes that see the same
// pending sends build the same bounce), once r ended or was refunded: a
// notice that lost to the end, a second notice, anyone's send. A bounce
// gives it back to its sender. The stake of a refunded lease's late
// accept is not one: its stake return takes it in. A send is bounced
// only once it and the lease account's latest block are confirmed
// (errUnconfirmed until then): a bounce on a block that votes undo would
// be undone with it, and the sender's receive of it too.
func (s *Service) stray(r *ledger.LeaseRecord) (ledger.Pending, int64, bool, error) {
	if !r.Settled() || r.EndedEarly() && r.Third.IsZero() {
		return ledger.Pending{}, 0, false, nil
	}
	account := ledger.LeaseAccount(r.Hash)
	var p ledger.Pending
	found := false
	err := s.n.Store.PendingTo(account, func(q ledger.Pending) error {
		if q.Send == r.Accept {
			return nil
		}
		p, found = q, true
		return ledger.ErrStop
	})
	if err != nil || !found {
		return p, 0, false, err
	}
	acct, _, err := s.n.Store.Account(account)
	if err != nil {
		return p, 0, false, err
	}
	var sent int64
	for _, h := range []ledger.Hash{acct.Frontier, p.Send} {
		e, _, confirmed, err := s.n.Store.EntryConfirmed(h)
		if err != nil || !confirmed {
			return p, 0, false, cmp.Or(err, fmt.Errorf("%w: %s", errUnconfirmed, h))
		}
		sent = e.Block.Timestamp // the send's, last
	}
	return p, sent, true, nil
}

// errUnconfirmed says a bounce waits for the blocks it would follow and
// take in to be confirmed.
var errUnconfirmed = errors.New("not confirmed yet")

// strayState tracks which of a provider's leases may have a send pending
// at its account, so that its loop looks for strays there and not at
// every lease it ever had: the lease accounts of its leases (from its
// leases' blocks as they come, and its whole history at its start), and
// those a block touched since it last found nothing there.
type strayState struct {
	mu       sync.Mutex
	accounts map[ledger.Address]ledger.Hash // lease account → lease
	check    map[ledger.Hash]bool
}

// add notes lease h of the provider; marked, for a look at its account.
func (st *strayState) add(h ledger.Hash, marked bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.accounts == nil {
		st.accounts, st.check = map[ledger.Address]ledger.Hash{}, map[ledger.Hash]bool{}
	}
	st.accounts[ledger.LeaseAccount(h)] = h
	if marked {
		st.check[h] = true
	}
}

// seen notes what an applied block means for strays: a lease naming the
// provider adds its account; a block on one of those accounts (its course
// went on) or a send to one marks the lease.
func (st *strayState) seen(b *ledger.Block, provider ledger.Address) {
	if b.Type == ledger.TypeLease && b.Destination == provider {
		st.add(b.Hash, false)
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, a := range []ledger.Address{b.Account, b.Destination} {
		if h, ok := st.accounts[a]; ok {
			st.check[h] = true
		}
	}
}

func (st *strayState) marked(h ledger.Hash) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.check[h]
}

func (st *strayState) clear(h ledger.Hash) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.check, h)
}

// ErrUnknownLease is the answer for a lease this node's ledger lacks.
var ErrUnknownLease = errors.New("lease not found")
