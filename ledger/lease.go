package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Leases on the ledger (docs/protocol.md, section 24).
//
// A lease touches three chains:
//
//   - the consumer's lease block pays the cost into the lease's escrow and
//     names the state-chain index whose terms (prices, stake ratio,
//     acceptance timeout, timekeeper committee) hold for the lease's whole
//     life;
//   - the provider's lease_accept, on its own chain, carries the start
//     attestations and sends its stake towards the lease (a pending entry
//     addressed to the lease account);
//   - the lease account, LeaseAccount(lease), whose chain records the
//     lease's course in lease_settle blocks. Nobody holds its key: its
//     blocks carry no signature, are valid exactly when the rules say so,
//     and anyone may build them. Every decision between outcomes (started
//     or refunded, then ended) is a block at one height of that one chain,
//     so two competing decisions are a fork that votes settle like any
//     other, and a confirmed outcome is the same everywhere.
//
// Escrow and stake held by a lease are neither balances nor pending
// entries: they live in the lease's record (LeaseRecord.Held), which the
// audit counts with them.

// Purpose is what a timekeeper's attestation attests.
type Purpose uint8

// The attestation purposes.
const (
	// PurposeStart: the lease starts (lease_accept).
	PurposeStart Purpose = 1
	// PurposeEnd: the lease has reached its end (the settle that ends it).
	PurposeEnd Purpose = 2
	// PurposeExpire: the acceptance timeout has passed (the refund).
	PurposeExpire Purpose = 3
	// PurposeStarted: the provider's accept was in the timekeeper's
	// ledger before the acceptance deadline (the settle that starts it).
	PurposeStarted Purpose = 4
	// PurposeEnding: the consumer's notice to end an active lease early
	// was in the timekeeper's ledger (the settle that ends it early). It
	// attests the notice: its hash stands in the lease's place.
	PurposeEnding Purpose = 5
)

func (p Purpose) String() string {
	switch p {
	case PurposeStart:
		return "start"
	case PurposeEnd:
		return "end"
	case PurposeExpire:
		return "expire"
	case PurposeStarted:
		return "started"
	case PurposeEnding:
		return "ending"
	}
	return fmt.Sprintf("purpose(%d)", uint8(p))
}

// LeaseTerms are the terms of a lease at the state-chain index it names.
type LeaseTerms struct {
	Cost, Stake   Amount
	AcceptTimeout int64 // milliseconds
	// Timestamp is the state-chain block's: a lease cannot be older than
	// the terms it names.
	Timestamp int64
}

// Governance is what the lease rules read from the governance state chain.
// Its answers for an index never change (the state chain is append-only),
// so the rules stay deterministic: every node judges a lease block by the
// index the block names, whenever it sees it.
type Governance interface {
	// LeaseTerms returns what a lease of the resources for duration
	// seconds costs and stakes at state-chain index i. An error wrapping
	// ErrGapState means i is beyond the node's state chain; any other
	// error is the block's fault (a price that overflows).
	LeaseTerms(i uint64, vcpus, memoryMB, diskGB, duration uint32) (LeaseTerms, error)
	// Attested judges atts, for lease and purpose, against the timekeeper
	// committee at index i and returns the time they attest (their
	// median). An error explains why they fall short.
	Attested(i uint64, purpose Purpose, lease Hash, atts []Attestation) (int64, error)
}

// WithGovernance returns v with g attached, for Apply: lease blocks are
// judged against the state chain g reads. Without it Apply refuses them.
func WithGovernance(v View, g Governance) View { return governed{v, g} }

type governed struct {
	View
	g Governance
}

func governanceOf(v View) (Governance, error) {
	if gv, ok := v.(governed); ok && gv.g != nil {
		return gv.g, nil
	}
	return nil, ruleErr(ErrUnsupported, "this ledger has no governance state chain to judge lease blocks by")
}

const leaseAccountTag = "LATTICE-LEASE-ACCOUNT-V1"

// LeaseAccount returns the address of a lease's account: SHA-256 of
// "LATTICE-LEASE-ACCOUNT-V1" and the lease block's hash. It is not an
// ed25519 key anyone holds.
func LeaseAccount(lease Hash) Address {
	h := sha256.New()
	h.Write([]byte(leaseAccountTag))
	h.Write(lease[:])
	var a Address
	h.Sum(a[:0])
	return a
}

// LeaseStage is where a lease's course stands.
type LeaseStage uint8

// The stages. A lease is open from its lease block; accepted once its
// provider's lease_accept is in (Accept set, still StageOpen); active once
// the lease account's first block took the stake in; then ended (at its
// term, or early at its consumer's notice: Notice set), or refunded (from
// open or accepted) when no start came in time.
const (
	StageOpen     LeaseStage = 0
	StageActive   LeaseStage = 1
	StageEnded    LeaseStage = 2
	StageRefunded LeaseStage = 3
)

// AttestedTime is the time attestations give: their median timestamp, the
// lower of the two middle ones for an even number (0 for none).
func AttestedTime(atts []Attestation) int64 {
	if len(atts) == 0 {
		return 0
	}
	ts := make([]int64, len(atts))
	for i, a := range atts {
		ts[i] = a.Timestamp
	}
	slices.Sort(ts)
	return ts[(len(ts)-1)/2]
}

// LeaseRecord is a lease's state: what its lease block fixed, and what the
// blocks after it did.
type LeaseRecord struct {
	Hash            Hash
	Consumer        Address
	Provider        Address
	AccessKey       Address
	VCPUs           uint32
	MemoryMB        uint32
	DiskGB          uint32
	Duration        uint32 // seconds
	Cost            Amount
	Stake           Amount
	StateChainIndex uint64
	Created         int64 // the lease block's timestamp
	AcceptTimeout   int64 // milliseconds, from the terms
	// Set by the provider's lease_accept.
	Accept          Hash
	StartTime       int64 // attested
	CertificateHash Hash
	// Set by the lease account's blocks.
	Stage         LeaseStage
	First, Second Hash  // the lease account's first and second blocks
	EndTime       int64 // the attested end (ended), notice (ended early) or expiry (refunded)
	StakeReturned bool  // refunded after an accept: the stake went back
	// Set when the lease ended early: the consumer's notice (a send to
	// the lease account, which the early end took in), what the lease
	// still holds for the consumer (the unserved cost and the notice's
	// amount), and the third block, which pays that back.
	Notice Hash
	Refund Amount
	Third  Hash
}

// EndedEarly reports whether the lease ended at its consumer's notice.
func (r *LeaseRecord) EndedEarly() bool { return !r.Notice.IsZero() }

// Accepted reports whether the provider's lease_accept is in.
func (r *LeaseRecord) Accepted() bool { return !r.Accept.IsZero() }

// Settled reports whether the lease is over: ended or refunded.
func (r *LeaseRecord) Settled() bool { return r.Stage == StageEnded || r.Stage == StageRefunded }

// Live reports whether the lease takes its provider's capacity: accepted
// and not settled.
func (r *LeaseRecord) Live() bool { return r.Accepted() && !r.Settled() }

// Deadline is when the acceptance window closes: the lease block's time
// plus the acceptance timeout.
func (r *LeaseRecord) Deadline() int64 { return later(r.Created, r.AcceptTimeout) }

// End is when an active lease ends: its attested start plus its duration.
func (r *LeaseRecord) End() int64 { return later(r.StartTime, int64(r.Duration)*1000) }

// later is the time d ms (d ≥ 0) after t, or the last time there is when
// the sum overflows: a lease stamped near the end of int64 must not have
// a deadline or an end that wraps around into the past.
func later(t, d int64) int64 {
	if t > math.MaxInt64-d {
		return math.MaxInt64
	}
	return t + d
}

// Held returns the native the lease holds: the escrowed cost until it
// is settled, plus the stake while it is active; once it ended early,
// what it owes its consumer until the third block pays it.
func (r *LeaseRecord) Held() Amount {
	switch r.Stage {
	case StageOpen:
		return r.Cost
	case StageActive:
		v, _ := r.Cost.Add(r.Stake) // bounded when the accept was applied
		return v
	case StageEnded:
		if r.EndedEarly() && r.Third.IsZero() {
			return r.Refund
		}
	}
	return Amount{}
}

// Earned is what a lease that ended at t (Unix ms) earned its provider:
// its cost for the part of its term served from its attested start,
// rounded down, none before the start and all of it from its end on.
func (r *LeaseRecord) Earned(t int64) Amount {
	term := uint64(r.Duration) * 1000
	if term == 0 || t >= r.End() {
		return r.Cost
	}
	if t <= r.StartTime {
		return Amount{}
	}
	v, _ := r.Cost.MulDivFloor(uint64(t-r.StartTime), term) // served < term: no overflow
	return v
}

// Status names the stage for people: open, accepted, active, ended or
// refunded.
func (r *LeaseRecord) Status() string {
	switch r.Stage {
	case StageActive:
		return "active"
	case StageEnded:
		return "ended"
	case StageRefunded:
		return "refunded"
	}
	if r.Accepted() {
		return "accepted"
	}
	return "open"
}

// Lease record versions: 2 adds what an early end sets; a record without
// it is written as version 1, as before early ends existed.
const (
	leaseRecordVersion      = 1
	leaseRecordVersionEarly = 2
)

// MarshalBinary encodes the record for the state table.
func (r *LeaseRecord) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 400)
	version := byte(leaseRecordVersion)
	if r.EndedEarly() || !r.Refund.IsZero() || !r.Third.IsZero() {
		version = leaseRecordVersionEarly
	}
	b = append(b, version)
	b = append(b, r.Hash[:]...)
	b = append(b, r.Consumer[:]...)
	b = append(b, r.Provider[:]...)
	b = append(b, r.AccessKey[:]...)
	for _, v := range []uint32{r.VCPUs, r.MemoryMB, r.DiskGB, r.Duration} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	b = appendAmount(b, r.Cost)
	b = appendAmount(b, r.Stake)
	b = binary.BigEndian.AppendUint64(b, r.StateChainIndex)
	b = binary.BigEndian.AppendUint64(b, uint64(r.Created))
	b = binary.BigEndian.AppendUint64(b, uint64(r.AcceptTimeout))
	b = append(b, r.Accept[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(r.StartTime))
	b = append(b, r.CertificateHash[:]...)
	b = append(b, byte(r.Stage))
	b = append(b, r.First[:]...)
	b = append(b, r.Second[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(r.EndTime))
	var ret byte
	if r.StakeReturned {
		ret = 1
	}
	b = append(b, ret)
	if version == leaseRecordVersionEarly {
		b = append(b, r.Notice[:]...)
		b = appendAmount(b, r.Refund)
		b = append(b, r.Third[:]...)
	}
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary wrote.
func (r *LeaseRecord) UnmarshalBinary(data []byte) error {
	rd := reader{buf: data}
	version := rd.byte1()
	if version != leaseRecordVersion && version != leaseRecordVersionEarly {
		return fmt.Errorf("ledger: lease record version %d", version)
	}
	var n LeaseRecord
	rd.copy(n.Hash[:])
	rd.copy(n.Consumer[:])
	rd.copy(n.Provider[:])
	rd.copy(n.AccessKey[:])
	n.VCPUs, n.MemoryMB, n.DiskGB, n.Duration = rd.u32(), rd.u32(), rd.u32(), rd.u32()
	n.Cost, n.Stake = rd.amount(), rd.amount()
	n.StateChainIndex = rd.u64()
	n.Created, n.AcceptTimeout = int64(rd.u64()), int64(rd.u64())
	rd.copy(n.Accept[:])
	n.StartTime = int64(rd.u64())
	rd.copy(n.CertificateHash[:])
	n.Stage = LeaseStage(rd.byte1())
	rd.copy(n.First[:])
	rd.copy(n.Second[:])
	n.EndTime = int64(rd.u64())
	ret := rd.byte1()
	if version == leaseRecordVersionEarly {
		rd.copy(n.Notice[:])
		n.Refund = rd.amount()
		rd.copy(n.Third[:])
	}
	if rd.short || rd.off != len(data) || ret > 1 || n.Stage > StageRefunded {
		return errors.New("ledger: malformed lease record")
	}
	n.StakeReturned = ret == 1
	*r = n
	return nil
}

// The state tables of leases. Index entries have an empty value.
const (
	// LeaseTable maps a lease hash to its LeaseRecord.
	LeaseTable = "lease"
	// LeaseByConsumer and LeaseByProvider index leases by party:
	// key = address (32 bytes) || lease hash (32 bytes).
	LeaseByConsumer = "lease/consumer"
	LeaseByProvider = "lease/provider"
	// LeaseLive indexes the live leases (accepted, not settled) of each
	// provider, for its free capacity: key = provider || lease hash.
	LeaseLive = "lease/live"
)

// PartyKey is the key of a lease in the by-party tables.
func PartyKey(a Address, lease Hash) string { return string(a[:]) + string(lease[:]) }

var indexEntry = []byte{}

// GetLease reads a lease's record through v.
func GetLease(v View, lease Hash) (*LeaseRecord, bool, error) {
	raw, found, err := v.State(LeaseTable, string(lease[:]))
	if err != nil || !found {
		return nil, false, err
	}
	r := new(LeaseRecord)
	if err := r.UnmarshalBinary(raw); err != nil {
		return nil, false, err
	}
	return r, true, nil
}

// mustLease reads the record of a lease whose block is in the ledger: a
// missing one is a broken ledger, not a bad block.
func mustLease(v View, lease Hash) (*LeaseRecord, error) {
	r, found, err := GetLease(v, lease)
	if err == nil && !found {
		err = fmt.Errorf("ledger: lease %s has no record", lease)
	}
	return r, err
}

func putLease(r *LeaseRecord) StateChange {
	v, _ := r.MarshalBinary()
	return StateChange{Table: LeaseTable, Key: string(r.Hash[:]), Value: v}
}

func liveChange(r *LeaseRecord, live bool) StateChange {
	c := StateChange{Table: LeaseLive, Key: PartyKey(r.Provider, r.Hash)}
	if live {
		c.Value = indexEntry
	}
	return c
}

// checkLease checks a lease block's contents alone.
func checkLease(b *Block) error {
	if err := checkLeaseResources(b); err != nil {
		return err
	}
	if b.Asset != Native {
		return ruleErr(ErrMalformed, "a lease is paid in native")
	}
	if b.Destination == b.Account {
		return ruleErr(ErrMalformed, "a lease's provider (destination) must differ from the account")
	}
	return nil
}

func checkLeaseAccept(b *Block) error {
	if b.Asset != Native {
		return ruleErr(ErrMalformed, "a stake is locked in native")
	}
	return nil
}

func checkLeaseSettle(b *Block) error {
	switch {
	case !b.Representative.IsZero():
		return ruleErr(ErrMalformed, "a lease account names no representative")
	case !b.Balance.IsZero():
		return ruleErr(ErrBadBalance, "a lease account holds nothing: lease_settle balance must be 0")
	case !b.Signature.IsZero() || len(b.Signatures) > 0:
		return ruleErr(ErrMalformed, "lease_settle blocks are not signed: the rules authorise them")
	}
	return nil
}

// applyLease escrows the cost, at the terms of the index the block names.
func applyLease(v View, b *Block, acct, _ *Account, d *Delta) error {
	g, err := governanceOf(v)
	if err != nil {
		return err
	}
	terms, err := g.LeaseTerms(b.StateChainIndex, b.VCPUs, b.MemoryMB, b.DiskGB, b.Duration)
	if errors.Is(err, ErrGapState) {
		return ruleErr(ErrGapState, "state-chain index %d is not known yet", b.StateChainIndex)
	}
	if err != nil {
		return ruleErr(ErrLeaseTerms, "%v", err)
	}
	if b.Timestamp < terms.Timestamp {
		return ruleErr(ErrTimestamp, "timestamp %d is before state-chain index %d (%d)", b.Timestamp, b.StateChainIndex, terms.Timestamp)
	}
	if b.Amount != terms.Cost {
		return ruleErr(ErrBadAmount, "the lease costs %s at state-chain index %d, block says %s", terms.Cost, b.StateChainIndex, b.Amount)
	}
	before := acct.Balance(Native)
	after, err := before.Sub(b.Amount)
	if err != nil {
		return ruleErr(ErrInsufficientBalance, "balance is %s native, the lease costs %s", before, b.Amount)
	}
	if b.Balance != after {
		return ruleErr(ErrBadBalance, "balance after escrowing %s from %s must be %s, block says %s", b.Amount, before, after, b.Balance)
	}
	r := &LeaseRecord{
		Hash: b.Hash, Consumer: b.Account, Provider: b.Destination, AccessKey: b.AccessPubKey,
		VCPUs: b.VCPUs, MemoryMB: b.MemoryMB, DiskGB: b.DiskGB, Duration: b.Duration,
		Cost: terms.Cost, Stake: terms.Stake, StateChainIndex: b.StateChainIndex,
		Created: b.Timestamp, AcceptTimeout: terms.AcceptTimeout,
	}
	d.State = append(d.State, putLease(r),
		StateChange{Table: LeaseByConsumer, Key: PartyKey(r.Consumer, r.Hash), Value: indexEntry},
		StateChange{Table: LeaseByProvider, Key: PartyKey(r.Provider, r.Hash), Value: indexEntry})
	return nil
}

// leaseOf finds the record of the lease a block's source names: directly,
// through its accept, or, for a notice (a send to the lease account, which
// an early end names), through the lease account's first block.
func leaseOf(v View, b *Block) (*LeaseRecord, *Block, error) {
	src, err := entryOf(v, b.Source, ErrGapSource, "source")
	if err != nil {
		return nil, nil, err
	}
	lease := src.Hash
	switch src.Type {
	case TypeLease:
	case TypeLeaseAccept:
		lease = src.Source
	case TypeSend:
		if b.Type != TypeLeaseSettle || b.Previous.IsZero() {
			return nil, nil, ruleErr(ErrWrongLease, "source %s is a send: only a lease account's later blocks name one (a notice to end the lease early, or a send it bounces)", b.Source)
		}
		first, err := firstSettle(v, b, nil)
		if err != nil {
			return nil, nil, err
		}
		if lease = first.Source; first.Type != TypeLeaseSettle || first.Account != b.Account {
			return nil, nil, ruleErr(ErrWrongPrevious, "previous %s is not on lease account %s", b.Previous, b.Account)
		}
		a, err := entryOf(v, lease, ErrGapSource, "source")
		if err != nil {
			return nil, nil, err
		}
		if a.Type == TypeLeaseAccept {
			lease = a.Source
		}
	default:
		return nil, nil, ruleErr(ErrWrongLease, "source %s is a %s block, not a lease, a lease_accept or a notice", b.Source, src.Type)
	}
	r, err := mustLease(v, lease)
	if err != nil {
		return nil, nil, err
	}
	return r, src, nil
}

// entryOf returns the block h, or a rule error of kind gap naming it as
// what (source, previous) when the ledger does not hold it.
func entryOf(v View, h Hash, gap error, what string) (*Block, error) {
	e, found, err := v.Entry(h)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ruleErr(gap, "%s %s is not in the ledger", what, h)
	}
	return e.Block, nil
}

// firstSettle returns the first block of the lease account's chain that
// b continues. b's previous block (prev, read here when nil) is in the
// ledger, so the chain holding it is the one b continues.
func firstSettle(v View, b, prev *Block) (*Block, error) {
	if prev == nil {
		var err error
		if prev, err = entryOf(v, b.Previous, ErrGapPrevious, "previous"); err != nil {
			return nil, err
		}
	}
	if prev.Account != b.Account {
		return nil, ruleErr(ErrWrongPrevious, "previous %s belongs to account %s", b.Previous, prev.Account)
	}
	if prev.Previous.IsZero() {
		return prev, nil
	}
	h, found, err := v.ChainAt(b.Account, 1)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("ledger: account %s holds block %s but no first block", b.Account, b.Previous)
	}
	return entryOf(v, h, ErrGapPrevious, "first block")
}

// applyLeaseAccept checks the start attestations and sends the stake
// towards the lease account.
func applyLeaseAccept(v View, b *Block, acct, _ *Account, d *Delta) error {
	g, err := governanceOf(v)
	if err != nil {
		return err
	}
	r, src, err := leaseOf(v, b)
	if err != nil {
		return err
	}
	switch {
	case src.Type != TypeLease:
		return ruleErr(ErrWrongLease, "a lease_accept names a lease block, not a %s", src.Type)
	case r.Provider != b.Account:
		return ruleErr(ErrWrongLease, "lease %s names provider %s, not %s", r.Hash, r.Provider, b.Account)
	case r.Accepted():
		return ruleErr(ErrAlreadyReceived, "lease %s was accepted by block %s", r.Hash, r.Accept)
	case b.Amount != r.Stake:
		return ruleErr(ErrBadAmount, "lease %s stakes %s, block says %s", r.Hash, r.Stake, b.Amount)
	}
	start, err := g.Attested(r.StateChainIndex, PurposeStart, r.Hash, b.Attestations)
	if err != nil {
		return ruleErr(ErrAttestation, "%v", err)
	}
	if start >= r.Deadline() {
		return ruleErr(ErrLeaseTiming, "attested start %d is not before the acceptance deadline %d", start, r.Deadline())
	}
	if _, err := r.Cost.Add(r.Stake); err != nil {
		return ruleErr(ErrBadAmount, "cost and stake overflow together")
	}
	before := acct.Balance(Native)
	after, err := before.Sub(b.Amount)
	if err != nil {
		return ruleErr(ErrInsufficientBalance, "balance is %s native, the stake is %s", before, b.Amount)
	}
	if b.Balance != after {
		return ruleErr(ErrBadBalance, "balance after staking %s from %s must be %s, block says %s", b.Amount, before, after, b.Balance)
	}
	next := *r
	next.Accept, next.StartTime, next.CertificateHash = b.Hash, start, b.CertificateHash
	d.PendingPut = &Pending{Send: b.Hash, Source: b.Account, Destination: LeaseAccount(r.Hash), Amount: b.Amount, Asset: Native}
	d.State = append(d.State, putLease(&next))
	if !next.Settled() {
		d.State = append(d.State, liveChange(&next, true))
	}
	return nil
}

// settleKind is what a lease_settle block does, from its source and its
// height on the lease account's chain.
type settleKind uint8

const (
	settleStart     settleKind = iota + 1 // first block, names the accept: takes the stake in
	settleRefund                          // first block, names the lease: refunds the cost
	settleEnd                             // second after a start, names the lease: pays the provider
	settleReturn                          // second after a refund, names the accept: returns the stake
	settleEarly                           // second after a start, names the consumer's notice: pays the provider for the time served
	settleRemainder                       // third after an early end, names the lease: pays the consumer back
	settleBounce                          // once the course is done or refunded, names a send to the account: sends it back
)

func (k settleKind) String() string {
	return [...]string{"", "start", "refund", "end", "stake return", "early end", "remainder", "bounce"}[k]
}

// settlePlan is a lease_settle block judged: what it is and what it pays.
type settlePlan struct {
	kind   settleKind
	r      *LeaseRecord
	src    *Block   // the block its source names: the lease, the accept or a notice
	pay    *Pending // what it pays out, or nil
	attest int64    // its attested time (refund, end, early end)
	refund Amount   // an early end's: what the lease still holds for its consumer
}

// checkSettle judges a lease_settle block from what cannot change once it
// exists: its source, the blocks it follows on the lease account, the
// lease's terms and the committee's attestations. No stage of the lease
// enters, so a block valid here is valid at its place whatever competes
// for that place: Apply runs it before it calls a block a fork, so only
// valid contenders are recorded and put to votes, and any winner applies
// after the loser is rolled back.
func checkSettle(v View, b *Block) (*settlePlan, error) {
	g, err := governanceOf(v)
	if err != nil {
		return nil, err
	}
	r, src, err := leaseOf(v, b)
	if err != nil {
		return nil, err
	}
	if want := LeaseAccount(r.Hash); b.Account != want {
		return nil, ruleErr(ErrWrongLease, "lease %s settles on its own account %s, not %s", r.Hash, want, b.Account)
	}
	if src.Type == TypeLeaseAccept && (src.Account != r.Provider || src.Hash != r.Accept) {
		return nil, ruleErr(ErrWrongLease, "block %s is not the accept of lease %s", src.Hash, r.Hash)
	}
	p := &settlePlan{r: r, src: src}
	var prev *Block // the block b follows
	if b.Previous.IsZero() {
		p.kind = settleRefund
		if src.Type == TypeLeaseAccept {
			p.kind = settleStart
		}
	} else {
		if prev, err = entryOf(v, b.Previous, ErrGapPrevious, "previous"); err != nil {
			return nil, err
		}
		if prev.Account != b.Account {
			return nil, ruleErr(ErrWrongPrevious, "previous %s belongs to account %s", b.Previous, prev.Account)
		}
		if p.kind, err = laterKind(v, r, b, prev, src); err != nil {
			return nil, err
		}
	}
	kind := p.kind
	if kind == settleBounce || kind == settleReturn {
		// These may come at more than one place: one whose send or stake
		// a block at or below prev took in already could never apply,
		// not even after the block now at its place is rolled back, so
		// it is no contender either.
		if err := takenBelow(v, b, src); err != nil {
			return nil, err
		}
	}
	// A lease's money is native; a bounce gives back the asset it takes in.
	want := Native
	if kind == settleBounce {
		want = src.Asset
	}
	if b.Asset != want {
		return nil, ruleErr(ErrMalformed, "the %s of lease %s is in %s, block says %s", kind, r.Hash, want, b.Asset)
	}
	attest := func(purpose Purpose) error {
		subject := r.Hash
		if purpose == PurposeEnding {
			// An ending attests one notice: a notice rolled back takes
			// its endings with it, and a later one needs its own.
			subject = src.Hash
		}
		t, err := g.Attested(r.StateChainIndex, purpose, subject, b.Attestations)
		if err != nil {
			return ruleErr(ErrAttestation, "%v", err)
		}
		p.attest = t
		return nil
	}
	payTo := func(dest Address, amount Amount) {
		p.pay = &Pending{Send: b.Hash, Source: b.Account, Destination: dest, Amount: amount, Asset: b.Asset}
	}
	noAttestations := func() error {
		if len(b.Attestations) > 0 {
			return ruleErr(ErrMalformed, "the %s of a lease carries no attestations", kind)
		}
		return nil
	}
	var stamp int64
	switch kind {
	case settleStart:
		// The committee saw the accept in time: an accept held back past
		// the deadline (its start attested early) cannot start the lease,
		// which is then refunded.
		if err := attest(PurposeStarted); err != nil {
			return nil, err
		}
		if p.attest >= r.Deadline() {
			return nil, ruleErr(ErrLeaseTiming, "attested start of the lease's course %d is not before the acceptance deadline %d", p.attest, r.Deadline())
		}
		stamp = r.StartTime
	case settleReturn:
		if err := noAttestations(); err != nil {
			return nil, err
		}
		stamp = prev.Timestamp // the refund's time
		payTo(r.Provider, r.Stake)
	case settleRefund:
		if err := attest(PurposeExpire); err != nil {
			return nil, err
		}
		if p.attest < r.Deadline() {
			return nil, ruleErr(ErrLeaseTiming, "attested expiry %d is before the acceptance deadline %d", p.attest, r.Deadline())
		}
		stamp = p.attest
		payTo(r.Consumer, r.Cost)
	case settleEnd:
		if err := attest(PurposeEnd); err != nil {
			return nil, err
		}
		if p.attest < r.End() {
			return nil, ruleErr(ErrLeaseTiming, "attested end %d is before the lease's end %d (start %d + %d s)", p.attest, r.End(), r.StartTime, r.Duration)
		}
		stamp = p.attest
		total, _ := r.Cost.Add(r.Stake)
		payTo(r.Provider, total)
	case settleEarly:
		// A notice is a send of the consumer's own to the lease account:
		// its signature is the consumer's word, and the committee dates
		// when the network had it, so no one can date an end before it.
		if src.Account != r.Consumer || src.Destination != b.Account || src.Asset != Native {
			return nil, ruleErr(ErrWrongLease, "send %s is no notice of lease %s: a notice is a send of native from its consumer %s to its account", src.Hash, r.Hash, r.Consumer)
		}
		if err := attest(PurposeEnding); err != nil {
			return nil, err
		}
		stamp = p.attest
		held, err := r.Cost.Add(r.Stake)
		if err == nil {
			held, err = held.Add(src.Amount)
		}
		if err != nil {
			return nil, ruleErr(ErrBadAmount, "cost, stake and notice overflow together")
		}
		total, _ := r.Earned(p.attest).Add(r.Stake) // ≤ cost + stake
		p.refund, _ = held.Sub(total)
		payTo(r.Provider, total)
	case settleRemainder:
		if err := noAttestations(); err != nil {
			return nil, err
		}
		notice, err := entryOf(v, prev.Source, ErrGapSource, "notice")
		if err != nil {
			return nil, err
		}
		held, err := r.Cost.Add(r.Stake)
		if err == nil {
			held, err = held.Add(notice.Amount)
		}
		var back Amount
		if err == nil {
			back, err = held.Sub(prev.Amount)
		}
		if err != nil {
			return nil, fmt.Errorf("ledger: early end %s of lease %s pays beyond what the lease holds: %w", prev.Hash, r.Hash, err)
		}
		stamp = prev.Timestamp // the early end's time
		payTo(r.Consumer, back)
	case settleBounce:
		// Whatever else was sent to the account, once nothing of the
		// lease's course can take it in, goes back to its sender: a
		// notice that lost to the end, a second notice, anyone's send.
		if src.Destination != b.Account {
			return nil, ruleErr(ErrWrongLease, "send %s is addressed to %s, not to lease account %s", src.Hash, src.Destination, b.Account)
		}
		if len(b.Attestations) > 0 {
			return nil, ruleErr(ErrMalformed, "lease %s is %s: a block naming send %s bounces it, and carries no attestations", r.Hash, r.Status(), src.Hash)
		}
		stamp = max(prev.Timestamp, src.Timestamp)
		payTo(src.Account, src.Amount)
	}
	// A lease account's block has no free choice but its attestations:
	// its timestamp is the time its lease's course fixes.
	if b.Timestamp != stamp {
		return nil, ruleErr(ErrTimestamp, "the %s of lease %s is stamped %d, its time; block says %d", kind, r.Hash, stamp, b.Timestamp)
	}
	var paid Amount
	if p.pay != nil {
		paid = p.pay.Amount
	}
	if b.Amount != paid {
		return nil, ruleErr(ErrBadAmount, "the %s of lease %s pays out %s, block says %s", kind, r.Hash, paid, b.Amount)
	}
	return p, nil
}

// takenBelow refuses b, a lease account's block that takes src in, when a
// block of its account at or below b's previous took src in already.
func takenBelow(v View, b, src *Block) error {
	rcv, found, err := v.Receiver(src.Hash)
	if err != nil || !found {
		return err
	}
	taker, found, err := v.Entry(rcv)
	if err != nil || !found || taker.Block.Account != b.Account {
		return err
	}
	prev, found, err := v.Entry(b.Previous)
	if err != nil || !found {
		return err
	}
	if taker.Height <= prev.Height {
		return ruleErr(ErrAlreadyReceived, "%s %s was taken in by block %s of this lease account, before this place", src.Type, src.Hash, rcv)
	}
	return nil
}

// laterKind says what b, a lease account's block after prev, is, by the
// block its source names (src) and what the chain's blocks before it are:
//
//   - after a start: an end (the lease) or an early end (a notice);
//   - after an early end: the remainder (the lease);
//   - after an end, a remainder or a bounce of a lease that started: a
//     bounce (a send);
//   - after a refund, and after anything that followed it: the stake
//     return of a late accept (the accept, still pending) or a bounce.
//
// Judged from the blocks alone, as every contender must be.
func laterKind(v View, r *LeaseRecord, b, prev, src *Block) (settleKind, error) {
	first, err := firstSettle(v, b, prev)
	if err != nil {
		return 0, err
	}
	if first.Source == r.Hash { // refunded
		switch src.Type {
		case TypeLeaseAccept:
			return settleReturn, nil
		case TypeSend:
			return settleBounce, nil
		}
		return 0, ruleErr(ErrAlreadyReceived, "lease %s was refunded: its account's later blocks name the accept, to return the stake, or a send to bounce", r.Hash)
	}
	switch after := placedKind(r, first, prev); {
	case after == settleStart && src.Type == TypeLease:
		return settleEnd, nil
	case after == settleStart && src.Type == TypeSend:
		return settleEarly, nil
	case after == settleStart:
		return 0, ruleErr(ErrAlreadyReceived, "lease %s has started: its second settle names the lease (its end) or its consumer's notice (an early end)", r.Hash)
	case after == settleEarly && src.Type == TypeLease:
		return settleRemainder, nil
	case after == settleEarly:
		return 0, ruleErr(ErrAlreadyReceived, "lease %s ended early: its third settle names the lease, to pay its consumer back", r.Hash)
	case src.Type == TypeSend:
		return settleBounce, nil
	}
	return 0, ruleErr(ErrMalformed, "lease %s's course is complete: its account's later blocks only bounce sends to it", r.Hash)
}

// placedKind says what blk, a block of a started lease's account (first
// is the account's first block, its start), is.
func placedKind(r *LeaseRecord, first, blk *Block) settleKind {
	switch {
	case blk.Hash == first.Hash:
		return settleStart
	case blk.Source == r.Hash && blk.Previous == first.Hash:
		return settleEnd
	case blk.Source == r.Hash:
		return settleRemainder
	case blk.Previous == first.Hash:
		return settleEarly // the second block names the lease or a notice
	}
	return settleBounce
}

// applyLeaseSettle applies a lease account's block that checkSettle
// judged valid, at its place.
func applyLeaseSettle(v View, b *Block, _, _ *Account, d *Delta) error {
	p, err := checkSettle(v, b)
	if err != nil {
		return err
	}
	r, next := p.r, *p.r
	// takeIn takes in the pending entry its source made: the stake of
	// an accept, or a notice.
	takeIn := func() error {
		pend, found, err := v.Pending(b.Account, p.src.Hash)
		if err != nil {
			return err
		}
		if !found {
			return ruleErr(ErrAlreadyReceived, "the %s of %s %s is no longer pending", map[bool]string{true: "stake", false: "amount"}[p.src.Type == TypeLeaseAccept], p.src.Type, p.src.Hash)
		}
		d.PendingDelete = &pend
		return nil
	}
	switch p.kind {
	case settleStart:
		if err := takeIn(); err != nil {
			return err
		}
		next.Stage, next.First = StageActive, b.Hash
	case settleRefund:
		next.Stage, next.First, next.EndTime = StageRefunded, b.Hash, p.attest
		if r.Accepted() {
			d.State = append(d.State, liveChange(r, false))
		}
	case settleEnd:
		next.Stage, next.Second, next.EndTime = StageEnded, b.Hash, p.attest
		d.State = append(d.State, liveChange(r, false))
	case settleReturn:
		if err := takeIn(); err != nil {
			return err
		}
		next.Second, next.StakeReturned = b.Hash, true
	case settleEarly:
		if err := takeIn(); err != nil {
			return err
		}
		next.Stage, next.Second, next.EndTime = StageEnded, b.Hash, p.attest
		next.Notice, next.Refund = p.src.Hash, p.refund
		d.State = append(d.State, liveChange(r, false))
	case settleRemainder:
		next.Third = b.Hash
	case settleBounce:
		// The lease's record does not change: what the bounce takes in
		// and pays out were never the lease's.
		if err := takeIn(); err != nil {
			return err
		}
		d.PendingPut = p.pay
		return nil
	}
	d.PendingPut = p.pay
	d.State = append(d.State, putLease(&next))
	return nil
}

// rollbackLease removes the lease's record and indexes, once nothing
// rests on it.
func rollbackLease(v View, b *Block, d *Delta) error {
	r, err := mustLease(v, b.Hash)
	if err != nil {
		return err
	}
	if err := leaseDependents(v, r); err != nil {
		return err
	}
	d.State = append(d.State,
		StateChange{Table: LeaseTable, Key: string(b.Hash[:])},
		StateChange{Table: LeaseByConsumer, Key: PartyKey(r.Consumer, r.Hash)},
		StateChange{Table: LeaseByProvider, Key: PartyKey(r.Provider, r.Hash)})
	return nil
}

// leaseDependents names a block that rests on the lease itself: its
// account's latest block, or its accept.
func leaseDependents(v View, r *LeaseRecord) error {
	if !r.First.IsZero() {
		acct, found, err := v.Account(LeaseAccount(r.Hash))
		if err != nil {
			return err
		}
		if found {
			return dependent(acct.Frontier, "lease %s has settle blocks; roll %s back first", r.Hash, acct.Frontier)
		}
	}
	if r.Accepted() {
		return dependent(r.Accept, "lease %s was accepted by %s; roll that back first", r.Hash, r.Accept)
	}
	return nil
}

// rollbackLeaseAccept takes the stake's pending entry back and clears the
// accept from the record.
func rollbackLeaseAccept(v View, b *Block, d *Delta) error {
	r, err := mustLease(v, b.Source)
	if err != nil {
		return err
	}
	p, err := stillPending(v, LeaseAccount(r.Hash), b.Hash, "the stake of accept %s was taken by %s")
	if err != nil {
		return err
	}
	d.PendingDelete = p
	next := *r
	next.Accept, next.StartTime, next.CertificateHash = Hash{}, 0, Hash{}
	d.State = append(d.State, putLease(&next))
	if r.Live() {
		d.State = append(d.State, liveChange(r, false))
	}
	return nil
}

// stillPending returns the pending entry block h made for dest, which a
// rollback of h takes back; when a receive took it already, the error
// says so by taken (a format of h and the receive) and names the
// receive, which must be rolled back first.
func stillPending(v View, dest Address, h Hash, taken string) (*Pending, error) {
	p, found, err := v.Pending(dest, h)
	if err != nil || found {
		return &p, err
	}
	rcv, _, err := v.Receiver(h)
	if err != nil {
		return nil, err
	}
	return nil, dependent(rcv, taken+"; roll that back first", h, rcv)
}

// rollbackLeaseSettle undoes a lease account's block: what it paid out
// must still be pending, and what it took in is pending again.
func rollbackLeaseSettle(v View, b *Block, d *Delta) error {
	r, src, err := leaseOf(v, b)
	if err != nil {
		return err
	}
	if !b.Amount.IsZero() {
		dest, err := payee(v, b, r, src)
		if err != nil {
			return err
		}
		p, err := stillPending(v, dest, b.Hash, "the payout of settle %s was received by %s")
		if err != nil {
			return err
		}
		d.PendingDelete = p
	}
	if src.Type == TypeLeaseAccept || src.Type == TypeSend {
		// A start or a stake return took the stake in, an early end
		// the notice, a bounce its send: pending again, as its block
		// made it.
		d.PendingPut = &Pending{Send: src.Hash, Source: src.Account, Destination: b.Account, Amount: src.Amount, Asset: src.Asset}
	}
	next := *r
	switch {
	case isBounce(r, b, src):
		return nil // the record never named it
	case b.Hash == r.Third:
		next.Third = Hash{}
	case b.Hash == r.Second:
		next.Second, next.StakeReturned = Hash{}, false
		next.Notice, next.Refund = Hash{}, Amount{}
		if r.Stage == StageEnded {
			next.Stage, next.EndTime = StageActive, 0
			d.State = append(d.State, liveChange(r, true))
		}
	case b.Hash == r.First:
		if r.Stage == StageRefunded && r.Accepted() {
			d.State = append(d.State, liveChange(r, true))
		}
		next.Stage, next.First, next.EndTime = StageOpen, Hash{}, 0
	default:
		return fmt.Errorf("ledger: settle %s is not in lease %s's record", b.Hash, r.Hash)
	}
	d.State = append(d.State, putLease(&next))
	return nil
}

// LeaseOutput returns the pending entry a lease-type block created, if
// any: the stake an accept sends to the lease account, or what a lease
// account's block pays out. For the audit.
func LeaseOutput(v View, b *Block) (*Pending, error) {
	switch b.Type {
	case TypeLeaseAccept:
		return &Pending{Send: b.Hash, Source: b.Account, Destination: LeaseAccount(b.Source), Amount: b.Amount, Asset: Native}, nil
	case TypeLeaseSettle:
		if b.Amount.IsZero() {
			return nil, nil
		}
		r, src, err := leaseOf(v, b)
		if err != nil {
			return nil, err
		}
		dest, err := payee(v, b, r, src)
		if err != nil {
			return nil, err
		}
		return &Pending{Send: b.Hash, Source: b.Account, Destination: dest, Amount: b.Amount, Asset: b.Asset}, nil
	}
	return nil, nil
}

// isBounce reports whether b, a lease account's block in the ledger that
// names src, is a bounce: it names a send, and the record does not name
// it as the early end.
func isBounce(r *LeaseRecord, b, src *Block) bool {
	return src.Type == TypeSend && b.Hash != r.Second
}

// payee returns whom a lease account's block in the ledger pays (src is
// the block its source names): the consumer for a refund (the first
// block naming the lease) or a remainder (the third), the provider for
// an end, an early end or a stake return, the sender for a bounce.
func payee(v View, b *Block, r *LeaseRecord, src *Block) (Address, error) {
	if isBounce(r, b, src) {
		return src.Account, nil
	}
	if src.Type != TypeLease {
		return r.Provider, nil
	}
	if b.Previous.IsZero() {
		return r.Consumer, nil // a refund
	}
	prev, err := entryOf(v, b.Previous, ErrGapPrevious, "previous")
	if err != nil {
		return Address{}, err
	}
	if prev.Previous.IsZero() {
		return r.Provider, nil // an end
	}
	return r.Consumer, nil // a remainder
}
