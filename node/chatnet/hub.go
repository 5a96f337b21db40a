package chatnet

import (
	"sync"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/ledger"
)

// Event is a message as it was stored on this node: Seq orders the node's
// messages and is the event stream's id.
type Event struct {
	Seq     uint64
	Message *chat.Message
}

// Subscription receives the messages stored after it began. C is closed
// when the subscription ends: by Close, by the service closing, or because
// the subscriber fell SubscriberBuffer events behind (Lagged then says
// so); it then resumes from its last event id.
type Subscription struct {
	C       <-chan Event
	c       chan Event
	account *ledger.Address
	h       *hub
	lagged  bool // set before c is closed
}

// Lagged reports, once C is closed, whether the subscription was dropped
// for falling behind.
func (s *Subscription) Lagged() bool {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	return s.lagged
}

// Close ends the subscription.
func (s *Subscription) Close() { s.h.remove(s, false) }

// hub fans new messages out to subscriptions. A subscriber that cannot
// take an event at once is dropped, never waited for: one slow client
// cannot stall the others or grow the node's memory.
type hub struct {
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	buffer int
	closed bool
}

func newHub(buffer int) *hub {
	return &hub{subs: make(map[*Subscription]struct{}), buffer: buffer}
}

func (h *hub) subscribe(account *ledger.Address) (*Subscription, bool) {
	c := make(chan Event, h.buffer)
	s := &Subscription{C: c, c: c, account: account, h: h}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(c)
		return s, false
	}
	h.subs[s] = struct{}{}
	return s, true
}

func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

func (h *hub) remove(s *Subscription, lagged bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeLocked(s, lagged)
}

func (h *hub) removeLocked(s *Subscription, lagged bool) {
	if _, ok := h.subs[s]; !ok {
		return
	}
	delete(h.subs, s)
	s.lagged = lagged
	close(s.c)
}

// publish hands ev to every subscription it concerns.
func (h *hub) publish(ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.account != nil && *s.account != ev.Message.From && *s.account != ev.Message.To {
			continue
		}
		select {
		case s.c <- ev:
		default:
			h.removeLocked(s, true)
		}
	}
}

// close ends every subscription and refuses new ones.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		h.removeLocked(s, false)
	}
}
