// Package vmnet runs the machines of leases and reaches them over the
// peer-to-peer network:
//
//   - a provider node boots a VM for each lease that names it once the
//     lease's accept is confirmed (provisioning, then running), stops it
//     when the lease's time is up or its end or refund is in (stopped),
//     boots it again if a fork takes that end away while the lease runs,
//     and deletes the machine's files once that settlement is confirmed,
//     keeping the record for Retain; records are durable and are brought
//     back in line with the ledger after a restart. The rules are one
//     pure function (decide, plan.go), from the ledger's lease and the
//     record to what to stop, boot, record, delete and forget;
//   - any node answers GET /vms/{lease}, exec and the TCP tunnel for any
//     lease: for a lease another node provides it opens a stream to that
//     node ("vm/1"), found by the certificate its accept names;
//   - only the provider judges a request's credential (package
//     machine/access): the lease's access key, in a time window, once.
package vmnet

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/internal/pebblekv"
	"github.com/latticenet/lattice/internal/run/pebblelog"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/machine/access"
	"github.com/latticenet/lattice/machine/agent"
	"github.com/latticenet/lattice/machine/qemu"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/wallet"
)

// Driver boots machines; each VM has an id and files (its disk, its
// console log) that outlive its machine until Delete. QEMU (package
// qemu) is the driver a node uses.
type Driver interface {
	Start(ctx context.Context, id string, spec qemu.Spec) (Machine, error)
	Delete(id string) error
}

// Machine is a booted VM.
type Machine interface {
	Exec(ctx context.Context, argv []string, stdin []byte, timeout time.Duration) (agent.ExecResult, error)
	// Dial connects to a TCP port of the guest.
	Dial(ctx context.Context, port int) (net.Conn, error)
	// Stop shuts the guest down cleanly, or kills it once ctx ends.
	Stop(ctx context.Context) error
	// Done is closed once the machine has exited; Err then says why (nil
	// when Stop stopped it).
	Done() <-chan struct{}
	Err() error
}

// QEMU is the driver of QEMU machines, made when a VM first needs it.
func QEMU(l *qemu.Lazy) Driver { return lazyQEMU{l} }

type lazyQEMU struct{ *qemu.Lazy }

func (l lazyQEMU) Start(ctx context.Context, id string, spec qemu.Spec) (Machine, error) {
	d, err := l.Driver(ctx)
	if err != nil {
		return nil, err
	}
	return d.Start(ctx, id, spec)
}

// Config configures a Service. Zero values take the defaults.
type Config struct {
	Node *node.Node
	Host *p2p.Host
	// Dir holds the VM records (DATA/vms); FS is its file system, nil
	// meaning the operating system's.
	Dir string
	FS  vfs.FS
	// Provider, when set, makes the node run its provider's machines on
	// Driver, made from Image.
	Provider *wallet.Key
	Driver   Driver
	Image    string
	// FindPeer names the node of a provider whose accepts name the
	// certificate (SHA-256 of the node's peer ID), for leases other nodes
	// provide; nil reaches none.
	FindPeer func(ctx context.Context, provider ledger.Address, certificate ledger.Hash) (peer.ID, error)
	Logger   *slog.Logger
	Now      func() time.Time
	// Tick is how often a provider looks over its machines. Default 1 s.
	Tick time.Duration
	// Retain is how long the record of a VM whose lease is settled, and
	// its files deleted, is kept. Default 24 hours.
	Retain time.Duration
	// ExecTimeout bounds a command. Default 30 s (agent.DefaultTimeout).
	ExecTimeout time.Duration
	// MaxTunnels bounds the tunnels open at once to one lease's machine,
	// and MaxExecs the commands. Defaults 32 and 4.
	MaxTunnels, MaxExecs int
}

// Service is one node's part in leases' machines.
type Service struct {
	cfg   Config
	log   *slog.Logger
	n     *node.Node
	h     *p2p.Host
	db    *pebble.DB
	guard *access.Guard

	saveMu   sync.Mutex // one record write at a time (update, create, forget)
	mu       sync.Mutex
	records  map[ledger.Hash]*record // the provider's VMs, as stored
	machines map[ledger.Hash]Machine // booted
	booting  map[ledger.Hash]context.CancelFunc
	stopping map[ledger.Hash]bool
	inUse    map[ledger.Hash]*use // tunnels and commands under way
	// exits are the times each lease's machine stopped by itself within
	// the last RestartWindow (reap): past RestartLimit it stays down.
	exits map[ledger.Hash][]time.Time

	kick   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// use counts what runs on one machine.
type use struct {
	tunnels, execs int
	open           map[*released]bool // the tunnels' guest connections
}

// record is a VM's durable record.
type record struct {
	VM nodewire.VM `json:"vm"`
	// Deleted is set once the machine's files are deleted, after the
	// lease's settlement was confirmed, at DeletedAt.
	Deleted   bool  `json:"deleted,omitzero"`
	DeletedAt int64 `json:"deleted_at,omitzero"`
	// RolledBackAt is when the lease's accept was found missing from the
	// ledger (a fork went the other way): the machine is stopped, and its
	// files are deleted Retain later unless the accept comes back.
	RolledBackAt int64 `json:"rolled_back_at,omitzero"`
	// Restarting is set while the machine, which stopped by itself, is
	// to be booted again: its boot then counts in VM.Restarts.
	Restarting bool `json:"restarting,omitzero"`
	// Attested is the latest time the timekeepers attested for the lease
	// that this record has seen: its settlement's end time (ms). The
	// provider's clock is never taken to be earlier than it, so a machine
	// whose lease's time is up by it stays stopped if that settlement is
	// rolled back while the provider's own clock still lags.
	Attested int64 `json:"attested,omitzero"`
}

// Errors the API answers with their own status.
var (
	ErrUnknownLease = errors.New("lease not found")
	ErrNotFound     = errors.New("VM not found")
	ErrNotRunning   = errors.New("the VM is not running")
	ErrBadRequest   = errors.New("bad request")
	ErrUnreachable  = errors.New("the provider's node is unreachable")
	ErrBusy         = errors.New("too many at once on this VM")
)

// Start opens the records and, on a provider, starts following its
// leases.
func Start(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Node == nil || cfg.Host == nil {
		return nil, errors.New("vmnet: Config.Node and Host are required")
	}
	if cfg.Provider != nil && cfg.Driver == nil {
		return nil, errors.New("vmnet: a provider needs a machine driver")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Tick == 0 {
		cfg.Tick = time.Second
	}
	if cfg.Retain == 0 {
		cfg.Retain = 24 * time.Hour
	}
	if cfg.ExecTimeout == 0 {
		cfg.ExecTimeout = agent.DefaultTimeout
	}
	if cfg.MaxTunnels == 0 {
		cfg.MaxTunnels = 32
	}
	if cfg.MaxExecs == 0 {
		cfg.MaxExecs = 4
	}
	if cfg.Image == "" {
		cfg.Image = "minimal"
	}
	if cfg.FS == nil {
		cfg.FS = vfs.Default
	}
	db, err := pebblekv.Open(cfg.Dir, &pebble.Options{FS: cfg.FS, Logger: pebblelog.New(cfg.Logger), FormatMajorVersion: pebble.FormatNewest})
	if err != nil {
		return nil, fmt.Errorf("vmnet: open %s: %w", filepath.Base(cfg.Dir), err)
	}
	s := &Service{cfg: cfg, log: cfg.Logger.With("service", "vms"), n: cfg.Node, h: cfg.Host, db: db,
		guard:   access.NewGuard(cfg.Node.Network.Genesis.Hash, cfg.Now),
		records: map[ledger.Hash]*record{}, machines: map[ledger.Hash]Machine{},
		booting: map[ledger.Hash]context.CancelFunc{}, stopping: map[ledger.Hash]bool{}, inUse: map[ledger.Hash]*use{},
		exits: map[ledger.Hash][]time.Time{},
		kick:  make(chan struct{}, 1)}
	if err := s.load(); err != nil {
		db.Close()
		return nil, err
	}
	used, err := s.nonces()
	if err != nil {
		db.Close()
		return nil, err
	}
	s.guard.Keep(nonceJournal{db}, used)
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.h.Handle(protocol, s.serveStream)
	if cfg.Provider != nil {
		sub := s.n.Engine.Subscribe(1 << 10)
		s.wg.Go(func() { s.watch(s.ctx, sub) })
		s.wg.Go(func() { s.loop(s.ctx) })
		s.log.Info("running the provider's machines", "provider", cfg.Provider.Address(), "image", cfg.Image)
	}
	return s, nil
}

// Close stops every machine cleanly (within StopTimeout) and closes the
// records, which say what was running: the next Start boots it again.
func (s *Service) Close() error {
	var err error
	s.once.Do(func() {
		s.cancel()
		s.wg.Wait()
		s.mu.Lock()
		ms := maps.Clone(s.machines)
		s.mu.Unlock()
		var wg sync.WaitGroup
		for h, m := range ms {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
				defer cancel()
				if err := m.Stop(ctx); err != nil {
					s.log.Warn("vm stop at shutdown", "lease", h, "err", err)
				}
			})
		}
		wg.Wait()
		err = s.db.Close()
	})
	return err
}

// Timeouts of the provider's work on a machine.
const (
	// StartTimeout bounds a boot, with the image built on first use.
	StartTimeout = 10 * time.Minute
	// StopTimeout is how long a guest has to power off before it is
	// killed.
	StopTimeout = 30 * time.Second
)

const recordPrefix = "vm/"

// noncePrefix keys the nonces of machine credentials the guard admitted
// (nonce/ ‖ access key ‖ nonce → until, 8 bytes), kept until they cannot
// be admitted again, so that a restart opens no window for replays.
const noncePrefix = "nonce/"

func nonceKey(key ledger.Address, nonce [16]byte) []byte {
	return append(append([]byte(noncePrefix), key[:]...), nonce[:]...)
}

// nonceJournal is the guard's Journal on the records' store.
type nonceJournal struct{ db *pebble.DB }

func (j nonceJournal) Record(key ledger.Address, nonce [16]byte, until int64) error {
	return j.db.Set(nonceKey(key, nonce), binary.BigEndian.AppendUint64(nil, uint64(until)), pebble.Sync)
}

func (j nonceJournal) Forget(used []access.Used) {
	b := j.db.NewBatch()
	defer b.Close()
	for _, u := range used {
		b.Delete(nonceKey(u.Key, u.Nonce), nil)
	}
	b.Commit(pebble.NoSync) // a nonce forgotten late is only refused longer
}

// nonces reads the journal.
func (s *Service) nonces() ([]access.Used, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(noncePrefix), UpperBound: []byte("nonce0")})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []access.Used
	for it.First(); it.Valid(); it.Next() {
		k, v := it.Key()[len(noncePrefix):], it.Value()
		if len(k) != 48 || len(v) != 8 {
			return nil, fmt.Errorf("vmnet: a malformed nonce record %x", it.Key())
		}
		out = append(out, access.Used{Key: ledger.Address(k[:32]), Nonce: [16]byte(k[32:]), Until: int64(binary.BigEndian.Uint64(v))})
	}
	return out, it.Error()
}

func recordKey(h ledger.Hash) []byte { return append([]byte(recordPrefix), h[:]...) }

// load reads the records.
func (s *Service) load() error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(recordPrefix), UpperBound: []byte("vm0")})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		r := new(record)
		if err := json.Unmarshal(it.Value(), r); err != nil {
			return fmt.Errorf("vmnet: record %x: %w", it.Key(), err)
		}
		s.records[r.VM.LeaseHash] = r
	}
	return it.Error()
}

// update changes lease h's record with fn, if there is one, and writes
// it durably before it becomes the record in memory. Writes are one at a
// time, so a change never overwrites another made meanwhile.
func (s *Service) update(h ledger.Hash, fn func(*record)) error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	cur, ok := s.records[h]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	c := *cur
	fn(&c)
	if c == *cur {
		return nil
	}
	return s.write(&c)
}

// create writes a new record, unless lease h has one.
func (s *Service) create(r *record) error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	if _, ok := s.recordOf(r.VM.LeaseHash); ok {
		return nil
	}
	return s.write(r)
}

// write saves r durably, then makes it the record in memory; saveMu is
// held.
func (s *Service) write(r *record) error {
	r.VM.UpdatedAt = s.cfg.Now().UnixMilli()
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := s.db.Set(recordKey(r.VM.LeaseHash), v, pebble.Sync); err != nil {
		return fmt.Errorf("vmnet: saving the record of %s: %w", r.VM.LeaseHash, err)
	}
	s.mu.Lock()
	s.records[r.VM.LeaseHash] = r
	s.mu.Unlock()
	return nil
}

// forget removes the record of lease h.
func (s *Service) forget(h ledger.Hash) error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	if err := s.db.Delete(recordKey(h), pebble.Sync); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.records, h)
	delete(s.exits, h)
	s.mu.Unlock()
	return nil
}

// List returns this node's VMs (a provider's), in order of lease hash.
func (s *Service) List() []nodewire.VM {
	s.mu.Lock()
	out := make([]nodewire.VM, 0, len(s.records))
	for _, r := range s.records {
		out = append(out, r.VM)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b nodewire.VM) int { return bytes.Compare(a.LeaseHash[:], b.LeaseHash[:]) })
	return out
}

// local returns this node's record of lease h's VM.
func (s *Service) local(h ledger.Hash) (nodewire.VM, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.records[h]
	if !ok {
		return nodewire.VM{}, false
	}
	return r.VM, true
}
