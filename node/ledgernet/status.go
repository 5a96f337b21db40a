package ledgernet

import (
	"slices"
	"sync"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
)

// QuorumStatus says whether the representatives this node hears could
// confirm anything: a node on the side of a partition that holds less than
// a quorum confirms nothing until the partition heals, and reports it here.
type QuorumStatus struct {
	// Total is the weight every quorum is a part of: the native supply.
	Total ledger.Amount `json:"total"`
	// Quorum is the weight final votes must reach: more than two thirds
	// of Total.
	Quorum ledger.Amount `json:"quorum"`
	// Online is the confirmed weight of the representatives whose votes
	// arrived within the online window (this node's own included).
	Online ledger.Amount `json:"online"`
	// Reachable reports Online >= Quorum.
	Reachable bool `json:"reachable"`
}

type quorumState struct {
	mu sync.Mutex
	st QuorumStatus
}

func (q *quorumState) set(total, quorum, online ledger.Amount) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.st = QuorumStatus{Total: total, Quorum: quorum, Online: online, Reachable: online.Cmp(quorum) >= 0}
}

func (q *quorumState) get() QuorumStatus {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.st
}

// Quorum returns the quorum's state as of the election loop's last tick
// (every 200 ms): until the first tick, Reachable is false.
func (s *Service) Quorum() QuorumStatus { return s.quorum.get() }

// Split is two conflicting blocks both confirmed at one place: the block
// this node confirmed, and another that final votes of a quorum confirmed.
// Under the fault model (less than a third of the weight signing two final
// votes for one election) it cannot happen; seeing one means the model was
// broken or the network misconfigured. The node then stops confirming on
// the account (docs/operations.md says what the operator does).
type Split struct {
	Account    ledger.Address   `json:"account"`
	Previous   ledger.Hash      `json:"previous"`
	Confirmed  ledger.Hash      `json:"confirmed"`
	Other      ledger.Hash      `json:"other"`
	Voters     []ledger.Address `json:"voters"` // the representatives whose final votes confirmed Other
	DetectedAt int64            `json:"detected_at"`
}

// splitBook holds the splits seen since start.
type splitBook struct {
	mu     sync.Mutex
	splits []Split
	halted map[ledger.Address]bool
}

// maxSplits bounds the splits kept: past it, new ones are logged only.
const maxSplits = 1024

func (b *splitBook) add(s *Service, root consensus.Root, other ledger.Hash, votes []*consensus.Vote) {
	sp := Split{Account: root.Account, Previous: root.Previous, Other: other, DetectedAt: s.cfg.Now().UnixMilli()}
	for _, v := range votes {
		sp.Voters = append(sp.Voters, v.Representative)
	}
	sp.Confirmed = s.blockAt(root)
	s.stats.splits.Add(1)
	s.log.Error("two conflicting blocks are confirmed: no more blocks of this account are confirmed here; see docs/operations.md, \"Conflicting confirmations\"",
		"account", sp.Account, "previous", sp.Previous, "confirmed", sp.Confirmed, "other", sp.Other, "voters", sp.Voters)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.halted == nil {
		b.halted = make(map[ledger.Address]bool)
	}
	b.halted[sp.Account] = true
	if len(b.splits) < maxSplits {
		b.splits = append(b.splits, sp)
	}
}

func (b *splitBook) isHalted(a ledger.Address) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.halted[a]
}

func (b *splitBook) list() []Split {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.splits)
}

// Splits returns the conflicting confirmations this node has seen since
// it started.
func (s *Service) Splits() []Split { return s.splits.list() }

// blockAt returns the block in the ledger at root, or zero.
func (s *Service) blockAt(root consensus.Root) ledger.Hash {
	st := s.n.Store
	height := uint64(1)
	if !root.Previous.IsZero() {
		e, found, err := st.Entry(root.Previous)
		if err != nil || !found {
			return ledger.Hash{}
		}
		height = e.Height + 1
	}
	h, _, _ := st.ChainAt(root.Account, height)
	return h
}
