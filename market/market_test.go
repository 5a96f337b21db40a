package market_test

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"testing"

	"github.com/latticenet/lattice/internal/testkit/golden"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/statechain"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors.json")

var network = ledger.Hash{0x6d, 0x6b, 0x74}

func key() ed25519.PrivateKey {
	seed := make([]byte, 32)
	seed[0] = 0x20
	return ed25519.NewKeyFromSeed(seed)
}

const peerID = "12D3KooWGzxzKZYveHXtpG6AsrUJBcWxHBFS2HsEoGTxrMLvKXtf"

func TestRequestCheck(t *testing.T) {
	ok := market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []market.Request{
		{VCPUs: 0, MemoryMB: 512, DiskGB: 5, Duration: 60},
		{VCPUs: 1, MemoryMB: 511, DiskGB: 5, Duration: 60},
		{VCPUs: 1, MemoryMB: 512, DiskGB: 4, Duration: 60},
		{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 59},
		{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 31536001},
		{VCPUs: market.MaxVCPUs + 1, MemoryMB: 512, DiskGB: 5, Duration: 60},
		{VCPUs: 1, MemoryMB: -1, DiskGB: 5, Duration: 60},
	} {
		if err := bad.Check(); !errors.Is(err, market.ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

func TestQuote(t *testing.T) {
	p := statechain.Defaults()
	cost, stake, err := market.Quote(p, market.Request{VCPUs: 2, MemoryMB: 1024, DiskGB: 10, Duration: 3600})
	if err != nil || cost != ledger.NewAmount(3600*(200+1024+10)) || stake != ledger.NewAmount(3600*(200+1024+10)/2) {
		t.Fatalf("Quote = %s, %s, %v", cost, stake, err)
	}
	// A stake ratio that does not divide evenly rounds the stake up.
	p.StakeRatio = 1 // 0.0001
	if _, stake, _ := market.Quote(p, market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60}); stake != ledger.NewAmount(4) {
		t.Fatalf("stake of 37020 at 0.0001 = %s, want 4 (rounded up)", stake)
	}
	// The largest request at an enormous price still answers, or says it
	// overflows: never a wrong number.
	huge, _ := ledger.ParseAmount("340282366920938463463374607431768211455")
	p.Prices.VCPU = huge
	if _, _, err := market.Quote(p, market.Request{VCPUs: 2, MemoryMB: 512, DiskGB: 5, Duration: 60}); !errors.Is(err, market.ErrInvalid) {
		t.Fatalf("an overflowing price: %v", err)
	}
}

type vecFile struct {
	Comment     []string        `json:"comment"`
	Network     ledger.Hash     `json:"network"`
	Seed        string          `json:"seed"`
	Capacity    market.Capacity `json:"capacity"`
	CapDigest   ledger.Hash     `json:"capacity_digest"`
	Offer       market.Offer    `json:"offer"`
	OfferDigest ledger.Hash     `json:"offer_digest"`
}

func generate() vecFile {
	k := key()
	c := market.Capacity{NodePeer: peerID, Total: market.Resources{VCPUs: 4, MemoryMB: 8192, DiskGB: 100}, Timestamp: 1767225600000}
	c.Sign(k, network)
	req := market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 3600}
	cost, stake, _ := market.Quote(statechain.Defaults(), req)
	o := market.Offer{NodePeer: peerID, Request: req, Cost: cost, Stake: stake, StateIndex: 0, Expiry: 1767225900000}
	o.Sign(k, network)
	return vecFile{
		Comment: []string{"Marketplace vectors (docs/protocol.md, section 23): a capacity record and an offer at the default parameters,",
			"signed by the seed's key: ed25519 over the digest. Regenerate: go test ./market -run TestVectors -update"},
		Network: network, Seed: hex.EncodeToString(k.Seed()),
		Capacity: c, CapDigest: c.Digest(network), Offer: o, OfferDigest: o.Digest(network),
	}
}

func TestVectors(t *testing.T) {
	have := golden.JSON(t, "testdata/vectors.json", generate(), *update)
	var f vecFile
	if err := json.Unmarshal(have, &f); err != nil {
		t.Fatal(err)
	}
	if f.Capacity.Check(f.Network) != nil || f.Offer.Check(f.Network) != nil || f.Offer.Cost != ledger.NewAmount(3600*617) {
		t.Fatal("the vectors do not verify")
	}
	// Any field changed breaks the signature.
	o := f.Offer
	o.Cost = ledger.NewAmount(1)
	if o.Check(f.Network) == nil {
		t.Fatal("an offer with another cost verifies")
	}
	c := f.Capacity
	c.Total.VCPUs++
	if c.Check(f.Network) == nil {
		t.Fatal("a record with another total verifies")
	}
	if c := f.Capacity; c.Check(ledger.Hash{1}) == nil {
		t.Fatal("a record verifies on another network")
	}
}

func TestNewer(t *testing.T) {
	k := key()
	a := market.Capacity{NodePeer: peerID, Timestamp: 1000}
	a.Sign(k, network)
	b := a
	b.Timestamp = 2000
	b.Sign(k, network)
	if !b.Newer(&a, network) || a.Newer(&b, network) {
		t.Fatal("the later record does not win")
	}
	c := a
	c.Total.VCPUs = 9
	c.Sign(k, network)
	if c.Newer(&a, network) == a.Newer(&c, network) {
		t.Fatal("of two records with one timestamp, not exactly one wins")
	}
}

// FuzzCapacityJSON and FuzzOfferJSON check that any bytes a peer sends
// as a record or an offer are decoded and judged without a panic, and
// that a record that passes survives a round trip.
func FuzzCapacityJSON(f *testing.F) {
	v := generate()
	data, _ := json.Marshal(v.Capacity)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		var c market.Capacity
		if json.Unmarshal(data, &c) != nil || c.Check(network) != nil {
			return
		}
		again, _ := json.Marshal(c)
		var d market.Capacity
		if json.Unmarshal(again, &d) != nil || d.Check(network) != nil {
			t.Fatal("a valid record does not survive its JSON")
		}
	})
}

func FuzzOfferJSON(f *testing.F) {
	v := generate()
	data, _ := json.Marshal(v.Offer)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		var o market.Offer
		if json.Unmarshal(data, &o) != nil || o.Check(network) != nil {
			return
		}
		if _, _, err := market.Quote(statechain.Defaults(), o.Request); err != nil {
			t.Fatalf("a valid offer's request has no quote: %v", err)
		}
	})
}
