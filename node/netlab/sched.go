package netlab

import (
	"container/heap"
	"sync"
	"time"
)

// scheduler delivers delayed frames when they are due: one goroutine and
// one timer for every frame in flight, rather than a goroutine or a timer
// per frame, so that a few thousand frames a second cost little.
type scheduler struct {
	deliver func(port int, frame []byte)

	mu      sync.Mutex
	pending frameHeap
	seq     uint64

	wake chan struct{} // a frame due before the timer was added
	done chan struct{}
	wg   sync.WaitGroup
}

// delayed is a frame waiting for its time.
type delayed struct {
	at    time.Time
	seq   uint64 // frames due at the same time leave in the order they came
	port  int
	frame []byte
}

type frameHeap []delayed

func (h frameHeap) Len() int { return len(h) }
func (h frameHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h frameHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *frameHeap) Push(x any)   { *h = append(*h, x.(delayed)) }
func (h *frameHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	old[len(old)-1] = delayed{}
	*h = old[:len(old)-1]
	return d
}

// newScheduler starts a scheduler that calls deliver, from its own
// goroutine, for every frame once it is due.
func newScheduler(deliver func(port int, frame []byte)) *scheduler {
	s := &scheduler{deliver: deliver, wake: make(chan struct{}, 1), done: make(chan struct{})}
	s.wg.Add(1)
	go s.run()
	return s
}

// add schedules frame for port at time at. frame must not change after.
func (s *scheduler) add(at time.Time, port int, frame []byte) {
	s.mu.Lock()
	s.seq++
	heap.Push(&s.pending, delayed{at: at, seq: s.seq, port: port, frame: frame})
	first := s.pending[0].seq == s.seq
	s.mu.Unlock()
	if first {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// close stops the scheduler and waits for its goroutine; frames not yet
// due are dropped.
func (s *scheduler) close() {
	close(s.done)
	s.wg.Wait()
}

func (s *scheduler) run() {
	defer s.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var due []delayed
	for {
		now := time.Now()
		due = due[:0]
		next := time.Duration(-1)
		s.mu.Lock()
		for len(s.pending) > 0 && !s.pending[0].at.After(now) {
			due = append(due, heap.Pop(&s.pending).(delayed))
		}
		if len(s.pending) > 0 {
			next = s.pending[0].at.Sub(now)
		}
		s.mu.Unlock()
		for i, d := range due {
			s.deliver(d.port, d.frame)
			due[i] = delayed{}
		}
		if len(due) > 0 {
			select {
			case <-s.done:
				return
			default:
				continue // delivering took time: look again before sleeping
			}
		}
		if next >= 0 {
			timer.Reset(next)
		} else {
			timer.Stop()
		}
		select {
		case <-timer.C:
		case <-s.wake:
		case <-s.done:
			return
		}
	}
}
