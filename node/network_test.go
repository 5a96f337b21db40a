package node

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// TestGovernanceOfTheDataDirectory: a node refuses a genesis file whose
// governance keyset differs from its data directory's, names both, and
// takes the one it keeps when no genesis file is given; a keyset that is
// not valid is refused at once.
func TestGovernanceOfTheDataDirectory(t *testing.T) {
	gk := wallet.NewKey()
	g := ledger.NewGenesis(gk.Private(), ledger.NewAmount(1000), time.Now().UnixMilli())
	other := wallet.NewKey().Address()
	governed := ledger.NewKeyset(1, other)
	dir := t.TempDir()
	open := func(n *Network) (*Node, error) {
		return Open(Config{DataDir: dir, Network: n, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	}
	n, err := open(&Network{Name: "g", Work: ledger.DevWork, Genesis: g})
	if err != nil {
		t.Fatal(err)
	}
	n.Close()
	_, err = open(&Network{Name: "g", Work: ledger.DevWork, Genesis: g, Governance: &governed})
	if err == nil || !strings.Contains(err.Error(), "governed by") || !strings.Contains(err.Error(), other.String()) {
		t.Fatalf("a genesis file with another governance: %v", err)
	}
	n, err = open(nil)
	if err != nil {
		t.Fatal(err)
	}
	if ks := n.Network.GovernanceKeyset(); len(ks.Keys) != 1 || ks.Keys[0] != gk.Address() {
		t.Fatalf("the kept governance: %+v", ks)
	}
	n.Close()
	bad := ledger.Keyset{Keys: []ledger.Address{other}, Threshold: 2}
	if err := (&Network{Name: "g", Work: ledger.DevWork, Genesis: g, Governance: &bad}).Validate(); err == nil {
		t.Fatal("a governance keyset with a threshold above its keys was valid")
	}
}
