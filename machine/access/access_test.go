package access

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors.json")

// vector is one signed request, as docs/api.md shows it.
type vector struct {
	Seed      string `json:"seed"`
	Network   string `json:"network"`
	Method    string `json:"method"`
	Target    string `json:"target"`
	Body      string `json:"body"`
	Timestamp int64  `json:"timestamp"`
	Nonce     string `json:"nonce"`
	// Outputs.
	Message       string `json:"message"`
	Authorization string `json:"authorization"`
}

func (v vector) key(t *testing.T) ed25519.PrivateKey {
	seed, err := hex.DecodeString(v.Seed)
	if err != nil {
		t.Fatal(err)
	}
	return ed25519.NewKeyFromSeed(seed)
}

func (v vector) inputs(t *testing.T) (ledger.Hash, Request, [16]byte) {
	net, err := ledger.ParseHash(v.Network)
	if err != nil {
		t.Fatal(err)
	}
	var nonce [16]byte
	if err := decodeHex(nonce[:], v.Nonce); err != nil {
		t.Fatal(err)
	}
	return net, Request{Method: v.Method, Target: v.Target, Body: []byte(v.Body)}, nonce
}

func TestVectors(t *testing.T) {
	path := filepath.Join("testdata", "vectors.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) < 2 {
		t.Fatalf("%d vectors", len(vs))
	}
	for i, v := range vs {
		net, r, nonce := v.inputs(t)
		msg := hex.EncodeToString(Message(net, r, v.Timestamp, nonce))
		c := SignWith(v.key(t), net, r, v.Timestamp, nonce)
		if *update {
			vs[i].Message, vs[i].Authorization = msg, c.Header()
			continue
		}
		if msg != v.Message {
			t.Errorf("vector %d: message\n got %s\nwant %s", i, msg, v.Message)
		}
		if c.Header() != v.Authorization {
			t.Errorf("vector %d: authorization\n got %s\nwant %s", i, c.Header(), v.Authorization)
		}
		// What a server does with the header.
		got, err := Parse(v.Authorization)
		if err != nil {
			t.Fatalf("vector %d: %v", i, err)
		}
		if err := got.Verify(net, r); err != nil {
			t.Errorf("vector %d: %v", i, err)
		}
		r.Body = append(r.Body, 'x')
		if err := got.Verify(net, r); !errors.Is(err, ErrSignature) {
			t.Errorf("vector %d: another body verified: %v", i, err)
		}
	}
	if *update {
		out, _ := json.MarshalIndent(vs, "", "  ")
		if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestParse(t *testing.T) {
	priv := ed25519.NewKeyFromSeed(make([]byte, 32))
	c := SignWith(priv, ledger.Hash{1}, Request{Method: "POST", Target: "/vms/x/exec"}, 1767225600000, [16]byte{2})
	good := c.Header()
	params := strings.TrimPrefix(good, Scheme+" ")
	parts := strings.Split(params, ", ")
	for _, tc := range []struct {
		name, header string
		want         error
	}{
		{"empty", "", ErrMissing},
		{"blank", "   ", ErrMissing},
		{"bearer", "Bearer abc", ErrMalformed},
		{"scheme only", Scheme, ErrMalformed},
		{"another scheme", "Lattice-Ed448 " + params, ErrMalformed},
		{"missing signature", Scheme + " " + strings.Join(parts[:3], ", "), ErrMalformed},
		{"twice", good + ", " + parts[0], ErrMalformed},
		{"unknown", good + ", realm=x", ErrMalformed},
		{"no equals", good + ", key", ErrMalformed},
		{"short nonce", strings.Replace(good, "nonce=02", "nonce=", 1), ErrMalformed},
		{"bad hex", strings.Replace(good, "nonce=02", "nonce=zz", 1), ErrMalformed},
		{"negative time", strings.Replace(good, "timestamp=", "timestamp=-", 1), ErrMalformed},
		{"time not a number", strings.Replace(good, "timestamp=1", "timestamp=x", 1), ErrMalformed},
		{"bad key", strings.Replace(good, "key=", "key=zz", 1), ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse(tc.header); !errors.Is(err, tc.want) {
				t.Fatalf("Parse(%q): %v, want %v", tc.header, err, tc.want)
			}
		})
	}
	// Parameters in any order, extra spaces.
	reordered := Scheme + " " + parts[3] + " ,  " + parts[2] + "," + parts[1] + ", " + parts[0]
	got, err := Parse(reordered)
	if err != nil || got != c {
		t.Fatalf("Parse(%q) = %+v, %v; want %+v", reordered, got, err, c)
	}
}

func TestGuard(t *testing.T) {
	net := ledger.Hash{7}
	priv := ed25519.NewKeyFromSeed(make([]byte, 32))
	var owner ledger.Address
	copy(owner[:], priv.Public().(ed25519.PublicKey))
	other := ed25519.NewKeyFromSeed(append(make([]byte, 31), 1))
	t0 := time.UnixMilli(1767225600000)
	now := t0
	g := NewGuard(net, func() time.Time { return now })
	r := Request{Method: "POST", Target: "/vms/ab/exec", Body: []byte(`{"command":"id"}`)}

	fresh := Sign(priv, net, r, now)
	if err := g.Check(fresh, owner, r); err != nil {
		t.Fatalf("a fresh credential: %v", err)
	}
	if err := g.Check(fresh, owner, r); !errors.Is(err, ErrReplayed) {
		t.Fatalf("replayed: %v", err)
	}
	for _, tc := range []struct {
		name string
		c    Credential
		r    Request
		want error
	}{
		{"another key", Sign(other, net, r, now), r, ErrWrongKey},
		{"another network", Sign(priv, ledger.Hash{8}, r, now), r, ErrSignature},
		{"another path", Sign(priv, net, Request{Method: "POST", Target: "/vms/cd/exec", Body: r.Body}, now), r, ErrSignature},
		{"another method", Sign(priv, net, Request{Method: "GET", Target: r.Target, Body: r.Body}, now), r, ErrSignature},
		{"too old", Sign(priv, net, r, now.Add(-Window-time.Second)), r, ErrExpired},
		{"too new", Sign(priv, net, r, now.Add(Window+time.Second)), r, ErrExpired},
		{"before the guard", Sign(priv, net, r, now.Add(-time.Second)), r, ErrExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := g.Check(tc.c, owner, tc.r); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	// A refused credential leaves its nonce unused: signed right, it
	// passes once.
	late := Sign(priv, net, r, now.Add(Window))
	if err := g.Check(late, owner, r); err != nil {
		t.Fatal(err)
	}
	// One key's burst is refused past its share, and leaves the others'.
	for range MaxNoncesPerKey - 2 { // two are in already
		if err := g.Check(Sign(priv, net, r, now), owner, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Check(Sign(priv, net, r, now), owner, r); !errors.Is(err, ErrBusy) {
		t.Fatalf("past the key's share: %v", err)
	}
	var otherAddr ledger.Address
	copy(otherAddr[:], other.Public().(ed25519.PublicKey))
	if err := g.Check(Sign(other, net, r, now), otherAddr, r); err != nil {
		t.Fatalf("another key meanwhile: %v", err)
	}
	// Nonces are forgotten once their credentials can no longer pass...
	now = now.Add(2*Window + time.Second)
	if err := g.Check(Sign(priv, net, r, now), owner, r); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	n := len(g.seen)
	g.mu.Unlock()
	if n != 1 || len(g.perKey) != 1 {
		t.Fatalf("%d nonces of %d keys remembered, want 1 of 1", n, len(g.perKey))
	}
	// ...and the first is refused for its time, not as a replay.
	if err := g.Check(fresh, owner, r); !errors.Is(err, ErrExpired) {
		t.Fatalf("an old credential: %v", err)
	}
}

// TestGuardReserve fills a guard's memory with busy keys' nonces (as
// 32 lease holders at their bound would) and checks that a key that has
// made few requests still gets in, up to its floor, and that the memory
// never passes MaxNonces+Reserve.
func TestGuardReserve(t *testing.T) {
	net := ledger.Hash{7}
	now := time.UnixMilli(1767225600000)
	g := NewGuard(net, func() time.Time { return now })
	until := now.UnixMilli() + 2*Window.Milliseconds()
	// fill gives key n nonces, as if it had made n requests just now.
	fill := func(key ledger.Address, n int) {
		g.mu.Lock()
		defer g.mu.Unlock()
		for i := range n {
			kn := keyNonce{key, [16]byte{byte(i), byte(i >> 8), byte(i >> 16), 0xfe}}
			g.seen[kn] = until
			g.perKey[key]++
			g.order = append(g.order, nonceAt{kn, until})
		}
	}
	for i := range MaxNonces / MaxNoncesPerKey {
		fill(ledger.Address{0xb0, byte(i)}, MaxNoncesPerKey)
	}
	r := Request{Method: "POST", Target: "/vms/ab/exec", Body: []byte(`{"command":"id"}`)}
	busy := ed25519.NewKeyFromSeed(append(make([]byte, 31), 2))
	light := ed25519.NewKeyFromSeed(append(make([]byte, 31), 3))
	addr := func(k ed25519.PrivateKey) ledger.Address { return ledger.Address(k.Public().(ed25519.PublicKey)) }
	fill(addr(busy), FloorPerKey)
	fill(addr(light), FloorPerKey-1)

	if err := g.Check(Sign(busy, net, r, now), addr(busy), r); !errors.Is(err, ErrBusy) {
		t.Fatalf("a key at its floor, the guard full: %v", err)
	}
	if err := g.Check(Sign(light, net, r, now), addr(light), r); err != nil {
		t.Fatalf("a key under its floor, the guard full: %v", err)
	}
	if err := g.Check(Sign(light, net, r, now), addr(light), r); !errors.Is(err, ErrBusy) {
		t.Fatalf("the same key past its floor: %v", err)
	}
	// The reserve is bounded too: once it is taken, even a new key waits.
	g.mu.Lock()
	room := MaxNonces + Reserve - len(g.seen)
	g.mu.Unlock()
	for i := range room / (FloorPerKey - 1) {
		fill(ledger.Address{0xc0, byte(i), byte(i >> 8)}, FloorPerKey-1)
	}
	fill(ledger.Address{0xd0}, room%(FloorPerKey-1))
	fresh := ed25519.NewKeyFromSeed(append(make([]byte, 31), 4))
	if err := g.Check(Sign(fresh, net, r, now), addr(fresh), r); !errors.Is(err, ErrBusy) {
		t.Fatalf("a new key, the reserve full: %v", err)
	}
	// Once the busy keys' nonces expire, everyone is admitted again.
	now = now.Add(2*Window + time.Second)
	if err := g.Check(Sign(busy, net, r, now), addr(busy), r); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	priv := ed25519.NewKeyFromSeed(make([]byte, 32))
	f.Add(SignWith(priv, ledger.Hash{}, Request{Method: "GET", Target: "/"}, 1, [16]byte{}).Header())
	f.Add("Lattice-Ed25519 key=, timestamp=, nonce=, signature=")
	f.Add("")
	f.Fuzz(func(t *testing.T, h string) {
		c, err := Parse(h)
		if err != nil {
			return
		}
		// What parses prints back to a header that parses the same.
		again, err := Parse(c.Header())
		if err != nil || again != c {
			t.Fatalf("Parse(%q) = %+v; its header parses to %+v, %v", h, c, again, err)
		}
	})
}
