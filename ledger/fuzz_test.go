package ledger_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/latticenet/lattice/ledger"
)

// leaseBlock is a lease block naming a state-chain index, whose preimage
// alone carries the index.
func leaseBlock() *ledger.Block {
	b := &ledger.Block{Type: ledger.TypeLease, Account: ledger.Address{1}, Asset: ledger.Native, Timestamp: t0, Destination: ledger.Address{2},
		Amount: ledger.NewAmount(37020), VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60, AccessPubKey: ledger.Address{3}, StateChainIndex: 7}
	b.Seal()
	return b
}

func FuzzUnmarshalBinary(f *testing.F) {
	data, _ := fullBlock().MarshalBinary()
	f.Add(data)
	data, _ = leaseBlock().MarshalBinary()
	f.Add(data)
	f.Add([]byte("LATTICE-BLOCK-V1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var b ledger.Block
		if err := b.UnmarshalBinary(data); err != nil {
			return
		}
		again, _ := b.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatalf("accepted encoding does not round-trip")
		}
	})
}

func FuzzParseJSON(f *testing.F) {
	data, _ := json.Marshal(fullBlock())
	f.Add(data)
	data, _ = json.Marshal(leaseBlock())
	f.Add(data)
	f.Add([]byte(`{"type":"send"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ledger.ParseJSON(data)
		if err != nil {
			return
		}
		var p ledger.Params
		_ = p.Check(b) // must not panic
		out, err := json.Marshal(b)
		if err != nil {
			return // e.g. an asset code that only the binary form can hold
		}
		b2, err := ledger.ParseJSON(out)
		if err != nil || b2.ComputeHash() != b.ComputeHash() {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
	})
}

// FuzzLeaseRecord: a stored lease record that decodes encodes back to
// the same bytes, and its derived values never panic.
func FuzzLeaseRecord(f *testing.F) {
	r := ledger.LeaseRecord{Hash: ledger.Hash{1}, Cost: ledger.NewAmount(7), Stake: ledger.NewAmount(4), Stage: ledger.StageActive, Duration: 60}
	data, _ := r.MarshalBinary()
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		var r ledger.LeaseRecord
		if r.UnmarshalBinary(data) != nil {
			return
		}
		again, _ := r.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatalf("accepted record does not round-trip")
		}
		_, _, _, _ = r.Held(), r.Status(), r.End(), r.Deadline()
	})
}

func FuzzParseUnits(f *testing.F) {
	for _, s := range []string{"0", "1.5", "0.000001", "99999999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ledger.ParseUnits(s)
		if err != nil {
			return
		}
		b, err := ledger.ParseUnits(a.Units())
		if err != nil || a != b {
			t.Fatalf("ParseUnits(%q) = %s, whose Units %q re-parses to %v, %v", s, a, a.Units(), b, err)
		}
	})
}

// FuzzParseCanonical checks the fast JSON path against encoding/json:
// wherever the fast path accepts an input, encoding/json must accept it too
// and read exactly the same block.
func FuzzParseCanonical(f *testing.F) {
	for _, b := range []*ledger.Block{fullBlock(), leaseBlock(), {Type: ledger.TypeSend, Account: ledger.Address{1}, Asset: ledger.Native, Timestamp: 1, PowNonce: -3}} {
		b.Seal()
		data, _ := json.Marshal(b)
		f.Add(data)
		f.Add(bytes.ReplaceAll(data, []byte(","), []byte(" ,\n ")))
	}
	f.Add([]byte(`{"type":"send","vcpus":-0}`))
	f.Add([]byte(`{"timestamp":01}`))
	f.Add([]byte(`{"type":"send","type":"receive"}`))
	f.Add([]byte(`{"TYPE":"send"}`))
	f.Add([]byte(`{"pow_nonce":9223372036854775808}`))
	f.Add([]byte(`{"statechain_index":18446744073709551615}`))
	f.Add([]byte(`{"statechain_index":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := ledger.ParseCanonicalForTest(data)
		if !ok {
			return
		}
		slow, err := ledger.ParseReflectForTest(data)
		if err != nil {
			t.Fatalf("fast path accepted %q, encoding/json refused it: %v", data, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast path read %q as\n%+v\nencoding/json as\n%+v", data, fast, slow)
		}
	})
}
