package netlab

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Link is what the switch does to the frames one node port sends another.
// The zero Link forwards every frame at once.
type Link struct {
	// Cut drops every frame.
	Cut bool
	// Delay holds each frame this long before delivering it.
	Delay time.Duration
	// Jitter spreads the delay uniformly over Delay ± Jitter (never below
	// zero), so that frames can overtake each other.
	Jitter time.Duration
	// Loss is the probability, 0 to 1, that a frame is dropped.
	Loss float64
}

// String describes l for logs.
func (l Link) String() string {
	if l.Cut {
		return "cut"
	}
	return fmt.Sprintf("delay %s ± %s, loss %.1f%%", l.Delay, l.Jitter, 100*l.Loss)
}

// Stats count the frames a Switch handled since it started.
type Stats struct {
	Received  uint64 // frames read from a port
	Forwarded uint64 // copies written to a port
	Delayed   uint64 // copies that went through the scheduler
	Cut       uint64 // copies dropped by a cut link
	Lost      uint64 // copies dropped by a link's loss probability
	Malformed uint64 // frames shorter than an Ethernet header
	Errors    uint64 // failed reads and writes (a port whose device is down)
}

// String formats s for logs.
func (s Stats) String() string {
	return fmt.Sprintf("received %d, forwarded %d (delayed %d), cut %d, lost %d, malformed %d, errors %d",
		s.Received, s.Forwarded, s.Delayed, s.Cut, s.Lost, s.Malformed, s.Errors)
}

// Switch is a learning Ethernet switch in user space. It reads whole
// frames from every port (one frame per Read, as a TAP device gives
// them), learns which port each source MAC address is behind, sends
// unicast frames to the learned port and floods broadcast, multicast and
// unknown destinations. Between node ports it applies each directed
// pair's Link; ports past the node ports (the lab's monitor) are never
// cut or impaired. Delayed frames wait in one scheduler goroutine's timer
// heap. Its methods are safe for concurrent use.
type Switch struct {
	ports []io.ReadWriteCloser
	nodes int

	mu    sync.Mutex             // serializes changes of links
	links atomic.Pointer[[]Link] // nodes×nodes, [src*nodes+dst]; replaced whole, never changed in place

	macMu sync.RWMutex
	macs  map[[6]byte]int

	sched *scheduler
	stats struct {
		received, forwarded, delayed, cut, lost, malformed, errors atomic.Uint64
	}

	closing   chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
}

// NewSwitch starts a switch on ports, of which the first nodes are node
// ports. The switch owns the ports: Close closes them.
func NewSwitch(ports []io.ReadWriteCloser, nodes int) *Switch {
	s := &Switch{ports: ports, nodes: nodes, macs: map[[6]byte]int{}, closing: make(chan struct{})}
	links := make([]Link, nodes*nodes)
	s.links.Store(&links)
	s.sched = newScheduler(s.write)
	s.wg.Add(len(ports))
	for i := range ports {
		go s.read(i)
	}
	return s
}

// Close stops the switch and its scheduler, closes its ports and waits for
// its goroutines. Frames still delayed are dropped.
func (s *Switch) Close() error {
	var errs []error
	s.closeOnce.Do(func() {
		close(s.closing)
		s.sched.close()
		for _, p := range s.ports {
			if err := p.Close(); err != nil {
				errs = append(errs, fmt.Errorf("netlab: close port: %w", err))
			}
		}
		s.wg.Wait()
	})
	return errors.Join(errs...)
}

// Stats returns the switch's counters.
func (s *Switch) Stats() Stats {
	return Stats{
		Received: s.stats.received.Load(), Forwarded: s.stats.forwarded.Load(), Delayed: s.stats.delayed.Load(),
		Cut: s.stats.cut.Load(), Lost: s.stats.lost.Load(), Malformed: s.stats.malformed.Load(), Errors: s.stats.errors.Load(),
	}
}

// Link returns the link from node port src to node port dst.
func (s *Switch) Link(src, dst int) Link {
	if src < 0 || dst < 0 || src >= s.nodes || dst >= s.nodes {
		return Link{}
	}
	return (*s.links.Load())[src*s.nodes+dst]
}

// SetLink sets the link from node port src to node port dst (one way).
func (s *Switch) SetLink(src, dst int, l Link) error {
	if err := s.checkNode(src); err != nil {
		return err
	}
	if err := s.checkNode(dst); err != nil {
		return err
	}
	s.update(func(links []Link) { links[src*s.nodes+dst] = l })
	return nil
}

// Partition cuts every link between nodes of different groups and mends
// those within a group. Nodes in no group are cut from every other node.
// Delays and losses stay as they were.
func (s *Switch) Partition(groups ...[]int) error {
	group := make([]int, s.nodes)
	for i := range group {
		group[i] = -1 - i // alone
	}
	for g, nodes := range groups {
		for _, n := range nodes {
			if err := s.checkNode(n); err != nil {
				return err
			}
			if group[n] >= 0 {
				return fmt.Errorf("netlab: node %d is in two groups", n)
			}
			group[n] = g
		}
	}
	s.update(func(links []Link) {
		for src := range s.nodes {
			for dst := range s.nodes {
				links[src*s.nodes+dst].Cut = src != dst && group[src] != group[dst]
			}
		}
	})
	return nil
}

// Heal mends every cut link. Delays and losses stay as they were.
func (s *Switch) Heal() {
	s.update(func(links []Link) {
		for i := range links {
			links[i].Cut = false
		}
	})
}

// Impair gives every link between two nodes the delay, jitter and loss.
// Cuts stay as they were.
func (s *Switch) Impair(delay, jitter time.Duration, loss float64) error {
	if delay < 0 || jitter < 0 || loss < 0 || loss > 1 {
		return fmt.Errorf("netlab: impairment %s ± %s, loss %g: want non-negative durations and a loss from 0 to 1", delay, jitter, loss)
	}
	s.update(func(links []Link) {
		for i := range links {
			links[i].Delay, links[i].Jitter, links[i].Loss = delay, jitter, loss
		}
	})
	return nil
}

func (s *Switch) checkNode(n int) error {
	if n < 0 || n >= s.nodes {
		return fmt.Errorf("netlab: node %d out of range 0 to %d", n, s.nodes-1)
	}
	return nil
}

// update replaces the link table by a changed copy, so that readers never
// lock.
func (s *Switch) update(change func(links []Link)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	links := append([]Link(nil), *s.links.Load()...)
	change(links)
	s.links.Store(&links)
}

// read forwards the frames of port src until the switch closes.
func (s *Switch) read(src int) {
	defer s.wg.Done()
	// Larger than any frame of a TAP device without offloads (MTU plus
	// header), so that no frame is cut short.
	buf := make([]byte, 64<<10)
	for {
		n, err := s.ports[src].Read(buf)
		if err != nil {
			select {
			case <-s.closing:
				return
			default:
			}
			if errors.Is(err, os.ErrClosed) || errors.Is(err, io.EOF) {
				return
			}
			// A device that is down can fail reads; wait rather than spin.
			s.stats.errors.Add(1)
			select {
			case <-s.closing:
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		s.forward(src, buf[:n])
	}
}

// forward sends one frame read from port src on its way. frame is reused
// by the caller once forward returns.
func (s *Switch) forward(src int, frame []byte) {
	s.stats.received.Add(1)
	if len(frame) < 14 {
		s.stats.malformed.Add(1)
		return
	}
	var dstMAC, srcMAC [6]byte
	copy(dstMAC[:], frame[0:6])
	copy(srcMAC[:], frame[6:12])
	if srcMAC[0]&1 == 0 {
		s.learn(srcMAC, src)
	}
	links := *s.links.Load()
	var shared []byte // one copy of frame for every delayed delivery
	deliver := func(dst int) {
		var l Link
		if src < s.nodes && dst < s.nodes {
			l = links[src*s.nodes+dst]
		}
		switch {
		case l.Cut:
			s.stats.cut.Add(1)
			return
		case l.Loss > 0 && rand.Float64() < l.Loss:
			s.stats.lost.Add(1)
			return
		}
		d := l.Delay
		if l.Jitter > 0 {
			d += time.Duration(rand.Int64N(2*int64(l.Jitter)+1)) - l.Jitter
		}
		if d <= 0 {
			s.write(dst, frame)
			return
		}
		if shared == nil {
			shared = append([]byte(nil), frame...)
		}
		s.stats.delayed.Add(1)
		s.sched.add(time.Now().Add(d), dst, shared)
	}
	if dstMAC[0]&1 == 0 {
		s.macMu.RLock()
		dst, ok := s.macs[dstMAC]
		s.macMu.RUnlock()
		if ok {
			if dst != src {
				deliver(dst)
			}
			return
		}
	}
	for dst := range s.ports {
		if dst != src {
			deliver(dst)
		}
	}
}

// learn records that mac is behind port p.
func (s *Switch) learn(mac [6]byte, p int) {
	s.macMu.RLock()
	q, ok := s.macs[mac]
	s.macMu.RUnlock()
	if ok && q == p {
		return
	}
	s.macMu.Lock()
	s.macs[mac] = p
	s.macMu.Unlock()
}

// write hands frame to port dst.
func (s *Switch) write(dst int, frame []byte) {
	if _, err := s.ports[dst].Write(frame); err != nil {
		s.stats.errors.Add(1)
		return
	}
	s.stats.forwarded.Add(1)
}
