package p2p

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
)

// testNetwork is the network name of the tests' hosts.
const testNetwork = "test"

// waitFor is how long a test waits for something the network should do.
const waitFor = 20 * time.Second

// testConfig is a loopback host's configuration with short intervals.
func testConfig(t *testing.T, dir string, bootstrap ...*Host) Config {
	t.Helper()
	cfg := Config{
		Dir:               dir,
		Listen:            []string{"/ip4/127.0.0.1/tcp/0"},
		Network:           testNetwork,
		Logger:            testLogger(),
		LowPeers:          8,
		HighPeers:         16,
		ReconnectInterval: 100 * time.Millisecond,
		DialTimeout:       2 * time.Second,
		SaveInterval:      time.Hour,
		MaxMemory:         256 << 20,
		MaxFDs:            256,
	}
	for _, b := range bootstrap {
		cfg.Bootstrap = append(cfg.Bootstrap, b.Addrs()...)
	}
	return cfg
}

// testLogger discards the hosts' logs unless P2P_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("P2P_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// start starts a host and closes it when the test ends.
func start(t *testing.T, cfg Config) *Host {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// eventually fails the test if cond is not true within waitFor.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", waitFor, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func connected(a, b *Host) bool {
	return a.host.Network().Connectedness(b.ID()) == network.Connected
}

// inbox collects a topic's deliveries.
type inbox struct {
	mu   sync.Mutex
	msgs []string
	from []peer.ID
}

func (in *inbox) deliver(from peer.ID, data []byte) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.msgs = append(in.msgs, string(data))
	in.from = append(in.from, from)
}

func (in *inbox) has(msg string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Contains(in.msgs, msg)
}

func (in *inbox) hasPrefix(prefix string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.ContainsFunc(in.msgs, func(m string) bool { return strings.HasPrefix(m, prefix) })
}

func acceptAll(context.Context, peer.ID, []byte) Verdict { return Accept }

// join joins the test topic with validate and returns the topic and its inbox.
func join(t *testing.T, h *Host, validate func(context.Context, peer.ID, []byte) Verdict) (*Topic, *inbox) {
	t.Helper()
	in := &inbox{}
	topic, err := h.Join("blocks", validate, in.deliver)
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	return topic, in
}

func publish(t *testing.T, topic *Topic, msg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := topic.Publish(ctx, []byte(msg)); err != nil {
		t.Fatalf("Publish(%q): %v", msg, err)
	}
}

func TestGossipReachesEveryPeer(t *testing.T) {
	a := start(t, testConfig(t, t.TempDir()))
	b := start(t, testConfig(t, t.TempDir(), a))
	c := start(t, testConfig(t, t.TempDir(), a))
	ta, ina := join(t, a, acceptAll)
	_, inb := join(t, b, acceptAll)
	_, inc := join(t, c, acceptAll)
	eventually(t, "a sees b and c in the topic", func() bool {
		p := ta.Peers()
		return slices.Contains(p, b.ID()) && slices.Contains(p, c.ID())
	})

	publish(t, ta, "block-1")
	eventually(t, "b and c receive block-1", func() bool { return inb.has("block-1") && inc.has("block-1") })
	for _, in := range []*inbox{inb, inc} {
		in.mu.Lock()
		n := len(in.msgs)
		in.mu.Unlock()
		if n != 1 {
			t.Errorf("a receiver got %d deliveries, want 1", n)
		}
	}
	if ina.hasPrefix("") {
		t.Errorf("the publisher's deliver saw its own message: %v", ina.msgs)
	}
}

func TestRejectStopsPropagation(t *testing.T) {
	// a - b - c in a line: LowPeers 1 keeps a and c from discovering
	// each other.
	line := func(cfg Config) Config { cfg.LowPeers, cfg.HighPeers = 1, 4; return cfg }
	b := start(t, line(testConfig(t, t.TempDir())))
	a := start(t, line(testConfig(t, t.TempDir(), b)))
	c := start(t, line(testConfig(t, t.TempDir(), b)))
	ta, _ := join(t, a, acceptAll)
	tb, inb := join(t, b, func(_ context.Context, _ peer.ID, data []byte) Verdict {
		if bytes.HasPrefix(data, []byte("bad")) {
			return Reject
		}
		return Accept
	})
	_, inc := join(t, c, acceptAll)
	a.Isolate(c.ID()) // the DHT's own lookups would connect them
	c.Isolate(a.ID())
	eventually(t, "b sees a and c in the topic", func() bool {
		return len(tb.Peers()) == 2
	})
	// Publish until c receives one: b has c in its mesh from then on.
	for i := 0; !inc.hasPrefix("warm-up"); i++ {
		if i == 100 {
			t.Fatal("c received none of 100 warm-up messages")
		}
		publish(t, ta, "warm-up-"+string(rune('a'+i%26))+time.Now().Format("150405.000000"))
		time.Sleep(100 * time.Millisecond)
	}

	publish(t, ta, "bad-block")
	publish(t, ta, "good-block")
	eventually(t, "c receives good-block", func() bool { return inc.has("good-block") })
	time.Sleep(300 * time.Millisecond)
	if inb.has("bad-block") || inc.has("bad-block") {
		t.Errorf("bad-block delivered (b: %v, c: %v), want it stopped at b", inb.has("bad-block"), inc.has("bad-block"))
	}
	if connected(a, c) {
		t.Fatal("a and c got connected; the test needs them apart")
	}
}

func TestFloodOfRejectedMessagesGetsPeerBanned(t *testing.T) {
	b := start(t, testConfig(t, t.TempDir()))
	a := start(t, testConfig(t, t.TempDir(), b))
	ta, _ := join(t, a, acceptAll)
	var rejected sync.Map
	join(t, b, func(_ context.Context, from peer.ID, data []byte) Verdict {
		rejected.Store(string(data), from)
		return Reject
	})
	eventually(t, "a sees b in the topic", func() bool { return slices.Contains(ta.Peers(), b.ID()) })

	for i := range 2 * b.cfg.RejectLimit {
		if b.Banned(a.ID()) {
			break
		}
		publish(t, ta, "spam-"+time.Now().Format("150405.000000000")+string(rune('a'+i%26)))
		time.Sleep(5 * time.Millisecond)
	}
	eventually(t, "b bans a", func() bool { return b.Banned(a.ID()) })
	eventually(t, "a and b disconnected", func() bool { return !connected(b, a) && !connected(a, b) })
	// a's reconnect loop keeps dialling b, which refuses it. a may see a
	// connection for the instant between finishing its side of the
	// handshake and b's gater closing it (as in TestIsolateAndHeal), so
	// b is required never to accept a, and a not to keep a connection.
	for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if connected(b, a) {
			t.Fatal("b accepted a again while banned")
		}
	}
	eventually(t, "a holds no connection to b, which bans it", func() bool { return !connected(a, b) })
	if a.Banned(b.ID()) {
		t.Error("a banned b, want only b to ban a")
	}
}

func TestIdentityAndPeersSurviveRestart(t *testing.T) {
	b := start(t, testConfig(t, t.TempDir()))
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := New(ctx, testConfig(t, dir, b))
	if err != nil {
		t.Fatal(err)
	}
	id := a.ID()
	eventually(t, "a knows b", func() bool { return connected(a, b) && a.book.has(b.ID()) })
	if err := a.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	st, err := os.Stat(filepath.Join(dir, keyFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %04o, want 0600", st.Mode().Perm())
	}
	data, err := os.ReadFile(filepath.Join(dir, peersFile))
	if err != nil {
		t.Fatal(err)
	}
	var saved peersJSON
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatalf("peers.json: %v", err)
	}
	if len(saved.Peers) != 1 || saved.Peers[0].ID != b.ID().String() || len(saved.Peers[0].Addrs) == 0 {
		t.Errorf("peers.json = %s, want b with its addresses", data)
	}

	a2 := start(t, testConfig(t, dir)) // no bootstrap
	if a2.ID() != id {
		t.Errorf("id after restart %s, want %s", a2.ID(), id)
	}
	eventually(t, "restarted a dials b from peers.json", func() bool { return connected(a2, b) })
}

func TestDiscoveryFindsPeersOfPeers(t *testing.T) {
	b := start(t, testConfig(t, t.TempDir()))
	a := start(t, testConfig(t, t.TempDir(), b))
	c := start(t, testConfig(t, t.TempDir(), b))
	eventually(t, "a finds c through b", func() bool { return connected(a, c) })
}

func TestNetworksDoNotMix(t *testing.T) {
	xcfg := testConfig(t, t.TempDir())
	xcfg.Network = "aa"
	x := start(t, xcfg)
	ycfg := testConfig(t, t.TempDir(), x)
	ycfg.Network = "bb"
	y := start(t, ycfg)
	x.Handle("echo", func(s network.Stream) { _, _ = io.Copy(s, s); _ = s.Close() })
	y.Handle("echo", func(s network.Stream) { _, _ = io.Copy(s, s); _ = s.Close() })
	tx, _ := join(t, x, acceptAll)
	_, iny := join(t, y, acceptAll)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	y.host.Peerstore().AddAddrs(x.ID(), x.host.Addrs(), time.Minute)
	if s, err := y.Open(ctx, x.ID(), "echo"); err == nil {
		_ = s.Reset()
		t.Error("a stream opened across networks")
	}
	publish(t, tx, "block-aa")
	time.Sleep(500 * time.Millisecond)
	if iny.has("block-aa") || len(tx.Peers()) != 0 {
		t.Errorf("gossip crossed networks: y got %v, x's topic peers %v", iny.msgs, tx.Peers())
	}
	if x.book.has(y.ID()) || y.book.has(x.ID()) {
		t.Error("a peer of another network was recorded in the peer book")
	}
}

func TestIsolateAndHeal(t *testing.T) {
	a := start(t, testConfig(t, t.TempDir()))
	b := start(t, testConfig(t, t.TempDir(), a))
	eventually(t, "a and b connect", func() bool { return connected(a, b) && a.book.has(b.ID()) })

	a.Isolate(b.ID())
	eventually(t, "a and b disconnected", func() bool { return !connected(a, b) && !connected(b, a) })
	// Over several of b's reconnect rounds, a never accepts b again. b
	// itself may see a connection for the instant between finishing its
	// side of the handshake and a's gater closing it (libp2p upgrades the
	// two sides independently), so b is only required not to keep one.
	for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if connected(a, b) {
			t.Fatal("an isolated a accepted b again")
		}
	}
	eventually(t, "b holds no connection to an isolated a", func() bool { return !connected(b, a) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if s, err := a.Open(ctx, b.ID(), "echo"); err == nil {
		_ = s.Reset()
		t.Error("a opened a stream to a peer it isolated")
	}

	a.Heal()
	eventually(t, "a and b reconnect after Heal", func() bool { return connected(a, b) })
}

func TestStreamRoundTrip(t *testing.T) {
	a := start(t, testConfig(t, t.TempDir()))
	b := start(t, testConfig(t, t.TempDir(), a))
	a.Handle("upper", func(s network.Stream) {
		defer s.Close()
		data, err := io.ReadAll(s)
		if err != nil {
			_ = s.Reset()
			return
		}
		_, _ = s.Write(bytes.ToUpper(data))
	})
	eventually(t, "b connects to a", func() bool { return connected(b, a) })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := b.Open(ctx, a.ID(), "upper")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if got, want := string(s.Protocol()), "/lattice/test/upper"; got != want {
		t.Errorf("protocol %s, want %s", got, want)
	}
	if _, err := s.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "HELLO" {
		t.Errorf("reply %q, want HELLO", got)
	}
}

func TestAddrsEndInPeerID(t *testing.T) {
	h := start(t, testConfig(t, t.TempDir()))
	addrs := h.Addrs()
	if len(addrs) == 0 {
		t.Fatal("no addresses")
	}
	for _, a := range addrs {
		if !strings.HasPrefix(a, "/ip4/127.0.0.1/tcp/") || !strings.HasSuffix(a, "/p2p/"+h.ID().String()) {
			t.Errorf("address %s, want /ip4/127.0.0.1/tcp/<port>/p2p/%s", a, h.ID())
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"no dir", func(c *Config) { c.Dir = "" }},
		{"no network", func(c *Config) { c.Network = "" }},
		{"slash in network", func(c *Config) { c.Network = "a/b" }},
		{"low above high", func(c *Config) { c.LowPeers, c.HighPeers = 10, 5 }},
		{"bootstrap without id", func(c *Config) { c.Bootstrap = []string{"/ip4/127.0.0.1/tcp/1"} }},
		{"bad listen", func(c *Config) { c.Listen = []string{"/ip4/127.0.0.1/udp/0/quic-v1"} }},
	} {
		cfg := testConfig(t, t.TempDir())
		tc.edit(&cfg)
		h, err := New(context.Background(), cfg)
		if err == nil {
			h.Close()
			t.Errorf("%s: New succeeded, want an error", tc.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "p2p: ") {
			t.Errorf("%s: error %q lacks the p2p: prefix", tc.name, err)
		}
	}
}

// TestReconnectAfterLongOutage: a bootstrap peer that was down long
// enough for the swarm's dial backoff to grow to 5 minutes is dialled
// again within a round of the reconnect loop once it is back (a provider
// behind NAT once stayed relayed for minutes after its router let the
// other node through again).
func TestReconnectAfterLongOutage(t *testing.T) {
	// The swarm's backoff after a failed dial as a long outage makes it
	// (5 s + n² s after n failures, up to 5 minutes). Set before any host
	// starts and restored after they are closed (cleanups run last
	// registered first), so that no host's goroutine reads it meanwhile.
	saved := swarm.BackoffBase
	swarm.BackoffBase = 5 * time.Minute
	t.Cleanup(func() { swarm.BackoffBase = saved })
	bdir := t.TempDir()
	b, err := New(context.Background(), testConfig(t, bdir))
	if err != nil {
		t.Fatal(err)
	}
	addrs := b.Addrs()
	a := start(t, testConfig(t, t.TempDir(), b))
	eventually(t, "a and b connect", func() bool { return connected(a, b) })
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // a few of a's rounds fail
	// b must not dial a itself: only a's loop is under test.
	if err := os.Remove(filepath.Join(bdir, peersFile)); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, bdir)
	cfg.Listen = nil
	for _, ad := range addrs { // the same port, and the same key from bdir
		cfg.Listen = append(cfg.Listen, strings.TrimSuffix(ad, "/p2p/"+b.ID().String()))
	}
	b2 := start(t, cfg)
	if b2.ID() != b.ID() {
		t.Fatalf("b restarted as %s, want %s", b2.ID(), b.ID())
	}
	began := time.Now()
	eventually(t, "a dials b again once it is back", func() bool { return connected(a, b2) })
	t.Logf("reconnected %s after b came back", time.Since(began).Round(time.Millisecond))
}
