package statechain_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"testing"

	"github.com/latticenet/lattice/internal/testkit/golden"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/statechain"
)

// The state-chain vectors of docs/protocol.md live in testdata/vectors.json:
// a chain of four blocks on a fixed network, with every preimage, hash,
// signature and binary form. TestVectors checks them; `go test ./statechain
// -run TestVectors -update` rewrites the file (deterministic: fixed seeds
// and timestamps, and ed25519 signatures are deterministic).

var update = flag.Bool("update", false, "rewrite testdata/vectors.json")

type vecFile struct {
	Comment []string   `json:"comment"`
	Network string     `json:"network"`
	Keys    []vecKey   `json:"keys"`
	Blocks  []vecBlock `json:"blocks"`
	// Refused are blocks that must be refused after the chain, each with
	// the error kind.
	Refused []vecRefused `json:"refused"`
}

type vecKey struct {
	Seed    string         `json:"seed"`
	Address ledger.Address `json:"address"`
}

type vecBlock struct {
	Block    statechain.Block `json:"block"`
	Preimage string           `json:"preimage"`
	Binary   string           `json:"binary"`
}

type vecRefused struct {
	Why   string           `json:"why"`
	Block statechain.Block `json:"block"`
	Error string           `json:"error"`
}

func vecNetwork() ledger.Hash {
	h, _ := ledger.ParseHash("6c617474696365207374617465636861696e20766563746f7273000000000000")
	return h
}

func generate() vecFile {
	nw := vecNetwork()
	ks := keys(3)
	f := vecFile{
		Comment: []string{
			"State-chain test vectors (docs/protocol.md, section 21). Keys are ed25519 seeds (hex).",
			"Block 0 comes from the genesis file's governance keyset (2 of 3). Each preimage is what the hash is the SHA-256 of;",
			"each signature is ed25519 over the 32-byte hash; binary is the storage and wire form.",
			"Regenerate: go test ./statechain -run TestVectors -update",
		},
		Network: nw.String(),
	}
	for _, k := range ks {
		f.Keys = append(f.Keys, vecKey{Seed: hex.EncodeToString(k.Seed()), Address: addr(k)})
	}
	const epoch = 1767225600000 // 2026-01-01T00:00:00Z
	g := statechain.Genesis(nw, keyset(2, ks...), epoch)
	blocks := []*statechain.Block{g}
	add := func(op statechain.Operation, key, value string, ts int64, signers ...ed25519.PrivateKey) *statechain.Block {
		tip := blocks[len(blocks)-1]
		b := &statechain.Block{Index: tip.Index + 1, Previous: tip.Hash, Operation: op, Key: key, Value: value, Timestamp: ts}
		b.Seal(nw)
		for _, k := range signers {
			b.Sign(k)
		}
		return b
	}
	for _, b := range []*statechain.Block{
		add(statechain.OpSet, statechain.KeyLeasePrices, `{"vcpu":"100","memory_mb":"2","disk_gb":"1"}`, epoch+60000, ks[0], ks[1]),
	} {
		blocks = append(blocks, b)
	}
	blocks = append(blocks, add(statechain.OpSet, statechain.KeyStakeRatio, `0.25`, epoch+120000, ks[1], ks[2]))
	blocks = append(blocks, add(statechain.OpUpdateKeyset, "", statechain.KeysetValue(keyset(1, ks[2])), epoch+180000, ks[0], ks[1], ks[2]))
	blocks = append(blocks, add(statechain.OpDelete, statechain.KeyStakeRatio, "", epoch+240000, ks[2]))
	for _, b := range blocks {
		bin, _ := b.MarshalBinary()
		f.Blocks = append(f.Blocks, vecBlock{Block: *b, Preimage: hex.EncodeToString(b.AppendPreimage(nil, nw)), Binary: hex.EncodeToString(bin)})
	}
	refuse := func(why string, b *statechain.Block) {
		f.Refused = append(f.Refused, vecRefused{Why: why, Block: *b, Error: errorKind(check(blocks, b))})
	}
	refuse("signed by a key of the keyset replaced at index 3", add(statechain.OpSet, "x.note", `"hi"`, epoch+300000, ks[0]))
	refuse("a parameter value out of range", add(statechain.OpSet, statechain.KeyAcceptTimeout, `10`, epoch+300000, ks[2]))
	stale := add(statechain.OpSet, "x.note", `"hi"`, epoch+300000, ks[2])
	stale.Index, stale.Previous = 2, blocks[1].Hash
	stale.Signatures = nil
	stale.Seal(nw)
	stale.Sign(ks[2])
	refuse("an index already taken (a conflicting block 2)", stale)
	return f
}

// check applies blocks in order, then reports what b does after them.
func check(blocks []*statechain.Block, b *statechain.Block) error {
	s, err := statechain.New(vecNetwork(), blocks[0])
	if err != nil {
		return err
	}
	if s, err = s.ApplyAll(blocks[1:]); err != nil {
		return err
	}
	return s.Check(b)
}

func errorKind(err error) string {
	for _, k := range []error{statechain.ErrMalformed, statechain.ErrBadHash, statechain.ErrBadSignature, statechain.ErrUnauthorized,
		statechain.ErrGap, statechain.ErrWrongPrevious, statechain.ErrStale, statechain.ErrTimestamp, statechain.ErrInvalidValue} {
		if errors.Is(err, k) {
			return k.Error()
		}
	}
	if err == nil {
		return "accepted"
	}
	return err.Error()
}

func TestVectors(t *testing.T) {
	have := golden.JSON(t, "testdata/vectors.json", generate(), *update)
	// Read back as an independent client would: JSON in, preimage, hash,
	// binary form and rules checked.
	var f vecFile
	if err := json.Unmarshal(have, &f); err != nil {
		t.Fatal(err)
	}
	nw, _ := ledger.ParseHash(f.Network)
	var blocks []*statechain.Block
	for i, vb := range f.Blocks {
		b := vb.Block
		if got := hex.EncodeToString(b.AppendPreimage(nil, nw)); got != vb.Preimage {
			t.Fatalf("block %d: preimage differs", i)
		}
		if b.ComputeHash(nw) != b.Hash {
			t.Fatalf("block %d: hash differs", i)
		}
		bin, _ := hex.DecodeString(vb.Binary)
		var d statechain.Block
		if err := d.UnmarshalBinary(bin, nw); err != nil || d.Hash != b.Hash || len(d.Signatures) != len(b.Signatures) {
			t.Fatalf("block %d: binary form: %v", i, err)
		}
		blocks = append(blocks, &b)
	}
	if err := check(blocks, blocks[len(blocks)-1]); !errors.Is(err, statechain.ErrStale) {
		t.Fatalf("the chain does not apply in order: %v", err)
	}
	for _, r := range f.Refused {
		if got := errorKind(check(blocks, &r.Block)); got != r.Error || got == "accepted" {
			t.Fatalf("%s: %s, want %s", r.Why, got, r.Error)
		}
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	s, ks := chain(t)
	b := next(s, statechain.OpSet, "x.a", `[1,2,3]`, 5, ks...)
	bin, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var d statechain.Block
	if err := d.UnmarshalBinary(bin, network); err != nil {
		t.Fatal(err)
	}
	if d.Hash != b.Hash || len(d.Signatures) != 3 || d.Value != b.Value {
		t.Fatalf("round trip: %+v", d)
	}
	for n := range len(bin) {
		if err := new(statechain.Block).UnmarshalBinary(bin[:n], network); !errors.Is(err, statechain.ErrMalformed) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	if err := new(statechain.Block).UnmarshalBinary(append(bin, 0), network); !errors.Is(err, statechain.ErrMalformed) {
		t.Fatalf("trailing byte: %v", err)
	}
}

// FuzzUnmarshalBinary checks that any bytes either decode into a block
// whose binary form is the same bytes, or are refused as malformed.
func FuzzUnmarshalBinary(f *testing.F) {
	for _, vb := range generate().Blocks {
		bin, _ := hex.DecodeString(vb.Binary)
		f.Add(bin)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b statechain.Block
		if err := b.UnmarshalBinary(data, network); err != nil {
			if !errors.Is(err, statechain.ErrMalformed) {
				t.Fatalf("error of no kind: %v", err)
			}
			return
		}
		out, err := b.MarshalBinary()
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("re-encoding differs: %v", err)
		}
	})
}

// FuzzCheckValue checks that no value makes the parameter parsers panic,
// and that a value CheckValue accepts applies.
func FuzzCheckValue(f *testing.F) {
	for _, p := range statechain.Parameters {
		f.Add(p.Key, p.Default)
	}
	f.Add(statechain.KeyStakeRatio, "00.5")
	f.Add(statechain.KeyTimekeepers, `{"keys":["`+addr(keys(1)[0]).String()+`"],"threshold":1}`)
	f.Add("x.a", `{"a":[1,2]}`)
	s, ks := chain(&testing.T{})
	f.Fuzz(func(t *testing.T, key, value string) {
		err := statechain.CheckValue(key, value)
		if err != nil || len(value) == 0 || len(value) > statechain.MaxValueBytes {
			return
		}
		if _, err := s.Apply(next(s, statechain.OpSet, key, value, 2000, ks...)); err != nil {
			t.Fatalf("CheckValue accepted %s = %q, Apply refused: %v", key, value, err)
		}
	})
}

// FuzzBlockJSON checks that any JSON body, decoded as POST
// /statechain/blocks decodes it, is judged without a panic, and that a
// block the rules accept survives its binary form unchanged.
func FuzzBlockJSON(f *testing.F) {
	for _, vb := range generate().Blocks {
		data, _ := json.Marshal(vb.Block)
		f.Add(data)
	}
	f.Add([]byte(`{"index":1,"operation":"set","key":"x.a","value":"1","timestamp":1,"signatures":[],"hash":"00"}`))
	s, _ := chain(&testing.T{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var b statechain.Block
		if json.Unmarshal(data, &b) != nil {
			return
		}
		if s.Check(&b) != nil {
			return
		}
		bin, err := b.MarshalBinary()
		if err != nil {
			t.Fatalf("an accepted block has no binary form: %v", err)
		}
		var d statechain.Block
		if err := d.UnmarshalBinary(bin, network); err != nil || d.Hash != b.Hash {
			t.Fatalf("an accepted block does not survive its binary form: %v", err)
		}
	})
}
