// Package nodewire holds the JSON resources of the ledger node's HTTP API,
// shared by the server (nodeapi) and its clients.
//
// It depends only on the standard library and the pure cores (ledger, chat,
// directory), so that a client can speak the API without linking the node,
// its store or Pebble.
package nodewire

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/internal/strictjson"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/timekeeping"
)

// The JSON resources of the API, as the API description names them.

// Account is the Account resource.
type Account struct {
	Address    ledger.Address    `json:"address"`
	Balances   map[string]string `json:"balances"`
	BlockCount uint64            `json:"block_count"`
	Frontier   ledger.Hash       `json:"frontier"`
}

// BalanceMap maps asset names to BalanceStrings, leaving out zero balances.
func BalanceMap(a *ledger.Account) map[string]string {
	m := make(map[string]string, 2)
	for _, asset := range ledger.Assets {
		if b := a.Balance(asset); !b.IsZero() {
			m[asset.String()] = b.String()
		}
	}
	return m
}

// PendingSend is the PendingSend resource.
type PendingSend struct {
	SendHash    ledger.Hash    `json:"send_hash"`
	Source      ledger.Address `json:"source"`
	Destination ledger.Address `json:"destination"`
	Amount      ledger.Amount  `json:"amount"`
	Asset       ledger.Asset   `json:"asset"`
}

// Conflict is the Conflict resource.
type Conflict struct {
	AccountAddress ledger.Address `json:"account_address"`
	PreviousHash   ledger.Hash    `json:"previous_hash"`
	BlockHashes    []ledger.Hash  `json:"block_hashes"`
	DetectedAt     string         `json:"detected_at"` // RFC 3339, UTC, milliseconds
	// Election is the node's tally of the fork, while it runs (an
	// extension of the API description).
	Election *Election `json:"election,omitempty"`
	// Split is set when both blocks are confirmed: final votes of a
	// quorum confirmed another block than the one this node confirmed
	// (an extension; docs/operations.md, "Conflicting confirmations").
	Split *Split `json:"split,omitempty"`
}

// Split is a conflict between two confirmed blocks.
type Split struct {
	Confirmed ledger.Hash      `json:"confirmed"` // the block confirmed on this node
	Other     ledger.Hash      `json:"other"`     // the block final votes of a quorum confirmed
	Voters    []ledger.Address `json:"voters"`    // the representatives of those final votes
}

// Election is a node's view of a running election: the weight of votes
// behind each contender, and the quorum the leader must reach.
type Election struct {
	Quorum ledger.Amount `json:"quorum"`
	Online ledger.Amount `json:"online_weight"`
	// Round is the round Tallies are of: this node's representatives'
	// round, or before they vote there, the highest round with votes.
	Round   uint32  `json:"round"`
	Tallies []Tally `json:"tallies"`
}

// Tally is the vote weight behind one contender.
type Tally struct {
	Hash   ledger.Hash   `json:"hash"`
	Weight ledger.Amount `json:"weight"`
	// Final is the weight of the final votes for the contender: the
	// contender is confirmed when it reaches the quorum.
	Final ledger.Amount `json:"final_weight"`
}

// Quorum says whether the representatives a node hears online could
// confirm anything (an extension of the API description).
type Quorum struct {
	Total     ledger.Amount `json:"total"`     // the native supply
	Quorum    ledger.Amount `json:"quorum"`    // more than two thirds of it
	Online    ledger.Amount `json:"online"`    // confirmed weight of the representatives heard lately
	Reachable bool          `json:"reachable"` // online >= quorum
}

// Block is a block as the API reads it: the block's own fields and whether
// the network has confirmed it (an extension of the API description).
// A confirmed block is final: it is never rolled back.
type Block struct {
	*ledger.Block
	Confirmed bool `json:"confirmed"`
}

// ParseSubmitted parses a block submitted to the API: the block's own
// fields strictly (ledger.ParseJSON: an unknown field is an error that
// names it), and the fields the API adds when it returns a block (Block's
// confirmed), accepted and ignored, so that a block read from one node can
// be submitted to another as it is, as Nano's process takes what its block
// info returns. Only a boolean confirmed is taken: anything else about it
// is refused like any malformed field.
func ParseSubmitted(data []byte) (*ledger.Block, error) {
	b, err := ledger.ParseJSON(data)
	if err == nil || !bytes.Contains(data, []byte(`"confirmed"`)) {
		return b, err
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return nil, err
	}
	// The map keeps the last of a key given twice and matches no case:
	// the block's own rules (each field once, exact names) are judged on
	// the body as sent, before it is taken apart.
	if kerr := strictjson.Keys(data, &Block{}); kerr != nil {
		return nil, fmt.Errorf("invalid JSON: %w", kerr)
	}
	raw, ok := fields["confirmed"]
	if !ok {
		return nil, err
	}
	var confirmed bool
	if json.Unmarshal(raw, &confirmed) != nil {
		return nil, fmt.Errorf("field %q: want true or false, got %s", "confirmed", raw)
	}
	delete(fields, "confirmed")
	rest, merr := json.Marshal(fields)
	if merr != nil {
		return nil, err
	}
	return ledger.ParseJSON(rest)
}

// NodeInfo is the NodeInfo resource, with the network's name, genesis and
// work thresholds added so clients can build blocks for it.
type NodeInfo struct {
	Version string `json:"version"`
	PeerID  string `json:"peer_id"`
	// P2PAddrs are the multiaddrs peers can dial the node at, each ending
	// in /p2p/<peer id> (an extension of the API description).
	P2PAddrs      []string       `json:"p2p_addrs"`
	Account       ledger.Address `json:"account"`
	UptimeSeconds int64          `json:"uptime_seconds"`
	Network       string         `json:"network"`
	Genesis       ledger.Hash    `json:"genesis"`
	Work          ledger.Work    `json:"work"`
	// Quorum is the quorum's state on this node's side of the network;
	// absent on a node that runs without a network.
	Quorum *Quorum `json:"quorum,omitempty"`
}

// BlockHashResponse is the answer to a block submission.
type BlockHashResponse struct {
	Hash ledger.Hash `json:"hash"`
}

// PoWRequest asks for a proof-of-work nonce.
type PoWRequest struct {
	Hash ledger.Hash `json:"hash"`
}

// PoWResponse carries a nonce.
type PoWResponse struct {
	Nonce int64 `json:"nonce"`
}

// Error is the error body of every failed request.
type Error struct {
	Error string `json:"error"`
}

// ChatMessage is a signed chat message (package chat has its rules).
type ChatMessage = chat.Message

// DirectoryRegistration says an account is reached at a node's peer
// (package directory has its rules).
type DirectoryRegistration = directory.Registration

// OkResponse answers a chat or directory submission.
type OkResponse struct {
	Ok bool `json:"ok"`
}

// StateBlock is a block of the governance state chain.
type StateBlock = statechain.Block

// KeyValue is GET /statechain/kv/{key}'s answer: the value (JSON) and the
// index of the block that set it.
type KeyValue struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
	Index uint64          `json:"index"`
}

// Parameter is one network parameter in GET /statechain/params: its value
// in force, whether the state chain sets it (else it is the default) and
// at which index.
type Parameter struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
	Set   bool            `json:"set"`
	Index *uint64         `json:"index,omitempty"`
	Doc   string          `json:"doc"`
}

// Parameters is GET /statechain/params's answer.
type Parameters struct {
	Index      uint64      `json:"index"`
	Parameters []Parameter `json:"parameters"`
}

// StateConflict is one entry of GET /statechain/conflicts.
type StateConflict struct {
	Index      uint64               `json:"index"`
	Hashes     [2]ledger.Hash       `json:"block_hashes"`
	Blocks     [2]*statechain.Block `json:"blocks"`
	DetectedAt string               `json:"detected_at"`
	Resolved   bool                 `json:"resolved"`
}

// Provider is an entry of GET /providers.
type Provider = market.Provider

// Offers is the answer of POST /lease/request.
type Offers = market.Offers

// ResourceRequest is the body of POST /lease/request.
type ResourceRequest = market.Request

// Lease is an entry of GET /leases and the answer of GET /leases/{hash}:
// the API's Lease record, then what this API adds (docs/api.md).
type Lease struct {
	LeaseHash       ledger.Hash    `json:"lease_hash"`
	Consumer        ledger.Address `json:"consumer"`
	Provider        ledger.Address `json:"provider"`
	VCPUs           uint32         `json:"vcpus"`
	MemoryMB        uint32         `json:"memory_mb"`
	DiskGB          uint32         `json:"disk_gb"`
	Duration        uint32         `json:"duration"`
	Cost            ledger.Amount  `json:"cost"`
	Stake           ledger.Amount  `json:"stake"`
	StartTime       int64          `json:"start_time"`
	CertificateHash ledger.Hash    `json:"certificate_hash"`
	Settled         bool           `json:"settled"`
	// Additions.
	Status          string         `json:"status"`
	StateChainIndex uint64         `json:"statechain_index"`
	CreatedAt       int64          `json:"created_at"`
	AcceptDeadline  int64          `json:"accept_deadline"`
	EndsAt          int64          `json:"ends_at,omitzero"`
	EndTime         int64          `json:"end_time,omitzero"`
	AccessPubKey    ledger.Address `json:"access_pub_key"`
	AcceptHash      ledger.Hash    `json:"accept_hash,omitzero"`
	LeaseAccount    ledger.Address `json:"lease_account"`
	SettleHashes    []ledger.Hash  `json:"settle_hashes"`
	StakeReturned   bool           `json:"stake_returned,omitzero"`
	// NoticeHash is the consumer's notice a lease that ended early ended
	// at, and Refund what the lease gives its consumer back (the unserved
	// cost and the notice's amount); both absent otherwise.
	NoticeHash ledger.Hash   `json:"notice_hash,omitzero"`
	Refund     ledger.Amount `json:"refund,omitzero"`
	Confirmed  bool          `json:"confirmed"`
}

// LeaseOf renders a lease record; confirmed says whether its latest block
// is confirmed.
func LeaseOf(r *ledger.LeaseRecord, confirmed bool) Lease {
	l := Lease{LeaseHash: r.Hash, Consumer: r.Consumer, Provider: r.Provider, VCPUs: r.VCPUs, MemoryMB: r.MemoryMB,
		DiskGB: r.DiskGB, Duration: r.Duration, Cost: r.Cost, Stake: r.Stake, StartTime: r.StartTime,
		CertificateHash: r.CertificateHash, Settled: r.Settled(), Status: r.Status(), StateChainIndex: r.StateChainIndex,
		CreatedAt: r.Created, AcceptDeadline: r.Deadline(), EndTime: r.EndTime, AccessPubKey: r.AccessKey,
		AcceptHash: r.Accept, LeaseAccount: ledger.LeaseAccount(r.Hash), SettleHashes: []ledger.Hash{},
		StakeReturned: r.StakeReturned, NoticeHash: r.Notice, Refund: r.Refund, Confirmed: confirmed}
	if r.Stage == ledger.StageActive || r.Stage == ledger.StageEnded {
		l.EndsAt = r.End()
	}
	for _, h := range []ledger.Hash{r.First, r.Second, r.Third} {
		if !h.IsZero() {
			l.SettleHashes = append(l.SettleHashes, h)
		}
	}
	return l
}

// SettleResponse is the answer of POST /leases/{hash}/settle: the lease
// account's block the node submitted, and what it does (start, refund,
// end, stake return, early end or remainder).
type SettleResponse struct {
	Hash  ledger.Hash   `json:"hash"`
	Kind  string        `json:"kind"`
	Block *ledger.Block `json:"block"`
}

// AttestRequest is the body of POST /attestation/request.
type AttestRequest struct {
	LeaseHash ledger.Hash `json:"lease_hash"`
	// Purpose is "start", "end" or "expire"; empty means the one due.
	Purpose string `json:"purpose,omitempty"`
}

// Timekeeper is an entry of GET /timekeepers.
type Timekeeper struct {
	Key         ledger.Address `json:"public_key"`
	NodePeer    string         `json:"node_peer,omitempty"`
	UpdatedAt   int64          `json:"updated_at,omitempty"`
	InCommittee bool           `json:"in_committee"`
	Heard       bool           `json:"heard"`
}

// Timekeepers is the answer of GET /timekeepers: the committee at the
// state chain's tip and every timekeeper heard of recently.
type Timekeepers struct {
	Index       uint64         `json:"statechain_index"`
	Threshold   int            `json:"threshold"`
	PrecisionMS int64          `json:"precision_ms"`
	Timekeepers []Timekeeper   `json:"timekeepers"`
	ThisNode    ledger.Address `json:"this_node,omitzero"`
	Signed      int            `json:"signed,omitzero"`
}

// Evidence is an entry of GET /timekeepers/evidence.
type Evidence = timekeeping.Evidence

// VM statuses (VM.Status).
const (
	VMProvisioning = "provisioning"
	VMRunning      = "running"
	VMStopped      = "stopped"
	VMError        = "error"
)

// VM is a provider's machine for a lease: an entry of GET /vms and the
// answer of GET /vms/{leaseHash}; the API's VM record, then what this API
// adds (docs/api.md).
type VM struct {
	LeaseHash ledger.Hash `json:"lease_hash"`
	Status    string      `json:"status"`
	Resources Resources   `json:"resources"`
	CreatedAt int64       `json:"created_at"`
	Error     string      `json:"error"`
	// Additions.
	Provider  ledger.Address `json:"provider"`
	Image     string         `json:"image"`
	UpdatedAt int64          `json:"updated_at"`
	// EndsAt is when the lease's time is up (its attested start plus its
	// duration), once started.
	EndsAt int64 `json:"ends_at,omitzero"`
	// Restarts counts the times the provider booted the machine again,
	// on its disk, after it stopped by itself during its lease (its guest
	// powered off, rebooted or panicked, or its QEMU died); LastExit is
	// the last such stop's reason, at LastExitAt (Unix ms).
	Restarts   int    `json:"restarts,omitzero"`
	LastExit   string `json:"last_exit,omitzero"`
	LastExitAt int64  `json:"last_exit_at,omitzero"`
}

// Resources are a VM's size.
type Resources struct {
	VCPUs    uint32 `json:"vcpus"`
	MemoryMB uint32 `json:"memory_mb"`
	DiskGB   uint32 `json:"disk_gb"`
}

// ExecRequest is the body of POST /vms/{leaseHash}/exec: a command line
// the guest's /bin/sh runs.
type ExecRequest struct {
	Command string `json:"command"`
}

// MaxCommandBytes bounds ExecRequest.Command.
const MaxCommandBytes = 64 << 10

// ExecResult is a command's outcome; stdout and stderr are each cut at
// 1 MiB (Truncated says so), and a command still running at its timeout
// is killed, with exit code -1 and TimedOut.
type ExecResult struct {
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	// Additions.
	Truncated bool `json:"truncated,omitzero"`
	TimedOut  bool `json:"timed_out,omitzero"`
}
