package ledger_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/timekeeping"
	"github.com/latticenet/lattice/wallet"
)

// leaseWorld is a world with a governance state chain: index 1 names four
// timekeepers (threshold 3), index 2 doubles the vCPU price.
type leaseWorld struct {
	*world
	network  ledger.Hash
	gov      wallet.Key
	states   []*statechain.State
	tks      []wallet.Key
	consumer wallet.Key
	provider wallet.Key
}

const (
	tkPrecision = 5000
	acceptWait  = 600_000 // the default acceptance timeout
)

func newLeaseWorld(t *testing.T) *leaseWorld {
	t.Helper()
	w := &leaseWorld{world: newWorld(t), network: ledger.Hash{0x6c, 0x65}, gov: wallet.NewKey()}
	g := statechain.Genesis(w.network, ledger.NewKeyset(1, w.gov.Address()), t0)
	st, err := statechain.New(w.network, g)
	if err != nil {
		t.Fatal(err)
	}
	w.states = []*statechain.State{st}
	var keys []string
	for range 4 {
		w.tks = append(w.tks, wallet.NewKey())
	}
	// Attestations go in ascending order of key (timekeeping.Judge): the
	// helpers sign with the first n keys, in this order.
	slices.SortFunc(w.tks, func(a, b wallet.Key) int { a1, b1 := a.Address(), b.Address(); return bytes.Compare(a1[:], b1[:]) })
	for _, k := range w.tks {
		keys = append(keys, fmt.Sprintf("%q", k.Address()))
	}
	w.govSet("timekeepers", `{"keys":[`+strings.Join(keys, ",")+`]}`)
	w.govSet("lease.prices", `{"vcpu":"200","memory_mb":"1","disk_gb":"1"}`)
	w.world.gov = market.Terms{Network: w.network, StateAt: func(i uint64) (*statechain.State, bool) {
		if i >= uint64(len(w.states)) {
			return nil, false
		}
		return w.states[i], true
	}}
	w.consumer, w.provider = w.funded(1_000_000_000), w.funded(1_000_000_000)
	return w
}

// govSet appends a state-chain block setting key to value.
func (w *leaseWorld) govSet(key, value string) {
	w.t.Helper()
	tip := w.states[len(w.states)-1]
	b := &statechain.Block{Index: tip.Index() + 1, Previous: tip.Tip().Hash, Operation: statechain.OpSet,
		Key: key, Value: value, Timestamp: w.tick(1)}
	b.Seal(w.network)
	b.Sign(w.gov.Private())
	next, err := tip.Apply(b)
	if err != nil {
		w.t.Fatalf("state chain: %v", err)
	}
	w.states = append(w.states, next)
}

// quote prices the standard request (1 vCPU, 512 MB, 5 GB, 60 s) at index i.
func (w *leaseWorld) quote(i uint64) ledger.LeaseTerms {
	w.t.Helper()
	terms, err := w.world.gov.LeaseTerms(i, 1, 512, 5, 60)
	if err != nil {
		w.t.Fatal(err)
	}
	return terms
}

func (w *leaseWorld) leaseBlock(i uint64) *ledger.Block {
	w.t.Helper()
	spec := wallet.LeaseSpec{Provider: w.provider.Address(), VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60,
		AccessKey: w.consumer.Address(), Cost: w.quote(i).Cost, StateChainIndex: i}
	return signed(w.must(wallet.Lease(w.head(w.consumer.Address()), spec, w.tick(1))), w.consumer)
}

// attest returns n attestations by the first n timekeepers, at ts, ts+1, ...
func (w *leaseWorld) attest(p ledger.Purpose, lease ledger.Hash, ts int64, n int) []ledger.Attestation {
	var out []ledger.Attestation
	for i := range n {
		out = append(out, timekeeping.Sign(w.tks[i].Private(), w.network, p, lease, ts+int64(i)))
	}
	return out
}

func (w *leaseWorld) record(lease ledger.Hash) *ledger.LeaseRecord {
	w.t.Helper()
	r, found, err := ledger.GetLease(w.m, lease)
	if err != nil || !found {
		w.t.Fatalf("lease %s: found %v, %v", lease, found, err)
	}
	return r
}

func (w *leaseWorld) accept(lease ledger.Hash, atts []ledger.Attestation) *ledger.Block {
	w.t.Helper()
	return signed(w.must(wallet.LeaseAccept(w.head(w.provider.Address()), w.record(lease), ledger.Hash{0xce}, atts, w.tick(1))), w.provider)
}

func (w *leaseWorld) leaseHead(lease ledger.Hash) wallet.Head {
	return w.head(ledger.LeaseAccount(lease))
}

// takePending receives the pending entry settle block s paid to k.
func (w *leaseWorld) takePending(k wallet.Key, s *ledger.Block) *ledger.Block {
	w.t.Helper()
	p, found, _ := w.m.Pending(k.Address(), s.Hash)
	if !found {
		w.t.Fatalf("no pending entry of %s for %s", s.Hash, k.Address())
	}
	return w.ok(signed(w.must(wallet.Receive(w.head(k.Address()), p, w.tick(1))), k))
}

func balance(w *world, k wallet.Key) ledger.Amount {
	acct, _, _ := w.m.Account(k.Address())
	return acct.Balance(ledger.Native)
}

func TestLeaseLifeCycle(t *testing.T) {
	w := newLeaseWorld(t)
	c0, p0 := balance(w.world, w.consumer), balance(w.world, w.provider)
	terms := w.quote(2)
	if want := ledger.NewAmount(60 * (200 + 512 + 5)); terms.Cost != want || terms.Stake != ledger.NewAmount(60*717/2) {
		t.Fatalf("terms at index 2: cost %s stake %s, want cost %s", terms.Cost, terms.Stake, want)
	}
	lease := w.ok(w.leaseBlock(2))
	r := w.record(lease.Hash)
	if r.Status() != "open" || r.Cost != terms.Cost || r.Stake != terms.Stake || r.StateChainIndex != 2 {
		t.Fatalf("record after lease: %+v", r)
	}
	start := w.tick(1000)
	acc := w.ok(w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, start, 3)))
	if r = w.record(lease.Hash); r.Status() != "accepted" || r.StartTime != start+1 || r.Accept != acc.Hash {
		t.Fatalf("record after accept: %+v (start %d)", r, start)
	}
	w.ok(wallet.LeaseStart(w.leaseHead(lease.Hash), r, w.attest(ledger.PurposeStarted, lease.Hash, w.now, 3)))
	if r = w.record(lease.Hash); r.Status() != "active" || !r.Live() {
		t.Fatalf("record after start: %+v", r)
	}
	end, err := wallet.LeaseEnd(w.leaseHead(lease.Hash), r, w.attest(ledger.PurposeEnd, lease.Hash, r.End(), 3))
	if err != nil {
		t.Fatal(err)
	}
	w.ok(end)
	if r = w.record(lease.Hash); r.Status() != "ended" || !r.Settled() || r.Live() || r.EndTime != r.End()+1 {
		t.Fatalf("record after end: %+v", r)
	}
	w.takePending(w.provider, end)
	cost := terms.Cost
	if got, want := balance(w.world, w.consumer), mustSub(t, c0, cost); got != want {
		t.Errorf("consumer balance %s, want %s", got, want)
	}
	if got, want := balance(w.world, w.provider), mustAdd(t, p0, cost); got != want {
		t.Errorf("provider balance %s, want %s (paid the cost, stake back)", got, want)
	}
	if rep := w.audit(); rep.Leases != 1 {
		t.Errorf("audit counted %d leases", rep.Leases)
	}
}

func mustSub(t *testing.T, a, b ledger.Amount) ledger.Amount {
	v, err := a.Sub(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustAdd(t *testing.T, a, b ledger.Amount) ledger.Amount {
	v, err := a.Add(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestLeaseRefundAndLateAccept(t *testing.T) {
	w := newLeaseWorld(t)
	c0, p0 := balance(w.world, w.consumer), balance(w.world, w.provider)
	lease := w.ok(w.leaseBlock(1))
	r := w.record(lease.Hash)
	early := wallet.LeaseRefund(w.leaseHead(lease.Hash), r, w.attest(ledger.PurposeExpire, lease.Hash, r.Deadline()-10, 3))
	if err := w.submit(early); !errors.Is(err, ledger.ErrLeaseTiming) {
		t.Fatalf("refund before the deadline: %v, want ErrLeaseTiming", err)
	}
	refund := w.ok(wallet.LeaseRefund(w.leaseHead(lease.Hash), r, w.attest(ledger.PurposeExpire, lease.Hash, r.Deadline(), 3)))
	w.takePending(w.consumer, refund)
	if got := balance(w.world, w.consumer); got != c0 {
		t.Errorf("consumer balance after the refund %s, want %s", got, c0)
	}
	// The provider's accept, attested in time, arrives after the refund:
	// it is valid (it does not depend on the lease account's chain), and
	// its stake goes back through the lease account's second block.
	acc := w.ok(w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, r.Created+1000, 3)))
	r = w.record(lease.Hash)
	if r.Status() != "refunded" || r.Live() || !r.Accepted() {
		t.Fatalf("record: %+v", r)
	}
	// A start after a refund is a second first block: a fork.
	var fe *ledger.ForkError
	if err := w.submit(wallet.LeaseStart(wallet.Head{Account: ledger.LeaseAccount(lease.Hash)}, r, w.attest(ledger.PurposeStarted, lease.Hash, r.Created+2000, 3))); !errors.As(err, &fe) {
		t.Fatalf("start after the refund: %v, want a fork", err)
	}
	ret := w.ok(wallet.LeaseReturnStake(w.leaseHead(lease.Hash), r))
	w.takePending(w.provider, ret)
	if got := balance(w.world, w.provider); got != p0 {
		t.Errorf("provider balance after the stake's return %s, want %s", got, p0)
	}
	if r = w.record(lease.Hash); !r.StakeReturned || acc.Hash != r.Accept {
		t.Fatalf("record: %+v", r)
	}
}

// leaseRefusal is a block a fresh leaseWorld builds, and the error its
// submission must give.
type leaseRefusal struct {
	name  string
	block func(w *leaseWorld) *ledger.Block
	want  error
}

// checkRefusals submits each refusal's block to a world of its own: it
// must fail with its error and change nothing.
func checkRefusals(t *testing.T, tests []leaseRefusal) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newLeaseWorld(t)
			b := tt.block(w)
			before := snapshotState(w.world)
			err := w.submit(b)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if after := snapshotState(w.world); after != before {
				t.Fatalf("a refused block changed the ledger")
			}
		})
	}
}

func TestLeaseRefusals(t *testing.T) {
	tests := []leaseRefusal{
		{"lease: cost not the quote", func(w *leaseWorld) *ledger.Block {
			b := w.leaseBlock(1)
			b.Amount = mustAdd(w.t, b.Amount, ledger.NewAmount(1))
			b.Balance = mustSub(w.t, b.Balance, ledger.NewAmount(1))
			return signed(reseal(b), w.consumer)
		}, ledger.ErrBadAmount},
		{"lease: the price of another index", func(w *leaseWorld) *ledger.Block {
			b := w.leaseBlock(2)
			b.StateChainIndex = 1
			return signed(reseal(b), w.consumer)
		}, ledger.ErrBadAmount},
		{"lease: state-chain index not known yet", func(w *leaseWorld) *ledger.Block {
			b := w.leaseBlock(2)
			b.StateChainIndex = 3
			return signed(reseal(b), w.consumer)
		}, ledger.ErrGapState},
		{"lease: balance short of the cost", func(w *leaseWorld) *ledger.Block {
			poor := w.funded(10)
			spec := wallet.LeaseSpec{Provider: w.provider.Address(), VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60, AccessKey: poor.Address(), StateChainIndex: 1}
			b := &ledger.Block{Type: ledger.TypeLease, Account: poor.Address(), Previous: w.head(poor.Address()).Frontier, Asset: ledger.Native,
				Timestamp: w.tick(1), Destination: spec.Provider, Amount: w.quote(1).Cost, VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60,
				AccessPubKey: poor.Address(), StateChainIndex: 1}
			return signed(reseal(b), poor)
		}, ledger.ErrInsufficientBalance},
		{"lease: under the minimum memory", func(w *leaseWorld) *ledger.Block {
			b := w.leaseBlock(1)
			b.MemoryMB = 511
			return signed(reseal(b), w.consumer)
		}, ledger.ErrMalformed},
		{"lease: stable", func(w *leaseWorld) *ledger.Block {
			b := w.leaseBlock(1)
			b.Asset = ledger.Stable
			return signed(reseal(b), w.consumer)
		}, ledger.ErrMalformed},
		{"lease: older than its terms", func(w *leaseWorld) *ledger.Block {
			b := w.leaseBlock(2)
			b.Timestamp = w.states[2].Tip().Timestamp - 1
			return signed(reseal(b), w.consumer)
		}, ledger.ErrTimestamp},
		{"accept: by another account than the provider", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			other := w.funded(1_000_000)
			b := w.must(wallet.LeaseAccept(w.head(other.Address()), w.record(lease.Hash), ledger.Hash{1}, w.attest(ledger.PurposeStart, lease.Hash, w.now, 3), w.tick(1)))
			return signed(b, other)
		}, ledger.ErrWrongLease},
		{"accept: of a block that is no lease", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			b := w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, w.now, 3))
			b.Source = w.send(w.genesis, w.provider.Address(), 1, ledger.Native).Hash
			return signed(reseal(b), w.provider)
		}, ledger.ErrWrongLease},
		{"accept: stake not the lease's", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			b := w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, w.now, 3))
			b.Amount = mustSub(w.t, b.Amount, ledger.NewAmount(1))
			b.Balance = mustAdd(w.t, b.Balance, ledger.NewAmount(1))
			return signed(reseal(b), w.provider)
		}, ledger.ErrBadAmount},
		{"accept: balance short of the stake", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			w.send(w.provider, w.genesis.Address(), 1_000_000_000, ledger.Native) // all it has
			r := w.record(lease.Hash)
			b := &ledger.Block{Type: ledger.TypeLeaseAccept, Account: w.provider.Address(), Previous: w.head(w.provider.Address()).Frontier,
				Asset: ledger.Native, Timestamp: w.tick(1), Source: lease.Hash, Amount: r.Stake, CertificateHash: ledger.Hash{1},
				Attestations: w.attest(ledger.PurposeStart, lease.Hash, w.now, 3)}
			return signed(reseal(b), w.provider)
		}, ledger.ErrInsufficientBalance},
		{"accept: too few attestations", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			return w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, w.now, 2))
		}, ledger.ErrAttestation},
		{"accept: forged attestation", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			atts := w.attest(ledger.PurposeStart, lease.Hash, w.now, 3)
			atts[1].Timestamp++
			return w.accept(lease.Hash, atts)
		}, ledger.ErrAttestation},
		{"accept: attestations of another purpose", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			return w.accept(lease.Hash, w.attest(ledger.PurposeEnd, lease.Hash, w.now, 3))
		}, ledger.ErrAttestation},
		{"accept: a key outside the committee", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			atts := w.attest(ledger.PurposeStart, lease.Hash, w.now, 3)
			atts[2] = timekeeping.Sign(wallet.NewKey().Private(), w.network, ledger.PurposeStart, lease.Hash, w.now)
			return w.accept(lease.Hash, atts)
		}, ledger.ErrAttestation},
		{"accept: attested times too spread", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			atts := w.attest(ledger.PurposeStart, lease.Hash, w.now, 2)
			atts = append(atts, timekeeping.Sign(w.tks[2].Private(), w.network, ledger.PurposeStart, lease.Hash, w.now+tkPrecision+10))
			return w.accept(lease.Hash, atts)
		}, ledger.ErrAttestation},
		{"accept: started after the deadline", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			return w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, w.record(lease.Hash).Deadline(), 3))
		}, ledger.ErrLeaseTiming},
		{"accept: twice", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			w.ok(w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, w.now, 3)))
			return w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, w.now, 3))
		}, ledger.ErrAlreadyReceived},
		{"settle: end before the lease's end", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			b, _ := wallet.LeaseEnd(w.leaseHead(r.Hash), r, w.attest(ledger.PurposeEnd, r.Hash, r.End()-10, 3))
			return b
		}, ledger.ErrLeaseTiming},
		{"settle: end paying the wrong amount", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			b, _ := wallet.LeaseEnd(w.leaseHead(r.Hash), r, w.attest(ledger.PurposeEnd, r.Hash, r.End(), 3))
			b.Amount = r.Cost
			return reseal(b)
		}, ledger.ErrBadAmount},
		{"settle: twice", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			b, _ := wallet.LeaseEnd(w.leaseHead(r.Hash), r, w.attest(ledger.PurposeEnd, r.Hash, r.End(), 3))
			w.ok(b)
			b, _ = wallet.LeaseEnd(w.leaseHead(r.Hash), w.record(r.Hash), w.attest(ledger.PurposeEnd, r.Hash, r.End(), 3))
			return b
		}, ledger.ErrMalformed},
		{"settle: a refund of a started lease (a fork of its account's first block)", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			return wallet.LeaseRefund(wallet.Head{Account: ledger.LeaseAccount(r.Hash)}, r, w.attest(ledger.PurposeExpire, r.Hash, r.Deadline(), 3))
		}, ledger.ErrFork},
		{"settle: a second block naming the accept of a started lease", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			b := wallet.LeaseReturnStake(w.leaseHead(r.Hash), r)
			b.Timestamp = w.tick(1)
			return reseal(b)
		}, ledger.ErrAlreadyReceived},
		{"settle: a start stamped with another time than the attested start", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			w.ok(w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, w.now, 3)))
			b := wallet.LeaseStart(w.leaseHead(lease.Hash), w.record(lease.Hash), w.attest(ledger.PurposeStarted, lease.Hash, w.now, 3))
			b.Timestamp++
			return reseal(b)
		}, ledger.ErrTimestamp},
		{"settle: naming a representative", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			w.ok(w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, w.now, 3)))
			b := wallet.LeaseStart(w.leaseHead(lease.Hash), w.record(lease.Hash), w.attest(ledger.PurposeStarted, lease.Hash, w.now, 3))
			b.Representative = w.consumer.Address()
			return reseal(b)
		}, ledger.ErrMalformed},
		{"lease: terms with no timekeeper committee", func(w *leaseWorld) *ledger.Block {
			b := w.leaseBlock(1)
			b.StateChainIndex = 0
			return signed(reseal(b), w.consumer)
		}, ledger.ErrLeaseTerms},
		{"settle: on another account", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			r := w.record(lease.Hash)
			return wallet.LeaseRefund(wallet.Head{Account: wallet.NewKey().Address()}, r, w.attest(ledger.PurposeExpire, r.Hash, r.Deadline(), 3))
		}, ledger.ErrWrongLease},
		{"settle: a fork of an ordinary account's chain (unsigned blocks authorise nothing there)", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			r := w.record(lease.Hash)
			front, _, _ := w.m.Entry(w.head(w.consumer.Address()).Frontier)
			b := wallet.LeaseRefund(wallet.Head{Account: w.consumer.Address(), Frontier: front.Block.Previous}, r, w.attest(ledger.PurposeExpire, r.Hash, r.Deadline(), 3))
			return b
		}, ledger.ErrWrongLease},
		{"settle: an invalid contender for a lease account's taken place is refused, not a fork", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			bogus := wallet.LeaseRefund(wallet.Head{Account: ledger.LeaseAccount(r.Hash)}, r, nil)
			bogus.Timestamp = w.tick(1)
			return reseal(bogus)
		}, ledger.ErrAttestation},
		{"settle: signed", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			r := w.record(lease.Hash)
			b := wallet.LeaseRefund(w.leaseHead(r.Hash), r, w.attest(ledger.PurposeExpire, r.Hash, r.Deadline(), 3))
			return signed(b, w.consumer)
		}, ledger.ErrMalformed},
		{"settle: a start whose accept the committee did not see before the deadline", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			r := w.record(lease.Hash)
			// The accept's start was attested in time, then held back.
			w.ok(w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, r.Created+1000, 3)))
			return wallet.LeaseStart(w.leaseHead(lease.Hash), w.record(lease.Hash), w.attest(ledger.PurposeStarted, lease.Hash, r.Deadline(), 3))
		}, ledger.ErrLeaseTiming},
		{"settle: a start without the committee's started attestations", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			w.ok(w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, w.now, 3)))
			return wallet.LeaseStart(w.leaseHead(lease.Hash), w.record(lease.Hash), w.attest(ledger.PurposeStart, lease.Hash, w.now, 3))
		}, ledger.ErrAttestation},
	}
	checkRefusals(t, tests)
}

// active makes a lease and starts it, and returns its record.
func (w *leaseWorld) active() *ledger.LeaseRecord {
	w.t.Helper()
	lease := w.ok(w.leaseBlock(1))
	w.ok(w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, w.now, 3)))
	w.ok(wallet.LeaseStart(w.leaseHead(lease.Hash), w.record(lease.Hash), w.attest(ledger.PurposeStarted, lease.Hash, w.now, 3)))
	return w.record(lease.Hash)
}

func reseal(b *ledger.Block) *ledger.Block {
	b.Signature = ledger.Signature{}
	b.Seal()
	return b
}

// snapshotState renders a world's whole ledger, to tell whether it changed.
func snapshotState(w *world) string {
	var sb strings.Builder
	w.m.Accounts(func(a ledger.Account) error { fmt.Fprintf(&sb, "%+v\n", a); return nil })
	var pendings []string // Mem keeps them in maps: sorted here
	w.m.Pendings(func(p ledger.Pending) error { pendings = append(pendings, fmt.Sprintf("%+v\n", p)); return nil })
	slices.Sort(pendings)
	sb.WriteString(strings.Join(pendings, ""))
	for _, table := range []string{ledger.LeaseTable, ledger.LeaseByConsumer, ledger.LeaseByProvider, ledger.LeaseLive} {
		w.m.States(table, "", "", func(k string, v []byte) error { fmt.Fprintf(&sb, "%s %x %x\n", table, k, v); return nil })
	}
	return sb.String()
}

// TestLeaseRollback rolls a whole lease back from its consumer's chain:
// the cascade takes the accept, the lease account's blocks and the
// receive of the payout with it, and the ledger is as before.
func TestLeaseRollback(t *testing.T) {
	w := newLeaseWorld(t)
	before := snapshotState(w.world)
	keep := w.head(w.consumer.Address())
	r := w.active()
	end, _ := wallet.LeaseEnd(w.leaseHead(r.Hash), r, w.attest(ledger.PurposeEnd, r.Hash, r.End(), 3))
	w.ok(end)
	w.takePending(w.provider, end)
	acct, _, _ := w.m.Account(w.consumer.Address())
	w.rollBackConsumer(acct.Height-1, 5, keep, before) // receive, end, start, accept, lease
}

// beforeLease returns what rollBackConsumer compares with: the whole
// ledger, the consumer's head and its height, before a lease.
func (w *leaseWorld) beforeLease() (string, wallet.Head, uint64) {
	acct, _, _ := w.m.Account(w.consumer.Address())
	return snapshotState(w.world), w.head(w.consumer.Address()), acct.Height
}

// rollBackConsumer rolls the consumer's chain back to height, with the
// cascade, and checks that want blocks went and that the ledger is as it
// was when the consumer's head was keep and the whole ledger before. The
// provider's chain loses its accept and receives with the cascade.
func (w *leaseWorld) rollBackConsumer(height uint64, want int, keep wallet.Head, before string) {
	w.t.Helper()
	removed, err := ledger.RollbackTo(w.m, w.consumer.Address(), height)
	if err != nil {
		w.t.Fatal(err)
	}
	if len(removed) != want {
		w.t.Errorf("removed %d blocks, want %d", len(removed), want)
	}
	w.audit()
	if got := w.head(w.consumer.Address()); got != keep {
		w.t.Errorf("consumer head %+v, want %+v", got, keep)
	}
	if after := snapshotState(w.world); after != before {
		w.t.Errorf("ledger after the rollback differs from before the lease:\n%s\nwant\n%s", after, before)
	}
}

// TestLeaseDeterminismUnderGovernance changes the prices and the
// timekeepers between leases, then replays every block on a fresh ledger
// whose state chain already has every change: it judges each block as the
// first did, by the index the block names.
func TestLeaseDeterminismUnderGovernance(t *testing.T) {
	w := newLeaseWorld(t)
	keep := func(b *ledger.Block) *ledger.Block { return b }
	l1 := keep(w.ok(w.leaseBlock(2)))
	w.govSet("lease.prices", `{"vcpu":"500","memory_mb":"2","disk_gb":"3"}`) // index 3
	newTK := wallet.NewKey()
	w.govSet("timekeepers", fmt.Sprintf(`{"keys":[%q],"threshold":1}`, newTK.Address())) // index 4
	l2 := keep(w.ok(w.leaseBlock(4)))
	if w.record(l1.Hash).Cost == w.record(l2.Hash).Cost {
		t.Fatal("the price change did not change the cost")
	}
	// l1 keeps the committee of index 2; l2 has the new one.
	keep(w.ok(w.accept(l1.Hash, w.attest(ledger.PurposeStart, l1.Hash, w.now, 3))))
	acc2 := w.accept(l2.Hash, w.attest(ledger.PurposeStart, l2.Hash, w.now, 3))
	if err := w.submit(acc2); !errors.Is(err, ledger.ErrAttestation) {
		t.Fatalf("old committee for a lease at index 4: %v", err)
	}
	keep(w.ok(w.accept(l2.Hash, []ledger.Attestation{timekeeping.Sign(newTK.Private(), w.network, ledger.PurposeStart, l2.Hash, w.now)})))
	// A lease naming an old index is still judged by that index.
	l3 := keep(w.ok(w.leaseBlock(1)))
	if w.record(l3.Hash).Cost != w.quote(1).Cost {
		t.Fatal("a lease at index 1 was not priced at index 1")
	}

	fresh := newWorld(t)
	fresh.gov = w.world.gov
	fresh.genesisFrom(w.world)
	for _, b := range w.history() {
		if err := fresh.submit(b); err != nil {
			t.Fatalf("replaying %s %s: %v", b.Type, b.Hash, err)
		}
	}
	if a, b := snapshotState(w.world), snapshotState(fresh); a != b {
		t.Fatalf("replay differs:\n%s\nwant\n%s", b, a)
	}
}

// genesisFrom makes w's ledger start from the same genesis as o's.
func (w *world) genesisFrom(o *world) {
	w.m = ledger.NewMem()
	g, _, _ := o.m.ChainAt(o.genesis.Address(), 1)
	e, _, _ := o.m.Entry(g)
	w.m.Commit(ledger.GenesisDelta(e.Block))
}

// history returns every block of w's ledger but the genesis, in an order
// that applies: by timestamp, which the worlds' clock makes increasing.
func (w *leaseWorld) history() []*ledger.Block {
	var out []*ledger.Block
	w.m.Accounts(func(a ledger.Account) error {
		for h := uint64(1); h <= a.Height; h++ {
			hash, _, _ := w.m.ChainAt(a.Address, h)
			e, _, _ := w.m.Entry(hash)
			if !ledger.IsGenesis(e.Block) {
				out = append(out, e.Block)
			}
		}
		return nil
	})
	sortByTime(out)
	return out
}

func sortByTime(bs []*ledger.Block) {
	for i := 1; i < len(bs); i++ {
		for j := i; j > 0 && bs[j].Timestamp < bs[j-1].Timestamp; j-- {
			bs[j], bs[j-1] = bs[j-1], bs[j]
		}
	}
}

func TestLeaseRecordBinary(t *testing.T) {
	r := ledger.LeaseRecord{Hash: ledger.Hash{1}, Consumer: ledger.Address{2}, Provider: ledger.Address{3}, VCPUs: 1, MemoryMB: 512,
		DiskGB: 5, Duration: 60, Cost: ledger.NewAmount(7), Stake: ledger.NewAmount(4), StateChainIndex: 9, Created: 10,
		AcceptTimeout: 11, Accept: ledger.Hash{4}, StartTime: 12, Stage: ledger.StageRefunded, First: ledger.Hash{5},
		Second: ledger.Hash{6}, EndTime: 13, StakeReturned: true}
	raw, _ := r.MarshalBinary()
	var back ledger.LeaseRecord
	if err := back.UnmarshalBinary(raw); err != nil || back != r {
		t.Fatalf("round trip: %v, %+v", err, back)
	}
	for _, bad := range [][]byte{raw[:len(raw)-1], append(raw, 0), append([]byte{2}, raw[1:]...)} {
		if err := back.UnmarshalBinary(bad); err == nil {
			t.Errorf("accepted %x", bad)
		}
	}
	js, _ := json.Marshal(r.Status())
	if string(js) != `"refunded"` {
		t.Errorf("status %s", js)
	}
}

// TestLeaseTimesSaturate: a lease stamped near the end of int64 (which
// no node admits, being past every clock skew, but which the rules must
// still judge) has its deadline and end at the last time there is, not
// wrapped around into the past, where every accept would be late and a
// refund due at once.
func TestLeaseTimesSaturate(t *testing.T) {
	for _, tc := range []struct {
		r             ledger.LeaseRecord
		deadline, end int64
	}{
		{ledger.LeaseRecord{Created: 1_000, AcceptTimeout: 600_000, StartTime: 5_000, Duration: 60}, 601_000, 65_000},
		{ledger.LeaseRecord{Created: math.MaxInt64 - 1_000, AcceptTimeout: 600_000, StartTime: math.MaxInt64 - 1_000, Duration: 60},
			math.MaxInt64, math.MaxInt64},
		{ledger.LeaseRecord{Created: math.MaxInt64 - 600_000, AcceptTimeout: 600_000, StartTime: math.MaxInt64 - 60_000, Duration: 60},
			math.MaxInt64, math.MaxInt64},
	} {
		if got := tc.r.Deadline(); got != tc.deadline {
			t.Errorf("Deadline of %+v = %d, want %d", tc.r, got, tc.deadline)
		}
		if got := tc.r.End(); got != tc.end {
			t.Errorf("End of %+v = %d, want %d", tc.r, got, tc.end)
		}
	}
}
