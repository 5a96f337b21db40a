package ledger_test

import (
	"crypto/ed25519"
	"errors"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// t0 is the genesis time of test worlds: 2026-01-01T00:00:00Z in ms.
const t0 = 1767225600000

var supply = ledger.NewAmount(1_000_000_000_000_000)

// world is a ledger with a funded genesis key, driven through the core the
// way a node drives it: Check, Apply, Commit, then Audit.
type world struct {
	t       *testing.T
	m       *ledger.Mem
	p       ledger.Params
	genesis wallet.Key
	now     int64
	gov     ledger.Governance // for lease blocks; nil refuses them
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, m: ledger.NewMem(), genesis: wallet.NewKey(), now: t0}
	g := ledger.NewGenesis(w.genesis.Private(), supply, t0)
	if err := ledger.CheckGenesis(g); err != nil {
		t.Fatalf("CheckGenesis: %v", err)
	}
	w.m.Commit(ledger.GenesisDelta(g))
	w.audit()
	return w
}

func (w *world) audit() ledger.AuditReport {
	w.t.Helper()
	r, err := ledger.Audit(w.m)
	if err != nil {
		w.t.Fatalf("audit: %v", err)
	}
	return r
}

func (w *world) head(a ledger.Address) wallet.Head {
	acct, found, _ := w.m.Account(a)
	if !found {
		return wallet.Head{Account: a}
	}
	return wallet.HeadOf(acct)
}

// tick advances the world clock by ms and returns it.
func (w *world) tick(ms int64) int64 { w.now += ms; return w.now }

// submit runs b through Check and Apply, commits it when valid, and audits.
func (w *world) submit(b *ledger.Block) error {
	w.t.Helper()
	if err := w.p.Check(b); err != nil {
		return err
	}
	v := ledger.View(w.m)
	if w.gov != nil {
		v = ledger.WithGovernance(w.m, w.gov)
	}
	d, err := ledger.Apply(v, b)
	if err != nil {
		return err
	}
	w.m.Commit(d)
	w.audit()
	return nil
}

func (w *world) must(b *ledger.Block, err error) *ledger.Block {
	w.t.Helper()
	if err != nil {
		w.t.Fatalf("building block: %v", err)
	}
	return b
}

func (w *world) ok(b *ledger.Block) *ledger.Block {
	w.t.Helper()
	if err := w.submit(b); err != nil {
		w.t.Fatalf("submit %s: %v", b.Type, err)
	}
	return b
}

func signed(b *ledger.Block, k wallet.Key) *ledger.Block { b.Sign(k.Private()); return b }

func (w *world) send(from wallet.Key, to ledger.Address, amt uint64, asset ledger.Asset) *ledger.Block {
	w.t.Helper()
	return w.ok(signed(w.must(wallet.Send(w.head(from.Address()), to, ledger.NewAmount(amt), asset, w.tick(1))), from))
}

func (w *world) receive(k wallet.Key, send *ledger.Block) *ledger.Block {
	w.t.Helper()
	p := ledger.Pending{Send: send.Hash, Source: send.Account, Destination: send.Destination, Amount: send.Amount, Asset: send.Asset}
	return w.ok(signed(w.must(wallet.Receive(w.head(k.Address()), p, w.tick(1))), k))
}

// funded returns a new key holding amt native.
func (w *world) funded(amt uint64) wallet.Key {
	k := wallet.NewKey()
	w.receive(k, w.send(w.genesis, k.Address(), amt, ledger.Native))
	return k
}

func TestApplyRules(t *testing.T) {
	tests := []struct {
		name string
		// block builds the block under test in a world prepared by it.
		block func(w *world) *ledger.Block
		want  error
	}{
		{"send", func(w *world) *ledger.Block {
			a := w.funded(100)
			return signed(w.must(wallet.Send(w.head(a.Address()), wallet.NewKey().Address(), ledger.NewAmount(40), ledger.Native, w.tick(1))), a)
		}, nil},
		{"send of the whole balance", func(w *world) *ledger.Block {
			a := w.funded(100)
			return signed(w.must(wallet.Send(w.head(a.Address()), wallet.NewKey().Address(), ledger.NewAmount(100), ledger.Native, w.tick(1))), a)
		}, nil},
		{"send more than the balance", func(w *world) *ledger.Block {
			a := w.funded(100)
			h := w.head(a.Address())
			h.Balances[0] = ledger.NewAmount(1000) // pretend
			return signed(w.must(wallet.Send(h, wallet.NewKey().Address(), ledger.NewAmount(101), ledger.Native, w.tick(1))), a)
		}, ledger.ErrInsufficientBalance},
		{"send with a wrong balance", func(w *world) *ledger.Block {
			a := w.funded(100)
			b := w.must(wallet.Send(w.head(a.Address()), wallet.NewKey().Address(), ledger.NewAmount(10), ledger.Native, w.tick(1)))
			b.Balance = ledger.NewAmount(95)
			b.Seal()
			return signed(b, a)
		}, ledger.ErrBadBalance},
		{"send of stable the account lacks", func(w *world) *ledger.Block {
			a := w.funded(100)
			h := w.head(a.Address())
			h.Balances[1] = ledger.NewAmount(50)
			return signed(w.must(wallet.Send(h, wallet.NewKey().Address(), ledger.NewAmount(10), ledger.Stable, w.tick(1))), a)
		}, ledger.ErrInsufficientBalance},
		{"send to itself", func(w *world) *ledger.Block {
			a := w.funded(100)
			return signed(w.must(wallet.Send(w.head(a.Address()), a.Address(), ledger.NewAmount(1), ledger.Native, w.tick(1))), a)
		}, ledger.ErrMalformed},
		{"send with a source", func(w *world) *ledger.Block {
			a := w.funded(100)
			b := w.must(wallet.Send(w.head(a.Address()), wallet.NewKey().Address(), ledger.NewAmount(1), ledger.Native, w.tick(1)))
			b.Source = ledger.Hash{1}
			b.Seal()
			return signed(b, a)
		}, ledger.ErrMalformed},
		{"send as a first block", func(w *world) *ledger.Block {
			a := wallet.NewKey()
			b := &ledger.Block{Type: ledger.TypeSend, Account: a.Address(), Asset: ledger.Native, Timestamp: w.tick(1),
				Destination: w.genesis.Address(), Amount: ledger.NewAmount(1)}
			b.Seal()
			return signed(b, a)
		}, ledger.ErrInsufficientBalance},
		{"bad signature", func(w *world) *ledger.Block {
			a := w.funded(100)
			return signed(w.must(wallet.Send(w.head(a.Address()), wallet.NewKey().Address(), ledger.NewAmount(1), ledger.Native, w.tick(1))), wallet.NewKey())
		}, ledger.ErrBadSignature},
		{"missing signature", func(w *world) *ledger.Block {
			a := w.funded(100)
			return w.must(wallet.Send(w.head(a.Address()), wallet.NewKey().Address(), ledger.NewAmount(1), ledger.Native, w.tick(1)))
		}, ledger.ErrBadSignature},
		{"hash not matching contents", func(w *world) *ledger.Block {
			a := w.funded(100)
			b := w.must(wallet.Send(w.head(a.Address()), wallet.NewKey().Address(), ledger.NewAmount(1), ledger.Native, w.tick(1)))
			signed(b, a)
			b.Amount = ledger.NewAmount(2)
			return b
		}, ledger.ErrBadHash},
		{"previous unknown", func(w *world) *ledger.Block {
			a := w.funded(100)
			h := w.head(a.Address())
			h.Frontier = ledger.Hash{7}
			return signed(w.must(wallet.Send(h, wallet.NewKey().Address(), ledger.NewAmount(1), ledger.Native, w.tick(1))), a)
		}, ledger.ErrGapPrevious},
		{"previous of another account", func(w *world) *ledger.Block {
			a := w.funded(100)
			h := w.head(a.Address())
			h.Frontier = w.head(w.genesis.Address()).Frontier
			return signed(w.must(wallet.Send(h, wallet.NewKey().Address(), ledger.NewAmount(1), ledger.Native, w.tick(1))), a)
		}, ledger.ErrWrongPrevious},
		{"fork", func(w *world) *ledger.Block {
			a := w.funded(100)
			h := w.head(a.Address())
			w.ok(signed(w.must(wallet.Send(h, wallet.NewKey().Address(), ledger.NewAmount(1), ledger.Native, w.tick(1))), a))
			return signed(w.must(wallet.Send(h, wallet.NewKey().Address(), ledger.NewAmount(2), ledger.Native, w.tick(1))), a)
		}, ledger.ErrFork},
		{"fork attempted by a stranger", func(w *world) *ledger.Block {
			// Someone else's block on a's frontier, signed as if multisig
			// by the stranger's own key: no conflict may come of it.
			a, stranger := w.funded(100), wallet.NewKey()
			h := w.head(a.Address())
			w.ok(signed(w.must(wallet.Send(h, wallet.NewKey().Address(), ledger.NewAmount(1), ledger.Native, w.tick(1))), a))
			b := w.must(wallet.Send(h, stranger.Address(), ledger.NewAmount(99), ledger.Native, w.tick(1)))
			b.AddSignature(stranger.Private())
			return b
		}, ledger.ErrUnauthorized},
		{"fork of the first block", func(w *world) *ledger.Block {
			a := w.funded(100)
			p := ledger.Pending{Send: ledger.Hash{}, Destination: a.Address(), Amount: ledger.NewAmount(1), Asset: ledger.Native}
			s := w.send(w.genesis, a.Address(), 1, ledger.Native)
			p.Send, p.Source = s.Hash, s.Account
			return signed(w.must(wallet.Receive(wallet.Head{Account: a.Address()}, p, w.tick(1))), a)
		}, ledger.ErrFork},
		{"timestamp before the previous block", func(w *world) *ledger.Block {
			a := w.funded(100)
			return signed(w.must(wallet.Send(wallet.Head{Account: a.Address(), Frontier: w.head(a.Address()).Frontier, Balances: w.head(a.Address()).Balances},
				wallet.NewKey().Address(), ledger.NewAmount(1), ledger.Native, t0-1)), a)
		}, ledger.ErrTimestamp},
		{"receive", func(w *world) *ledger.Block {
			a := wallet.NewKey()
			s := w.send(w.genesis, a.Address(), 5, ledger.Native)
			return signed(w.must(wallet.Receive(w.head(a.Address()), pendingOf(s), w.tick(1))), a)
		}, nil},
		{"receive of an unknown source", func(w *world) *ledger.Block {
			a := wallet.NewKey()
			p := ledger.Pending{Send: ledger.Hash{9}, Destination: a.Address(), Amount: ledger.NewAmount(5), Asset: ledger.Native}
			return signed(w.must(wallet.Receive(w.head(a.Address()), p, w.tick(1))), a)
		}, ledger.ErrGapSource},
		{"receive of a send already received", func(w *world) *ledger.Block {
			a := wallet.NewKey()
			s := w.send(w.genesis, a.Address(), 5, ledger.Native)
			w.receive(a, s)
			return signed(w.must(wallet.Receive(w.head(a.Address()), pendingOf(s), w.tick(1))), a)
		}, ledger.ErrAlreadyReceived},
		{"receive of a send to someone else", func(w *world) *ledger.Block {
			a := wallet.NewKey()
			s := w.send(w.genesis, wallet.NewKey().Address(), 5, ledger.Native)
			p := pendingOf(s)
			p.Destination = a.Address()
			return signed(w.must(wallet.Receive(w.head(a.Address()), p, w.tick(1))), a)
		}, ledger.ErrBadSource},
		{"receive of the wrong amount", func(w *world) *ledger.Block {
			a := wallet.NewKey()
			p := pendingOf(w.send(w.genesis, a.Address(), 5, ledger.Native))
			p.Amount = ledger.NewAmount(6)
			return signed(w.must(wallet.Receive(w.head(a.Address()), p, w.tick(1))), a)
		}, ledger.ErrBadAmount},
		{"receive as the wrong asset", func(w *world) *ledger.Block {
			a := wallet.NewKey()
			p := pendingOf(w.send(w.genesis, a.Address(), 5, ledger.Native))
			p.Asset = ledger.Stable
			return signed(w.must(wallet.Receive(w.head(a.Address()), p, w.tick(1))), a)
		}, ledger.ErrMalformed},
		{"receive with a wrong balance", func(w *world) *ledger.Block {
			a := wallet.NewKey()
			b := w.must(wallet.Receive(w.head(a.Address()), pendingOf(w.send(w.genesis, a.Address(), 5, ledger.Native)), w.tick(1)))
			b.Balance = ledger.NewAmount(50)
			b.Seal()
			return signed(b, a)
		}, ledger.ErrBadBalance},
		{"claim", func(w *world) *ledger.Block {
			a := wallet.NewKey()
			return signed(w.must(wallet.Claim(w.head(a.Address()), w.tick(1))), a)
		}, nil},
		{"second claim within 24 hours", func(w *world) *ledger.Block {
			a := wallet.NewKey()
			w.ok(signed(w.must(wallet.Claim(w.head(a.Address()), w.tick(1))), a))
			return signed(w.must(wallet.Claim(w.head(a.Address()), w.tick(ledger.ClaimInterval-1))), a)
		}, ledger.ErrClaimTooSoon},
		{"second claim after 24 hours", func(w *world) *ledger.Block {
			a := wallet.NewKey()
			w.ok(signed(w.must(wallet.Claim(w.head(a.Address()), w.tick(1))), a))
			return signed(w.must(wallet.Claim(w.head(a.Address()), w.tick(ledger.ClaimInterval))), a)
		}, nil},
		{"claim of another amount", func(w *world) *ledger.Block {
			a := wallet.NewKey()
			b := w.must(wallet.Claim(w.head(a.Address()), w.tick(1)))
			b.Amount, b.Balance = ledger.NewAmount(1e9), ledger.NewAmount(1e9)
			b.Seal()
			return signed(b, a)
		}, ledger.ErrBadAmount},
		{"claim of native", func(w *world) *ledger.Block {
			a := wallet.NewKey()
			b := w.must(wallet.Claim(w.head(a.Address()), w.tick(1)))
			b.Asset = ledger.Native
			b.Seal()
			return signed(b, a)
		}, ledger.ErrMalformed},
		{"lease is not accepted yet", func(w *world) *ledger.Block {
			a := w.funded(100)
			h := w.head(a.Address())
			b := &ledger.Block{Type: ledger.TypeLease, Account: a.Address(), Previous: h.Frontier, Balance: ledger.NewAmount(90),
				Asset: ledger.Native, Timestamp: w.tick(1), Destination: wallet.NewKey().Address(), Amount: ledger.NewAmount(10),
				VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60, AccessPubKey: a.Address()}
			b.Seal()
			return signed(b, a)
		}, ledger.ErrUnsupported},
		{"lease below the resource minimums", func(w *world) *ledger.Block {
			a := w.funded(100)
			b := &ledger.Block{Type: ledger.TypeLease, Account: a.Address(), Previous: w.head(a.Address()).Frontier, Balance: ledger.NewAmount(90),
				Asset: ledger.Native, Timestamp: w.tick(1), Destination: wallet.NewKey().Address(), Amount: ledger.NewAmount(10),
				VCPUs: 1, MemoryMB: 256, DiskGB: 5, Duration: 60, AccessPubKey: a.Address()}
			b.Seal()
			return signed(b, a)
		}, ledger.ErrMalformed},
		{"duplicate", func(w *world) *ledger.Block {
			a := wallet.NewKey()
			s := w.send(w.genesis, a.Address(), 5, ledger.Native)
			return s
		}, ledger.ErrDuplicate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			b := tt.block(w)
			before := w.audit()
			err := w.submit(b)
			if !errors.Is(err, tt.want) {
				t.Fatalf("submit: got %v, want %v", err, tt.want)
			}
			if err != nil {
				if !ledger.IsRule(err) && !errors.Is(err, ledger.ErrDuplicate) {
					t.Errorf("error %v is not a rule error", err)
				}
				if after := w.audit(); after != before {
					t.Errorf("refused block changed the ledger: %+v -> %+v", before, after)
				}
			}
		})
	}
}

func pendingOf(s *ledger.Block) ledger.Pending {
	return ledger.Pending{Send: s.Hash, Source: s.Account, Destination: s.Destination, Amount: s.Amount, Asset: s.Asset}
}

func TestForkErrorNamesBothBlocks(t *testing.T) {
	w := newWorld(t)
	a := w.funded(100)
	h := w.head(a.Address())
	first := w.ok(signed(w.must(wallet.Send(h, wallet.NewKey().Address(), ledger.NewAmount(1), ledger.Native, w.tick(1))), a))
	second := signed(w.must(wallet.Send(h, wallet.NewKey().Address(), ledger.NewAmount(2), ledger.Native, w.tick(1))), a)
	err := w.submit(second)
	var fe *ledger.ForkError
	if !errors.As(err, &fe) {
		t.Fatalf("submit fork: got %v, want *ForkError", err)
	}
	if fe.Account != a.Address() || fe.Previous != h.Frontier || fe.Existing != first.Hash || fe.Block.Hash != second.Hash {
		t.Errorf("ForkError = %+v, want account %s previous %s existing %s", fe, a.Address(), h.Frontier, first.Hash)
	}
}

func TestBalancesAndPending(t *testing.T) {
	w := newWorld(t)
	a, b := wallet.NewKey(), wallet.NewKey()
	s1 := w.send(w.genesis, a.Address(), 1000, ledger.Native)
	if _, found, _ := w.m.Pending(a.Address(), s1.Hash); !found {
		t.Fatal("send did not create a pending entry")
	}
	w.receive(a, s1)
	if _, found, _ := w.m.Pending(a.Address(), s1.Hash); found {
		t.Fatal("receive left the pending entry")
	}
	w.ok(signed(w.must(wallet.Claim(w.head(a.Address()), w.tick(1))), a))
	s2 := w.send(a, b.Address(), 30_000_000, ledger.Stable)
	w.receive(b, s2)
	acct, _, _ := w.m.Account(a.Address())
	if got, want := acct.Balance(ledger.Native), ledger.NewAmount(1000); got != want {
		t.Errorf("a native = %s, want %s", got, want)
	}
	if got, want := acct.Balance(ledger.Stable), ledger.NewAmount(70_000_000); got != want {
		t.Errorf("a stable = %s, want %s", got, want)
	}
	if acct.Height != 3 || acct.Frontier != s2.Hash {
		t.Errorf("a height %d frontier %s, want 3 and %s", acct.Height, acct.Frontier, s2.Hash)
	}
	r := w.audit()
	if r.Minted != ledger.NewAmount(ledger.FaucetAmount) || r.Supply != supply || r.Accounts != 3 || r.Blocks != 6 {
		t.Errorf("audit = %+v", r)
	}
}

func TestGenesisNamesARepresentative(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	rep := ledger.Address{7}
	g := ledger.NewGenesisWithRepresentative(priv, ledger.NewAmount(1000), 1, rep)
	if err := ledger.CheckGenesis(g); err != nil {
		t.Fatalf("CheckGenesis: %v", err)
	}
	d := ledger.GenesisDelta(g)
	if got := d.Account.Rep(); got != rep {
		t.Errorf("genesis account's representative = %s, want %s", got, rep)
	}
	plain := ledger.NewGenesis(priv, ledger.NewAmount(1000), 1)
	if got := ledger.GenesisDelta(plain).Account.Rep(); got != plain.Account {
		t.Errorf("without one named, the representative is %s, want the account itself", got)
	}
}

// TestClaimWindowInMilliseconds pins the faucet window in literal numbers:
// block timestamps are milliseconds and the window is one day, so a test
// that computed its times from ClaimInterval could not notice the constant
// written in seconds.
func TestClaimWindowInMilliseconds(t *testing.T) {
	tests := []struct {
		after int64 // ms between the first claim and the second
		want  error
	}{
		{3_600_000, ledger.ErrClaimTooSoon},  // one hour
		{86_399_999, ledger.ErrClaimTooSoon}, // a millisecond short of a day
		{86_400_000, nil},                    // a day
		{86_400_001, nil},
	}
	for _, tt := range tests {
		w := newWorld(t)
		a := wallet.NewKey()
		first := w.ok(signed(w.must(wallet.Claim(w.head(a.Address()), w.tick(1))), a))
		second := signed(w.must(wallet.Claim(w.head(a.Address()), first.Timestamp+tt.after)), a)
		if err := w.submit(second); !errors.Is(err, tt.want) {
			t.Errorf("second claim %d ms after the first: got %v, want %v", tt.after, err, tt.want)
		}
	}
}
