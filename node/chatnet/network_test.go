package chatnet_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/wallet"
)

// register registers k's account at node at's peer, submitted to node via.
func register(t *testing.T, c *nettest.Cluster, k wallet.Key, at, via int, ts int64) *directory.Registration {
	t.Helper()
	r := &directory.Registration{NodePeer: c.Nodes[at].Host.ID().String(), Timestamp: ts}
	r.Sign(k.Private())
	if err := c.Nodes[via].Chat.Register(context.Background(), r); err != nil {
		t.Fatalf("register %s at node %d via node %d: %v", k.Address(), at, via, err)
	}
	return r
}

func message(from wallet.Key, to ledger.Address, text string) *chat.Message {
	m := &chat.Message{To: to, Message: text, Timestamp: time.Now().UnixMilli()}
	m.Sign(from.Private())
	return m
}

// waitRegistered waits until every node holds want as a's registration.
func waitRegistered(t *testing.T, c *nettest.Cluster, want *directory.Registration) {
	t.Helper()
	c.WaitFor("the registration everywhere", 20*time.Second, func(i int) bool {
		r, found, err := c.Nodes[i].Chat.Lookup(want.Account)
		return err == nil && found && r.Hash() == want.Hash()
	})
}

// events reads node's event stream of account, sending each message on
// the returned channel, until the test ends.
type event struct {
	id  string
	msg chat.Message
}

func follow(t *testing.T, url string, account ledger.Address, lastID string) <-chan event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/chat/events?account="+account.String(), nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("GET /chat/events: %s, %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	out := make(chan event, 64)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	go func() {
		defer close(done)
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		var ev event
		var name string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.msg); err != nil {
					t.Errorf("event data: %v", err)
				}
			case line == "":
				if name == "message" {
					out <- ev
				}
				ev, name = event{}, ""
			}
		}
	}()
	return out
}

func next(t *testing.T, c <-chan event) event {
	t.Helper()
	select {
	case ev, ok := <-c:
		if !ok {
			t.Fatal("the event stream ended")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event within 20 s")
	}
	return event{}
}

func TestMessageReachesTheRecipientsNode(t *testing.T) {
	c := nettest.Start(t, nettest.Options{Nodes: 3})
	alice, carol := wallet.NewKey(), wallet.NewKey()
	reg := register(t, c, carol, 2, 2, time.Now().UnixMilli())
	waitRegistered(t, c, reg)
	stream := follow(t, c.Nodes[2].API.URL, carol.Address(), "")

	m := message(alice, carol.Address(), "hello carol")
	if err := c.Nodes[0].Chat.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	ev := next(t, stream)
	if ev.msg != *m {
		t.Fatalf("event: got %+v, want %+v", ev.msg, *m)
	}
	var got []chat.Message
	c.Nodes[2].Chat.Messages(carol.Address(), -1, func(m *chat.Message) error { got = append(got, *m); return nil })
	if len(got) != 1 || got[0] != *m {
		t.Fatalf("node 2's messages of carol: got %+v, want the one sent", got)
	}
	c.WaitFor("node 0's outbox empty once delivered", 10*time.Second, func(i int) bool { return c.Nodes[0].Chat.Outbox() == 0 })
}
