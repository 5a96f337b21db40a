package p2p

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/latticenet/lattice/node/netlab"
)

// natHelperArg, as the test binary's first argument, makes it a host of
// TestNATTraversal's lab instead of running tests.
const natHelperArg = "nat-helper"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == natHelperArg {
		os.Exit(natHelper(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// echoResult is what a helper's POST /echo answers.
type echoResult struct {
	Path  string `json:"path"` // "relayed" or "direct"
	Bytes int    `json:"bytes"`
	MS    int64  `json:"ms"`
}

// natStatus is what a helper's GET /status answers.
type natStatus struct {
	ID           string         `json:"id"`
	Addrs        []string       `json:"addrs"`
	Reachability string         `json:"reachability"`
	HolePunches  HolePunchStats `json:"hole_punches"`
}

// natHelper runs one Host of the lab in this process's namespace, with a
// stream protocol "echo" (every byte back, then the end) and an HTTP API
// for the test on -control: GET /status, POST /echo?peer=ID&bytes=N (a
// stream to the peer carries N random bytes there and back, checked),
// POST /disconnect?peer=ID. It stops on SIGTERM.
func natHelper(args []string) int {
	fs := flag.NewFlagSet(natHelperArg, flag.ContinueOnError)
	dir := fs.String("dir", "", "data directory")
	listen := fs.String("listen", "", "p2p listen multiaddr")
	bootstrap := fs.String("bootstrap", "", "bootstrap multiaddr")
	control := fs.String("control", "", "the test's HTTP API address")
	relay := fs.Bool("relay", false, "serve as a relay")
	reconnect := fs.Duration("reconnect", 10*time.Second, "reconnect interval")
	reach := fs.String("reachability", "", "public or private: skip AutoNAT")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	cfg := Config{Dir: *dir, Listen: []string{*listen}, Network: "natlab", Logger: log, Relay: *relay,
		ReconnectInterval: *reconnect, DialTimeout: 5 * time.Second, Reachability: *reach}
	if *bootstrap != "" {
		cfg.Bootstrap = []string{*bootstrap}
	}
	h, err := New(ctx, cfg)
	if err != nil {
		log.Error("start", "err", err)
		return 1
	}
	defer h.Close()
	h.Handle("echo", func(s network.Stream) {
		s.SetDeadline(time.Now().Add(time.Minute))
		if _, err := io.Copy(s, s); err != nil {
			s.Reset()
			return
		}
		s.Close()
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(natStatus{ID: h.ID().String(), Addrs: h.Addrs(), Reachability: h.Reachability(), HolePunches: h.HolePunches()})
	})
	mux.HandleFunc("POST /disconnect", func(w http.ResponseWriter, r *http.Request) {
		id, err := peer.Decode(r.URL.Query().Get("peer"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.host.Network().ClosePeer(id)
	})
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		id, err := peer.Decode(r.URL.Query().Get("peer"))
		n, nerr := strconv.Atoi(r.URL.Query().Get("bytes"))
		if err != nil || nerr != nil || n < 1 {
			http.Error(w, "want peer=ID&bytes=N", http.StatusBadRequest)
			return
		}
		res, err := echo(r.Context(), h, id, n)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		json.NewEncoder(w).Encode(res)
	})
	srv := &http.Server{Addr: *control, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("control API", "err", err)
		return 1
	}
	return 0
}

// echo sends n random bytes to peer id's echo and checks what comes back.
func echo(ctx context.Context, h *Host, id peer.ID, n int) (echoResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second) // inside the lab client's 30 s wait for an answer
	defer cancel()
	start := time.Now()
	s, err := h.Open(ctx, id, "echo")
	if err != nil {
		return echoResult{}, err
	}
	defer s.Reset()
	data := make([]byte, n)
	rand.Read(data)
	sent := make(chan error, 1)
	go func() {
		_, err := s.Write(data)
		if err == nil {
			err = s.CloseWrite()
		}
		sent <- err
	}()
	got, err := io.ReadAll(s)
	if err != nil {
		return echoResult{}, fmt.Errorf("reading the echo after %d bytes: %w", len(got), err)
	}
	if err := <-sent; err != nil {
		return echoResult{}, fmt.Errorf("sending: %w", err)
	}
	if sha256.Sum256(got) != sha256.Sum256(data) {
		return echoResult{}, fmt.Errorf("the echo of %d bytes came back as %d different bytes", n, len(got))
	}
	path := "direct"
	if Relayed(s) {
		path = "relayed"
	}
	return echoResult{Path: path, Bytes: n, MS: time.Since(start).Milliseconds()}, nil
}

// TestNATTraversal puts a host behind a masquerading router (netlab, with
// nftables) and reaches it from a host outside: through a relay, while
// the router refuses every packet between the two (so no direct
// connection can form), then directly, once the block is lifted and a
// new relayed connection lets hole punching (DCUtR) connect them. The
// hosts are real processes, each in its own network namespace, on
// addresses libp2p's AutoNAT counts as public; the one behind NAT learns
// so from AutoNAT and reserves its relay slot by itself.
func TestNATTraversal(t *testing.T) {
	if testing.Short() {
		t.Skip("a lab of processes behind NAT: not in -short")
	}
	t.Run("from a public host", func(t *testing.T) { natTraversal(t, false) })
	// Both behind NAT: the direct connection needs a real hole punch, both
	// hosts dialling at once from the ports their routers keep. Both are
	// told they are private (--reachability private, as an operator behind
	// NAT can say): AutoNAT, proved above, would need a public peer to
	// dial them back, and the relay is the only one here, so it took from
	// 16 s to past 2 min to decide.
	t.Run("from a host behind NAT too", func(t *testing.T) { natTraversal(t, true) })
}

func natTraversal(t *testing.T, bothNAT bool) {
	const relay, outside, inside = 0, 1, 2
	nat := []int{inside}
	if bothNAT {
		nat = append(nat, outside)
	}
	lab := netlab.NewWithOptions(t, netlab.Options{Nodes: 3, NAT: nat, Public: true})
	lab.QuietTails("msg=http ")
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]peer.ID, 3)
	dirs := make([]string, 3)
	for i := range ids {
		dirs[i] = t.TempDir()
		key, err := loadOrCreateKey(dirs[i])
		if err != nil {
			t.Fatal(err)
		}
		if ids[i], err = peer.IDFromPrivateKey(key); err != nil {
			t.Fatal(err)
		}
	}
	addr := func(i int) string { return fmt.Sprintf("/ip4/%s/tcp/4001", lab.LocalAddr(i)) }
	relayAddr := fmt.Sprintf("/ip4/%s/tcp/4001/p2p/%s", lab.Addr(relay), ids[relay])
	start := func(i int, args ...string) {
		t.Helper()
		args = append([]string{natHelperArg, "-dir", dirs[i], "-listen", addr(i),
			"-control", fmt.Sprintf("%s:%d", lab.LocalAddr(i), netlab.HTTPPort)}, args...)
		if _, err := lab.Start(i, fmt.Sprintf("host-%d", i), bin, args...); err != nil {
			t.Fatal(err)
		}
	}
	// The router refuses the outside host from the start: the only way
	// between them is the relay.
	lab.Block(inside, outside)
	if bothNAT {
		lab.Block(outside, inside)
	}
	start(relay, "-relay")
	client := lab.HTTPClient()
	call := func(i int, method, path string, out any) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, method, fmt.Sprintf("http://%s:%d%s", lab.Addr(i), netlab.HTTPPort, path), nil)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(body))
		}
		if out != nil {
			return json.Unmarshal(body, out)
		}
		return nil
	}
	// The others dial the relay once, at start, and then not for an hour
	// (below): the relay must listen first. A helper answers its API only
	// once its host listens.
	for began := time.Now(); call(relay, "GET", "/status", nil) != nil; time.Sleep(20 * time.Millisecond) {
		if time.Since(began) > 30*time.Second {
			t.Fatal("the relay did not answer within 30 s")
		}
	}
	// A reconnect loop that dials every known peer would connect the two
	// directly as soon as the block goes; the hour leaves the direct
	// connection to hole punching.
	if bothNAT {
		start(outside, "-bootstrap", relayAddr, "-reconnect", "1h", "-reachability", "private")
		start(inside, "-bootstrap", relayAddr, "-reconnect", "1h", "-reachability", "private")
	} else {
		start(outside, "-bootstrap", relayAddr)
		start(inside, "-bootstrap", relayAddr, "-reconnect", "1h")
	}

	echoTo := func(n int) (echoResult, error) {
		var res echoResult
		err := call(outside, "POST", fmt.Sprintf("/echo?peer=%s&bytes=%d", ids[inside], n), &res)
		return res, err
	}
	waitPath := func(want string, bound time.Duration) echoResult {
		t.Helper()
		deadline := time.Now().Add(bound)
		var last, seen string
		var tried [2]HolePunchStats // both hosts', at the last disconnect
		for i, host := range []int{inside, outside} {
			var st natStatus
			if call(host, "GET", "/status", &st) == nil {
				tried[i] = st.HolePunches
			}
		}
		t.Logf("waiting for a %s echo; hole punching at the host behind NAT %+v, at the other %+v", want, tried[0], tried[1])
		cut := time.Now()
		for {
			res, err := echoTo(64 << 10)
			if err == nil && res.Path == want {
				return res
			}
			var st, ost natStatus
			serr := call(inside, "GET", "/status", &st)
			oerr := call(outside, "GET", "/status", &ost)
			if err != nil {
				if err.Error() != last {
					t.Logf("%s: %v", time.Now().Format("15:04:05.000"), err)
				}
				last = err.Error()
			} else {
				last = "path " + res.Path
				// The host that a relayed connection reaches tries for
				// a direct one: a direct dial, then up to three hole
				// punches, one try at a time per peer. One that missed
				// (the simultaneous open is a race, which a loaded host
				// can lose) is tried again on a new relayed connection,
				// once the last try has ended: a relayed connection
				// that opens while one runs gets none.
				hp := [2]HolePunchStats{st.HolePunches, ost.HolePunches}
				ended := serr == nil && oerr == nil && hp[0].Active == 0 && hp[1].Active == 0
				moved := hp[0].Punches+hp[0].ProtocolErrors+hp[1].Punches+hp[1].ProtocolErrors >
					tried[0].Punches+tried[0].ProtocolErrors+tried[1].Punches+tried[1].ProtocolErrors
				if want == "direct" && (ended && moved || time.Since(cut) > 45*time.Second) {
					t.Logf("%s: still relayed; hole punches at the host behind NAT %+v, at the other %+v; a new relayed connection",
						time.Now().Format("15:04:05.000"), hp[0], hp[1])
					call(outside, "POST", "/disconnect?peer="+ids[inside].String(), nil)
					tried, cut = hp, time.Now()
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s echo to the host behind NAT within %s; last: %s; its status %+v %v; the other's %+v %v", want, bound, last, st, serr, ost, oerr)
			}
			if st.Reachability != seen {
				seen = st.Reachability
				t.Logf("%s: the host behind NAT finds itself %s, addresses %q", time.Now().Format("15:04:05.000"), st.Reachability, st.Addrs)
			}
			time.Sleep(2 * time.Second)
		}
	}

	// The host behind NAT learns that it is private (from AutoNAT, or
	// being told) and reserves a slot at the relay by itself. The echoes
	// wait for that: the other host would otherwise look it up before it
	// has a relayed address, and libp2p keeps the addresses such a lookup
	// finds for two minutes.
	began := time.Now()
	for {
		var st natStatus
		err := call(inside, "GET", "/status", &st)
		if err == nil && st.Reachability == "private" && strings.Contains(strings.Join(st.Addrs, " "), "/p2p-circuit") {
			t.Logf("the host behind NAT has a relayed address after %s: %q", time.Since(began).Round(time.Millisecond), st.Addrs)
			break
		}
		if time.Since(began) > 4*time.Minute {
			t.Fatalf("the host behind NAT: reachability %q, addresses %q (%v) after %s; want private, with a relayed address",
				st.Reachability, st.Addrs, err, time.Since(began).Round(time.Second))
		}
		time.Sleep(time.Second)
	}
	began = time.Now()
	res := waitPath("relayed", 2*time.Minute)
	t.Logf("first relayed echo after %s: %+v", time.Since(began).Round(time.Millisecond), res)
	var st natStatus
	if err := call(relay, "GET", "/status", &st); err != nil || st.Reachability != "public" {
		t.Errorf("the relay: reachability %q (%v), want public", st.Reachability, err)
	}
	big, err := echoTo(8 << 20)
	if err != nil || big.Path != "relayed" {
		t.Fatalf("8 MiB through the relay: %+v %v", big, err)
	}
	t.Logf("8 MiB there and back through the relay in %d ms", big.MS)

	// libp2p serves hole punching only once a host knows a public address
	// of its own, from the relay's identify: both must, or a relayed
	// connection gets no try (the one behind NAT would start it, the
	// other must answer).
	for began := time.Now(); ; time.Sleep(250 * time.Millisecond) {
		var in, out natStatus
		ierr, oerr := call(inside, "GET", "/status", &in), call(outside, "GET", "/status", &out)
		if ierr == nil && oerr == nil && in.HolePunches.Ready && out.HolePunches.Ready {
			break
		}
		if time.Since(began) > 30*time.Second {
			t.Fatalf("hole punching not ready after 30 s: the host behind NAT %+v %v, the other %+v %v", in, ierr, out, oerr)
		}
	}

	// The block goes; a new relayed connection has the host behind NAT
	// try for a direct one.
	lab.Block(inside)
	if bothNAT {
		lab.Block(outside)
	}
	if err := call(outside, "POST", "/disconnect?peer="+ids[inside].String(), nil); err != nil {
		t.Fatal(err)
	}
	began = time.Now()
	res = waitPath("direct", 2*time.Minute)
	t.Logf("first direct echo after %s: %+v", time.Since(began).Round(time.Millisecond), res)
	if big, err = echoTo(8 << 20); err != nil || big.Path != "direct" {
		t.Fatalf("8 MiB directly: %+v %v", big, err)
	}
	t.Logf("8 MiB there and back directly in %d ms", big.MS)
}

// relayTrio starts three loopback hosts, closed when t ends: a relay r, a
// host p told it is private (which reserves a slot at r) that echoes
// what it gets on "echo", and a host c that bootstraps from r, and from p
// too when toP.
func relayTrio(t *testing.T, toP bool) (r, p, c *Host) {
	t.Helper()
	start := func(cfg Config) *Host {
		t.Helper()
		h, err := New(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	rcfg := testConfig(t, t.TempDir())
	rcfg.Relay = true
	r = start(rcfg)
	pcfg := testConfig(t, t.TempDir(), r)
	pcfg.Reachability = "private"
	p = start(pcfg)
	p.Handle("echo", func(s network.Stream) {
		io.Copy(s, s)
		s.Close()
	})
	boot := []*Host{r}
	if toP {
		boot = append(boot, p)
	}
	c = start(testConfig(t, t.TempDir(), boot...))
	return r, p, c
}

// connectThroughRelay connects from to p through relay r, retrying until
// p holds its reservation there (AutoRelay asks for candidates every
// 10 s).
func connectThroughRelay(t *testing.T, from, r, p *Host) {
	t.Helper()
	circuit := r.Addrs()[0] + "/p2p-circuit/p2p/" + p.ID().String()
	deadline := time.Now().Add(waitFor + 20*time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := from.Connect(ctx, circuit)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no relayed connection: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestRelayOnly: on loopback, two hosts that refuse direct connections
// with each other still talk through a relay that the private one holds a
// reservation at, and the stream says so; a bad Reachability is refused.
func TestRelayOnly(t *testing.T) {
	r, p, c := relayTrio(t, true)
	// libp2p records a forced reachability on a goroutine of its own.
	for deadline := time.Now().Add(waitFor); r.Reachability() != "public" || p.Reachability() != "private"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("reachability: relay %s, private %s", r.Reachability(), p.Reachability())
		}
	}
	if c.Reachability() != "unknown" {
		t.Errorf("reachability on loopback: %s, want unknown", c.Reachability())
	}
	c.RelayOnly(p.ID())
	p.RelayOnly(c.ID())
	connectThroughRelay(t, c, r, p)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	res, err := echo(ctx, c, p.ID(), 256<<10)
	if err != nil || res.Path != "relayed" {
		t.Fatalf("echo: %+v %v", res, err)
	}
	if direct := p.directTo(c.ID()); direct {
		t.Error("a direct connection formed between relay-only peers")
	}
	c.Heal()
	if c.gater.direct(p.ID(), nil) != true {
		t.Error("Heal kept the relay-only rule")
	}

	for _, bad := range []Config{{Reachability: "nat"}, {Relay: true, Reachability: "private"}} {
		bad.Dir, bad.Network = t.TempDir(), testNetwork
		if h, err := New(context.Background(), bad); err == nil {
			h.Close()
			t.Errorf("New(%+v) worked", bad)
		}
	}
}

// TestHasPublicAddr: only a public address that is not a relay's circuit
// makes a peer reached through a relay worth a direct dial.
func TestHasPublicAddr(t *testing.T) {
	for _, tc := range []struct {
		addrs []string
		want  bool
	}{
		{[]string{"/ip4/11.77.0.2/tcp/4001"}, true},
		{[]string{"/ip4/192.168.3.2/tcp/4001", "/ip4/127.0.0.1/tcp/4001"}, false},
		{[]string{"/ip4/11.77.0.1/tcp/4001/p2p/12D3KooWC1syNCDT69L7cVgif4DKF6hzqMFkX3pd39fz2c9rhdmr/p2p-circuit"}, false},
		{[]string{"/ip4/10.0.0.2/tcp/4001", "/ip6/2001:db8::1/tcp/4001"}, false}, // documentation range: not public
		{[]string{"/ip4/10.0.0.2/tcp/4001", "/ip4/198.51.100.1/tcp/4001", "/ip4/8.8.8.8/udp/4001/quic-v1"}, true},
		{nil, false},
	} {
		var addrs []ma.Multiaddr
		for _, s := range tc.addrs {
			addrs = append(addrs, ma.StringCast(s))
		}
		if got := hasPublicAddr(addrs); got != tc.want {
			t.Errorf("hasPublicAddr(%v) = %v, want %v", tc.addrs, got, tc.want)
		}
	}
}

// TestOpenThroughConnectedRelay: a host finds a peer it may not dial
// directly (relay-only here, behind NAT in life) through the relay it is
// connected to, which holds the peer's reservation, without being told the
// relayed address: the peer announces none (AutoRelay announces relayed
// addresses only for public relays), and the DHT knows only its direct
// ones. Before Open guessed relayed addresses, no stream ever came.
func TestOpenThroughConnectedRelay(t *testing.T) {
	_, p, c := relayTrio(t, false)
	c.RelayOnly(p.ID())
	p.RelayOnly(c.ID())

	deadline := time.Now().Add(waitFor + 20*time.Second) // AutoRelay asks for candidates every 10 s
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := echo(ctx, c, p.ID(), 64<<10)
		cancel()
		if err == nil {
			if res.Path != "relayed" {
				t.Fatalf("echo went %s, want relayed", res.Path)
			}
			if p.directTo(c.ID()) {
				t.Error("a direct connection formed between relay-only peers")
			}
			return
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no stream to the peer behind the relay: %v", last)
}

// TestOpenRelaysBesideDeadAddress: a host that knows a peer only at an
// address that no longer answers (here one that accepts and then says
// nothing, on loopback: a provider behind NAT that restarted, whose
// router dropped the old mapping) reaches it through the relay it is
// connected to, where the peer holds a reservation, within a context
// shorter than libp2p's 5 s dial timeout for that address: the relays
// join the dial after relayHeadStart instead of after it fails. (A dead
// circuit address would not do: libp2p's relay client dials a peer
// through one relay at a time.)
func TestOpenRelaysBesideDeadAddress(t *testing.T) {
	r, p, c := relayTrio(t, false)
	p.RelayOnly(c.ID())

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		silent.Close()
		<-accepted
		for _, conn := range held {
			conn.Close()
		}
	})

	// A host of its own waits for the reservation, so that the client
	// learns none of the private host's addresses.
	probe, err := New(context.Background(), testConfig(t, t.TempDir(), r))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { probe.Close() })
	probe.RelayOnly(p.ID())
	p.RelayOnly(probe.ID())
	connectThroughRelay(t, probe, r, p)
	probe.Close()
	// Behind NAT nobody dials the private host: it stops listening, and
	// keeps its connection to the relay and its reservation there. (The
	// client may still learn its addresses from the relay's DHT, which
	// now refuse at once.)
	sw := p.host.Network().(*swarm.Swarm)
	sw.ListenClose(slices.DeleteFunc(sw.ListenAddresses(), isCircuit)...)

	dead, err := ma.NewMultiaddr("/ip4/127.0.0.1/tcp/" + strconv.Itoa(silent.Addr().(*net.TCPAddr).Port))
	if err != nil {
		t.Fatal(err)
	}
	c.host.Peerstore().AddAddr(p.ID(), dead, time.Hour)
	// The client's reconnect rounds have been dialling the private host's
	// direct addresses, and RelayOnly refuses such a connection only after
	// its handshake: the client holds each for a few milliseconds. One
	// accepted before the listeners closed may still be open; none can
	// follow it.
	for deadline := time.Now().Add(waitFor); c.host.Network().Connectedness(p.ID()) != network.NotConnected; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the client is %s to the private host: the test proves nothing", c.host.Network().Connectedness(p.ID()))
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), relayHeadStart+2500*time.Millisecond)
	defer cancel()
	began := time.Now()
	res, err := echo(ctx, c, p.ID(), 64<<10)
	if err != nil {
		t.Fatalf("after %v: %v", time.Since(began).Round(time.Millisecond), err)
	}
	if res.Path != "relayed" {
		t.Fatalf("echo went %s, want relayed", res.Path)
	}
	mu.Lock()
	if len(held) == 0 {
		t.Error("the silent address was never dialled")
	}
	mu.Unlock()
	t.Logf("reached through the relay %v after the first dial", time.Since(began).Round(time.Millisecond))
}

// TestCircuitRelay: the relay of a circuit address is the peer before
// /p2p-circuit, with or without a transport before it; other addresses
// name none.
func TestCircuitRelay(t *testing.T) {
	const relay = "12D3KooWANWpZBvbuqU75YZ6tUtX7gVj2Q6qC7PSmKypbmAgZozi"
	const target = "12D3KooWGFN7vQJmpgHpK7kUM1VQnM8dgc5waTKCLvNgRuW9KNGx"
	for _, tt := range []struct {
		addr string
		want string
	}{
		{"/ip4/11.77.0.1/tcp/4001/p2p/" + relay + "/p2p-circuit", relay},
		{"/p2p/" + relay + "/p2p-circuit", relay},
		{"/ip4/11.77.0.1/tcp/4001/p2p/" + relay + "/p2p-circuit/p2p/" + target, relay},
		{"/ip4/192.168.3.2/tcp/4001", ""},
		{"/ip4/11.77.0.1/tcp/4001/p2p/" + relay, ""},
		{"/p2p-circuit", ""},
	} {
		a, err := ma.NewMultiaddr(tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := circuitRelay(a)
		if ok != (tt.want != "") || ok && got.String() != tt.want {
			t.Errorf("circuitRelay(%s) = %s, %v; want %q", tt.addr, got, ok, tt.want)
		}
	}
}
