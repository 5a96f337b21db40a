// Package chatbench measures chat on real nodes (lattice bench chat): the
// messages a second one node accepts over HTTP, the end-to-end latency
// from a send at one node to the event on another node's stream, and the
// memory each of many concurrent event-stream subscribers costs. The nodes
// are package nettest's: libp2p on loopback, Pebble on disk (fsync'd),
// their HTTP APIs on real sockets.
package chatbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/internal/bench/benchstat"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/wallet"
)

// Config sizes a run. Zero values take the defaults.
type Config struct {
	Messages    int // messages submitted per round in the throughput phase (default 20000)
	Concurrency int // requests in flight in that phase (default 64)
	Latency     int // messages timed end to end per round (default 300)
	Subscribers int // event streams held open at once (default 10000)
	Rounds      int // rounds; the report gives medians (default 3)
	Progress    io.Writer
}

func (c *Config) setDefaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Messages, 20000)
	def(&c.Concurrency, 64)
	def(&c.Latency, 300)
	def(&c.Subscribers, 10000)
	def(&c.Rounds, 3)
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Round is one round's figures.
type Round struct {
	AcceptedPerSec float64 `json:"accepted_per_sec"`
	LatencyP50ms   float64 `json:"latency_p50_ms"`
	LatencyP99ms   float64 `json:"latency_p99_ms"`
	Subscribers    int     `json:"subscribers"`
	// Memory per subscriber: the Go heap and goroutine stacks the open
	// streams hold, as growth over the idle node divided by the
	// subscribers (when this process holds the client sockets too, their
	// few hundred bytes each are counted in). The process's resident set
	// is no measure here: the runtime keeps memory an earlier round freed.
	HeapBytesPerSubscriber float64 `json:"heap_bytes_per_subscriber"`
	Delivered              int     `json:"delivered"` // subscribers that got the message sent to all
}

// Report is a run's rounds and their medians.
type Report struct {
	Rounds []Round `json:"rounds"`
	Median Round   `json:"median"`
}

// Run measures cfg.Rounds rounds, each on a fresh two-node network.
func Run(ctx context.Context, cfg Config) (Report, error) {
	cfg.setDefaults()
	var rep Report
	for i := range cfg.Rounds {
		var rd Round
		err := nettest.Run("bench-chat", func(t nettest.T) error {
			// The node's capacity is measured from one address: the
			// per-address limit, which would stop it at 20 a second,
			// is lifted.
			c := nettest.Start(t, nettest.Options{Nodes: 2, OnDisk: true,
				Chat: chatnet.Config{SourceRate: 1e9, SourceBurst: 1 << 30}})
			steps := []struct {
				name string
				f    func() error
			}{
				{"accepted messages", func() error { return accepted(ctx, c, cfg, &rd) }},
				{"delivery latency", func() error { return latency(ctx, c, cfg.Latency, &rd) }},
				{"subscribers", func() error { return subscribers(ctx, c, cfg.Subscribers, &rd) }},
			}
			for _, s := range steps {
				fmt.Fprintf(cfg.Progress, "round %d: %s...\n", i+1, s.name)
				if err := s.f(); err != nil {
					return fmt.Errorf("%s: %w", s.name, err)
				}
			}
			return nil
		})
		if err != nil {
			return rep, fmt.Errorf("chatbench: round %d: %w", i+1, err)
		}
		rep.Rounds = append(rep.Rounds, rd)
	}
	med := func(f func(Round) float64) float64 { return benchstat.MedianOf(rep.Rounds, f) }
	rep.Median = Round{
		AcceptedPerSec:         med(func(r Round) float64 { return r.AcceptedPerSec }),
		LatencyP50ms:           med(func(r Round) float64 { return r.LatencyP50ms }),
		LatencyP99ms:           med(func(r Round) float64 { return r.LatencyP99ms }),
		Subscribers:            cfg.Subscribers,
		HeapBytesPerSubscriber: med(func(r Round) float64 { return r.HeapBytesPerSubscriber }),
		Delivered:              int(med(func(r Round) float64 { return float64(r.Delivered) })),
	}
	return rep, nil
}

// register registers k's account at node i, submitted there.
func register(ctx context.Context, c *nettest.Cluster, k wallet.Key, i int) error {
	r := &directory.Registration{NodePeer: c.Nodes[i].Host.ID().String(), Timestamp: time.Now().UnixMilli()}
	r.Sign(k.Private())
	return c.Nodes[i].Chat.Register(ctx, r)
}

// body returns a signed message from a new key to `to`, as JSON.
func body(to ledger.Address, text string) (*chat.Message, []byte) {
	m := &chat.Message{To: to, Message: text, Timestamp: time.Now().UnixMilli()}
	m.Sign(wallet.NewKey().Private())
	data, _ := json.Marshal(m)
	return m, data
}

func post(ctx context.Context, hc *http.Client, base string, data []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/send", bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /chat/send: %s: %s", resp.Status, msg)
	}
	return nil
}

// accepted submits cfg.Messages signed messages to node 0 over HTTP,
// Concurrency at a time, to recipients registered at node 0, and counts
// how many it accepts a second. Each sender sends ten, within the
// per-account rate.
func accepted(ctx context.Context, c *nettest.Cluster, cfg Config, rd *Round) error {
	to := make([]ledger.Address, 64)
	for i := range to {
		k := wallet.NewKey()
		if err := register(ctx, c, k, 0); err != nil {
			return err
		}
		to[i] = k.Address()
	}
	bodies := make([][]byte, cfg.Messages)
	var k wallet.Key
	for i := range bodies {
		if i%10 == 0 {
			k = wallet.NewKey()
		}
		m := &chat.Message{To: to[i%len(to)], Message: "hello number " + strconv.Itoa(i), Timestamp: time.Now().UnixMilli()}
		m.Sign(k.Private())
		bodies[i], _ = json.Marshal(m)
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Concurrency}, Timeout: time.Minute}
	defer hc.CloseIdleConnections()
	work := make(chan []byte)
	errc := make(chan error, cfg.Concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	for range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				if err := post(ctx, hc, c.Nodes[0].API.URL, b); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	var err error
feed:
	for _, b := range bodies {
		select {
		case work <- b:
		case err = <-errc:
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err != nil {
		return err
	}
	select {
	case err := <-errc:
		return err
	default:
	}
	rd.AcceptedPerSec = float64(len(bodies)) / time.Since(start).Seconds()
	return nil
}

// latency times n messages one after another from a send at node 0 to
// the event on node 1's stream of the recipient, who is registered there.
func latency(ctx context.Context, c *nettest.Cluster, n int, rd *Round) error {
	carol := wallet.NewKey()
	if err := register(ctx, c, carol, 1); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, found, _ := c.Nodes[0].Chat.Lookup(carol.Address()); found {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("node 0 never learnt where carol is registered")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := follow(ctx, c.Nodes[1].API.URL, carol.Address())
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: time.Minute}
	defer hc.CloseIdleConnections()
	lat := make([]time.Duration, 0, n)
	for i := range n {
		m, data := body(carol.Address(), "ping "+strconv.Itoa(i))
		want := m.Hash()
		start := time.Now()
		if err := post(ctx, hc, c.Nodes[0].API.URL, data); err != nil {
			return err
		}
		for got := false; !got; {
			select {
			case h, ok := <-events:
				if !ok {
					return errors.New("node 1's event stream ended")
				}
				got = h == want
			case <-time.After(30 * time.Second):
				return fmt.Errorf("message %d never reached node 1's stream", i)
			}
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	rd.LatencyP50ms = ms(lat[len(lat)/2])
	rd.LatencyP99ms = ms(lat[min(len(lat)-1, len(lat)*99/100)])
	return nil
}

// follow reads base's event stream of account and sends the hash of every
// message on the channel, until ctx ends.
func follow(ctx context.Context, base string, account ledger.Address) (<-chan ledger.Hash, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/chat/events?account="+account.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET /chat/events: %s", resp.Status)
	}
	out := make(chan ledger.Hash, 16)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 64<<10)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var m chat.Message
			if json.Unmarshal([]byte(data), &m) != nil {
				return
			}
			select {
			case out <- m.Hash():
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// subscribers opens n event streams on node 0 with raw sockets, measures
// the memory they cost the process, then sends one message to the account
// every stream follows and counts the streams that carry it. The sockets
// are held by this process when its open-file limit allows two descriptors
// a stream (the figures then include their few hundred bytes each), and by
// a child `lattice bench chat-subscribers` otherwise.
func subscribers(ctx context.Context, c *nettest.Cluster, n int, rd *Round) error {
	u, err := url.Parse(c.Nodes[0].API.URL)
	if err != nil {
		return err
	}
	dave := wallet.NewKey()
	if err := register(ctx, c, dave, 0); err != nil {
		return err
	}
	heap0 := memory()
	var h holder
	if fileLimit() >= uint64(2*n+4096) {
		h = &localHolder{}
	} else {
		h = &childHolder{}
	}
	defer h.close()
	if err := h.open(ctx, u.Host, dave.Address(), n); err != nil {
		return err
	}
	for c.Nodes[0].Chat.Subscribers() < n {
		if err := ctx.Err(); err != nil {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	heap1 := memory()
	rd.Subscribers = n
	rd.HeapBytesPerSubscriber = float64(int64(heap1)-int64(heap0)) / float64(n)

	_, data := body(dave.Address(), "to every subscriber")
	hc := &http.Client{Timeout: time.Minute}
	defer hc.CloseIdleConnections()
	if err := post(ctx, hc, c.Nodes[0].API.URL, data); err != nil {
		return err
	}
	rd.Delivered, err = h.check()
	return err
}

// holder holds event streams open.
type holder interface {
	open(ctx context.Context, host string, account ledger.Address, n int) error
	check() (int, error) // how many streams carried a message
	close()
}

type localHolder struct{ conns []net.Conn }

func (l *localHolder) open(_ context.Context, host string, account ledger.Address, n int) (err error) {
	l.conns, err = OpenStreams(host, account, n)
	return err
}

func (l *localHolder) check() (int, error) { return CountDelivered(l.conns), nil }

func (l *localHolder) close() {
	for _, c := range l.conns {
		c.Close()
	}
}

// childHolder runs `lattice bench chat-subscribers` to hold the streams:
// it prints "ready" once they are open and, for each line it reads, how
// many carried a message.
type childHolder struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func (ch *childHolder) open(ctx context.Context, host string, account ledger.Address, n int) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if !strings.HasPrefix(filepath.Base(exe), "lattice") {
		return fmt.Errorf("%d streams need %d open files, more than this process may have (%d), and %s cannot hold them in a child process", n, 2*n, fileLimit(), exe)
	}
	ch.cmd = exec.CommandContext(ctx, exe, "bench", "chat-subscribers", host, account.String(), strconv.Itoa(n))
	ch.cmd.Stderr = os.Stderr
	if ch.in, err = ch.cmd.StdinPipe(); err != nil {
		return err
	}
	stdout, err := ch.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	ch.out = bufio.NewReader(stdout)
	if err := ch.cmd.Start(); err != nil {
		return err
	}
	line, err := ch.out.ReadString('\n')
	if err != nil || line != "ready\n" {
		return fmt.Errorf("chat-subscribers: %q, %v", line, err)
	}
	return nil
}

func (ch *childHolder) check() (int, error) {
	if _, err := io.WriteString(ch.in, "check\n"); err != nil {
		return 0, err
	}
	line, err := ch.out.ReadString('\n')
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(line))
}

func (ch *childHolder) close() {
	if ch.cmd == nil || ch.cmd.Process == nil {
		return
	}
	ch.in.Close() // the child exits when its input ends
	ch.cmd.Wait()
}

// OpenStreams opens n event streams of account on the node API at host
// with raw sockets, each read up to its 200 response.
func OpenStreams(host string, account ledger.Address, n int) ([]net.Conn, error) {
	req := []byte("GET /chat/events?account=" + account.String() + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n")
	buf := make([]byte, 4096)
	conns := make([]net.Conn, 0, n)
	fail := func(err error) ([]net.Conn, error) {
		for _, c := range conns {
			c.Close()
		}
		return nil, err
	}
	for range n {
		cn, err := net.DialTimeout("tcp", host, 10*time.Second)
		if err != nil {
			return fail(fmt.Errorf("after %d streams: %w", len(conns), err))
		}
		conns = append(conns, cn)
		if _, err := cn.Write(req); err != nil {
			return fail(err)
		}
		// The status line, the headers and the "retry:" field arrive
		// together; a 200 is enough here.
		cn.SetReadDeadline(time.Now().Add(10 * time.Second))
		k, err := cn.Read(buf)
		if err != nil || !bytes.HasPrefix(buf[:k], []byte("HTTP/1.1 200")) {
			return fail(fmt.Errorf("stream %d: %q, %v", len(conns), buf[:k], err))
		}
	}
	return conns, nil
}

// CountDelivered reads each stream until it carries a message event or
// 30 s pass, and returns how many did.
func CountDelivered(conns []net.Conn) int {
	want := []byte("event: message")
	buf := make([]byte, 4096)
	n := 0
	for _, cn := range conns {
		cn.SetReadDeadline(time.Now().Add(30 * time.Second))
		var got []byte
		for !bytes.Contains(got, want) {
			k, err := cn.Read(buf)
			if err != nil {
				break
			}
			got = append(got, buf[:k]...)
		}
		if bytes.Contains(got, want) {
			n++
		}
	}
	return n
}

// HoldStreams is the child side of the subscribers phase (lattice bench
// chat-subscribers): it opens the streams, says "ready", answers each
// line of in with how many streams carried a message, and closes them
// when in ends.
func HoldStreams(host string, account ledger.Address, n int, in io.Reader, out io.Writer) error {
	conns, err := OpenStreams(host, account, n)
	if err != nil {
		return err
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	fmt.Fprintln(out, "ready")
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		fmt.Fprintln(out, CountDelivered(conns))
	}
	return sc.Err()
}

// memory returns the Go heap and stacks in use after a collection.
func memory() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

// fileLimit returns how many files this process may open, after raising
// its soft limit to the hard one.
func fileLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
			syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
		}
	}
	return lim.Cur
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
