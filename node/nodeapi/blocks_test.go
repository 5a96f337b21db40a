package nodeapi_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// TestSubmitEachType submits a valid block of every accepted type and checks
// the answer and its effect on the ledger.
func TestSubmitEachType(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := wallet.NewKey()
	k1, k2, k3, k4 := wallet.NewKey(), wallet.NewKey(), wallet.NewKey(), wallet.NewKey()
	ks := keysetOf(2, k1, k2, k3)
	m := ledger.MultisigAddress(ks)

	var send *ledger.Block
	steps := []struct {
		name  string
		block func() *ledger.Block
	}{
		{"send", func() *ledger.Block {
			send = h.sendBlock(h.genesis, a.Address(), 1_000, ledger.Native)
			return send
		}},
		{"receive", func() *ledger.Block { return h.receiveBlock(a, send) }},
		{"claim", func() *ledger.Block { return h.claimBlock(a) }},
		{"multisig_open", func() *ledger.Block {
			return h.multisigned(wallet.MultisigOpen(ks, h.tick()), k1, k2)
		}},
		{"multisig_update", func() *ledger.Block {
			return h.multisigned(wallet.MultisigUpdate(h.head(m), keysetOf(1, k4), h.tick()), k2, k3)
		}},
	}
	for _, s := range steps {
		b := s.block()
		if got := b.Type.String(); got != s.name {
			t.Fatalf("test built a %s block for %s", got, s.name)
		}
		h.submit(b)
		var got ledger.Block
		h.getJSON("/blocks/"+b.Hash.String(), &got)
		if got.Hash != b.Hash || got.Type != b.Type || got.Account != b.Account {
			t.Errorf("%s: GET /blocks/%s = %+v, want the submitted block", s.name, b.Hash, got)
		}
		var fr map[string]string
		h.getJSON("/frontiers", &fr)
		if fr[b.Account.String()] != b.Hash.String() {
			t.Errorf("%s: frontier of %s is %s, want %s", s.name, b.Account, fr[b.Account.String()], b.Hash)
		}
		// The block as the node returns it (with confirmed) is accepted
		// again as it is: what rebroadcasting to another node sends.
		read := h.get("/blocks/" + b.Hash.String())
		if !bytes.Contains(read.body, []byte(`"confirmed"`)) {
			t.Fatalf("%s: GET /blocks/%s has no confirmed field: %s", s.name, b.Hash, read.body)
		}
		var again struct{ Hash ledger.Hash }
		h.okJSON(h.post("/blocks/"+s.name, read.body), s.name+": resubmitting the block as read", &again)
		if again.Hash != b.Hash {
			t.Errorf("%s: resubmitted as read: hash %s, want %s", s.name, again.Hash, b.Hash)
		}
	}

	var bal map[string]string
	h.getJSON("/accounts/"+a.Address().String()+"/balance", &bal)
	if bal["native"] != "1000" || bal["stable"] != "100000000" || len(bal) != 2 {
		t.Errorf("balance of %s = %v, want native 1000 and stable 100000000", a.Address(), bal)
	}
	var k ledger.Keyset
	h.getJSON("/accounts/"+m.String()+"/keyset", &k)
	if !k.Equal(keysetOf(1, k4)) {
		t.Errorf("keyset of %s = %+v, want 1 of [%s]", m, k, k4.Address())
	}
}

// TestSubmitBadRequests sends, to each block endpoint, bodies that are not
// acceptable blocks, and checks the 400 answer and that nothing changed.
func TestSubmitBadRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, c := wallet.NewKey(), wallet.NewKey()
	k1, k2, k3 := wallet.NewKey(), wallet.NewKey(), wallet.NewKey()
	ks := keysetOf(2, k1, k2, k3)
	m := ledger.MultisigAddress(ks)
	h.fund(a, 10_000)
	pend := h.send(h.genesis, a.Address(), 500, ledger.Native)
	h.submit(h.multisigned(wallet.MultisigOpen(ks, h.tick()), k1, k2))

	// One valid, unsubmitted block per endpoint; each case mutates a copy.
	templates := map[string]*ledger.Block{
		"send":            h.sendBlock(h.genesis, a.Address(), 7, ledger.Native),
		"receive":         h.receiveBlock(a, pend),
		"claim":           h.claimBlock(c),
		"multisig_open":   h.multisigned(wallet.MultisigOpen(keysetOf(1, k1, k3), h.tick()), k3),
		"multisig_update": h.multisigned(wallet.MultisigUpdate(h.head(m), keysetOf(2, k1, k2), h.tick()), k1, k3),
	}
	types := []string{"send", "receive", "claim", "multisig_open", "multisig_update"}

	raw := func(b *ledger.Block) []byte {
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	set := func(field string, v any) func(*testing.T, *ledger.Block) []byte {
		return func(t *testing.T, b *ledger.Block) []byte {
			return jsonWith(t, b, func(m map[string]any) { m[field] = v })
		}
	}
	hex := func(n int) string { return strings.Repeat("ab", n/2) + strings.Repeat("a", n%2) }
	cases := []struct {
		name      string
		body      func(t *testing.T, b *ledger.Block) []byte
		fragments []string
	}{
		{"malformed JSON", func(*testing.T, *ledger.Block) []byte { return []byte(`{"type": "send", "account": }`) }, []string{"malformed JSON"}},
		{"truncated JSON", func(_ *testing.T, b *ledger.Block) []byte { d := raw(b); return d[:len(d)/2] }, []string{"truncated"}},
		{"empty body", func(*testing.T, *ledger.Block) []byte { return nil }, []string{"empty body"}},
		{"JSON array", func(*testing.T, *ledger.Block) []byte { return []byte(`[]`) }, []string{"JSON object"}},
		{"JSON null", func(*testing.T, *ledger.Block) []byte { return []byte(`null`) }, []string{`"type" is required`}},
		{"oversized body", func(_ *testing.T, b *ledger.Block) []byte {
			// A valid block behind more than 64 KiB of whitespace.
			return append([]byte(strings.Repeat(" ", ledger.MaxBlockJSON+1024)), raw(b)...)
		}, nil},
		{"unknown field", set("colour", "blue"), []string{`unknown field "colour"`}},
		{"trailing data", func(_ *testing.T, b *ledger.Block) []byte { d := raw(b); return append(d, d...) }, []string{"after the JSON object"}},
		{"unknown block type", set("type", "transfer"), []string{`unknown block type "transfer"`}},
		{"account 63 hex chars", set("account", hex(63)), []string{"64 hex characters", "63"}},
		{"account 66 hex chars", set("account", hex(66)), []string{"64 hex characters", "66"}},
		{"account not hex", set("account", strings.Repeat("zz", 32)), []string{"not hexadecimal"}},
		{"previous 62 hex chars", set("previous", hex(62)), []string{"64 hex characters", "62"}},
		{"hash 65 hex chars", set("hash", hex(65)), []string{"64 hex characters", "65"}},
		{"signature 126 hex chars", set("signature", hex(126)), []string{"128 hex characters", "126"}},
		{"destination 10 hex chars", set("destination", hex(10)), []string{"64 hex characters", "10"}},
		{"source 70 hex chars", set("source", hex(70)), []string{"64 hex characters", "70"}},
		{"balance as a number", set("balance", 5), []string{"balance: want a string, got a number"}},
		{"negative balance", set("balance", "-5"), []string{`"-5"`}},
		{"unknown asset", set("asset", "gold"), []string{`"gold"`}},
		{"missing timestamp", func(t *testing.T, b *ledger.Block) []byte {
			return jsonWith(t, b, func(m map[string]any) { delete(m, "timestamp") })
		}, []string{`"timestamp" is required`}},
		{"hash of other contents", func(_ *testing.T, b *ledger.Block) []byte {
			b.Timestamp++ // without resealing
			return raw(b)
		}, []string{"hash does not match"}},
		{"bad signature", func(_ *testing.T, b *ledger.Block) []byte {
			if len(b.Signatures) > 0 {
				b.Signatures[0].Signature[0] ^= 1
			} else {
				b.Signature[0] ^= 1
			}
			return raw(b)
		}, []string{"bad signature"}},
		{"insufficient work", func(_ *testing.T, b *ledger.Block) []byte {
			b.PowNonce = h.failingNonce(b)
			return raw(b)
		}, []string{"insufficient proof of work"}},
	}

	for i, typ := range types {
		for _, tc := range cases {
			what := "POST /blocks/" + typ + ": " + tc.name
			before := h.state()
			r := h.post("/blocks/"+typ, tc.body(t, templates[typ].Clone()))
			msg := checkError(t, r, http.StatusBadRequest, what, tc.fragments...)
			if tc.name == "oversized body" && !strings.Contains(msg, "too large") && !strings.Contains(msg, "exceeds") {
				t.Errorf("%s: error %q does not say the body is too large", what, msg)
			}
			h.unchanged(before, what)
		}
		// A block of another type is refused by this endpoint, whatever it is.
		other := templates[types[(i+1)%len(types)]]
		what := "POST /blocks/" + typ + " with a " + other.Type.String() + " block"
		before := h.state()
		r := h.post("/blocks/"+typ, other)
		checkError(t, r, http.StatusBadRequest, what, "/blocks/"+typ+" takes "+typ+" blocks", "got "+other.Type.String())
		h.unchanged(before, what)
	}

	// The unmodified templates were acceptable all along.
	for _, typ := range types {
		h.submit(templates[typ])
	}
}

// TestSubmitLedgerRules checks that blocks breaking a ledger rule are
// refused with 400, an explanation, and no change to the ledger.
func TestSubmitLedgerRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, b := wallet.NewKey(), wallet.NewKey()
	s0, _ := h.fund(a, 1_000)
	h.fund(b, 1_000)
	toA := h.send(h.genesis, a.Address(), 500, ledger.Native)
	toB := h.send(h.genesis, b.Address(), 300, ledger.Native)

	// sendFromA builds a send from a's frontier with the given changes,
	// then seals, signs and solves it.
	sendFromA := func(edit func(b *ledger.Block)) *ledger.Block {
		blk := h.must(wallet.Send(h.head(a.Address()), b.Address(), ledger.NewAmount(10), ledger.Native, h.tick()))
		edit(blk)
		blk.Seal()
		return h.signed(blk, a)
	}
	receiveByA := func(edit func(b *ledger.Block)) *ledger.Block {
		blk := h.must(wallet.Receive(h.head(a.Address()), pendingOf(toA), h.tick()))
		edit(blk)
		blk.Seal()
		return h.signed(blk, a)
	}
	claimByA := func(edit func(b *ledger.Block)) *ledger.Block {
		blk := h.must(wallet.Claim(h.head(a.Address()), h.tick()))
		edit(blk)
		blk.Seal()
		return h.signed(blk, a)
	}

	cases := []struct {
		name      string
		block     func() *ledger.Block
		fragments []string
	}{
		{"insufficient balance", func() *ledger.Block {
			return sendFromA(func(b *ledger.Block) { b.Amount, b.Balance = ledger.NewAmount(1_001), ledger.NewAmount(0) })
		}, []string{"insufficient balance", "1001"}},
		{"insufficient balance of the other asset", func() *ledger.Block {
			return sendFromA(func(b *ledger.Block) { b.Asset = ledger.Stable })
		}, []string{"insufficient balance"}},
		{"send with wrong balance", func() *ledger.Block {
			return sendFromA(func(b *ledger.Block) { b.Balance = ledger.NewAmount(999) })
		}, []string{"wrong balance", "990"}},
		{"receive with wrong balance", func() *ledger.Block {
			return receiveByA(func(b *ledger.Block) { b.Balance = ledger.NewAmount(1_000) })
		}, []string{"wrong balance", "1500"}},
		{"receive with wrong amount", func() *ledger.Block {
			return receiveByA(func(b *ledger.Block) { b.Amount = ledger.NewAmount(499); b.Balance = ledger.NewAmount(1_499) })
		}, []string{"wrong amount"}},
		{"receive with wrong asset", func() *ledger.Block {
			return receiveByA(func(b *ledger.Block) { b.Asset = ledger.Stable; b.Balance = ledger.NewAmount(500) })
		}, []string{"source sent native"}},
		{"unknown source", func() *ledger.Block {
			return receiveByA(func(b *ledger.Block) { b.Source = randomHash() })
		}, []string{"source block not found"}},
		{"already received source", func() *ledger.Block {
			return receiveByA(func(b *ledger.Block) { b.Source = s0.Hash; b.Amount = s0.Amount; b.Balance = ledger.NewAmount(2_000) })
		}, []string{"already received", s0.Hash.String()}},
		{"source sent to another account", func() *ledger.Block {
			return receiveByA(func(b *ledger.Block) { b.Source = toB.Hash; b.Amount = toB.Amount; b.Balance = ledger.NewAmount(1_300) })
		}, []string{"not a send to this account"}},
		{"source is not a send", func() *ledger.Block {
			return receiveByA(func(b *ledger.Block) { b.Source = h.gblock.Hash })
		}, []string{"not a send to this account"}},
		{"unknown previous", func() *ledger.Block {
			return sendFromA(func(b *ledger.Block) { b.Previous = randomHash() })
		}, []string{"previous block not found"}},
		{"previous is another account's block", func() *ledger.Block {
			return sendFromA(func(b *ledger.Block) { b.Previous = h.gblock.Hash })
		}, []string{"wrong previous", h.genesis.Address().String()}},
		{"new account whose previous is another account's block", func() *ledger.Block {
			c := wallet.NewKey()
			blk := h.must(wallet.Claim(wallet.Head{Account: c.Address(), Frontier: toB.Hash}, h.tick()))
			return h.signed(blk, c)
		}, []string{"wrong previous"}},
		{"timestamp before the previous block's", func() *ledger.Block {
			return sendFromA(func(b *ledger.Block) { b.Timestamp = t0 - 60_000 })
		}, []string{"bad timestamp", "before the previous block"}},
		{"send to itself", func() *ledger.Block {
			return sendFromA(func(b *ledger.Block) { b.Destination = a.Address() })
		}, []string{"destination must differ"}},
		{"send without destination", func() *ledger.Block {
			return sendFromA(func(b *ledger.Block) { b.Destination = ledger.ZeroAddress })
		}, []string{"requires destination"}},
		{"send with lease fields", func() *ledger.Block {
			return sendFromA(func(b *ledger.Block) { b.VCPUs = 2 })
		}, []string{"must not carry"}},
		{"unsigned", func() *ledger.Block {
			blk := h.must(wallet.Send(h.head(a.Address()), b.Address(), ledger.NewAmount(10), ledger.Native, h.tick()))
			return h.solve(blk)
		}, []string{"signature is required"}},
		{"signed by another key", func() *ledger.Block {
			blk := h.must(wallet.Send(h.head(a.Address()), b.Address(), ledger.NewAmount(10), ledger.Native, h.tick()))
			return h.signed(blk, b)
		}, []string{"bad signature"}},
		{"multisig signatures on a single-key account", func() *ledger.Block {
			blk := h.must(wallet.Send(h.head(a.Address()), b.Address(), ledger.NewAmount(10), ledger.Native, h.tick()))
			return h.multisigned(blk, a)
		}, []string{"not multisig"}},
		{"multisig_update of a single-key account", func() *ledger.Block {
			return h.signed(wallet.MultisigUpdate(h.head(a.Address()), keysetOf(1, b), h.tick()), a)
		}, []string{"account is not multisig"}},
		{"claim of the wrong amount", func() *ledger.Block {
			return claimByA(func(b *ledger.Block) { b.Amount = ledger.NewAmount(200_000_000); b.Balance = b.Amount })
		}, []string{"wrong amount"}},
		{"claim of native", func() *ledger.Block {
			return claimByA(func(b *ledger.Block) { b.Asset = ledger.Native; b.Balance = ledger.NewAmount(100_001_000) })
		}, []string{"claim asset must be stable"}},
		{"claim with wrong balance", func() *ledger.Block {
			return claimByA(func(b *ledger.Block) { b.Balance = ledger.NewAmount(1) })
		}, []string{"wrong balance"}},
	}
	for _, tc := range cases {
		h.refuse(tc.block(), tc.name, tc.fragments...)
	}

	// The pending send refused above is still receivable.
	h.receive(a, toA)
	h.receive(b, toB)
}

// TestFork submits two blocks with the same previous: the second is refused
// and recorded as a conflict.
func TestFork(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, b := wallet.NewKey(), wallet.NewKey()
	g := h.genesis.Address()

	kept := h.send(h.genesis, a.Address(), 10, ledger.Native)
	// Another block on the same previous (the genesis block).
	forkBlk := h.signed(h.must(wallet.Send(wallet.HeadOf(ledger.Account{Address: g, Frontier: h.gblock.Hash,
		Balances: [2]ledger.Amount{ledger.NewAmount(supply)}}), b.Address(), ledger.NewAmount(20), ledger.Native, h.tick())), h.genesis)
	detected := h.clock.now()
	h.refuse(forkBlk, "fork", "fork", kept.Hash.String())

	wantConflict := func(what string, raw []byte) {
		t.Helper()
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil || len(list) != 1 {
			t.Fatalf("%s = %s, want one conflict", what, raw)
		}
		checkFields(t, list[0], what, "account_address", "previous_hash", "block_hashes", "detected_at")
		var c struct {
			AccountAddress string   `json:"account_address"`
			PreviousHash   string   `json:"previous_hash"`
			BlockHashes    []string `json:"block_hashes"`
			DetectedAt     string   `json:"detected_at"`
		}
		if err := json.Unmarshal(list[0], &c); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if c.AccountAddress != g.String() {
			t.Errorf("%s: account_address %s, want %s", what, c.AccountAddress, g)
		}
		if c.PreviousHash != h.gblock.Hash.String() {
			t.Errorf("%s: previous_hash %s, want %s", what, c.PreviousHash, h.gblock.Hash)
		}
		if want := []string{kept.Hash.String(), forkBlk.Hash.String()}; len(c.BlockHashes) != 2 ||
			c.BlockHashes[0] != want[0] || c.BlockHashes[1] != want[1] {
			t.Errorf("%s: block_hashes %v, want [kept, refused] %v", what, c.BlockHashes, want)
		}
		at, err := time.Parse(time.RFC3339, c.DetectedAt)
		if err != nil {
			t.Errorf("%s: detected_at %q is not RFC 3339: %v", what, c.DetectedAt, err)
		} else if !at.Equal(detected) {
			t.Errorf("%s: detected_at %s, want %s", what, at, detected.UTC())
		}
	}
	wantConflict("GET /conflicts", h.getJSON("/conflicts", nil).body)
	wantConflict("GET /conflicts/{genesis}", h.getJSON("/conflicts/"+g.String(), nil).body)
	if r := h.getJSON("/conflicts/"+a.Address().String(), nil); strings.TrimSpace(r.String()) != "[]" {
		t.Errorf("GET /conflicts/{other account} = %s, want []", r)
	}

	// Submitting the refused block again is refused again and records
	// nothing new.
	h.advance(time.Minute)
	h.refuse(forkBlk, "fork resubmitted", "fork")
	wantConflict("GET /conflicts after resubmitting", h.getJSON("/conflicts", nil).body)

	// The kept branch goes on.
	h.receive(a, kept)
	h.send(h.genesis, b.Address(), 5, ledger.Native)
}

// TestClockSkew checks the submission-time clock check: a block may be at
// most 10 minutes from the node's clock either way.
func TestClockSkew(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := wallet.NewKey()
	now := h.clock.ms.Load()
	const skew = 10 * 60 * 1000

	sendAt := func(ts int64) *ledger.Block {
		b := h.must(wallet.Send(h.head(h.genesis.Address()), a.Address(), ledger.NewAmount(1), ledger.Native, ts))
		b.Timestamp = ts // even before the frontier's, which the wallet would not do
		b.Seal()
		return h.signed(b, h.genesis)
	}
	for _, tc := range []struct {
		name string
		ts   int64
	}{
		{"10 minutes and 1 ms ahead", now + skew + 1},
		{"one hour ahead", now + 60*60*1000},
		{"10 minutes and 1 ms behind", now - skew - 1},
		{"one day behind", now - 24*60*60*1000},
		// Gaps past what a time.Duration holds (292 years): 2^58 ms
		// times 10^6 wraps to exactly 0 ns in int64 arithmetic.
		{"2^58 ms ahead", now + 1<<58},
		{"as far ahead as a timestamp goes", math.MaxInt64},
	} {
		b := sendAt(tc.ts)
		if b.Timestamp != tc.ts {
			t.Fatalf("%s: block timestamp %d, want %d", tc.name, b.Timestamp, tc.ts)
		}
		h.refuse(b, tc.name, "from the node's clock", "10m0s")
	}
	// The bounds themselves are allowed.
	h.submit(sendAt(now - skew))
	h.submit(sendAt(now + skew))

	// Claims are checked the same way.
	c := wallet.NewKey()
	late := h.signed(h.must(wallet.Claim(wallet.Head{Account: c.Address()}, now+skew+1)), c)
	h.refuse(late, "claim 10 minutes and 1 ms ahead", "from the node's clock")
}

// TestIdempotentResubmit resubmits accepted blocks: each answers 200 with
// the same hash and changes nothing, even once its timestamp is far from
// the node's clock.
func TestIdempotentResubmit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := wallet.NewKey()
	k1, k2 := wallet.NewKey(), wallet.NewKey()
	send, recv := h.fund(a, 100)
	claim := h.submit(h.claimBlock(a))
	open := h.submit(h.multisigned(wallet.MultisigOpen(keysetOf(2, k1, k2), h.tick()), k1, k2))
	blocks := []*ledger.Block{h.gblock, send, recv, claim, open}

	for _, age := range []time.Duration{0, time.Hour} {
		h.advance(age)
		before := h.state()
		for _, b := range blocks {
			h.submit(b)
		}
		h.unchanged(before, "resubmitting accepted blocks")
	}
	// A resubmitted claim is not a second claim.
	var bal map[string]string
	h.getJSON("/accounts/"+a.Address().String()+"/balance", &bal)
	if bal["stable"] != "100000000" {
		t.Errorf("stable balance after resubmitting a claim = %q, want 100000000", bal["stable"])
	}
}

// TestIdempotentResubmitRecent resubmits blocks, the genesis block among
// them, while their timestamps are still within the clock-skew window.
func TestIdempotentResubmitRecent(t *testing.T) {
	t.Parallel()
	h := newHarnessAt(t, time.Minute)
	a := wallet.NewKey()
	send, recv := h.fund(a, 100)
	h.send(h.genesis, a.Address(), 1, ledger.Native)
	before := h.state()
	for _, b := range []*ledger.Block{h.gblock, send, recv} {
		h.submit(b)
	}
	h.unchanged(before, "resubmitting recent blocks")
}

// TestClaimRateLimit checks the faucet: 100 stable units per claim, at most
// once per 24 hours of block time.
func TestClaimRateLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := wallet.NewKey()
	first := h.submit(h.claimBlock(c))
	var bal map[string]string
	h.getJSON("/accounts/"+c.Address().String()+"/balance", &bal)
	if len(bal) != 1 || bal["stable"] != "100000000" {
		t.Errorf("balance after a claim = %v, want only stable 100000000", bal)
	}

	h.refuse(h.claimBlock(c), "claim 1 ms later", "rate-limited")
	h.clock.ms.Store(first.Timestamp + ledger.ClaimInterval - 1)
	h.refuse(h.signed(h.must(wallet.Claim(h.head(c.Address()), h.clock.ms.Load())), c), "claim 1 ms before 24 hours", "rate-limited")
	h.clock.ms.Store(first.Timestamp + ledger.ClaimInterval)
	h.submit(h.signed(h.must(wallet.Claim(h.head(c.Address()), h.clock.ms.Load())), c))

	h.getJSON("/accounts/"+c.Address().String()+"/balance", &bal)
	if bal["stable"] != "200000000" {
		t.Errorf("stable balance after two claims = %q, want 200000000", bal["stable"])
	}
}

// TestMultisigFlow opens a 2-of-3 account, receives into it and sends from
// it with two signatures, rotates its keyset, and checks the old keys lose
// control.
func TestMultisigFlow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	k1, k2, k3, k4, outsider := wallet.NewKey(), wallet.NewKey(), wallet.NewKey(), wallet.NewKey(), wallet.NewKey()
	ks := keysetOf(2, k1, k2, k3)
	m := ledger.MultisigAddress(ks)
	path := "/accounts/" + m.String()

	h.refuse(h.multisigned(wallet.MultisigOpen(ks, h.tick()), k1), "open with one signature", "not authorised", "threshold is 2")
	h.refuse(h.multisigned(wallet.MultisigOpen(ks, h.tick()), k1, outsider), "open signed by an outsider", "not authorised", "not in the account's keyset")
	h.refuse(h.solve(wallet.MultisigOpen(ks, h.tick())), "open without signatures", "not authorised")
	wrongAddr := wallet.MultisigOpen(ks, h.tick())
	wrongAddr.Account = k1.Address()
	wrongAddr.Seal()
	h.refuse(h.multisigned(wrongAddr, k1, k2), "open at an address not derived from the keyset", "derived from the keyset")
	if r := h.get(path); r.status != http.StatusNotFound {
		t.Fatalf("GET %s before opening: status %d, want 404", path, r.status)
	}

	open := h.submit(h.multisigned(wallet.MultisigOpen(ks, h.tick()), k1, k3))
	var got ledger.Keyset
	r := h.getJSON(path+"/keyset", &got)
	checkFields(t, r.body, "GET keyset", "keys", "threshold")
	if !got.Equal(ks) {
		t.Errorf("keyset = %+v, want %+v", got, ks)
	}
	h.refuse(h.multisigned(wallet.MultisigOpen(ks, h.tick()), k1, k2), "opening the account again", "fork", open.Hash.String())

	// Receive into it: two signatures needed.
	in := h.send(h.genesis, m, 500, ledger.Native)
	rb := h.must(wallet.Receive(h.head(m), pendingOf(in), h.tick()))
	h.refuse(h.signed(rb.Clone(), k1), "receive with a single-key signature", "bad signature")
	h.refuse(h.multisigned(rb.Clone(), k2), "receive with one of two signatures", "not authorised", "threshold is 2")
	h.refuse(h.multisigned(rb.Clone(), k2, outsider), "receive signed by an outsider", "not authorised")
	h.submit(h.multisigned(rb, k2, k3))

	// Send from it.
	sb := h.must(wallet.Send(h.head(m), k4.Address(), ledger.NewAmount(100), ledger.Native, h.tick()))
	h.refuse(h.multisigned(sb.Clone(), k1), "send with one of two signatures", "threshold is 2")
	out := h.submit(h.multisigned(sb, k1, k2))
	var pend []map[string]string
	h.getJSON("/pending/"+k4.Address().String(), &pend)
	if len(pend) != 1 || pend[0]["send_hash"] != out.Hash.String() || pend[0]["source"] != m.String() {
		t.Errorf("pending for %s = %v, want the send from the multisig account", k4.Address(), pend)
	}

	// Rotate to 1-of-[k4].
	next := keysetOf(1, k4)
	up := wallet.MultisigUpdate(h.head(m), next, h.tick())
	h.refuse(h.multisigned(up.Clone(), k4), "update signed by the new key only", "not in the account's keyset")
	h.refuse(h.multisigned(up.Clone(), k2), "update with one of two signatures", "threshold is 2")
	h.submit(h.multisigned(up, k1, k3))
	h.getJSON(path+"/keyset", &got)
	if !got.Equal(next) {
		t.Errorf("keyset after update = %+v, want %+v", got, next)
	}

	// The old keys have lost control; the new one has it.
	sb2 := h.must(wallet.Send(h.head(m), k1.Address(), ledger.NewAmount(1), ledger.Native, h.tick()))
	h.refuse(h.multisigned(sb2.Clone(), k1, k2), "send signed by the old keyset", "not in the account's keyset")
	h.refuse(h.multisigned(sb2.Clone(), k1, k2, k3), "send signed by all old keys", "not in the account's keyset")
	h.submit(h.multisigned(sb2, k4))

	var acct map[string]json.RawMessage
	h.getJSON(path, &acct)
	if string(acct["balances"]) != `{"native":"399"}` || string(acct["block_count"]) != "5" {
		t.Errorf("multisig account = balances %s, block_count %s; want {\"native\":\"399\"} and 5", acct["balances"], acct["block_count"])
	}
	var chain []ledger.Block
	h.getJSON(path+"/chain", &chain)
	wantTypes := []ledger.BlockType{ledger.TypeMultisigOpen, ledger.TypeReceive, ledger.TypeSend, ledger.TypeMultisigUpdate, ledger.TypeSend}
	if len(chain) != len(wantTypes) {
		t.Fatalf("chain has %d blocks, want %d", len(chain), len(wantTypes))
	}
	for i, b := range chain {
		if b.Type != wantTypes[i] {
			t.Errorf("chain[%d] is %s, want %s", i, b.Type, wantTypes[i])
		}
		if i > 0 && len(b.Signatures) == 0 {
			t.Errorf("chain[%d] has no multisig signatures", i)
		}
	}
}

// TestLeaseBlocksNeedGovernance: a node whose engine has no state chain
// to judge lease blocks by refuses them with a clear reason and changes
// nothing (a node assembled by package stack always has one).
func TestLeaseBlocksNeedGovernance(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	k := wallet.NewKey()
	lease := &ledger.Block{Type: ledger.TypeLease, Account: k.Address(), Asset: ledger.Native, Timestamp: h.tick(),
		Destination: h.genesis.Address(), Amount: ledger.NewAmount(1), VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60,
		AccessPubKey: k.Address()}
	lease.Seal()
	h.signed(lease, k)
	before := h.state()
	r := h.post("/blocks/lease", jsonWith(t, lease, func(map[string]any) {}))
	checkError(t, r, http.StatusBadRequest, "POST /blocks/lease", "no governance state chain")
	h.unchanged(before, "POST /blocks/lease")
}
