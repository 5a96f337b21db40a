package ledgernet

import (
	"bytes"
	"errors"
	"testing"

	"github.com/latticenet/lattice/ledger"
)

func TestRequestRoundTrip(t *testing.T) {
	for _, r := range []*request{
		{kind: reqLog, after: 7, limit: 100},
		{kind: reqFrontiers, start: ledger.Address{1}, limit: MaxFrontiers},
		{kind: reqChain, start: ledger.Address{2}, height: 3, limit: 5},
		{kind: reqBlocks, hashes: []ledger.Hash{{1}, {2}}},
		{kind: reqVotes, hashes: []ledger.Hash{{3}}},
	} {
		got, err := parseRequest(r.marshal())
		if err != nil {
			t.Errorf("%q: %v", r.kind, err)
			continue
		}
		if !bytes.Equal(got.marshal(), r.marshal()) {
			t.Errorf("%q: round trip gave %+v, want %+v", r.kind, got, r)
		}
	}
}

func TestRequestRefused(t *testing.T) {
	hashes := func(n int) []byte {
		b := []byte{reqBlocks, byte(n >> 8), byte(n)}
		return append(b, make([]byte, 32*n)...)
	}
	for name, b := range map[string][]byte{
		"empty":           nil,
		"unknown kind":    {'Z', 0, 0},
		"short log":       {reqLog, 0, 0, 0},
		"long log":        append((&request{kind: reqLog, limit: 1}).marshal(), 0),
		"zero limit":      (&request{kind: reqLog}).marshal(),
		"no hashes":       hashes(0),
		"too many hashes": hashes(MaxHashes + 1),
		"count mismatch":  hashes(2)[:3+32],
	} {
		if _, err := parseRequest(b); !errors.Is(err, errBadRequest) {
			t.Errorf("%s: got %v, want errBadRequest", name, err)
		}
	}
	// A limit above the server's bound is lowered, not refused.
	r, err := parseRequest((&request{kind: reqLog, limit: 60000}).marshal())
	if err != nil || r.limit != MaxLogBlocks {
		t.Errorf("limit 60000: got %+v, %v; want limit %d", r, err, MaxLogBlocks)
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add((&request{kind: reqLog, after: 1, limit: 10}).marshal())
	f.Add((&request{kind: reqChain, limit: 10}).marshal())
	f.Add((&request{kind: reqVotes, hashes: []ledger.Hash{{1}}}).marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRequest(b)
		if err != nil {
			return
		}
		again, err := parseRequest(r.marshal())
		if err != nil {
			t.Fatalf("re-encoded request does not parse: %v", err)
		}
		if !bytes.Equal(again.marshal(), r.marshal()) {
			t.Fatalf("not stable: %x vs %x", again.marshal(), r.marshal())
		}
	})
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, 'E', 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		var buf []byte
		r := bytes.NewReader(b)
		for {
			kind, body, err := readFrame(r, &buf)
			if err != nil {
				return
			}
			if len(body)+1 > maxFrame {
				t.Fatalf("frame %q of %d bytes passed the bound", kind, len(body))
			}
		}
	})
}

func TestUncheckedIsBounded(t *testing.T) {
	u := newUnchecked(3, 1<<20)
	var missing ledger.Hash
	for i := range 5 {
		b := &ledger.Block{Hash: ledger.Hash{byte(i + 1)}}
		u.add(b, missing)
	}
	count, _, evicted := u.stats()
	if count != 3 || evicted != 2 {
		t.Errorf("count %d evicted %d, want 3 and 2", count, evicted)
	}
	got := u.release(missing)
	if len(got) != 3 || got[0].Hash != (ledger.Hash{3}) {
		t.Errorf("released %d blocks starting %v, want the 3 newest", len(got), got)
	}
	if count, bytes, _ := u.stats(); count != 0 || bytes != 0 {
		t.Errorf("after release: %d blocks, %d bytes", count, bytes)
	}
	// By bytes too.
	u = newUnchecked(100, 2*blockSize(&ledger.Block{}))
	for i := range 3 {
		u.add(&ledger.Block{Hash: ledger.Hash{byte(i + 1)}}, missing)
	}
	if count, _, evicted := u.stats(); count != 2 || evicted != 1 {
		t.Errorf("byte bound: %d blocks, %d evicted; want 2 and 1", count, evicted)
	}
}

func FuzzDecodeBlocks(f *testing.F) {
	b := &ledger.Block{Type: ledger.TypeSend, Account: ledger.Address{1}, Asset: ledger.Native, Timestamp: 1, Destination: ledger.Address{2}, Amount: ledger.NewAmount(1)}
	b.Seal()
	data, _ := encodeBlocks([]*ledger.Block{b, b})
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		blocks, err := decodeBlocks(data)
		if err != nil {
			return
		}
		again, n := encodeBlocks(blocks)
		if n != len(blocks) || !bytes.Equal(again, data) {
			t.Fatalf("re-encoding %d blocks gave %d bytes for %d, want %d bytes", len(blocks), len(again), n, len(data))
		}
	})
}

func TestBlocksMessageSplitsAtTheBound(t *testing.T) {
	b := &ledger.Block{Type: ledger.TypeSend, Account: ledger.Address{1}, Asset: ledger.Native, Timestamp: 1, Destination: ledger.Address{2}, Amount: ledger.NewAmount(1)}
	b.Seal()
	many := make([]*ledger.Block, maxGossipBlocks+10)
	for i := range many {
		many[i] = b
	}
	data, n := encodeBlocks(many)
	if n != maxGossipBlocks {
		t.Fatalf("took %d blocks, want %d", n, maxGossipBlocks)
	}
	got, err := decodeBlocks(data)
	if err != nil || len(got) != n || got[0].Hash != b.Hash {
		t.Fatalf("decode: %d blocks, %v", len(got), err)
	}
	for name, bad := range map[string][]byte{
		"empty":     nil,
		"zero":      {0, 0},
		"truncated": data[:len(data)-1],
		"trailing":  append(append([]byte{}, data...), 0),
	} {
		if _, err := decodeBlocks(bad); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// TestReleaseAllFollowsTheChain: a chain that arrived backwards comes out
// whole, in the order it applies, when its first missing block arrives.
func TestReleaseAllFollowsTheChain(t *testing.T) {
	u := newUnchecked(100, 1<<20)
	root := ledger.Hash{1}
	chain := []*ledger.Block{{Hash: ledger.Hash{2}}, {Hash: ledger.Hash{3}}, {Hash: ledger.Hash{4}}}
	// Arrived last first: 4 waits for 3, 3 for 2, 2 for the root.
	u.add(chain[2], chain[1].Hash)
	u.add(chain[1], chain[0].Hash)
	u.add(chain[0], root)
	got := u.releaseAll(root)
	if len(got) != 3 {
		t.Fatalf("released %d blocks, want 3", len(got))
	}
	for i, b := range got {
		if b.Hash != chain[i].Hash {
			t.Errorf("released[%d] = %v, want %v", i, b.Hash, chain[i].Hash)
		}
	}
	if n, _, _ := u.stats(); n != 0 {
		t.Errorf("%d blocks still waiting", n)
	}
}

// TestUncheckedForgetsLostForks: what waits for a fork's loser is dropped
// with it, and a block that comes later built on the loser, or on what was
// built on it, is not kept, since nothing would ever release it.
func TestUncheckedForgetsLostForks(t *testing.T) {
	u := newUnchecked(100, 1<<20)
	loser, other := ledger.Hash{1}, ledger.Hash{9}
	b2, b3, b4 := &ledger.Block{Hash: ledger.Hash{2}}, &ledger.Block{Hash: ledger.Hash{3}}, &ledger.Block{Hash: ledger.Hash{4}}
	if got := u.add(b2, loser); got != added {
		t.Fatalf("add before the loss: %d", got)
	}
	u.add(&ledger.Block{Hash: ledger.Hash{8}}, other)
	if n := u.drop(loser); n != 1 {
		t.Fatalf("drop removed %d blocks, want 1", n)
	}
	for _, c := range []struct {
		b       *ledger.Block
		missing ledger.Hash
	}{{b3, loser}, {b4, b2.Hash}, {&ledger.Block{Hash: ledger.Hash{5}}, b4.Hash}} {
		if got := u.add(c.b, c.missing); got != deadEnd {
			t.Errorf("block %v waiting for %v: add says %d, want deadEnd", c.b.Hash, c.missing, got)
		}
	}
	if n, _, _ := u.stats(); n != 1 || !u.waitsFor(other) {
		t.Errorf("%d blocks wait, want only the one waiting for another block", n)
	}
	if got := u.add(b2, ledger.Hash{7}); got != added {
		t.Errorf("a block waiting for a hash never lost: add says %d", got)
	}
}

// TestUncheckedLostIsBounded: the ring of lost hashes forgets the oldest.
func TestUncheckedLostIsBounded(t *testing.T) {
	u := newUnchecked(100, 1<<20)
	h := func(i int) ledger.Hash { return ledger.Hash{byte(i), byte(i >> 8), byte(i >> 16)} }
	for i := range maxLost + 10 {
		u.drop(h(i))
	}
	if len(u.lost.has) != maxLost || len(u.lost.ring) != maxLost {
		t.Fatalf("%d lost in the map, %d in the ring, want %d", len(u.lost.has), len(u.lost.ring), maxLost)
	}
	if u.lost.contains(h(5)) {
		t.Error("an old lost hash is still remembered")
	}
	if !u.lost.contains(h(maxLost + 9)) {
		t.Error("the newest lost hash is forgotten")
	}
}
