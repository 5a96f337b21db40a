package leasenet_test

import (
	"encoding/json"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/leasenet"
	"github.com/latticenet/lattice/node/nodewire"
)

// FuzzParseAttestRequest: a request a timekeeper takes names a lease and
// a purpose it knows, and reads the same once written again.
func FuzzParseAttestRequest(f *testing.F) {
	f.Add([]byte(`{"lease_hash":"` + ledger.Hash{1}.String() + `","purpose":"start"}`))
	f.Add([]byte(`{"lease_hash":"` + ledger.Hash{2}.String() + `"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lease, p, err := leasenet.ParseAttestRequest(data)
		if err != nil {
			return
		}
		if lease.IsZero() || p > ledger.PurposeStarted {
			t.Fatalf("took lease %s purpose %d", lease, p)
		}
		req := nodewire.AttestRequest{LeaseHash: lease}
		if p != 0 {
			req.Purpose = p.String()
		}
		again, _ := json.Marshal(req)
		if l2, p2, err := leasenet.ParseAttestRequest(again); err != nil || l2 != lease || p2 != p {
			t.Fatalf("%s reads back as %s %d, %v", again, l2, p2, err)
		}
	})
}
