package ledgerstore

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/timekeeping"
	"github.com/latticenet/lattice/wallet"
)

const t0 = 1767225600000

// sim drives the same random stream of blocks, forks and rollbacks into the
// reference ledger.Mem and into a Store, batching the store's writes at
// random, and checks after each batch that both ledgers agree.
type sim struct {
	t    *testing.T
	rng  *rand.Rand
	mem  *ledger.Mem
	st   *Store
	keys []wallet.Key
	now  int64
	// The leases' governance: one timekeeper, the default terms.
	gov ledger.Governance
	tk  wallet.Key
	net ledger.Hash
	// applied counts the blocks applied, by type (and lease_settle by
	// whether it pays out, and which payout), and rolledBack the
	// frontiers rolled back, by the same kinds, so the test knows it
	// exercised each.
	applied, rolledBack map[string]int
}

func newSim(t *testing.T, dir string, seed uint64) *sim {
	t.Helper()
	st, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := &sim{t: t, rng: rand.New(rand.NewPCG(seed, 1)), mem: ledger.NewMem(), st: st, now: t0,
		applied: map[string]int{}, rolledBack: map[string]int{}}
	gk, _ := wallet.KeyFromSeed(make([]byte, 32))
	g := ledger.NewGenesis(gk.Private(), ledger.NewAmount(1e15), t0)
	if err := st.Init(g, map[string]string{"name": "test"}); err != nil {
		t.Fatal(err)
	}
	s.mem.Commit(ledger.GenesisDelta(g))
	s.keys = append(s.keys, gk)
	// Keys come from the seed, so the stream, and which block types it
	// reaches, is the same on every run.
	key := func(i byte) wallet.Key {
		b := make([]byte, 32)
		b[0], b[1] = byte(seed), i
		b[2] = 1 // never the genesis key's zero seed
		k, err := wallet.KeyFromSeed(b)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for i := range byte(7) {
		s.keys = append(s.keys, key(i))
	}
	s.net, s.tk = g.Hash, key(7)
	s.gov = simGovernance(t, s.net, gk, s.tk)
	return s
}

// simGovernance is a state chain whose index 1 makes tk the timekeeper
// committee, governed by the genesis key.
func simGovernance(t *testing.T, net ledger.Hash, gk, tk wallet.Key) ledger.Governance {
	g := statechain.Genesis(net, ledger.NewKeyset(1, gk.Address()), t0)
	st0, err := statechain.New(net, g)
	if err != nil {
		t.Fatal(err)
	}
	b := &statechain.Block{Index: 1, Previous: g.Hash, Operation: statechain.OpSet, Key: "timekeepers",
		Value: statechain.TimekeepersValue([]ledger.Address{tk.Address()}), Timestamp: t0}
	b.Seal(net)
	b.Sign(gk.Private())
	st1, err := st0.Apply(b)
	if err != nil {
		t.Fatal(err)
	}
	states := []*statechain.State{st0, st1}
	return market.Terms{Network: net, StateAt: func(i uint64) (*statechain.State, bool) {
		if i >= uint64(len(states)) {
			return nil, false
		}
		return states[i], true
	}}
}

// leaseBlock builds a random lease-type block: a lease by k, an accept of
// an open lease by its provider, or the lease account's block a lease's
// course needs (unsigned). It returns the key that signs it, if any.
func (s *sim) leaseBlock(k wallet.Key, h wallet.Head) (*ledger.Block, *wallet.Key) {
	var leases []*ledger.LeaseRecord
	s.mem.States(ledger.LeaseTable, "", "", func(_ string, v []byte) error {
		r := new(ledger.LeaseRecord)
		if err := r.UnmarshalBinary(v); err != nil {
			s.t.Fatal(err)
		}
		leases = append(leases, r)
		return nil
	})
	attest := func(r *ledger.LeaseRecord, p ledger.Purpose) []ledger.Attestation {
		return []ledger.Attestation{timekeeping.Sign(s.tk.Private(), s.net, p, r.Hash, s.now)}
	}
	switch s.rng.IntN(3) {
	case 0:
		// Mostly the genesis key provides: the others' balances are small
		// for a stake.
		provider := s.keys[0].Address()
		if s.rng.IntN(4) == 0 {
			provider = s.keys[s.rng.IntN(len(s.keys))].Address()
		}
		terms, err := s.gov.LeaseTerms(1, 1, 512, 5, 60)
		if err != nil || provider == k.Address() || h.Balance(ledger.Native).Cmp(terms.Cost) < 0 {
			return nil, nil
		}
		b, err := wallet.Lease(h, wallet.LeaseSpec{Provider: provider, VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60,
			AccessKey: k.Address(), Cost: terms.Cost, StateChainIndex: 1}, s.now)
		if err != nil {
			s.t.Fatal(err)
		}
		return b, &k
	case 1:
		for _, r := range leases {
			if r.Accepted() || s.now >= r.Deadline() {
				continue
			}
			for _, pk := range s.keys {
				if pk.Address() != r.Provider {
					continue
				}
				acct, _, _ := s.mem.Account(pk.Address())
				ph := wallet.HeadOf(acct)
				ph.Account = pk.Address()
				if ph.Balance(ledger.Native).Cmp(r.Stake) < 0 {
					return nil, nil
				}
				b, err := wallet.LeaseAccept(ph, r, ledger.Hash{1}, attest(r, ledger.PurposeStart), s.now)
				if err != nil {
					s.t.Fatal(err)
				}
				return b, &pk
			}
		}
	default:
		if len(leases) == 0 {
			return nil, nil
		}
		r := leases[s.rng.IntN(len(leases))]
		var moving []*ledger.LeaseRecord // started, or accepted in time: early ends need them
		for _, l := range leases {
			if l.Stage == ledger.StageActive || l.Stage == ledger.StageEnded && l.EndedEarly() && l.Third.IsZero() ||
				l.Stage == ledger.StageOpen && l.Accepted() && s.now < l.Deadline() {
				moving = append(moving, l)
			}
		}
		if len(moving) > 0 && s.rng.IntN(2) == 0 {
			r = moving[s.rng.IntN(len(moving))]
		}
		acct, _, _ := s.mem.Account(ledger.LeaseAccount(r.Hash))
		lh := wallet.HeadOf(acct)
		lh.Account = ledger.LeaseAccount(r.Hash)
		switch {
		case r.Stage == ledger.StageOpen && r.Accepted() && s.now < r.Deadline():
			return wallet.LeaseStart(lh, r, attest(r, ledger.PurposeStarted)), nil
		case r.Stage == ledger.StageOpen:
			if s.rng.IntN(4) != 0 {
				return nil, nil // give its provider a chance
			}
			s.now = max(s.now, r.Deadline())
			return wallet.LeaseRefund(lh, r, attest(r, ledger.PurposeExpire)), nil
		case r.Stage == ledger.StageActive:
			// Its consumer's notice sometimes, and an early end once one
			// is pending; else its end.
			var notice *ledger.Pending
			s.mem.Pendings(func(q ledger.Pending) error {
				if q.Destination == lh.Account && q.Source == r.Consumer && (notice == nil || bytes.Compare(q.Send[:], notice.Send[:]) < 0) {
					notice = &q
				}
				return nil
			})
			if notice != nil {
				atts := []ledger.Attestation{timekeeping.Sign(s.tk.Private(), s.net, ledger.PurposeEnding, notice.Send, s.now)}
				b, err := wallet.LeaseEarlyEnd(lh, r, notice.Send, atts)
				if err != nil {
					s.t.Fatal(err)
				}
				return b, nil
			}
			if s.rng.IntN(4) != 0 {
				for _, ck := range s.keys {
					if ck.Address() != r.Consumer {
						continue
					}
					acct, _, _ := s.mem.Account(ck.Address())
					ch := wallet.HeadOf(acct)
					ch.Account = ck.Address()
					if ch.Balance(ledger.Native).Cmp(ledger.NewAmount(3)) < 0 {
						return nil, nil
					}
					b, err := wallet.Send(ch, lh.Account, ledger.NewAmount(uint64(1+s.rng.IntN(3))), ledger.Native, s.now)
					if err != nil {
						s.t.Fatal(err)
					}
					return b, &ck
				}
			}
			s.now = max(s.now, r.End())
			b, err := wallet.LeaseEnd(lh, r, attest(r, ledger.PurposeEnd))
			if err != nil {
				s.t.Fatal(err)
			}
			return b, nil
		case r.Stage == ledger.StageEnded && r.EndedEarly() && r.Third.IsZero():
			return wallet.LeaseRemainder(lh, r), nil
		case r.Stage == ledger.StageRefunded && r.Accepted() && !r.StakeReturned && s.rng.IntN(2) == 0:
			return wallet.LeaseReturnStake(lh, r), nil
		case r.Settled():
			// Sends its course does not take in, made now and then by
			// anyone in either asset, and bounced back to their senders
			// (before a late accept's stake return, too).
			var stray *ledger.Pending
			s.mem.Pendings(func(q ledger.Pending) error {
				if q.Destination == lh.Account && q.Send != r.Accept && (stray == nil || bytes.Compare(q.Send[:], stray.Send[:]) < 0) {
					stray = &q
				}
				return nil
			})
			if stray != nil && s.rng.IntN(2) == 0 {
				e, _, _ := s.mem.Entry(stray.Send)
				return wallet.LeaseBounce(lh, *stray, e.Block.Timestamp), nil
			}
			asset := ledger.Assets[s.rng.IntN(2)]
			amt := ledger.NewAmount(uint64(1 + s.rng.IntN(10)))
			if h.Balance(asset).Cmp(amt) < 0 {
				return nil, nil
			}
			b, err := wallet.Send(h, lh.Account, amt, asset, s.now)
			if err != nil {
				s.t.Fatal(err)
			}
			return b, &k
		}
	}
	return nil, nil
}

// next builds one random block against the reference ledger; some are
// invalid on purpose.
func (s *sim) next() *ledger.Block {
	k := s.keys[s.rng.IntN(len(s.keys))]
	acct, _, _ := s.mem.Account(k.Address())
	h := wallet.HeadOf(acct)
	h.Account = k.Address()
	s.now += int64(s.rng.IntN(3))
	var b *ledger.Block
	var err error
	signer := &k
	switch s.rng.IntN(5) {
	case 4:
		if b, signer = s.leaseBlock(k, h); b == nil {
			return nil
		}
	case 0, 1:
		to := s.keys[s.rng.IntN(len(s.keys))].Address()
		asset := ledger.Assets[s.rng.IntN(2)]
		amt := ledger.NewAmount(uint64(s.rng.IntN(100000) + 1)) // enough, in time, for leases and stakes
		if h.Balance(asset).Cmp(amt) < 0 || to == k.Address() {
			return nil
		}
		b, err = wallet.Send(h, to, amt, asset, s.now)
	case 2:
		var p *ledger.Pending
		s.mem.Pendings(func(q ledger.Pending) error {
			// Mem's map order is random: take the least hash, so the
			// stream is the same on every run.
			if q.Destination == k.Address() && (p == nil || bytes.Compare(q.Send[:], p.Send[:]) < 0) {
				p = &q
			}
			return nil
		})
		if p == nil {
			return nil
		}
		b, err = wallet.Receive(h, *p, s.now)
	case 3:
		s.now += ledger.ClaimInterval / 2
		b, err = wallet.Claim(h, s.now)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	if s.rng.IntN(4) == 0 && b.Type != ledger.TypeLeaseSettle {
		// Name a representative (sometimes the account itself).
		b.Representative = s.keys[s.rng.IntN(len(s.keys))].Address()
		b.Seal()
	}
	if front, _, _ := s.mem.Account(b.Account); s.rng.IntN(10) == 0 && !front.Frontier.IsZero() {
		// A fork: rebuild on the previous block.
		e, _, _ := s.mem.Entry(front.Frontier)
		b.Previous = e.Block.Previous
		b.Seal()
	}
	if signer != nil {
		b.Sign(signer.Private())
	}
	return b
}

func (s *sim) step(batchSize int) {
	s.t.Helper()
	batch := s.st.NewBatch()
	defer batch.Close()
	for range batchSize {
		if s.rng.IntN(15) == 0 {
			// Roll back someone's frontier in both ledgers: an account's,
			// or a lease account's (a settle, a bounce).
			a := s.keys[1+s.rng.IntN(len(s.keys)-1)].Address()
			if la := s.leaseAccounts(); len(la) > 0 && s.rng.IntN(8) == 0 {
				a = la[s.rng.IntN(len(la))]
			}
			var kinds []string
			if acct, found, _ := s.mem.Account(a); found {
				e, _, _ := s.mem.Entry(acct.Frontier)
				kinds = s.kinds(e.Block)
			}
			dm, errM := ledger.Rollback(s.mem, a)
			ds, errS := ledger.Rollback(batch, a)
			if (errM == nil) != (errS == nil) {
				s.t.Fatalf("rollback disagreement: mem %v, store %v", errM, errS)
			}
			if errM == nil {
				for _, k := range kinds {
					s.rolledBack[k]++
				}
				s.mem.Commit(dm)
				if err := batch.Apply(ds); err != nil {
					s.t.Fatal(err)
				}
			}
			continue
		}
		b := s.next()
		if b == nil {
			continue
		}
		var p ledger.Params
		if err := p.Check(b); err != nil {
			s.t.Fatalf("sim built an invalid block: %v", err)
		}
		dm, errM := ledger.Apply(ledger.WithGovernance(s.mem, s.gov), b)
		ds, errS := ledger.Apply(ledger.WithGovernance(batch, s.gov), b)
		if (errM == nil) != (errS == nil) || (errM != nil && errM.Error() != errS.Error()) {
			s.t.Fatalf("apply disagreement: mem %v, store %v", errM, errS)
		}
		var fe *ledger.ForkError
		switch {
		case errM == nil:
			for _, k := range s.kinds(b) {
				s.applied[k]++
			}
			s.mem.Commit(dm)
			if err := batch.Apply(ds); err != nil {
				s.t.Fatal(err)
			}
		case errors.As(errS, &fe):
			if err := batch.AddConflict(fe, s.now); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	if err := batch.Commit(); err != nil {
		s.t.Fatal(err)
	}
}

// kinds names block b, taken in by the reference ledger (applied now,
// or its frontier): its type, and for a lease_settle that pays out,
// "lease_settle paying" and which payout when the stream tells them
// apart.
func (s *sim) kinds(b *ledger.Block) []string {
	kinds := []string{b.Type.String()}
	if b.Type != ledger.TypeLeaseSettle || b.Amount.IsZero() {
		return kinds
	}
	kinds = append(kinds, "lease_settle paying")
	src, _, _ := s.mem.Entry(b.Source)
	prev, _, _ := s.mem.Entry(b.Previous)
	second := prev != nil && prev.Block.Previous.IsZero()
	switch {
	case src.Block.Type == ledger.TypeSend && second && isAccept(s.mem, prev.Block.Source): // after a start
		kinds = append(kinds, "early end")
	case src.Block.Type == ledger.TypeSend:
		kinds = append(kinds, "bounce")
	case src.Block.Type == ledger.TypeLease && prev != nil && !second:
		kinds = append(kinds, "remainder")
	}
	return kinds
}

// leaseAccounts are the accounts of the reference ledger's leases, in
// the order of their leases' hashes.
func (s *sim) leaseAccounts() []ledger.Address {
	var as []ledger.Address
	s.mem.States(ledger.LeaseTable, "", "", func(_ string, v []byte) error {
		r := new(ledger.LeaseRecord)
		if err := r.UnmarshalBinary(v); err != nil {
			s.t.Fatal(err)
		}
		as = append(as, ledger.LeaseAccount(r.Hash))
		return nil
	})
	return as
}

// compare checks that the store holds exactly the reference ledger.
func compare(t *testing.T, mem *ledger.Mem, st *Store) {
	t.Helper()
	rm, err := ledger.Audit(mem)
	if err != nil {
		t.Fatalf("audit mem: %v", err)
	}
	snap := st.Snapshot()
	defer snap.Close()
	rs, err := ledger.Audit(snap)
	if err != nil {
		t.Fatalf("audit store: %v", err)
	}
	if rm != rs {
		t.Fatalf("audits differ:\nmem   %+v\nstore %+v", rm, rs)
	}
	var accts []ledger.Account
	mem.Accounts(func(a ledger.Account) error { accts = append(accts, a); return nil })
	for _, a := range accts {
		got, found, err := st.Account(a.Address)
		if err != nil || !found || !reflect.DeepEqual(got, a) {
			t.Fatalf("account %s: store %+v (found %v, %v), mem %+v", a.Address, got, found, err, a)
		}
		var chain []ledger.Hash
		var sends []ledger.Hash
		st.Chain(a.Address, func(e *ledger.Entry) error {
			chain = append(chain, e.Block.Hash)
			if e.Block.Type == ledger.TypeSend {
				sends = append(sends, e.Block.Hash)
			}
			return nil
		})
		if uint64(len(chain)) != a.Height || chain[len(chain)-1] != a.Frontier {
			t.Fatalf("chain of %s: %d blocks, want %d", a.Address, len(chain), a.Height)
		}
		// The receiver index names the block that took each send, and
		// nothing for a send still pending.
		for _, h := range sends {
			want, wantFound, _ := mem.Receiver(h)
			got, found, err := st.Receiver(h)
			if err != nil || found != wantFound || got != want {
				t.Fatalf("receiver of send %s: got %s (found %v, %v), want %s (found %v)", h, got, found, err, want, wantFound)
			}
		}
	}
	// Every representative's weight is the native balance of the accounts
	// that name it, its own included when it represents itself.
	want := make(map[ledger.Address]ledger.Amount)
	for _, a := range accts {
		want[a.Address] = want[a.Address] // accounts that nobody names weigh nothing
		rep := a.Rep()
		w, err := want[rep].Add(a.Balance(ledger.Native))
		if err != nil {
			t.Fatal(err)
		}
		want[rep] = w
	}
	for rep, w := range want {
		if got, err := st.Weight(rep); err != nil || got != w {
			t.Fatalf("weight of %s: got %s (%v), want %s", rep, got, err, w)
		}
	}
}

func TestStoreMatchesReference(t *testing.T) {
	applied, rolledBack := map[string]int{}, map[string]int{}
	for seed := range uint64(8) {
		s := newSim(t, t.TempDir(), seed)
		for range 100 {
			s.step(1 + s.rng.IntN(30))
		}
		compare(t, s.mem, s.st)
		for k, n := range s.applied {
			applied[k] += n
		}
		for k, n := range s.rolledBack {
			rolledBack[k] += n
		}
	}
	for _, k := range []string{"send", "receive", "claim", "lease", "lease_accept", "lease_settle", "lease_settle paying", "early end", "remainder", "bounce"} {
		if applied[k] == 0 {
			t.Errorf("no %s block was applied: the stream does not exercise it (%v)", k, applied)
		}
	}
	for _, k := range []string{"send", "receive", "lease_settle", "lease_settle paying", "bounce"} {
		if rolledBack[k] == 0 {
			t.Errorf("no %s block was rolled back: the stream does not exercise it (%v)", k, rolledBack)
		}
	}
	t.Logf("applied: %v", applied)
	t.Logf("rolled back: %v", rolledBack)
}

func TestStoreSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s := newSim(t, dir, 42)
	for range 30 {
		s.step(10)
	}
	// An uncommitted batch leaves no trace.
	b := s.st.NewBatch()
	k := wallet.NewKey()
	claim, _ := wallet.Claim(wallet.Head{Account: k.Address()}, t0)
	claim.Sign(k.Private())
	d, err := ledger.Apply(b, claim)
	if err != nil {
		t.Fatal(err)
	}
	b.Apply(d)
	b.Close()
	var recent []ledger.Hash
	s.st.Recent(5, func(e *ledger.Entry) error { recent = append(recent, e.Block.Hash); return nil })
	if err := s.st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	compare(t, s.mem, st)
	if _, found, _ := st.Account(k.Address()); found {
		t.Error("an uncommitted batch reached the disk")
	}
	var again []ledger.Hash
	st.Recent(5, func(e *ledger.Entry) error { again = append(again, e.Block.Hash); return nil })
	if !reflect.DeepEqual(recent, again) {
		t.Errorf("recent blocks changed across reopen: %v vs %v", recent, again)
	}
	if g, err := st.Genesis(); err != nil || g.IsZero() {
		t.Errorf("Genesis after reopen: %v, %v", g, err)
	}
}

func TestConflictsRecorded(t *testing.T) {
	s := newSim(t, t.TempDir(), 7)
	gk := s.keys[0]
	acct, _, _ := s.st.Account(gk.Address())
	h := wallet.HeadOf(acct)
	var blocks []*ledger.Block
	for i := range 3 {
		b, _ := wallet.Send(h, s.keys[1].Address(), ledger.NewAmount(uint64(i+1)), ledger.Native, t0+1)
		b.Sign(gk.Private())
		blocks = append(blocks, b)
	}
	for i, b := range blocks {
		batch := s.st.NewBatch()
		d, err := ledger.Apply(batch, b)
		var fe *ledger.ForkError
		switch {
		case i == 0 && err == nil:
			batch.Apply(d)
		case i > 0 && errors.As(err, &fe):
			batch.AddConflict(fe, 1000+int64(i))
		default:
			t.Fatalf("block %d: %v", i, err)
		}
		if err := batch.Commit(); err != nil {
			t.Fatal(err)
		}
		batch.Close()
	}
	var got []Conflict
	a := gk.Address()
	s.st.Conflicts(&a, func(c Conflict) error { got = append(got, c); return nil })
	want := []Conflict{{Account: a, Previous: h.Frontier, DetectedAt: 1001,
		Blocks: []ledger.Hash{blocks[0].Hash, blocks[1].Hash, blocks[2].Hash}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("conflicts = %+v, want %+v", got, want)
	}
	if fb, found, err := s.st.ForkBlock(blocks[2].Hash); err != nil || !found || fb.Hash != blocks[2].Hash {
		t.Errorf("ForkBlock = %v, %v, %v", fb, found, err)
	}
	other := s.keys[3].Address()
	n := 0
	s.st.Conflicts(&other, func(Conflict) error { n++; return nil })
	if n != 0 {
		t.Errorf("conflicts of an account without forks: %d", n)
	}
}

// TestSequenceNumbersNeverReused: after the latest blocks are rolled back
// and the store reopened, new blocks get numbers above every number given
// out before, so a peer syncing from a cursor never skips them.
func TestSequenceNumbersNeverReused(t *testing.T) {
	fs := vfs.NewMem()
	st, err := Open("db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	gk := wallet.NewKey()
	g := ledger.NewGenesis(gk.Private(), ledger.NewAmount(1000), 1)
	if err := st.Init(g, "net"); err != nil {
		t.Fatal(err)
	}
	c := wallet.NewChains(ledger.DevWork, gk, g)
	s1, err := c.Send(gk, ledger.Address{9}, 1)
	if err != nil {
		t.Fatal(err)
	}
	apply := func(f func(b *Batch) error) {
		t.Helper()
		b := st.NewBatch()
		defer b.Close()
		if err := f(b); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	apply(func(b *Batch) error {
		d, err := ledger.Apply(b, s1)
		if err != nil {
			return err
		}
		return b.Apply(d)
	})
	high := st.LastSeq()
	apply(func(b *Batch) error {
		d, err := ledger.Rollback(b, gk.Address())
		if err != nil {
			return err
		}
		return b.Apply(d)
	})
	st.Close()
	if st, err = Open("db", Options{FS: fs}); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := st.LastSeq(); got < high {
		t.Errorf("after rollback and reopen, LastSeq = %d, below the %d given out before", got, high)
	}
}

// TestOpenLocked: a store that is open already is refused with ErrLocked,
// which the CLI turns into "stop the node first".
func TestOpenLocked(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Errorf("second Open: got %v, want ErrLocked", err)
	}
}

// isAccept reports whether h is a lease_accept in mem.
func isAccept(mem *ledger.Mem, h ledger.Hash) bool {
	e, found, _ := mem.Entry(h)
	return found && e.Block.Type == ledger.TypeLeaseAccept
}
