// Package node runs a ledger node: it opens the durable ledger in a data
// directory, starts the write engine and exposes what the HTTP API (package
// nodeapi) and, later, the peer-to-peer layer need.
package node

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/ledgerstore"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
)

// Version is the node software's semantic version, reported by GET /node.
const Version = "0.1.0"

// Network is a ledger network's shared definition: its name, its
// proof-of-work thresholds and its genesis block. Its JSON form is the
// genesis file every node of the network starts from.
type Network struct {
	Name    string        `json:"name"`
	Work    ledger.Work   `json:"work"`
	Genesis *ledger.Block `json:"genesis"`
	// Governance is the keyset that governs the state chain from its
	// block 0; absent, the genesis account alone (threshold 1).
	Governance *ledger.Keyset `json:"governance,omitempty"`
}

// GovernanceKeyset is the keyset of the state chain's block 0.
func (n *Network) GovernanceKeyset() ledger.Keyset {
	if n.Governance != nil {
		return n.Governance.Clone()
	}
	return ledger.NewKeyset(1, n.Genesis.Account)
}

// StateChainGenesis is block 0 of the network's state chain.
func (n *Network) StateChainGenesis() *statechain.Block {
	return statechain.Genesis(n.Genesis.Hash, n.GovernanceKeyset(), n.Genesis.Timestamp)
}

// Validate checks the network definition, including the genesis block.
func (n *Network) Validate() error {
	if n.Name == "" {
		return errors.New("node: network name is required")
	}
	if n.Genesis == nil {
		return errors.New("node: network genesis block is required")
	}
	if n.Work.Send == 0 || n.Work.Receive == 0 {
		return errors.New("node: network work thresholds (work.send, work.receive) are required and non-zero")
	}
	if err := ledger.CheckGenesis(n.Genesis); err != nil {
		return fmt.Errorf("node: genesis: %w", err)
	}
	if n.Governance != nil {
		if err := n.Governance.Validate(); err != nil {
			return fmt.Errorf("node: governance: %w", err)
		}
	}
	return nil
}

// LoadNetwork reads and validates a genesis file.
func LoadNetwork(path string) (*Network, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	var n Network
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		return nil, fmt.Errorf("node: genesis file %s: %w", path, err)
	}
	if err := n.Validate(); err != nil {
		return nil, fmt.Errorf("node: genesis file %s: %w", path, err)
	}
	return &n, nil
}

// Config configures a Node.
type Config struct {
	// DataDir holds the ledger (DataDir/ledger) and the node's key
	// (DataDir/node-key.json). It is created if missing, when Network
	// is given: without one, a directory with no ledger is refused
	// before anything is made.
	DataDir string
	// Network is required when DataDir holds no ledger yet; otherwise it
	// may be nil, and if given must match the stored genesis.
	Network *Network
	// Logger receives the node's logs; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock, for conflict detection times and uptime; nil means
	// time.Now.
	Now func() time.Time
	// FS is the file system the ledger is kept on; nil means the operating
	// system's. Tests run several nodes in one process on vfs.NewMem, or
	// on vfs.NewCrashableMem to cut the power. Key files stay in DataDir
	// on the operating system's file system.
	FS vfs.FS
	// Metrics, when set, receives the engine's and the ledger's
	// Prometheus metrics (see NewMetrics).
	Metrics prometheus.Registerer
	// MaxClockSkew is the admission policy of blocks from outside
	// (Admission). Default DefaultMaxClockSkew.
	MaxClockSkew time.Duration
}

// Node is an open ledger node.
type Node struct {
	Store   *ledgerstore.Store
	Engine  *Engine
	Network Network
	Key     wallet.Key // the node's own account and future peer identity
	Started time.Time
	Log     *slog.Logger
	Now     func() time.Time
	// Admission is the policy every door (API, gossip, sync) applies to
	// the timestamps of blocks from outside.
	Admission Admission
}

// Open opens the node in cfg.DataDir, creating its ledger from cfg.Network
// on first start.
func Open(cfg Config) (*Node, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	if cfg.Network == nil {
		// Refused before anything is made: a first start without a
		// genesis file left a key and an empty database behind, which a
		// later audit took for a ledger.
		fsys := cfg.FS
		if fsys == nil {
			fsys = vfs.Default
		}
		if _, err := fsys.Stat(filepath.Join(cfg.DataDir, "ledger")); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w (--data %q)", errNoLedgerYet, cfg.DataDir)
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	key, err := loadOrCreateKey(filepath.Join(cfg.DataDir, "node-key.json"))
	if err != nil {
		return nil, err
	}
	st, err := ledgerstore.Open(filepath.Join(cfg.DataDir, "ledger"), ledgerstore.Options{Logger: log, FS: cfg.FS})
	if err != nil {
		return nil, err
	}
	skew := cfg.MaxClockSkew
	if skew == 0 {
		skew = DefaultMaxClockSkew
	}
	n := &Node{Store: st, Key: key, Started: now(), Log: log, Now: now, Admission: Admission{MaxClockSkew: skew}}
	if err := n.initNetwork(cfg.Network); err != nil {
		st.Close()
		return nil, err
	}
	var m *Metrics
	if cfg.Metrics != nil {
		m = NewMetrics(cfg.Metrics)
		cfg.Metrics.MustRegister(ledgerCollector{n})
	}
	n.Engine = newEngine(st, ledger.Fixed{Work: n.Network.Work}, log, now, m)
	log.Info("ledger node open", "data", cfg.DataDir, "network", n.Network.Name,
		"genesis", n.Network.Genesis.Hash, "account", key.Address())
	return n, nil
}

// errNoLedgerYet refuses a first start without a network.
var errNoLedgerYet = errors.New("node: the data directory has no ledger yet: give a genesis file")

func (n *Node) initNetwork(want *Network) error {
	var stored Network
	switch err := n.Store.Network(&stored); {
	case errors.Is(err, ledgerstore.ErrNotInitialised):
		if want == nil {
			return errNoLedgerYet
		}
		if err := want.Validate(); err != nil {
			return err
		}
		if err := n.Store.Init(want.Genesis, want); err != nil {
			return err
		}
		n.Network = *want
		return nil
	case err != nil:
		return err
	}
	if want != nil && (want.Genesis.Hash != stored.Genesis.Hash || want.Name != stored.Name || want.Work != stored.Work) {
		return fmt.Errorf("node: the data directory holds network %q (genesis %s, work %s/%s), not the genesis file's %q (genesis %s, work %s/%s)",
			stored.Name, stored.Genesis.Hash, stored.Work.Send, stored.Work.Receive,
			want.Name, want.Genesis.Hash, want.Work.Send, want.Work.Receive)
	}
	if want != nil && want.StateChainGenesis().Hash != stored.StateChainGenesis().Hash {
		return fmt.Errorf("node: the data directory's network is governed by %s, not the genesis file's %s",
			statechain.KeysetValue(stored.GovernanceKeyset()), statechain.KeysetValue(want.GovernanceKeyset()))
	}
	n.Network = stored
	return nil
}

// Close stops the engine, waiting for blocks in flight, and closes the
// ledger.
func (n *Node) Close() error {
	n.Engine.Close()
	return n.Store.Close()
}

func loadOrCreateKey(path string) (wallet.Key, error) {
	k, err := wallet.LoadKey(path)
	if err == nil {
		return k, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return wallet.Key{}, err
	}
	k = wallet.NewKey()
	if err := wallet.SaveKey(path, k); err != nil {
		return wallet.Key{}, err
	}
	return k, nil
}
