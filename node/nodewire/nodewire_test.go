package nodewire_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodewire"
)

var (
	addr = ledger.Address{1}
	hash = ledger.Hash{2}
	// addrHex and hashHex are addr and hash as the API writes them.
	addrHex = "01" + strings.Repeat("00", 31)
	hashHex = "02" + strings.Repeat("00", 31)
)

// TestJSON pins the wire form of every resource: field names, their order
// and how the ledger's types are written are the API's contract with
// clients built against other versions.
func TestJSON(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"Account", nodewire.Account{Address: addr, Balances: map[string]string{"native": "5"}, BlockCount: 3, Frontier: hash},
			`{"address":"` + addrHex + `","balances":{"native":"5"},"block_count":3,"frontier":"` + hashHex + `"}`},
		{"PendingSend", nodewire.PendingSend{SendHash: hash, Source: addr, Destination: addr, Amount: ledger.NewAmount(7), Asset: ledger.Stable},
			`{"send_hash":"` + hashHex + `","source":"` + addrHex + `","destination":"` + addrHex + `","amount":"7","asset":"stable"}`},
		{"Conflict", nodewire.Conflict{AccountAddress: addr, PreviousHash: hash, BlockHashes: []ledger.Hash{hash}, DetectedAt: "2026-01-01T00:00:00.000Z"},
			`{"account_address":"` + addrHex + `","previous_hash":"` + hashHex + `","block_hashes":["` + hashHex + `"],"detected_at":"2026-01-01T00:00:00.000Z"}`},
		{"NodeInfo", nodewire.NodeInfo{Version: "v", PeerID: "12D3Koo", P2PAddrs: []string{"/ip4/127.0.0.1/tcp/4001/p2p/12D3Koo"}, Account: addr, UptimeSeconds: 9, Network: "dev", Genesis: hash, Work: ledger.DevWork},
			`{"version":"v","peer_id":"12D3Koo","p2p_addrs":["/ip4/127.0.0.1/tcp/4001/p2p/12D3Koo"],"account":"` + addrHex + `","uptime_seconds":9,"network":"dev","genesis":"` + hashHex + `","work":{"send":"fff0000000000000","receive":"ff00000000000000"}}`},
		{"Conflict with its election", nodewire.Conflict{AccountAddress: addr, PreviousHash: hash, BlockHashes: []ledger.Hash{hash}, DetectedAt: "2026-01-01T00:00:00.000Z",
			Election: &nodewire.Election{Quorum: ledger.NewAmount(67), Online: ledger.NewAmount(100), Round: 1, Tallies: []nodewire.Tally{{Hash: hash, Weight: ledger.NewAmount(70)}}}},
			`{"account_address":"` + addrHex + `","previous_hash":"` + hashHex + `","block_hashes":["` + hashHex + `"],"detected_at":"2026-01-01T00:00:00.000Z",` +
				`"election":{"quorum":"67","online_weight":"100","round":1,"tallies":[{"hash":"` + hashHex + `","weight":"70","final_weight":"0"}]}}`},
		{"Block", nodewire.Block{Block: &ledger.Block{Type: ledger.TypeClaim, Account: addr, Asset: ledger.Stable, Timestamp: 5, Hash: hash}, Confirmed: true},
			`{"type":"claim","account":"` + addrHex + `","previous":"0000000000000000000000000000000000000000000000000000000000000000","balance":"0","asset":"stable","timestamp":5,"hash":"` + hashHex + `","pow_nonce":0,"confirmed":true}`},
		{"BlockHashResponse", nodewire.BlockHashResponse{Hash: hash}, `{"hash":"` + hashHex + `"}`},
		{"PoWRequest", nodewire.PoWRequest{Hash: hash}, `{"hash":"` + hashHex + `"}`},
		{"PoWResponse", nodewire.PoWResponse{Nonce: -4}, `{"nonce":-4}`},
		{"Error", nodewire.Error{Error: "nope"}, `{"error":"nope"}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.v)
		if err != nil {
			t.Errorf("json.Marshal(%s): %v", tt.name, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("json.Marshal(%s) = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestBalanceMap(t *testing.T) {
	tests := []struct {
		name     string
		balances [2]ledger.Amount
		want     map[string]string
	}{
		{"empty", [2]ledger.Amount{}, map[string]string{}},
		{"native only", [2]ledger.Amount{ledger.NewAmount(1)}, map[string]string{"native": "1"}},
		{"stable only", [2]ledger.Amount{{}, ledger.NewAmount(2)}, map[string]string{"stable": "2"}},
		{"both", [2]ledger.Amount{ledger.NewAmount(3), ledger.NewAmount(4)}, map[string]string{"native": "3", "stable": "4"}},
	}
	for _, tt := range tests {
		a := ledger.Account{Address: addr, Balances: tt.balances}
		if got := nodewire.BalanceMap(&a); !maps.Equal(got, tt.want) {
			t.Errorf("BalanceMap(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
