package netlab

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakePort is a switch port in memory: frames put in in are read by the
// switch, frames the switch writes arrive in out with their time.
type fakePort struct {
	in     chan []byte
	out    chan arrival
	closed chan struct{}
	once   sync.Once
	// block makes Write wait for room in out rather than fail, for
	// benchmarks whose reader keeps up.
	block bool
}

type arrival struct {
	frame []byte
	at    time.Time
}

func newFakePort() *fakePort {
	return &fakePort{in: make(chan []byte, 16), out: make(chan arrival, 4096), closed: make(chan struct{})}
}

func (p *fakePort) Read(b []byte) (int, error) {
	select {
	case f := <-p.in:
		return copy(b, f), nil
	case <-p.closed:
		return 0, os.ErrClosed
	}
}

func (p *fakePort) Write(b []byte) (int, error) {
	a := arrival{append([]byte(nil), b...), time.Now()}
	if p.block {
		select {
		case p.out <- a:
			return len(b), nil
		case <-p.closed:
			return 0, os.ErrClosed
		}
	}
	select {
	case p.out <- a:
		return len(b), nil
	default:
		return 0, fmt.Errorf("fake port full")
	}
}

func (p *fakePort) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

// newFakeSwitch starts a switch of nodes node ports and one monitor port.
func newFakeSwitch(t *testing.T, nodes int) (*Switch, []*fakePort) {
	t.Helper()
	var ports []*fakePort
	var rw []io.ReadWriteCloser
	for range nodes + 1 {
		p := newFakePort()
		ports = append(ports, p)
		rw = append(rw, p)
	}
	s := NewSwitch(rw, nodes)
	t.Cleanup(func() { s.Close() })
	return s, ports
}

// mac is the MAC address of port i in these tests.
func mac(i int) []byte { return []byte{0x02, 0x77, 0, 0, 0, byte(i + 1)} }

var broadcast = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// frame is an Ethernet frame from src to dst carrying seq.
func frame(dst, src []byte, seq int) []byte {
	f := append(append(append([]byte(nil), dst...), src...), 0x08, 0x00)
	return append(f, fmt.Sprintf("%08d", seq)...)
}

func seqOf(f []byte) int {
	var n int
	fmt.Sscanf(string(f[14:]), "%08d", &n)
	return n
}

// received drains what each port got within wait.
func received(ports []*fakePort, wait time.Duration) [][]arrival {
	time.Sleep(wait)
	got := make([][]arrival, len(ports))
	for i, p := range ports {
		for len(p.out) > 0 {
			got[i] = append(got[i], <-p.out)
		}
	}
	return got
}

// counts returns how many frames each port received.
func counts(got [][]arrival) []int {
	out := make([]int, len(got))
	for i, g := range got {
		out[i] = len(g)
	}
	return out
}

func TestSwitchForwarding(t *testing.T) {
	// Three nodes and the monitor (port 3).
	s, ports := newFakeSwitch(t, 3)
	tests := []struct {
		name  string
		setup func()
		from  int
		dst   []byte
		want  []int
	}{
		{"broadcast floods every other port", nil, 0, broadcast, []int{0, 1, 1, 1}},
		{"unknown unicast floods", nil, 1, mac(2), []int{1, 0, 1, 1}},
		{"learned unicast goes to its port", nil, 0, mac(1), []int{0, 1, 0, 0}},
		{"unicast to the monitor", nil, 2, mac(3), []int{0, 0, 0, 1}},
		{"a cut drops node traffic, the monitor still gets it", func() { s.Partition([]int{0}, []int{1, 2}) }, 0, broadcast, []int{0, 0, 0, 1}},
		{"within a group", nil, 1, broadcast, []int{0, 0, 1, 1}},
		{"the monitor reaches a cut node", nil, 3, mac(0), []int{1, 0, 0, 0}},
		{"nodes in no group are isolated", func() { s.Partition([]int{0, 1}) }, 2, broadcast, []int{0, 0, 0, 1}},
		{"heal", func() { s.Heal() }, 2, broadcast, []int{1, 1, 0, 1}},
	}
	// Every port announces itself first, so that the switch learns it; the
	// unknown-unicast case runs before port 2 has sent anything.
	ports[0].in <- frame(broadcast, mac(0), 0)
	ports[1].in <- frame(broadcast, mac(1), 0)
	received(ports, 50*time.Millisecond)
	for _, tt := range tests {
		if tt.setup != nil {
			tt.setup()
		}
		ports[tt.from].in <- frame(tt.dst, mac(tt.from), 1)
		if got := counts(received(ports, 50*time.Millisecond)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: frames per port %v, want %v", tt.name, got, tt.want)
		}
		if tt.name == "unknown unicast floods" {
			ports[2].in <- frame(broadcast, mac(2), 0)
			ports[3].in <- frame(broadcast, mac(3), 0)
			received(ports, 50*time.Millisecond)
		}
	}
	if st := s.Stats(); st.Cut == 0 || st.Forwarded == 0 {
		t.Errorf("stats %+v: want cut and forwarded frames counted", st)
	}
}

func TestSwitchPartitionRefusesBadGroups(t *testing.T) {
	s, _ := newFakeSwitch(t, 3)
	for _, groups := range [][][]int{{{0, 3}}, {{-1}}, {{0, 1}, {1, 2}}} {
		if err := s.Partition(groups...); err == nil {
			t.Errorf("Partition(%v) = nil, want an error", groups)
		}
	}
}

func TestSwitchDelay(t *testing.T) {
	s, ports := newFakeSwitch(t, 2)
	if err := s.Impair(80*time.Millisecond, 0, 0); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	ports[0].in <- frame(broadcast, mac(0), 1)
	got := received(ports, 300*time.Millisecond)
	if len(got[1]) != 1 || len(got[2]) != 1 {
		t.Fatalf("frames per port %v, want one to node 1 and one to the monitor", counts(got))
	}
	if d := got[1][0].at.Sub(sent); d < 80*time.Millisecond || d > 250*time.Millisecond {
		t.Errorf("node 1 got the frame after %s, want about 80ms", d)
	}
	if d := got[2][0].at.Sub(sent); d > 40*time.Millisecond {
		t.Errorf("the monitor got the frame after %s, want it undelayed", d)
	}
}

func TestSwitchJitterReorders(t *testing.T) {
	s, ports := newFakeSwitch(t, 2)
	const delay, jitter, n = 30 * time.Millisecond, 20 * time.Millisecond, 300
	if err := s.Impair(delay, jitter, 0); err != nil {
		t.Fatal(err)
	}
	// Node 1 announces itself, so that frames to it are unicast.
	ports[1].in <- frame(broadcast, mac(1), 0)
	received(ports, 100*time.Millisecond)
	sent := make([]time.Time, n)
	for i := range n {
		sent[i] = time.Now()
		ports[0].in <- frame(mac(1), mac(0), i)
		time.Sleep(200 * time.Microsecond)
	}
	got := received(ports, 200*time.Millisecond)[1]
	if len(got) != n {
		t.Fatalf("node 1 got %d frames, want %d", len(got), n)
	}
	reordered := 0
	for k, a := range got {
		seq := seqOf(a.frame)
		if k > 0 && seq < seqOf(got[k-1].frame) {
			reordered++
		}
		// The scheduler may run late, never early.
		if d := a.at.Sub(sent[seq]); d < delay-jitter-time.Millisecond {
			t.Errorf("frame %d arrived after %s, before the least delay %s", seq, d, delay-jitter)
		}
	}
	if reordered == 0 {
		t.Errorf("no frame overtook another with a jitter of %s on %d frames", jitter, n)
	}
}

func TestSwitchLoss(t *testing.T) {
	s, ports := newFakeSwitch(t, 2)
	if err := s.Impair(0, 0, 0.3); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	lost := 0
	for i := range n {
		ports[0].in <- frame(broadcast, mac(0), i)
		if i%500 == 499 {
			got := received(ports, 20*time.Millisecond)
			lost += 500 - len(got[1])
			if len(got[2]) != 500 {
				t.Fatalf("the monitor got %d of 500 frames, want all", len(got[2]))
			}
		}
	}
	if frac := float64(lost) / n; frac < 0.25 || frac > 0.35 {
		t.Errorf("lost %d of %d frames (%.2f), want about 0.3", lost, n, frac)
	}
	if st := s.Stats(); st.Lost != uint64(lost) {
		t.Errorf("stats count %d lost, want %d", st.Lost, lost)
	}
}

func TestSwitchImpairRefusesBadValues(t *testing.T) {
	s, _ := newFakeSwitch(t, 2)
	for _, c := range []struct {
		d, j time.Duration
		l    float64
	}{{-time.Second, 0, 0}, {0, -time.Second, 0}, {0, 0, -0.1}, {0, 0, 1.1}} {
		if err := s.Impair(c.d, c.j, c.l); err == nil {
			t.Errorf("Impair(%s, %s, %g) = nil, want an error", c.d, c.j, c.l)
		}
	}
}

func TestSchedulerOrder(t *testing.T) {
	var mu sync.Mutex
	var got []int
	s := newScheduler(func(port int, frame []byte) {
		mu.Lock()
		got = append(got, port)
		mu.Unlock()
	})
	defer s.close()
	at := time.Now().Add(30 * time.Millisecond)
	// Due times out of order, and three frames due at the same time that
	// must leave in the order they came.
	s.add(at.Add(20*time.Millisecond), 5, nil)
	s.add(at, 1, nil)
	s.add(at, 2, nil)
	s.add(at.Add(-10*time.Millisecond), 0, nil)
	s.add(at, 3, nil)
	s.add(at.Add(10*time.Millisecond), 4, nil)
	time.Sleep(150 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if want := []int{0, 1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("delivered %v, want %v", got, want)
	}
}

// BenchmarkSwitch forwards 1 KB unicast frames from one node port to
// another as fast as they come, at once and through the scheduler.
func BenchmarkSwitch(b *testing.B) {
	for _, delay := range []time.Duration{0, time.Millisecond} {
		b.Run(fmt.Sprintf("delay=%s", delay), func(b *testing.B) {
			var ports []*fakePort
			var rw []io.ReadWriteCloser
			for range 3 {
				p := newFakePort()
				p.block = true
				ports = append(ports, p)
				rw = append(rw, p)
			}
			s := NewSwitch(rw, 2)
			defer s.Close()
			s.Impair(delay, delay/2, 0)
			ports[1].in <- frame(broadcast, mac(1), 0)
			received(ports, 20*time.Millisecond)
			f := frame(mac(1), mac(0), 1)
			f = append(f, make([]byte, 1000)...)
			b.SetBytes(int64(len(f)))
			b.ResetTimer()
			done := make(chan struct{})
			go func() {
				defer close(done)
				for range b.N {
					ports[0].in <- f
				}
			}()
			for range b.N {
				<-ports[1].out
			}
			<-done
		})
	}
}
