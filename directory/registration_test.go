package directory_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"math/big"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/ledger"
)

// The directory vectors of docs/protocol.md live in testdata/vectors.json.
// TestVectors checks every claim the file makes against the package and
// against an independent spelling-out of the rules; `go test ./directory
// -run TestVectors -update` regenerates it. Generation is deterministic
// (fixed seeds and timestamps), so the file only changes when the protocol
// does.

var update = flag.Bool("update", false, "rewrite testdata/vectors.json")

const vectorsPath = "testdata/vectors.json"

// vecEpoch is 2026-01-01T00:00:00Z in ms, the epoch of the ledger vectors.
const vecEpoch int64 = 1767225600000

// Accounts are the keys of ledger/testdata/vectors.json (key n has the seed
// byte n repeated 32 times); nodes are libp2p ed25519 identities with the
// seed bytes 7 and 8.
const (
	alice = 2
	bob   = 3
	carol = 4
	node1 = 7
	node2 = 8
)

func vecKey(n byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize))
}

func addr(priv ed25519.PrivateKey) ledger.Address {
	var a ledger.Address
	copy(a[:], priv.Public().(ed25519.PublicKey))
	return a
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

func base58Encode(b []byte) string {
	var out []byte
	for n, zero, r := new(big.Int).SetBytes(b), new(big.Int), new(big.Int); n.Cmp(zero) > 0; {
		n.DivMod(n, big.NewInt(58), r)
		out = append(out, base58Alphabet[r.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, '1')
	}
	slices.Reverse(out)
	return string(out)
}

// peerID returns the text form of the libp2p peer ID of the ed25519 key with
// the seed byte n repeated: base58btc of the identity multihash (0x00, length
// 0x24) of the protobuf PublicKey{Type: Ed25519, Data: key}.
func peerID(n byte) string {
	pub := vecKey(n).Public().(ed25519.PublicKey)
	return base58Encode(slices.Concat([]byte{0x00, 0x24, 0x08, 0x01, 0x12, 0x20}, pub))
}

func TestPeerID(t *testing.T) {
	// As go-libp2p's peer.IDFromPrivateKey gives them.
	for n, want := range map[byte]string{
		node1: "12D3KooWRawPbxPtP1eZaJpumGnyWX2DcUyd3RQnydr3eAto4Az7",
		node2: "12D3KooWB8sCGZCrwr79HtabLAn95qyPQx6RYHXjEbiD6QKou7ww",
	} {
		if got := peerID(n); got != want {
			t.Errorf("peer ID of seed %d got %s, want %s", n, got, want)
		}
	}
}

func signed(peer string, ts int64) *directory.Registration {
	r := &directory.Registration{NodePeer: peer, Timestamp: ts}
	r.Sign(vecKey(alice))
	return r
}

// preimage spells the registration preimage out independently of the
// package.
func preimage(r *directory.Registration) []byte {
	p := []byte("LATTICE-DIRECTORY-V1")
	p = append(p, r.Account[:]...)
	p = binary.BigEndian.AppendUint64(p, uint64(r.Timestamp))
	p = append(p, byte(len(r.NodePeer)))
	return append(p, r.NodePeer...)
}

func TestCheck(t *testing.T) {
	other := vecKey(carol)
	peer := peerID(node1)
	tests := []struct {
		name string
		pre  func(r *directory.Registration) // before signing
		post func(r *directory.Registration) // after signing
		want string                          // "" for valid, else a part of the error
	}{
		{"valid", nil, nil, ""},
		{"ed25519 peer ID (12D3KooW…)", func(r *directory.Registration) { r.NodePeer = peerID(node2) }, nil, ""},
		{"RSA-style peer ID (Qm…)", func(r *directory.Registration) { r.NodePeer = "QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N" }, nil, ""},
		{"whole alphabet", func(r *directory.Registration) { r.NodePeer = base58Alphabet }, nil, ""},
		{"one character", func(r *directory.Registration) { r.NodePeer = "z" }, nil, ""},
		{"128 characters", func(r *directory.Registration) { r.NodePeer = strings.Repeat("2", 128) }, nil, ""},
		{"timestamp 1", func(r *directory.Registration) { r.Timestamp = 1 }, nil, ""},
		{"largest timestamp", func(r *directory.Registration) { r.Timestamp = math.MaxInt64 }, nil, ""},

		{"zero account", nil, func(r *directory.Registration) { r.Account = ledger.Address{} }, "account is required"},
		{"empty node_peer", func(r *directory.Registration) { r.NodePeer = "" }, nil, "node_peer is required"},
		{"129 characters", func(r *directory.Registration) { r.NodePeer = strings.Repeat("2", 129) }, nil, "129 bytes, more than 128"},
		{"255 characters", func(r *directory.Registration) { r.NodePeer = strings.Repeat("2", 255) }, nil, "more than 128"},
		{"256 characters", func(r *directory.Registration) { r.NodePeer = strings.Repeat("2", 256) }, nil, "more than 128"},
		{"a 0", func(r *directory.Registration) { r.NodePeer = peer[:10] + "0" + peer[11:] }, nil, "not a peer ID"},
		{"an O", func(r *directory.Registration) { r.NodePeer = peer[:10] + "O" + peer[11:] }, nil, "not a peer ID"},
		{"an I", func(r *directory.Registration) { r.NodePeer = peer[:10] + "I" + peer[11:] }, nil, "not a peer ID"},
		{"an l", func(r *directory.Registration) { r.NodePeer = peer[:10] + "l" + peer[11:] }, nil, "not a peer ID"},
		{"a / (a multiaddr)", func(r *directory.Registration) { r.NodePeer = "/p2p/" + peer }, nil, "not a peer ID"},
		{"a / in the middle", func(r *directory.Registration) { r.NodePeer = peer[:20] + "/" + peer[20:] }, nil, "not a peer ID"},
		{"leading space", func(r *directory.Registration) { r.NodePeer = " " + peer }, nil, "not a peer ID"},
		{"trailing newline", func(r *directory.Registration) { r.NodePeer = peer + "\n" }, nil, "not a peer ID"},
		{"NUL byte", func(r *directory.Registration) { r.NodePeer = peer + "\x00" }, nil, "not a peer ID"},
		{"non-ASCII", func(r *directory.Registration) { r.NodePeer = "12D3Kooé" }, nil, "not a peer ID"},
		{"invalid UTF-8", func(r *directory.Registration) { r.NodePeer = "12\xff3" }, nil, "not a peer ID"},
		{"zero timestamp", func(r *directory.Registration) { r.Timestamp = 0 }, nil, "timestamp 0 is not a positive"},
		{"negative timestamp", func(r *directory.Registration) { r.Timestamp = -1 }, nil, "timestamp -1 is not a positive"},
		{"zero signature", nil, func(r *directory.Registration) { r.Signature = ledger.Signature{} }, "signature is required"},
		{"signature by another key", nil, func(r *directory.Registration) {
			h := r.Hash()
			copy(r.Signature[:], ed25519.Sign(other, h[:]))
		}, "signature is not the account's"},
		{"account changed after signing", nil, func(r *directory.Registration) { r.Account = addr(other) }, "signature is not the account's"},
		{"node_peer changed after signing", nil, func(r *directory.Registration) { r.NodePeer = peerID(node2) }, "signature is not the account's"},
		{"one byte of node_peer changed after signing", nil, func(r *directory.Registration) {
			b := []byte(r.NodePeer)
			b[len(b)-1] = '2'
			if string(b) == r.NodePeer {
				b[len(b)-1] = '3'
			}
			r.NodePeer = string(b)
		}, "signature is not the account's"},
		{"timestamp changed after signing", nil, func(r *directory.Registration) { r.Timestamp++ }, "signature is not the account's"},
		{"last hex digit of the signature changed", nil, func(r *directory.Registration) {
			s := []byte(r.Signature.String())
			if s[len(s)-1] == '0' {
				s[len(s)-1] = '1'
			} else {
				s[len(s)-1] = '0'
			}
			if err := r.Signature.UnmarshalText(s); err != nil {
				panic(err)
			}
		}, "signature is not the account's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &directory.Registration{NodePeer: peer, Timestamp: vecEpoch}
			if tt.pre != nil {
				tt.pre(r)
			}
			r.Sign(vecKey(alice))
			if tt.post != nil {
				tt.post(r)
			}
			err := r.Check()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want nil", err)
			case tt.want == "":
			case err == nil:
				t.Errorf("got nil, want an error saying %q", tt.want)
			case !errors.Is(err, directory.ErrInvalid):
				t.Errorf("got %v, want an error wrapping ErrInvalid", err)
			case !strings.Contains(err.Error(), tt.want):
				t.Errorf("got %q, want an error saying %q", err, tt.want)
			}
		})
	}
}

func TestSignAndHash(t *testing.T) {
	priv := vecKey(alice)
	r := &directory.Registration{Account: addr(vecKey(carol)), NodePeer: peerID(node1), Timestamp: vecEpoch}
	r.Sign(priv)
	if got, want := r.Account, addr(priv); got != want {
		t.Errorf("Sign: account got %s, want the signer %s", got, want)
	}
	pre := preimage(r)
	if got := r.AppendPreimage(nil); !bytes.Equal(got, pre) {
		t.Errorf("AppendPreimage got %x, want %x", got, pre)
	}
	if got, want := len(pre), 20+32+8+1+len(r.NodePeer); got != want {
		t.Errorf("preimage length got %d, want %d", got, want)
	}
	if got, want := r.Hash(), ledger.Hash(sha256.Sum256(pre)); got != want {
		t.Errorf("Hash got %s, want SHA-256 of the preimage %s", got, want)
	}
	h := r.Hash()
	if !ed25519.Verify(priv.Public().(ed25519.PublicKey), h[:], r.Signature[:]) {
		t.Errorf("signature %s does not verify over the digest", r.Signature)
	}
	c := *r
	c.Signature[0] ^= 1
	if got, want := c.Hash(), r.Hash(); got != want {
		t.Errorf("changing the signature: got hash %s, want %s", got, want)
	}
}

func TestNewer(t *testing.T) {
	p1, p2 := peerID(node1), peerID(node2)
	early, late := signed(p1, vecEpoch), signed(p1, vecEpoch+1)
	// A pair whose earlier registration has the greater digest: the
	// timestamp decides before the digest does.
	var bigEarly, smallLate *directory.Registration
	for i := int64(0); bigEarly == nil; i++ {
		a, b := signed(p1, vecEpoch+2*i), signed(p2, vecEpoch+2*i+1)
		if ha, hb := a.Hash(), b.Hash(); bytes.Compare(ha[:], hb[:]) > 0 {
			bigEarly, smallLate = a, b
		}
	}
	tieA, tieB := signed(p1, vecEpoch+100), signed(p2, vecEpoch+100)
	ha, hb := tieA.Hash(), tieB.Hash()
	greater, lesser := tieA, tieB
	if bytes.Compare(ha[:], hb[:]) < 0 {
		greater, lesser = tieB, tieA
	}
	resigned := *greater
	resigned.Signature = ledger.Signature{}

	tests := []struct {
		name   string
		r, old *directory.Registration
		want   bool
	}{
		{"later timestamp", late, early, true},
		{"earlier timestamp", early, late, false},
		{"later timestamp, smaller digest", smallLate, bigEarly, true},
		{"earlier timestamp, greater digest", bigEarly, smallLate, false},
		{"largest timestamp over the smallest", signed(p1, math.MaxInt64), signed(p2, 1), true},
		{"equal timestamps, greater digest", greater, lesser, true},
		{"equal timestamps, smaller digest", lesser, greater, false},
		{"the same registration", tieA, tieA, false},
		{"the same but for the signature", &resigned, greater, false},
		{"the same but for the signature, reversed", greater, &resigned, false},
	}
	for _, tt := range tests {
		if got := directory.Newer(tt.r, tt.old); got != tt.want {
			t.Errorf("%s: Newer got %v, want %v", tt.name, got, tt.want)
		}
	}
	// Of two registrations with the same timestamp and different digests,
	// exactly one is newer than the other, whichever order they come in.
	for i := range int64(50) {
		a, b := signed(p1, vecEpoch+i), signed(p2, vecEpoch+i)
		if directory.Newer(a, b) == directory.Newer(b, a) {
			t.Errorf("timestamp %d: Newer(a, b) got %v and Newer(b, a) got %v, want them to differ", vecEpoch+i, directory.Newer(a, b), directory.Newer(b, a))
		}
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		r    *directory.Registration
	}{
		{"ed25519 peer ID", signed(peerID(node1), vecEpoch)},
		{"one character", signed("z", vecEpoch)},
		{"128 characters", signed(strings.Repeat("z", directory.MaxPeerBytes), vecEpoch)},
		// The binary form carries what Check refuses: it checks shape only.
		{"empty, unsigned", &directory.Registration{}},
		{"not base58, negative timestamp", &directory.Registration{NodePeer: "/\x00é", Timestamp: math.MinInt64}},
	}
	for _, tt := range tests {
		b, err := tt.r.MarshalBinary()
		if err != nil {
			t.Errorf("%s: MarshalBinary got %v, want nil", tt.name, err)
			continue
		}
		want := slices.Concat(tt.r.Account[:], binary.BigEndian.AppendUint64(nil, uint64(tt.r.Timestamp)),
			[]byte{byte(len(tt.r.NodePeer))}, []byte(tt.r.NodePeer), tt.r.Signature[:])
		if !bytes.Equal(b, want) {
			t.Errorf("%s: MarshalBinary got %x, want %x", tt.name, b, want)
		}
		back := directory.Registration{NodePeer: "old", Timestamp: 99}
		if err := back.UnmarshalBinary(b); err != nil {
			t.Errorf("%s: UnmarshalBinary got %v, want nil", tt.name, err)
			continue
		}
		if back != *tt.r {
			t.Errorf("%s: round trip got %+v, want %+v", tt.name, back, *tt.r)
		}
		if got, want := back.Check() == nil, tt.r.Check() == nil; got != want {
			t.Errorf("%s: after the round trip Check passes: got %v, want %v", tt.name, got, want)
		}
	}
	long := directory.Registration{NodePeer: strings.Repeat("z", directory.MaxPeerBytes+1)}
	if b, err := long.MarshalBinary(); !errors.Is(err, directory.ErrInvalid) {
		t.Errorf("MarshalBinary of a 129-byte node_peer got %x, %v, want ErrInvalid", b, err)
	}
}

func TestUnmarshalBinaryRefuses(t *testing.T) {
	good, err := signed(peerID(node1), vecEpoch).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	n := len(peerID(node1))
	withLength := func(length byte, peer int) []byte {
		b := append([]byte(nil), good[:40]...)
		b = append(b, length)
		b = append(b, bytes.Repeat([]byte{'z'}, peer)...)
		return append(b, good[len(good)-64:]...)
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"104 bytes, one short of an empty node_peer", make([]byte, 104)},
		{"header only", good[:41]},
		{"last byte missing", good[:len(good)-1]},
		{"trailing byte", append(append([]byte(nil), good...), 0)},
		{"length says one more than node_peer", withLength(byte(n+1), n)},
		{"length says one less than node_peer", withLength(byte(n-1), n)},
		{"length says 0 with a node_peer", withLength(0, n)},
		{"length 129 with 129 bytes", withLength(129, 129)},
		{"length 255 with 255 bytes", withLength(255, 255)},
	}
	for _, tt := range tests {
		r := directory.Registration{NodePeer: "untouched", Timestamp: 7}
		if err := r.UnmarshalBinary(tt.data); !errors.Is(err, directory.ErrInvalid) {
			t.Errorf("%s: UnmarshalBinary got %v, want ErrInvalid", tt.name, err)
		}
		if want := (directory.Registration{NodePeer: "untouched", Timestamp: 7}); r != want {
			t.Errorf("%s: on error the registration got %+v, want it unchanged", tt.name, r)
		}
	}
	for _, n := range []int{0, 1, directory.MaxPeerBytes} {
		var r directory.Registration
		if err := r.UnmarshalBinary(withLength(byte(n), n)); err != nil {
			t.Errorf("node_peer of %d bytes: UnmarshalBinary got %v, want nil", n, err)
		}
	}
}

func TestJSON(t *testing.T) {
	r := signed(peerID(node1), vecEpoch)
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"account", "node_peer", "signature", "timestamp"}; !slices.Equal(keys, want) {
		t.Errorf("JSON %s: got fields %v, want %v", data, keys, want)
	}
	var back directory.Registration
	if err := json.Unmarshal(data, &back); err != nil || back != *r {
		t.Errorf("JSON round trip got %+v, %v, want %+v", back, err, *r)
	}
}

func FuzzUnmarshalBinary(f *testing.F) {
	for _, peer := range []string{peerID(node1), "z", strings.Repeat("z", directory.MaxPeerBytes)} {
		b, err := signed(peer, vecEpoch).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	good, _ := signed(peerID(node1), vecEpoch).MarshalBinary()
	f.Add(good[:len(good)-1])
	f.Add(append(good, 0))
	f.Add(make([]byte, 105))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var r directory.Registration
		if err := r.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, directory.ErrInvalid) {
				t.Fatalf("UnmarshalBinary error %v does not wrap ErrInvalid", err)
			}
			return
		}
		again, err := r.MarshalBinary()
		if err != nil {
			t.Fatalf("a decoded registration does not re-encode: %v", err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("round trip got %x, want %x", again, data)
		}
		_ = r.Check() // must not panic
		if directory.Newer(&r, &r) {
			t.Fatal("a registration is newer than itself")
		}
	})
}

// Test vectors.

type vectorFile struct {
	Comment       []string             `json:"comment"`
	Keys          []vectorKey          `json:"keys"`
	Nodes         []vectorNode         `json:"nodes"`
	Registrations []registrationVector `json:"registrations"`
	Newer         []newerVector        `json:"newer"`
}

type vectorKey struct {
	Name    string         `json:"name"`
	Seed    string         `json:"seed"`
	Address ledger.Address `json:"address"`
}

type vectorNode struct {
	Name   string `json:"name"`
	Seed   string `json:"seed"`
	PeerID string `json:"peer_id"`
}

type registrationVector struct {
	Name         string                 `json:"name"`
	Description  string                 `json:"description"`
	Seed         string                 `json:"seed"`
	Account      ledger.Address         `json:"account"`
	NodePeer     string                 `json:"node_peer"`
	Timestamp    int64                  `json:"timestamp"`
	Registration directory.Registration `json:"registration"`
	Preimage     string                 `json:"preimage"`
	Hash         ledger.Hash            `json:"hash"`
	Signature    ledger.Signature       `json:"signature"`
	Binary       string                 `json:"binary"`
}

// newerVector says whether registration R replaces Old: Newer(R, Old).
type newerVector struct {
	R     string `json:"r"`
	Old   string `json:"old"`
	Newer bool   `json:"newer"`
}

func generateVectors() ([]byte, error) {
	f := vectorFile{Comment: []string{
		"Test vectors for Lattice directory registrations; see docs/protocol.md, \"Chat messages and directory registrations\".",
		"Generated by `go test ./directory -run TestVectors -update` (directory/registration_test.go) and checked by the same test.",
		"The keys are those of ledger/testdata/vectors.json (key n has the seed byte n repeated 32 times: 2 is alice, 3 is bob);",
		"the nodes are libp2p ed25519 identities whose peer_id is base58btc of the identity multihash of the protobuf public key.",
		"registration is the JSON form; preimage, hash (its SHA-256), signature (ed25519 of the 32-byte hash) and binary (the wire form) are hex.",
		"newer lists pairs of registrations (by name) of one account and whether r replaces old: the later timestamp wins,",
		"and of two with equal timestamps the one with the greater hash (compared as unsigned big-endian numbers).",
	}}
	for _, k := range []struct {
		name string
		n    byte
	}{{"alice", alice}, {"bob", bob}} {
		f.Keys = append(f.Keys, vectorKey{k.name, hex.EncodeToString(vecKey(k.n).Seed()), addr(vecKey(k.n))})
	}
	for _, k := range []struct {
		name string
		n    byte
	}{{"node1", node1}, {"node2", node2}} {
		f.Nodes = append(f.Nodes, vectorNode{k.name, hex.EncodeToString(vecKey(k.n).Seed()), peerID(k.n)})
	}
	for _, c := range []struct {
		name, desc string
		key        byte
		peer       string
		ts         int64
	}{
		{"alice at node1", "Alice is reached at node1.", alice, peerID(node1), vecEpoch + 70_000},
		{"alice at node2", "Alice moves to node2 a minute later: this registration replaces the first.", alice, peerID(node2), vecEpoch + 130_000},
		{"alice tie node1", "Alice registers node1 and node2 with one timestamp; the greater hash wins.", alice, peerID(node1), vecEpoch + 190_000},
		{"alice tie node2", "The other registration of the tie.", alice, peerID(node2), vecEpoch + 190_000},
		{"bob at node1", "Bob is reached at node1 too.", bob, peerID(node1), vecEpoch + 71_000},
	} {
		priv := vecKey(c.key)
		r := directory.Registration{NodePeer: c.peer, Timestamp: c.ts}
		r.Sign(priv)
		bin, err := r.MarshalBinary()
		if err != nil {
			return nil, err
		}
		f.Registrations = append(f.Registrations, registrationVector{
			Name: c.name, Description: c.desc, Seed: hex.EncodeToString(priv.Seed()), Account: addr(priv),
			NodePeer: c.peer, Timestamp: c.ts, Registration: r,
			Preimage: hex.EncodeToString(r.AppendPreimage(nil)), Hash: r.Hash(), Signature: r.Signature, Binary: hex.EncodeToString(bin),
		})
	}
	byName := func(name string) *directory.Registration {
		for i := range f.Registrations {
			if f.Registrations[i].Name == name {
				return &f.Registrations[i].Registration
			}
		}
		panic(name)
	}
	for _, p := range [][2]string{
		{"alice at node2", "alice at node1"},
		{"alice at node1", "alice at node2"},
		{"alice tie node1", "alice tie node2"},
		{"alice tie node2", "alice tie node1"},
		{"alice tie node1", "alice tie node1"},
	} {
		f.Newer = append(f.Newer, newerVector{p[0], p[1], directory.Newer(byName(p[0]), byName(p[1]))})
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func TestVectors(t *testing.T) {
	want, err := generateVectors()
	if err != nil {
		t.Fatalf("generating vectors: %v", err)
	}
	if *update {
		if err := os.WriteFile(vectorsPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatalf("%v (run go test ./directory -run TestVectors -update)", err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("%s is stale: run go test ./directory -run TestVectors -update", vectorsPath)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f vectorFile
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("decoding %s: %v", vectorsPath, err)
	}
	if len(f.Keys) == 0 || len(f.Nodes) == 0 || len(f.Registrations) == 0 || len(f.Newer) == 0 {
		t.Fatal("no vectors")
	}
	for _, k := range f.Keys {
		if got := addr(ed25519.NewKeyFromSeed(mustHex(t, k.Seed))); got != k.Address {
			t.Errorf("key %s: seed gives address %s, file says %s", k.Name, got, k.Address)
		}
	}
	for _, n := range f.Nodes {
		pub := ed25519.NewKeyFromSeed(mustHex(t, n.Seed)).Public().(ed25519.PublicKey)
		if got := base58Encode(slices.Concat([]byte{0x00, 0x24, 0x08, 0x01, 0x12, 0x20}, pub)); got != n.PeerID {
			t.Errorf("node %s: seed gives peer ID %s, file says %s", n.Name, got, n.PeerID)
		}
	}
	regs := map[string]directory.Registration{}
	for _, v := range f.Registrations {
		regs[v.Name] = v.Registration
		t.Run(v.Name, func(t *testing.T) {
			priv := ed25519.NewKeyFromSeed(mustHex(t, v.Seed))
			r := v.Registration
			if got := addr(priv); got != v.Account || r.Account != v.Account {
				t.Errorf("account: seed gives %s, registration says %s, file says %s", got, r.Account, v.Account)
			}
			if r.NodePeer != v.NodePeer || r.Timestamp != v.Timestamp {
				t.Errorf("registration says %q at %d, file says %q at %d", r.NodePeer, r.Timestamp, v.NodePeer, v.Timestamp)
			}
			pre := preimage(&r)
			if got := hex.EncodeToString(pre); got != v.Preimage {
				t.Errorf("preimage got\n%s\nfile says\n%s", got, v.Preimage)
			}
			if got := hex.EncodeToString(r.AppendPreimage(nil)); got != v.Preimage {
				t.Errorf("AppendPreimage got\n%s\nfile says\n%s", got, v.Preimage)
			}
			if sum := ledger.Hash(sha256.Sum256(pre)); sum != v.Hash || r.Hash() != v.Hash {
				t.Errorf("hash: SHA-256 of the preimage %s, Hash %s, file says %s", sum, r.Hash(), v.Hash)
			}
			if got := ed25519.Sign(priv, v.Hash[:]); !bytes.Equal(got, v.Signature[:]) || r.Signature != v.Signature {
				t.Errorf("signature: signing the hash gives %x, registration carries %s, file says %s", got, r.Signature, v.Signature)
			}
			resigned := directory.Registration{NodePeer: r.NodePeer, Timestamp: r.Timestamp}
			if resigned.Sign(priv); resigned != r {
				t.Errorf("Sign got %+v, want %+v", resigned, r)
			}
			if err := r.Check(); err != nil {
				t.Errorf("Check got %v, want nil", err)
			}
			bin := mustHex(t, v.Binary)
			if got, err := r.MarshalBinary(); err != nil || !bytes.Equal(got, bin) {
				t.Errorf("binary got %x, %v, file says %s", got, err, v.Binary)
			}
			if got := slices.Concat(pre[20:], r.Signature[:]); !bytes.Equal(got, bin) {
				t.Errorf("binary is not the preimage without its tag, then the signature: got %x, file says %s", got, v.Binary)
			}
			var back directory.Registration
			if err := back.UnmarshalBinary(bin); err != nil || back != r {
				t.Errorf("UnmarshalBinary got %+v, %v, want %+v", back, err, r)
			}
		})
	}
	for _, n := range f.Newer {
		r, ok1 := regs[n.R]
		old, ok2 := regs[n.Old]
		if !ok1 || !ok2 {
			t.Errorf("newer names %q and %q, not both in the file", n.R, n.Old)
			continue
		}
		if got := directory.Newer(&r, &old); got != n.Newer {
			t.Errorf("Newer(%s, %s) got %v, file says %v", n.R, n.Old, got, n.Newer)
		}
		// The rule spelled out.
		hr, ho := r.Hash(), old.Hash()
		want := r.Timestamp > old.Timestamp || r.Timestamp == old.Timestamp && bytes.Compare(hr[:], ho[:]) > 0
		if want != n.Newer {
			t.Errorf("Newer(%s, %s): the rule gives %v, file says %v", n.R, n.Old, want, n.Newer)
		}
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}
