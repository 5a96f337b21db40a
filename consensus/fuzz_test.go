package consensus_test

import (
	"bytes"
	"testing"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
)

func FuzzUnmarshalVote(f *testing.F) {
	v := &consensus.Vote{Round: 1, Final: true, Hashes: []ledger.Hash{{1}, {2}}}
	v.Sign(ledger.Hash{9}, vecKey(1))
	data, _ := v.MarshalBinary()
	f.Add(data)
	f.Add(data[:len(data)-1])
	f.Add(append(data, 0))
	f.Add(make([]byte, 42))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v consensus.Vote
		if err := v.UnmarshalBinary(data); err != nil {
			return
		}
		again, err := v.MarshalBinary()
		if err != nil {
			t.Fatalf("accepted vote does not re-encode: %v", err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("accepted encoding does not round-trip:\n%x\n%x", data, again)
		}
		_ = v.Verify(ledger.Hash{}) // must not panic
	})
}
