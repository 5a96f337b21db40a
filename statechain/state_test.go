package statechain_test

import (
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/statechain"
)

var network = ledger.Hash{0x42}

// keys returns n deterministic keys, sorted by public key.
func keys(n int) []ed25519.PrivateKey {
	out := make([]ed25519.PrivateKey, n)
	for i := range out {
		seed := make([]byte, 32)
		seed[0] = byte(i + 1)
		out[i] = ed25519.NewKeyFromSeed(seed)
	}
	return out
}

func addr(k ed25519.PrivateKey) ledger.Address {
	var a ledger.Address
	copy(a[:], k.Public().(ed25519.PublicKey))
	return a
}

func keyset(threshold int, ks ...ed25519.PrivateKey) ledger.Keyset {
	var as []ledger.Address
	for _, k := range ks {
		as = append(as, addr(k))
	}
	return ledger.NewKeyset(threshold, as...)
}

// chain is a state chain governed by 2 of 3 keys.
func chain(t *testing.T) (*statechain.State, []ed25519.PrivateKey) {
	t.Helper()
	ks := keys(3)
	s, err := statechain.New(network, statechain.Genesis(network, keyset(2, ks...), 1000))
	if err != nil {
		t.Fatal(err)
	}
	return s, ks
}

func next(s *statechain.State, op statechain.Operation, key, value string, ts int64, signers ...ed25519.PrivateKey) *statechain.Block {
	tip := s.Tip()
	b := &statechain.Block{Index: tip.Index + 1, Previous: tip.Hash, Operation: op, Key: key, Value: value, Timestamp: ts}
	b.Seal(network)
	for _, k := range signers {
		b.Sign(k)
	}
	return b
}

func TestApply(t *testing.T) {
	s, ks := chain(t)
	other := keys(5)[4]
	type edit func(b *statechain.Block)
	cases := []struct {
		name    string
		op      statechain.Operation
		key     string
		value   string
		ts      int64
		signers []ed25519.PrivateKey
		edit    edit
		want    error
		detail  string
	}{
		{name: "set a parameter", op: statechain.OpSet, key: statechain.KeyAcceptTimeout, value: "60000", ts: 2000, signers: ks[:2]},
		{name: "set a key of one's own", op: statechain.OpSet, key: "x.note", value: `"hello"`, ts: 2000, signers: ks[1:]},
		{name: "all three sign", op: statechain.OpSet, key: "x.note", value: `{"a":1}`, ts: 2000, signers: ks},
		{name: "same timestamp as the tip", op: statechain.OpSet, key: "x.a", value: `1`, ts: 1000, signers: ks[:2]},
		{name: "one signature of two", op: statechain.OpSet, key: "x.a", value: `1`, ts: 2000, signers: ks[:1],
			want: statechain.ErrUnauthorized, detail: "1 of the keyset's keys signed; its threshold is 2"},
		{name: "a stranger signs", op: statechain.OpSet, key: "x.a", value: `1`, ts: 2000, signers: []ed25519.PrivateKey{ks[0], other},
			want: statechain.ErrUnauthorized, detail: "not a member"},
		{name: "forged signature", op: statechain.OpSet, key: "x.a", value: `1`, ts: 2000, signers: ks[:2],
			edit: func(b *statechain.Block) { b.Signatures[1].Signature[0] ^= 1 }, want: statechain.ErrBadSignature},
		{name: "hash not of the contents", op: statechain.OpSet, key: "x.a", value: `1`, ts: 2000, signers: ks[:2],
			edit: func(b *statechain.Block) { b.Value = "2" }, want: statechain.ErrBadHash},
		{name: "earlier than the tip", op: statechain.OpSet, key: "x.a", value: `1`, ts: 999, signers: ks[:2], want: statechain.ErrTimestamp},
		{name: "unknown parameter", op: statechain.OpSet, key: "lease.price", value: `1`, ts: 2000, signers: ks[:2],
			want: statechain.ErrInvalidValue, detail: "not a parameter"},
		{name: "timeout out of range", op: statechain.OpSet, key: statechain.KeyAcceptTimeout, value: "999", ts: 2000, signers: ks[:2], want: statechain.ErrInvalidValue},
		{name: "prices missing one", op: statechain.OpSet, key: statechain.KeyLeasePrices, value: `{"vcpu":"1","memory_mb":"1"}`, ts: 2000, signers: ks[:2],
			want: statechain.ErrInvalidValue, detail: "all required"},
		{name: "prices with an unknown field", op: statechain.OpSet, key: statechain.KeyLeasePrices, value: `{"vcpu":"1","memory_mb":"1","disk_gb":"1","gpu":"1"}`, ts: 2000, signers: ks[:2], want: statechain.ErrInvalidValue},
		{name: "negative price", op: statechain.OpSet, key: statechain.KeyLeasePrices, value: `{"vcpu":"-1","memory_mb":"1","disk_gb":"1"}`, ts: 2000, signers: ks[:2], want: statechain.ErrInvalidValue},
		{name: "stake ratio as float", op: statechain.OpSet, key: statechain.KeyStakeRatio, value: `5e-1`, ts: 2000, signers: ks[:2], want: statechain.ErrInvalidValue},
		{name: "stake ratio too precise", op: statechain.OpSet, key: statechain.KeyStakeRatio, value: `0.00001`, ts: 2000, signers: ks[:2], want: statechain.ErrInvalidValue},
		{name: "timekeepers: half is no threshold", op: statechain.OpSet, key: statechain.KeyTimekeepers,
			value: `{"keys":["` + addr(ks[0]).String() + `","` + addr(ks[1]).String() + `"],"threshold":1}`, ts: 2000, signers: ks[:2],
			want: statechain.ErrInvalidValue, detail: "more than half"},
		{name: "timekeepers: a key twice", op: statechain.OpSet, key: statechain.KeyTimekeepers,
			value: `{"keys":["` + addr(ks[0]).String() + `","` + addr(ks[0]).String() + `"]}`, ts: 2000, signers: ks[:2], want: statechain.ErrInvalidValue},
		{name: "user value not JSON", op: statechain.OpSet, key: "x.a", value: `hello`, ts: 2000, signers: ks[:2], want: statechain.ErrInvalidValue},
		{name: "delete a key never set", op: statechain.OpDelete, key: "x.a", ts: 2000, signers: ks[:2], want: statechain.ErrInvalidValue, detail: "not set"},
		{name: "key with capitals", op: statechain.OpSet, key: "X.a", value: `1`, ts: 2000, signers: ks[:2], want: statechain.ErrMalformed},
		{name: "update_keyset with a key", op: statechain.OpUpdateKeyset, key: "k", value: statechain.KeysetValue(keyset(1, ks[0])), ts: 2000, signers: ks[:2], want: statechain.ErrMalformed},
		{name: "keyset threshold above its keys", op: statechain.OpUpdateKeyset, value: `{"keys":["` + addr(ks[0]).String() + `"],"threshold":2}`, ts: 2000, signers: ks[:2], want: statechain.ErrInvalidValue},
		{name: "unknown operation", op: "rename", key: "x.a", value: "1", ts: 2000, signers: ks[:2], want: statechain.ErrMalformed},
		{name: "value too large", op: statechain.OpSet, key: "x.a", value: `"` + strings.Repeat("a", statechain.MaxValueBytes) + `"`, ts: 2000, signers: ks[:2], want: statechain.ErrMalformed},
		{name: "gap", op: statechain.OpSet, key: "x.a", value: `1`, ts: 2000, signers: ks[:2],
			edit: func(b *statechain.Block) { b.Index++ }, want: statechain.ErrGap},
		{name: "not on the tip", op: statechain.OpSet, key: "x.a", value: `1`, ts: 2000, signers: ks[:2],
			edit: func(b *statechain.Block) { b.Previous[0] ^= 1 }, want: statechain.ErrWrongPrevious},
		{name: "stale index", op: statechain.OpSet, key: "x.a", value: `1`, ts: 2000, signers: ks[:2],
			edit: func(b *statechain.Block) { b.Index = 0 }, want: statechain.ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := next(s, c.op, c.key, c.value, c.ts, c.signers...)
			if c.edit != nil {
				c.edit(b)
				if c.want != statechain.ErrBadHash && c.want != statechain.ErrBadSignature {
					b.Signatures = nil
					b.Seal(network)
					for _, k := range c.signers {
						b.Sign(k)
					}
				}
			}
			n, err := s.Apply(b)
			if c.want == nil {
				if err != nil {
					t.Fatalf("Apply: %v", err)
				}
				if n.Index() != 1 || s.Index() != 0 {
					t.Fatalf("indexes after apply: new %d, old %d", n.Index(), s.Index())
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("Apply = %v, want %v", err, c.want)
			}
			if c.detail != "" && !strings.Contains(err.Error(), c.detail) {
				t.Fatalf("error %q does not say %q", err, c.detail)
			}
			if s.Index() != 0 || len(s.Keys()) != 0 {
				t.Fatal("a refused block changed the state")
			}
		})
	}
}

// TestApplyAll: blocks applied in order give the state Apply would, and
// the first that cannot follow stops it, named, leaving s as it was.
func TestApplyAll(t *testing.T) {
	s, ks := chain(t)
	b1 := next(s, statechain.OpSet, "x.a", "1", 2000, ks[0], ks[1])
	s1, err := s.Apply(b1)
	if err != nil {
		t.Fatal(err)
	}
	b2 := next(s1, statechain.OpSet, "x.b", "2", 3000, ks[1], ks[2])
	got, err := s.ApplyAll([]*statechain.Block{b1, b2})
	if err != nil || got.Index() != 2 || got.Tip().Hash != b2.Hash {
		t.Fatalf("ApplyAll: %v, %v", got, err)
	}
	if e, ok := got.Get("x.a"); !ok || e.Value != "1" {
		t.Fatalf("x.a after ApplyAll: %+v %v", e, ok)
	}
	short := next(s1, statechain.OpSet, "x.b", "2", 3000, ks[1]) // one of two signatures
	if _, err := s.ApplyAll([]*statechain.Block{b1, short}); !errors.Is(err, statechain.ErrUnauthorized) || !strings.Contains(err.Error(), "block 2") {
		t.Fatalf("ApplyAll with a block short of its signatures: %v", err)
	}
	if s.Index() != 0 {
		t.Fatalf("a refused ApplyAll moved the state to %d", s.Index())
	}
	if same, err := s.ApplyAll(nil); err != nil || same != s {
		t.Fatalf("ApplyAll of nothing: %v, %v", same, err)
	}
}

func TestKeysetAndParams(t *testing.T) {
	s, ks := chain(t)
	def := statechain.Defaults()
	if def.AcceptTimeoutMS != 600000 || def.StakeRatio != 5000 || def.Prices.VCPU != ledger.NewAmount(100) || len(def.Timekeepers.Keys) != 0 {
		t.Fatalf("defaults: %+v", def)
	}
	tk := `{"keys":["` + addr(ks[0]).String() + `","` + addr(ks[1]).String() + `","` + addr(ks[2]).String() + `","` + addr(keys(4)[3]).String() + `"]}`
	steps := []*statechain.Block{}
	add := func(op statechain.Operation, key, value string, signers ...ed25519.PrivateKey) {
		t.Helper()
		b := next(s, op, key, value, 2000+int64(len(steps)), signers...)
		n, err := s.Apply(b)
		if err != nil {
			t.Fatalf("%s %s: %v", op, key, err)
		}
		s = n
		steps = append(steps, b)
	}
	add(statechain.OpSet, statechain.KeyTimekeepers, tk, ks[0], ks[2])
	add(statechain.OpSet, statechain.KeyStakeRatio, "1.25", ks[0], ks[1])
	add(statechain.OpSet, statechain.KeyLeasePrices, `{"vcpu":"7","memory_mb":"0","disk_gb":"3"}`, ks[0], ks[1])
	p := mustParams(t, s)
	if len(p.Timekeepers.Keys) != 4 || p.Timekeepers.Threshold != 3 || p.Timekeepers.PrecisionMS != 5000 {
		t.Fatalf("timekeepers: %+v", p.Timekeepers)
	}
	if p.StakeRatio != 12500 || p.StakeRatio.String() != "1.25" || p.Prices.VCPU != ledger.NewAmount(7) || !p.Prices.MemoryMB.IsZero() {
		t.Fatalf("params: %+v", p)
	}
	// The keyset moves to one key; the old keys no longer sign.
	add(statechain.OpUpdateKeyset, "", statechain.KeysetValue(keyset(1, ks[2])), ks[0], ks[1])
	if _, err := s.Apply(next(s, statechain.OpDelete, statechain.KeyStakeRatio, "", 3000, ks[0], ks[1])); !errors.Is(err, statechain.ErrUnauthorized) {
		t.Fatalf("old keyset signed: %v", err)
	}
	add(statechain.OpDelete, statechain.KeyStakeRatio, "", ks[2])
	if p := mustParams(t, s); p.StakeRatio != def.StakeRatio {
		t.Fatalf("a deleted parameter is not back to its default: %v", p.StakeRatio)
	}
	if e, ok := s.Get(statechain.KeyLeasePrices); !ok || e.Index != 3 {
		t.Fatalf("entry: %+v %v", e, ok)
	}
}

func mustParams(t *testing.T, s *statechain.State) statechain.Params {
	t.Helper()
	p, err := s.Params()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestValuesAreCanonical: values that are not JSON, or not in their one
// canonical form, are refused for every key, and CanonicalValue says the
// form to write.
func TestValuesAreCanonical(t *testing.T) {
	for _, c := range []struct{ key, value string }{
		{statechain.KeyAcceptTimeout, "+60000"},
		{statechain.KeyAcceptTimeout, "060000"},
		{statechain.KeyStakeRatio, "00.5"},
		{statechain.KeyStakeRatio, ".5"},
		{statechain.KeyLeasePrices, `{"vcpu":"1","memory_mb":"1","disk_gb":"1"}]`},
		{statechain.KeyTimekeepers, `{"keys":[]}}`},
		{"x.a", `{"a":1} x`},
		{"x.a", "\"\xff\""},
		// Not canonical: what one parser reads one way, another reads
		// another (a key twice, a key in other case), or spaces.
		{statechain.KeyLeasePrices, `{"vcpu":"1","memory_mb":"1","disk_gb":"1","VCPU":"999"}`},
		{statechain.KeyLeasePrices, `{"vcpu":"1","memory_mb":"1","disk_gb":"1","vcpu":"999"}`},
		{statechain.KeyLeasePrices, `{"memory_mb":"1","vcpu":"1","disk_gb":"1"}`},
		{statechain.KeyLeasePrices, `{"vcpu":"01","memory_mb":"1","disk_gb":"1"}`},
		{statechain.KeyLeasePrices, `{"vcpu": "1","memory_mb":"1","disk_gb":"1"}`},
		{statechain.KeyStakeRatio, "0.50"},
		{statechain.KeyStakeRatio, "1.0"},
		{statechain.KeyStakeRatio, " 0.5"},
		{statechain.KeyTimekeepers, `{"keys":null}`},
		{"x.a", `{"a": 1}`},
	} {
		if err := statechain.CheckValue(c.key, c.value); !errors.Is(err, statechain.ErrInvalidValue) {
			t.Errorf("%s = %q: %v, want invalid", c.key, c.value, err)
		}
	}
}

func TestCanonicalValue(t *testing.T) {
	for _, c := range []struct{ key, in, want string }{
		{statechain.KeyLeasePrices, `{ "disk_gb":"3", "vcpu":"1", "memory_mb":"2" }`, `{"vcpu":"1","memory_mb":"2","disk_gb":"3"}`},
		{statechain.KeyStakeRatio, "0.50", "0.5"},
		{statechain.KeyStakeRatio, "2.0000", "2"},
		{statechain.KeyTimekeepers, `{"precision_ms":100,"keys":[]}`, `{"keys":[],"precision_ms":100}`},
		{"x.note", "{ \"a\" : [1, 2] }", `{"a":[1,2]}`},
	} {
		got, err := statechain.CanonicalValue(c.key, c.in)
		if err != nil || got != c.want {
			t.Errorf("CanonicalValue(%s, %s) = %s, %v; want %s", c.key, c.in, got, err, c.want)
		}
		if err := statechain.CheckValue(c.key, c.want); err != nil {
			t.Errorf("the canonical form %s is refused: %v", c.want, err)
		}
	}
	// A keyset whose threshold is given twice (the last would win in Go).
	s, ks := chain(t)
	smuggled := `{"keys":["` + addr(ks[0]).String() + `","` + addr(ks[1]).String() + `","` + addr(ks[2]).String() + `"],"threshold":3,"threshold":1}`
	if _, err := s.Apply(next(s, statechain.OpUpdateKeyset, "", smuggled, 2000, ks...)); !errors.Is(err, statechain.ErrInvalidValue) {
		t.Fatalf("a keyset with its threshold twice: %v", err)
	}
}
