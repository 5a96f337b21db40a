package nodeclient_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/wallet"
)

func chatMessage(from wallet.Key, to ledger.Address, text string, ts int64) *chat.Message {
	m := &chat.Message{To: to, Message: text, Timestamp: ts}
	m.Sign(from.Private())
	return m
}

// nextEvent reads the next event of s, failing the test after 20 s.
func nextEvent(t *testing.T, s *nodeclient.EventStream) nodeclient.ChatEvent {
	t.Helper()
	type result struct {
		ev  nodeclient.ChatEvent
		err error
	}
	c := make(chan result, 1)
	go func() {
		ev, err := s.Next()
		c <- result{ev, err}
	}()
	select {
	case r := <-c:
		if r.err != nil {
			t.Fatalf("EventStream.Next: %v", r.err)
		}
		return r.ev
	case <-time.After(20 * time.Second):
		s.Close()
		t.Fatal("no event within 20 s")
	}
	return nodeclient.ChatEvent{}
}

// TestChatAndDirectory drives every Chat and Directory method against a
// real node with its chat service.
func TestChatAndDirectory(t *testing.T) {
	t.Parallel()
	cl := nettest.Start(t, nettest.Options{Nodes: 1, Chat: chatnet.Config{SendRate: 0.5, SendBurst: 6},
		Wrap: func(h http.Handler) http.Handler { return openapitest.Node.Handler(t, h) }})
	nd := cl.Nodes[0]
	c := nodeclient.New(nd.API.URL, nil)
	alice, bob := wallet.NewKey(), wallet.NewKey()
	now := time.Now().UnixMilli()

	// Directory: not registered, then registered.
	_, err := c.Registration(ctx(t), alice.Address())
	var apiErr *nodeclient.APIError
	if !errors.Is(err, nodeclient.ErrNotFound) || !errors.As(err, &apiErr) || !strings.Contains(apiErr.Message, "not registered") {
		t.Fatalf("Registration of an unregistered account: %v, want a 404 APIError matching ErrNotFound", err)
	}
	var regs []directory.Registration
	for _, k := range []wallet.Key{alice, bob} {
		r := directory.Registration{NodePeer: nd.Host.ID().String(), Timestamp: now}
		r.Sign(k.Private())
		if err := c.Register(ctx(t), &r); err != nil {
			t.Fatalf("Register: %v", err)
		}
		got, err := c.Registration(ctx(t), k.Address())
		if err != nil || got != r {
			t.Errorf("Registration after Register = %+v, %v; want %+v", got, err, r)
		}
		regs = append(regs, r)
	}
	// Again is fine; an older one is refused.
	if err := c.Register(ctx(t), &regs[0]); err != nil {
		t.Errorf("Register of the same registration again: %v", err)
	}
	old := directory.Registration{NodePeer: nd.Host.ID().String(), Timestamp: now - 1000}
	old.Sign(alice.Private())
	if err := c.Register(ctx(t), &old); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, "newer") {
		t.Errorf("Register of an older registration: %v, want a 400 saying a newer one is held", err)
	}
	all, err := c.Directory(ctx(t))
	if err != nil {
		t.Fatalf("Directory: %v", err)
	}
	for _, r := range regs {
		if !slices.Contains(all, r) {
			t.Errorf("Directory() = %+v, want it to hold %+v", all, r)
		}
	}
	if !slices.ContainsFunc(all, func(r directory.Registration) bool { return r.Account == nd.N.Key.Address() }) {
		t.Errorf("Directory() = %+v, want the node's own registration too", all)
	}

	// Chat: a stream of bob's messages, then two messages to him.
	stream, err := c.ChatEvents(ctx(t), new(bob.Address()), "")
	if err != nil {
		t.Fatalf("ChatEvents: %v", err)
	}
	defer stream.Close()
	m1 := chatMessage(alice, bob.Address(), "hello bob", now-2000)
	m2 := chatMessage(alice, bob.Address(), "still there?", now-1000)
	m3 := chatMessage(bob, alice.Address(), "yes", now)
	for _, m := range []*chat.Message{m1, m2, m3} {
		if err := c.SendChat(ctx(t), m); err != nil {
			t.Fatalf("SendChat(%q): %v", m.Message, err)
		}
	}
	if err := c.SendChat(ctx(t), m1); err != nil {
		t.Errorf("SendChat of the same message again: %v", err)
	}
	var evs []nodeclient.ChatEvent
	for range 3 {
		evs = append(evs, nextEvent(t, stream))
	}
	for i, m := range []*chat.Message{m1, m2, m3} {
		if evs[i].Message != *m || evs[i].ID == "" {
			t.Errorf("event %d = %+v, want %+v with an id", i, evs[i], *m)
		}
	}
	if got := stream.LastEventID(); got != evs[2].ID {
		t.Errorf("LastEventID() = %q, want the last event's %q", got, evs[2].ID)
	}
	// Resuming after the first event gives the other two.
	resumed, err := c.ChatEvents(ctx(t), new(bob.Address()), evs[0].ID)
	if err != nil {
		t.Fatalf("ChatEvents resuming: %v", err)
	}
	for _, want := range evs[1:] {
		if got := nextEvent(t, resumed); got != want {
			t.Errorf("resumed event = %+v, want %+v", got, want)
		}
	}
	resumed.Close()
	// Every message, for any account: the stream without account.
	everyone, err := c.ChatEvents(ctx(t), nil, evs[0].ID)
	if err != nil {
		t.Fatalf("ChatEvents(nil): %v", err)
	}
	if got := nextEvent(t, everyone); got != evs[1] {
		t.Errorf("ChatEvents(nil) resumed = %+v, want %+v", got, evs[1])
	}
	everyone.Close()

	msgs, err := c.ChatMessages(ctx(t), bob.Address(), nil)
	if err != nil || !slices.Equal(msgs, []chat.Message{*m3, *m2, *m1}) {
		t.Errorf("ChatMessages(bob) = %+v, %v; want the three, newest first", msgs, err)
	}
	since := m1.Timestamp
	msgs, err = c.ChatMessages(ctx(t), alice.Address(), &since)
	if err != nil || !slices.Equal(msgs, []chat.Message{*m3, *m2}) {
		t.Errorf("ChatMessages(alice, since m1) = %+v, %v; want m3, m2 (since is exclusive)", msgs, err)
	}
	if msgs, err := c.ChatMessages(ctx(t), wallet.NewKey().Address(), nil); err != nil || len(msgs) != 0 {
		t.Errorf("ChatMessages(stranger) = %+v, %v; want none", msgs, err)
	}
	contacts, err := c.ChatContacts(ctx(t))
	if err != nil || len(contacts) != 2 || !slices.Contains(contacts, alice.Address()) || !slices.Contains(contacts, bob.Address()) {
		t.Errorf("ChatContacts() = %v, %v; want alice and bob", contacts, err)
	}

	// Refusals: a bad signature, and too many messages.
	bad := chatMessage(alice, bob.Address(), "forged", now)
	bad.Signature[0] ^= 1
	if err := c.SendChat(ctx(t), bad); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || errors.Is(err, nodeclient.ErrNotFound) {
		t.Errorf("SendChat of a forged message: %v, want a 400 APIError", err)
	}
	spammer := wallet.NewKey()
	for i := range 10 {
		err := c.SendChat(ctx(t), chatMessage(spammer, bob.Address(), fmt.Sprint("spam ", i), now+int64(i)))
		if err == nil {
			continue
		}
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests || apiErr.RetryAfter < time.Second {
			t.Fatalf("SendChat over the rate: %v (%+v), want a 429 APIError with RetryAfter", err, apiErr)
		}
		return
	}
	t.Errorf("10 messages at once at a burst of 6: none refused")
}

// TestChatEventsAnswers checks ChatEvents' handling of what a node (or
// something in its place) answers, and the ends of a stream.
func TestChatEventsAnswers(t *testing.T) {
	t.Parallel()
	alice := wallet.NewKey()
	m := chatMessage(alice, wallet.NewKey().Address(), "hi", time.Now().UnixMilli())
	var gotLastID, gotAccept, gotAccount string
	// The base URL's path chooses the answer.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/busy/chat/events":
			w.Header().Set("Retry-After", "3")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":"the node is shutting down"}`)
			return
		case "/json/chat/events":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "[]")
			return
		case "/hang/chat/events":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "retry: 1000\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		gotLastID, gotAccept, gotAccount = r.Header.Get("Last-Event-ID"), r.Header.Get("Accept"), r.URL.Query().Get("account")
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		io.WriteString(w, "retry: 1000\n\n: keep-alive\n\nid: 8\nevent: ping\ndata: {}\n\nid: 9\nevent: message\ndata: not json\n\n")
		fmt.Fprintf(w, "id: 10\nevent: message\ndata: {\"from\":%q,\n", m.From)
		fmt.Fprintf(w, "data: \"to\":%q,\"message\":%q,\"timestamp\":%d,\"signature\":%q}\n\n", m.To, m.Message, m.Timestamp, m.Signature)
		io.WriteString(w, "data: cut short")
	}))
	t.Cleanup(srv.Close)

	s, err := nodeclient.New(srv.URL, nil).ChatEvents(ctx(t), new(alice.Address()), "7")
	if err != nil {
		t.Fatalf("ChatEvents: %v", err)
	}
	if gotLastID != "7" || gotAccept != "text/event-stream" || gotAccount != alice.Address().String() {
		t.Errorf("request: Last-Event-ID %q, Accept %q, account %q; want 7, text/event-stream, alice", gotLastID, gotAccept, gotAccount)
	}
	if _, err := s.Next(); !errors.Is(err, nodeclient.ErrBadEvent) || !strings.Contains(err.Error(), `"9"`) {
		t.Errorf("Next over an event whose data is not a message: %v, want ErrBadEvent naming event 9", err)
	}
	ev, err := s.Next()
	if err != nil || ev.ID != "10" || ev.Message != *m {
		t.Errorf("Next after a bad event = %+v, %v; want event 10, the message over two data lines", ev, err)
	}
	if _, err := s.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Next at a stream cut within an event: %v, want io.ErrUnexpectedEOF", err)
	}
	if s.LastEventID() != "10" {
		t.Errorf("LastEventID() = %q, want 10", s.LastEventID())
	}
	s.Close()

	// Refusals are APIErrors, with Retry-After.
	_, err = nodeclient.New(srv.URL+"/busy", nil).ChatEvents(ctx(t), nil, "")
	var apiErr *nodeclient.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable || apiErr.RetryAfter != 3*time.Second ||
		apiErr.Message != "the node is shutting down" {
		t.Errorf("ChatEvents from a busy node: %#v, want a 503 APIError with RetryAfter 3 s", err)
	}
	// Not an event stream.
	if _, err := nodeclient.New(srv.URL+"/json", nil).ChatEvents(ctx(t), nil, ""); err == nil || !strings.Contains(err.Error(), "not an event stream") {
		t.Errorf("ChatEvents answered with JSON: %v, want an error saying it is not an event stream", err)
	}
	// The context's end ends a waiting Next, with the context's error.
	cctx, cancel := context.WithCancel(ctx(t))
	s, err = nodeclient.New(srv.URL+"/hang", nil).ChatEvents(cctx, nil, "")
	if err != nil {
		t.Fatalf("ChatEvents: %v", err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("Next when the context ends: %v, want context.Canceled", err)
	}
	s.Close()
	// So does Close.
	s, err = nodeclient.New(srv.URL+"/hang", nil).ChatEvents(ctx(t), nil, "")
	if err != nil {
		t.Fatalf("ChatEvents: %v", err)
	}
	time.AfterFunc(50*time.Millisecond, func() { s.Close() })
	if _, err := s.Next(); err == nil {
		t.Errorf("Next after Close: no error")
	}
}
