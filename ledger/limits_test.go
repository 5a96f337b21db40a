package ledger_test

import (
	"errors"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// The tests below pin limits and boundaries that mutation testing
// (docs/testing.md) found no test held: each checks the last value
// accepted and the first refused.

func TestLimitsAtTheirBoundary(t *testing.T) {
	var p ledger.Params
	k := wallet.NewKey()
	withAttestations := func(n int) error {
		b := &ledger.Block{Type: ledger.TypeLeaseAccept, Account: k.Address(), Previous: ledger.Hash{1}, Balance: ledger.NewAmount(5),
			Asset: ledger.Native, Timestamp: t0, Source: ledger.Hash{4}, Amount: ledger.NewAmount(5), CertificateHash: ledger.Hash{6}}
		b.Attestations = make([]ledger.Attestation, n)
		for i := range b.Attestations {
			b.Attestations[i] = ledger.Attestation{PublicKey: ledger.Address{byte(i + 1)}, Timestamp: t0, Signature: ledger.Signature{1}}
		}
		b.Seal()
		b.Sign(k.Private())
		return p.Check(b)
	}
	if err := withAttestations(ledger.MaxAttestations); err != nil {
		t.Errorf("%d attestations: got %v, want accepted", ledger.MaxAttestations, err)
	}
	if err := withAttestations(ledger.MaxAttestations + 1); !errors.Is(err, ledger.ErrMalformed) {
		t.Errorf("%d attestations: got %v, want ErrMalformed", ledger.MaxAttestations+1, err)
	}

	keys := make([]wallet.Key, ledger.MaxKeys+1)
	for i := range keys {
		keys[i] = wallet.NewKey()
	}
	withSigners := func(n int) error {
		ks := keysetOf(n, keys[:n]...)
		return p.Check(multisigned(wallet.MultisigOpen(ks, t0), keys[:n]...))
	}
	if err := withSigners(ledger.MaxKeys); err != nil {
		t.Errorf("%d keys and signatures: got %v, want accepted", ledger.MaxKeys, err)
	}
	if err := withSigners(ledger.MaxKeys + 1); !errors.Is(err, ledger.ErrMalformed) {
		t.Errorf("%d keys and signatures: got %v, want ErrMalformed", ledger.MaxKeys+1, err)
	}
	if err := keysetOf(ledger.MaxKeys+1, keys...).Validate(); err == nil {
		t.Errorf("a keyset of %d keys validated", ledger.MaxKeys+1)
	}
	dup := ledger.Keyset{Keys: []ledger.Address{keys[0].Address(), keys[0].Address()}, Threshold: 1}
	if err := dup.Validate(); err == nil {
		t.Errorf("a keyset holding one key twice validated")
	}

	// Timestamps: 0 is not a time; a block may share its predecessor's.
	zero := signed(mustSend(t, k, 0), k)
	if err := p.Check(zero); !errors.Is(err, ledger.ErrMalformed) {
		t.Errorf("timestamp 0: got %v, want ErrMalformed", err)
	}
	if err := p.Check(signed(mustSend(t, k, 1), k)); err != nil {
		t.Errorf("timestamp 1: got %v, want accepted", err)
	}
}

func mustSend(t *testing.T, k wallet.Key, ts int64) *ledger.Block {
	t.Helper()
	b, err := wallet.Send(wallet.Head{Account: k.Address(), Balances: [2]ledger.Amount{ledger.NewAmount(10)}},
		wallet.NewKey().Address(), ledger.NewAmount(1), ledger.Native, ts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSameTimestampAsPredecessor: a chain's timestamps may not go back,
// but two blocks in the same millisecond are fine.
func TestSameTimestampAsPredecessor(t *testing.T) {
	w := newWorld(t)
	a := w.funded(100)
	head := w.head(a.Address())
	same := signed(w.must(wallet.Send(head, w.genesis.Address(), ledger.NewAmount(1), ledger.Native, head.Timestamp)), a)
	if err := w.submit(same); err != nil {
		t.Errorf("a block stamped as its predecessor: got %v, want accepted", err)
	}
	head = w.head(a.Address())
	earlier := w.must(wallet.Send(head, w.genesis.Address(), ledger.NewAmount(1), ledger.Native, head.Timestamp))
	earlier.Timestamp = head.Timestamp - 1 // the wallet never goes back; a forger might
	earlier.Seal()
	signed(earlier, a)
	if err := w.submit(earlier); !errors.Is(err, ledger.ErrTimestamp) {
		t.Errorf("a block stamped before its predecessor: got %v, want ErrTimestamp", err)
	}
}

// TestWorkExactlyAtThreshold: work equal to the threshold meets it.
func TestWorkExactlyAtThreshold(t *testing.T) {
	h := ledger.Hash{1, 2, 3}
	v := ledger.WorkValue(h, 42)
	if !ledger.Threshold(v).Met(h, 42) {
		t.Errorf("work %x does not meet a threshold of %x", v, v)
	}
	if v < ^uint64(0) && ledger.Threshold(v+1).Met(h, 42) {
		t.Errorf("work %x meets a threshold of %x", v, v+1)
	}
}

// TestBinaryRoundTripAtLimits: the binary form carries the largest blocks
// Check accepts.
func TestBinaryRoundTripAtLimits(t *testing.T) {
	b := fullBlock()
	b.Attestations = make([]ledger.Attestation, ledger.MaxAttestations)
	for i := range b.Attestations {
		b.Attestations[i] = ledger.Attestation{PublicKey: ledger.Address{byte(i + 1)}, Timestamp: t0, Signature: ledger.Signature{2}}
	}
	keys := make([]ledger.Address, ledger.MaxKeys)
	for i := range keys {
		keys[i] = ledger.Address{byte(i + 1)}
	}
	b.Keyset = &ledger.Keyset{Keys: keys, Threshold: ledger.MaxKeys}
	b.Signatures = nil
	for range ledger.MaxKeys {
		b.AddSignature(wallet.NewKey().Private())
	}
	data, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got ledger.Block
	if err := got.UnmarshalBinary(data); err != nil {
		t.Fatalf("UnmarshalBinary of a block at every limit: %v", err)
	}
	again, _ := got.MarshalBinary()
	if string(again) != string(data) {
		t.Errorf("the round trip changed the block")
	}
}
