package chatnet_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/wallet"
)

// TestSlowSubscriberDropped: a subscriber that never reads is dropped
// once it is SubscriberBuffer events behind, with Lagged set, and the
// others get every event, in order.
func TestSlowSubscriberDropped(t *testing.T) {
	const buffer = 4
	c := nettest.Start(t, nettest.Options{Nodes: 1, Chat: chatnet.Config{SubscriberBuffer: buffer}})
	svc := c.Nodes[0].Chat
	alice, bob := wallet.NewKey(), wallet.NewKey()
	register(t, c, bob, 0, 0, time.Now().UnixMilli())

	slow, _, ok := svc.Subscribe(nil)
	if !ok {
		t.Fatal("Subscribe: the service refused")
	}
	defer slow.Close()
	fast, last, ok := svc.Subscribe(nil)
	if !ok {
		t.Fatal("Subscribe: the service refused")
	}
	defer fast.Close()
	if got := svc.Subscribers(); got != 2 {
		t.Fatalf("Subscribers: got %d, want 2", got)
	}

	const n = buffer + 3
	ts := time.Now().UnixMilli()
	for i := range n {
		m := &chat.Message{To: bob.Address(), Message: fmt.Sprintf("message %d", i), Timestamp: ts + int64(i)}
		m.Sign(alice.Private())
		if err := svc.Send(context.Background(), m); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		select {
		case ev, open := <-fast.C:
			if !open {
				t.Fatalf("event %d: the reading subscriber was dropped", i)
			}
			if ev.Seq != last+uint64(i)+1 || *ev.Message != *m {
				t.Fatalf("event %d: got seq %d %+v, want seq %d %+v", i, ev.Seq, *ev.Message, last+uint64(i)+1, *m)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("event %d: not received within 5 s", i)
		}
	}

	// The slow one holds the first buffer events, then its channel is
	// closed.
	got := 0
	for range slow.C {
		got++
	}
	if got != buffer {
		t.Errorf("slow subscriber: got %d events before its channel closed, want %d", got, buffer)
	}
	if !slow.Lagged() {
		t.Error("slow subscriber: Lagged() false, want true")
	}
	if fast.Lagged() {
		t.Error("reading subscriber: Lagged() true, want false")
	}
	if got := svc.Subscribers(); got != 1 {
		t.Errorf("Subscribers after the drop: got %d, want 1", got)
	}
	fast.Close()
	if _, open := <-fast.C; open {
		t.Error("reading subscriber after Close: channel open, want closed")
	}
	if fast.Lagged() {
		t.Error("reading subscriber after Close: Lagged() true, want false")
	}
}

// TestStopStreamsEndsSubscriptions: StopStreams closes every
// subscription, not as lagged, and refuses new ones.
func TestStopStreamsEndsSubscriptions(t *testing.T) {
	c := nettest.Start(t, nettest.Options{Nodes: 1})
	svc := c.Nodes[0].Chat
	sub, _, ok := svc.Subscribe(nil)
	if !ok {
		t.Fatal("Subscribe: the service refused")
	}
	svc.StopStreams()
	select {
	case _, open := <-sub.C:
		if open {
			t.Fatal("after StopStreams: got an event, want the channel closed")
		}
	case <-time.After(time.Second):
		t.Fatal("after StopStreams: channel still open after 1 s")
	}
	if sub.Lagged() {
		t.Error("after StopStreams: Lagged() true, want false")
	}
	late, _, ok := svc.Subscribe(nil)
	if ok {
		t.Error("Subscribe after StopStreams: ok, want refused")
	}
	if _, open := <-late.C; open {
		t.Error("Subscribe after StopStreams: channel open, want closed")
	}
}

// TestEventsInSequenceOrder: messages stored at once from many goroutines
// reach a subscriber in the order of their sequence numbers, with none
// missing: an event stream's client resumes after the last id it saw, so
// an event overtaken by a later one would be lost to it.
func TestEventsInSequenceOrder(t *testing.T) {
	const senders, each = 8, 20 // each within the send burst
	c := nettest.Start(t, nettest.Options{Nodes: 1})
	svc := c.Nodes[0].Chat
	bob := wallet.NewKey()
	register(t, c, bob, 0, 0, time.Now().UnixMilli())
	sub, last, ok := svc.Subscribe(nil)
	if !ok {
		t.Fatal("Subscribe: the service refused")
	}
	defer sub.Close()

	ts := time.Now().UnixMilli()
	var wg sync.WaitGroup
	for g := range senders {
		k := wallet.NewKey()
		wg.Go(func() {
			for i := range each {
				m := &chat.Message{To: bob.Address(), Message: fmt.Sprintf("%d/%d", g, i), Timestamp: ts + int64(i)}
				m.Sign(k.Private())
				if err := svc.Send(context.Background(), m); err != nil {
					t.Errorf("send %d/%d: %v", g, i, err)
				}
			}
		})
	}
	wg.Wait()
	for i := range senders * each {
		select {
		case ev, open := <-sub.C:
			if !open {
				t.Fatalf("event %d: subscription closed (lagged %v)", i, sub.Lagged())
			}
			if want := last + uint64(i) + 1; ev.Seq != want {
				t.Fatalf("event %d: got seq %d, want %d", i, ev.Seq, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("event %d: not received within 5 s", i)
		}
	}
}
