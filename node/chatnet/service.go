// Package chatnet stores and delivers chat messages and directory
// registrations (their rules are packages chat and directory): messages
// in a durable store with an outbox, delivered to the node where the
// recipient is registered over a direct libp2p stream and retried until
// they arrive; registrations gossiped to every node and pulled from peers;
// and live subscriptions for the API's event stream.
package chatnet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/internal/run/ratelimit"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/wallet"
)

// Topic and protocol names, under the host's /lattice/<genesis>/ namespace.
const (
	topicDirectory   = "directory/1"
	protocolChat     = "chat/1"
	protocolDirSync  = "directory-sync/1"
	maxFramesPerOpen = 64
)

// Config configures a Service. Zero values take the defaults.
type Config struct {
	// Dir holds the store (DATA/chat). FS is the file system it is on;
	// nil means the operating system's.
	Dir string
	FS  vfs.FS
	// Host is the node's peer-to-peer host; Key is the node's own
	// account, which the service registers at Host's peer ID at start.
	Host *p2p.Host
	Key  wallet.Key
	// Logger receives the service's logs; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxClockSkew is how far from this node's clock the timestamp of a
	// message or registration submitted here may be, either way; one from
	// a peer may be as far ahead. Default 5 minutes.
	MaxClockSkew time.Duration
	// Retention is how long a message may wait in the outbox before it is
	// given up, and how old a message a peer delivers may be. Default 7
	// days.
	Retention time.Duration
	// SendRate messages a second, SendBurst at once, may be sent from one
	// account through this node. Defaults 5 and 20.
	SendRate  float64
	SendBurst int
	// RelayRate and RelayBurst bound what peers deliver from one account.
	// Defaults 50 and 500.
	RelayRate  float64
	RelayBurst int
	// PeerRate and PeerBurst bound what one peer delivers, whatever the
	// accounts (keys cost nothing to make). Defaults 100 and 1000.
	PeerRate  float64
	PeerBurst int
	// SourceRate and SourceBurst bound the messages and registrations
	// submitted from one network address (see AllowSource). Defaults 20
	// and 200.
	SourceRate  float64
	SourceBurst int
	// MaxOutbox is how many messages may wait for delivery at once; past
	// it, Send answers ErrOutboxFull. Default 100,000.
	MaxOutbox int
	// MaxDeliveries is how many peers are delivered to at once. Default 16.
	MaxDeliveries int
	// RegisterRate and RegisterBurst bound registrations of one account
	// submitted here. Defaults 0.2 (one per 5 s) and 5.
	RegisterRate  float64
	RegisterBurst int
	// SubscriberBuffer is how many events a subscriber may fall behind
	// before it is dropped. Default 256.
	SubscriberBuffer int
	// RetryMax caps the wait between delivery attempts. Default 30 s.
	RetryMax time.Duration
	// SyncInterval is how often the directory is pulled from a peer.
	// Default 1 minute.
	SyncInterval time.Duration
	// MaxRegistrations is how many registrations the directory holds at
	// most: keys cost nothing to make, so past it a newcomer takes the
	// place of the registration refreshed longest ago, if it ranks above
	// it (see rank). Default 50,000: a full directory is about 8 MB to
	// pull, read and checked well within the 30 s a pull may take.
	MaxRegistrations int
	// DirectoryPeerRate and DirectoryPeerBurst bound the registrations one
	// peer gives this node, whatever the accounts: those it gossips, and
	// those a pull from it brings in the place of others. Defaults 2 and
	// 500.
	DirectoryPeerRate  float64
	DirectoryPeerBurst int
	// SyncPeerRate and SyncPeerBurst bound how often one peer may pull
	// the directory from this node. Defaults one per SyncInterval (a peer
	// pulls a random peer once per interval) and 5 (it pulls every second
	// until its first pull succeeds).
	SyncPeerRate  float64
	SyncPeerBurst int
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.MaxClockSkew, 5*time.Minute)
	def(&c.Retention, 7*24*time.Hour)
	def(&c.RetryMax, 30*time.Second)
	def(&c.SyncInterval, time.Minute)
	if c.SendRate == 0 {
		c.SendRate, c.SendBurst = 5, 20
	}
	if c.RelayRate == 0 {
		c.RelayRate, c.RelayBurst = 50, 500
	}
	if c.RegisterRate == 0 {
		c.RegisterRate, c.RegisterBurst = 0.2, 5
	}
	if c.PeerRate == 0 {
		c.PeerRate, c.PeerBurst = 100, 1000
	}
	if c.SourceRate == 0 {
		c.SourceRate, c.SourceBurst = 20, 200
	}
	if c.MaxOutbox == 0 {
		c.MaxOutbox = 100_000
	}
	if c.MaxDeliveries == 0 {
		c.MaxDeliveries = 16
	}
	if c.SubscriberBuffer == 0 {
		c.SubscriberBuffer = 256
	}
	if c.MaxRegistrations <= 0 {
		c.MaxRegistrations = 50_000
	}
	if c.DirectoryPeerRate == 0 {
		c.DirectoryPeerRate, c.DirectoryPeerBurst = 2, 500
	}
	if c.SyncPeerRate == 0 {
		c.SyncPeerRate, c.SyncPeerBurst = 1/c.SyncInterval.Seconds(), 5
	}
}

// RateLimitError says an account, or a network address, sent more than
// its rate allows.
type RateLimitError struct {
	Account    ledger.Address // or zero, for Source
	Source     string         // the network address, when it is the source's rate
	What       string         // "messages" or "registrations"
	Rate       float64
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	who := "account " + e.Account.String()
	if e.Source != "" {
		who, e.What = "address "+e.Source, "messages and registrations"
	}
	return fmt.Sprintf("rate limited: %s may submit %g %s a second through this node; retry in %s",
		who, e.Rate, e.What, e.RetryAfter.Round(time.Millisecond))
}

// ErrOutboxFull is returned by Send when MaxOutbox messages wait for
// delivery already: the node takes more once some are delivered.
var ErrOutboxFull = errors.New("chatnet: the outbox is full; retry later")

// Service is a node's chat and directory. Close stops it.
type Service struct {
	cfg     Config
	st      *store
	h       *p2p.Host
	self    peer.ID
	log     *slog.Logger
	hub     *hub
	topic   *p2p.Topic
	send    *ratelimit.Limiter[ledger.Address]
	relay   *ratelimit.Limiter[ledger.Address]
	regLim  *ratelimit.Limiter[ledger.Address]
	perPeer *ratelimit.Limiter[peer.ID]
	source  *ratelimit.Limiter[string]
	dirPeer *ratelimit.Limiter[peer.ID] // registrations a peer gives
	pullers *ratelimit.Limiter[peer.ID] // pulls a peer makes
	own     ledger.Address
	streams streamSet

	addMu sync.Mutex // see add

	outMu    sync.Mutex
	out      map[ledger.Hash]*outItem
	inflight map[peer.ID]bool
	kick     chan struct{}

	// life guards the store against stream handlers and gossip, which
	// the host may still run after Close: they enter under its read
	// lock, Close takes it to close the store.
	life   sync.RWMutex
	closed bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// enter admits a handler of the host's while the service is open; leave
// lets it go.
func (s *Service) enter() bool {
	s.life.RLock()
	if s.closed {
		s.life.RUnlock()
		return false
	}
	return true
}

func (s *Service) leave() { s.life.RUnlock() }

// Start opens the store, joins the directory topic, serves the chat and
// directory protocols, registers the node's own account and starts
// delivering the outbox.
func Start(ctx context.Context, cfg Config) (*Service, error) {
	cfg.setDefaults()
	if cfg.Host == nil || cfg.Dir == "" || cfg.Key.Private() == nil {
		return nil, errors.New("chatnet: Dir, Host and Key are required")
	}
	st, err := openStore(filepath.Clean(cfg.Dir), cfg.FS, cfg.MaxRegistrations, cfg.Logger)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Service{cfg: cfg, st: st, h: cfg.Host, self: cfg.Host.ID(), log: cfg.Logger.With("component", "chatnet"),
		hub:     newHub(cfg.SubscriberBuffer),
		send:    ratelimit.New[ledger.Address](cfg.SendRate, cfg.SendBurst),
		relay:   ratelimit.New[ledger.Address](cfg.RelayRate, cfg.RelayBurst),
		regLim:  ratelimit.New[ledger.Address](cfg.RegisterRate, cfg.RegisterBurst),
		perPeer: ratelimit.New[peer.ID](cfg.PeerRate, cfg.PeerBurst),
		source:  ratelimit.New[string](cfg.SourceRate, cfg.SourceBurst),
		dirPeer: ratelimit.New[peer.ID](cfg.DirectoryPeerRate, cfg.DirectoryPeerBurst),
		pullers: ratelimit.New[peer.ID](cfg.SyncPeerRate, cfg.SyncPeerBurst),
		own:     cfg.Key.Address(),
		out:     make(map[ledger.Hash]*outItem), inflight: make(map[peer.ID]bool), kick: make(chan struct{}, 1),
		cancel: cancel}
	pending, err := st.outbox()
	if err != nil {
		cancel()
		st.close()
		return nil, err
	}
	for _, m := range pending {
		s.out[m.Hash()] = &outItem{m: m}
	}
	own := &directory.Registration{NodePeer: s.self.String(), Timestamp: s.now().UnixMilli()}
	own.Sign(cfg.Key.Private())
	if added, err := st.register(own, s.arrival(own, true)); err != nil {
		cancel()
		st.close()
		return nil, fmt.Errorf("chatnet: registering the node's account: %w", err)
	} else if !added {
		s.log.Warn("the node's account keeps a newer registration than its clock's (was the clock set back?)", "account", own.Account)
	}
	// Joined last: from here on the host calls into the service, which
	// must be whole.
	if s.topic, err = s.h.Join(topicDirectory, s.validateRegistration, s.deliverRegistration); err != nil {
		cancel()
		st.close()
		return nil, err
	}
	s.h.Handle(protocolChat, s.serveChat)
	s.h.Handle(protocolDirSync, s.serveDirectory)
	s.spawn(func() { s.deliverLoop(ctx) })
	s.spawn(func() { s.syncLoop(ctx, own) })
	return s, nil
}

func (s *Service) spawn(f func()) {
	s.wg.Add(1)
	go func() { defer s.wg.Done(); f() }()
}

func (s *Service) now() time.Time { return s.cfg.Now() }

// StopStreams ends every subscription, so that event streams end before
// the HTTP server shuts down. Close does it too.
func (s *Service) StopStreams() { s.hub.close() }

// Close stops the service's loops, ends the subscriptions and closes the
// store. The host stays open: its owner closes it after (its stream
// handlers may still run until then, and fail on the closed store).
func (s *Service) Close() error {
	var err error
	s.once.Do(func() {
		s.cancel()
		s.hub.close()
		s.streams.resetAll() // handlers fail fast and leave
		s.wg.Wait()
		s.life.Lock()
		defer s.life.Unlock()
		s.closed = true
		err = s.st.close()
	})
	return err
}

// Failed reports whether the store failed a write and accepts no more.
func (s *Service) Failed() bool { return s.st.failed.Load() }

// Send accepts a message submitted to this node: it must be well formed,
// signed by its sender, stamped within MaxClockSkew of this node's clock
// and within the sender's rate. It is stored durably, shown to this node's
// subscribers, and delivered to the node where its recipient is
// registered. Sending the same message again changes nothing.
func (s *Service) Send(_ context.Context, m *chat.Message) error {
	if err := m.Check(); err != nil {
		return err
	}
	if _, _, held, err := s.st.message(m.Hash()); err != nil || held {
		return err // a resubmission changes nothing, whenever it comes
	}
	now := s.now()
	skew := s.cfg.MaxClockSkew.Milliseconds()
	if err := chat.CheckTime(m.Timestamp, now.UnixMilli(), skew, skew); err != nil {
		return fmt.Errorf("%w: %v", chat.ErrInvalid, err)
	}
	reg, found, err := s.st.registration(m.To)
	if err != nil {
		return err
	}
	remote := !found || reg.NodePeer != s.self.String()
	if remote && s.Outbox() >= s.cfg.MaxOutbox {
		return ErrOutboxFull
	}
	if ok, wait := s.send.Allow(m.From, now); !ok {
		return &RateLimitError{Account: m.From, What: "messages", Rate: s.cfg.SendRate, RetryAfter: wait}
	}
	added, err := s.add(m, remote)
	if err != nil || !added {
		return err
	}
	if remote {
		s.queue(m)
	}
	return nil
}

// add stores m, in the outbox when outbox is set, and shows it to the
// subscribers when it is new. Both happen under addMu, so that events
// reach subscribers in the order of their sequence numbers: a client
// resumes after the last id it saw, and would never get one that a later
// event overtook.
func (s *Service) add(m *chat.Message, outbox bool) (bool, error) {
	s.addMu.Lock()
	defer s.addMu.Unlock()
	seq, added, err := s.st.addMessage(m, outbox)
	if err == nil && added {
		s.hub.publish(Event{Seq: seq, Message: m})
	}
	return added, err
}

// Messages calls fn for the messages from or to account stored here,
// stamped after since (Unix ms), newest first.
func (s *Service) Messages(account ledger.Address, since int64, fn func(*chat.Message) error) error {
	return s.st.messages(account, since, fn)
}

// Contacts returns the accounts that sent or received a message stored on
// this node, the most recent conversation first.
func (s *Service) Contacts() ([]ledger.Address, error) {
	cs, err := s.st.contacts()
	if err != nil {
		return nil, err
	}
	sortContacts(cs)
	out := make([]ledger.Address, len(cs))
	for i, c := range cs {
		out[i] = c.account
	}
	return out, nil
}

// Subscribe starts a subscription to the messages stored from now on,
// those of account only when it is not nil. It returns the sequence
// number of the last message stored before it began: replay up to it with
// Replay, and skip events up to it on the subscription. ok is false when
// the service is closing (C is then closed).
func (s *Service) Subscribe(account *ledger.Address) (sub *Subscription, last uint64, ok bool) {
	sub, ok = s.hub.subscribe(account)
	return sub, s.st.lastSeq(), ok
}

// Replay calls fn for the messages stored after sequence number after up
// to upTo, those of account only when it is not nil.
func (s *Service) Replay(ctx context.Context, account *ledger.Address, after, upTo uint64, fn func(Event) error) error {
	return s.st.since(ctx, after, upTo, func(seq uint64, m *chat.Message) error {
		if account != nil && *account != m.From && *account != m.To {
			return nil
		}
		return fn(Event{Seq: seq, Message: m})
	})
}

// Subscribers returns how many subscriptions are open.
func (s *Service) Subscribers() int { return s.hub.count() }

// Register accepts a registration submitted to this node: well formed,
// signed by its account, naming a valid peer ID, stamped within
// MaxClockSkew of this node's clock, within the account's rate, and newer
// than the one held. It is stored, ranking above the registrations
// learned from peers when the directory is full (ErrDirectoryFull when
// even so it ranks too low), and gossiped to every node.
func (s *Service) Register(ctx context.Context, r *directory.Registration) error {
	if err := checkRegistration(r); err != nil {
		return err
	}
	now := s.now()
	skew := s.cfg.MaxClockSkew.Milliseconds()
	held, found, err := s.st.registration(r.Account)
	if err != nil {
		return err
	}
	if found && held.Hash() == r.Hash() {
		return nil // a resubmission changes nothing, whenever it comes
	}
	if err := chat.CheckTime(r.Timestamp, now.UnixMilli(), skew, skew); err != nil {
		return fmt.Errorf("%w: %v", directory.ErrInvalid, err)
	}
	// A registration the held one supersedes is refused before it takes
	// one of the account's registrations: anyone may replay an older one,
	// and must not use up the allowance of the account's own.
	if found && !directory.Newer(r, held) {
		return superseded(r, held)
	}
	if ok, wait := s.regLim.Allow(r.Account, now); !ok {
		return &RateLimitError{Account: r.Account, What: "registrations", Rate: s.cfg.RegisterRate, RetryAfter: wait}
	}
	added, err := s.st.register(r, s.arrival(r, true))
	if err != nil {
		return err
	}
	if !added { // a newer one was held meanwhile
		held, _, err := s.st.registration(r.Account)
		if err != nil {
			return err
		}
		return superseded(r, held)
	}
	s.publish(ctx, r)
	s.registered(r.Account)
	return nil
}

// superseded is the refusal of r, which held supersedes.
func superseded(r, held *directory.Registration) error {
	if held.Timestamp == r.Timestamp {
		return fmt.Errorf("%w: another registration of %s with the same timestamp (%d) is held and wins the tie (the greater digest); sign a new one", directory.ErrInvalid, r.Account, held.Timestamp)
	}
	return fmt.Errorf("%w: a newer registration of %s is held (timestamp %d)", directory.ErrInvalid, r.Account, held.Timestamp)
}

// AllowSource takes a token of the rate of a network address (the HTTP
// client's IP) that submits messages and registrations: an account's rate
// alone is no limit, since new keys cost nothing.
func (s *Service) AllowSource(addr string) error {
	if ok, wait := s.source.Allow(addr, s.now()); !ok {
		return &RateLimitError{Source: addr, Rate: s.cfg.SourceRate, RetryAfter: wait}
	}
	return nil
}

// Lookup returns account's registration.
func (s *Service) Lookup(account ledger.Address) (*directory.Registration, bool, error) {
	return s.st.registration(account)
}

// Directory calls fn for every registration held, by account.
func (s *Service) Directory(fn func(*directory.Registration) error) error {
	return s.st.registrations(fn)
}

// checkRegistration is directory's Check plus decoding node_peer as a
// libp2p peer ID.
func checkRegistration(r *directory.Registration) error {
	if err := r.Check(); err != nil {
		return err
	}
	if _, err := peer.Decode(r.NodePeer); err != nil {
		return fmt.Errorf("%w: node_peer %q is not a peer ID: %v", directory.ErrInvalid, r.NodePeer, err)
	}
	return nil
}

// streamSet holds the inbound streams being served, so that Close can
// reset them rather than wait out their deadlines.
type streamSet struct {
	mu     sync.Mutex
	m      map[network.Stream]struct{}
	closed bool
}

// add tracks st; false when the service is closing (st is reset).
func (ss *streamSet) add(st network.Stream) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		st.Reset()
		return false
	}
	if ss.m == nil {
		ss.m = make(map[network.Stream]struct{})
	}
	ss.m[st] = struct{}{}
	return true
}

func (ss *streamSet) remove(st network.Stream) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.m, st)
}

func (ss *streamSet) resetAll() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.closed = true
	for st := range ss.m {
		st.Reset()
	}
}
