package ledger_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/latticenet/lattice/ledger"
)

func FuzzUnmarshalBinary(f *testing.F) {
	data, _ := fullBlock().MarshalBinary()
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
