package chatnet_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/wallet"
)

// restart starts node i again on its data (its ledger and chat store on
// its file system, its p2p key on the operating system's under Dir), with
// the representatives it voted with, and checks that its peer ID is the
// same: registrations that name it still reach it.
func restart(t *testing.T, c *nettest.Cluster, i int) {
	t.Helper()
	old := c.Nodes[i]
	c.Nodes[i] = c.StartNode(old.Dir, old.FS, old.Reps[1:]...)
	if got, want := c.Nodes[i].Host.ID(), old.Host.ID(); got != want {
		t.Fatalf("node %d restarted: peer ID %s, want %s (the p2p key did not persist)", i, got, want)
	}
}

// stored returns the messages of account node i holds, newest first.
func stored(t *testing.T, c *nettest.Cluster, i int, account ledger.Address) []chat.Message {
	t.Helper()
	var out []chat.Message
	if err := c.Nodes[i].Chat.Messages(account, -1, func(m *chat.Message) error { out = append(out, *m); return nil }); err != nil {
		t.Fatalf("node %d: messages of %s: %v", i, account, err)
	}
	return out
}

// holds reports whether node i holds m, once.
func holds(t *testing.T, c *nettest.Cluster, i int, m *chat.Message) bool {
	t.Helper()
	n := 0
	for _, got := range stored(t, c, i, m.To) {
		if got == *m {
			n++
		}
	}
	return n == 1
}

// TestDeliveryAfterRestart: a message to an account whose node is down
// waits in the sender's node's outbox, durably, and reaches the
// recipient's node once it is back, whichever of the two restarted.
func TestDeliveryAfterRestart(t *testing.T) {
	for _, tc := range []struct {
		name          string
		restartSender bool
	}{
		{"recipient's node restarts", false},
		{"sender's node restarts too, outbox non-empty", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := nettest.Start(t, nettest.Options{Nodes: 3})
			alice, carol := wallet.NewKey(), wallet.NewKey()
			waitRegistered(t, c, register(t, c, carol, 2, 2, time.Now().UnixMilli()))

			c.Stop(2)
			m := message(alice, carol.Address(), "are you there, carol?")
			if err := c.Nodes[0].Chat.Send(context.Background(), m); err != nil {
				t.Fatalf("send at node 0: %v", err)
			}
			// Some attempts fail while node 2 is down; the message stays.
			time.Sleep(600 * time.Millisecond)
			if got := c.Nodes[0].Chat.Outbox(); got != 1 {
				t.Fatalf("node 0's outbox with node 2 down: got %d, want 1", got)
			}

			if tc.restartSender {
				c.Stop(0)
				restart(t, c, 0)
				if got := c.Nodes[0].Chat.Outbox(); got != 1 {
					t.Fatalf("node 0's outbox after its restart: got %d, want 1 (the outbox is durable)", got)
				}
				if !holds(t, c, 0, m) {
					t.Fatalf("node 0 after its restart: messages of carol %+v, want the one sent", stored(t, c, 0, carol.Address()))
				}
			}
			restart(t, c, 2)

			c.WaitFor("the message on node 2", 10*time.Second, func(i int) bool { return i != 2 || holds(t, c, 2, m) })
			c.WaitFor("node 0's outbox empty", 10*time.Second, func(i int) bool { return i != 0 || c.Nodes[0].Chat.Outbox() == 0 })
			if got := stored(t, c, 2, carol.Address()); len(got) != 1 {
				t.Errorf("node 2's messages of carol: got %d (%+v), want 1", len(got), got)
			}
		})
	}
}

// TestRestartKeepsMessagesAndDirectory: a restarted node has the messages
// and registrations it held, and its own account is registered at its
// peer again, which the other nodes learn.
func TestRestartKeepsMessagesAndDirectory(t *testing.T) {
	c := nettest.Start(t, nettest.Options{Nodes: 3})
	alice, bob, dave := wallet.NewKey(), wallet.NewKey(), wallet.NewKey()
	regBob := register(t, c, bob, 0, 0, time.Now().UnixMilli())
	regDave := register(t, c, dave, 1, 1, time.Now().UnixMilli())
	waitRegistered(t, c, regBob)
	waitRegistered(t, c, regDave)
	var sent []*chat.Message
	for i, text := range []string{"one", "two", "three"} {
		m := &chat.Message{To: bob.Address(), Message: text, Timestamp: time.Now().UnixMilli() + int64(i)}
		m.Sign(alice.Private())
		if err := c.Nodes[0].Chat.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, m)
	}
	beforeContacts, err := c.Nodes[0].Chat.Contacts()
	if err != nil {
		t.Fatal(err)
	}
	beforeDir := directoryOf(t, c, 0)

	c.Stop(0)
	restart(t, c, 0)

	got := stored(t, c, 0, bob.Address())
	want := []chat.Message{*sent[2], *sent[1], *sent[0]}
	if !slices.Equal(got, want) {
		t.Errorf("node 0's messages of bob after restart: got %+v, want %+v", got, want)
	}
	if got := stored(t, c, 0, alice.Address()); !slices.Equal(got, want) {
		t.Errorf("node 0's messages of alice after restart: got %+v, want %+v", got, want)
	}
	if got, err := c.Nodes[0].Chat.Contacts(); err != nil || !slices.Equal(got, beforeContacts) {
		t.Errorf("node 0's contacts after restart: got %v, %v, want %v", got, err, beforeContacts)
	}
	if got := c.Nodes[0].Chat.Outbox(); got != 0 {
		t.Errorf("node 0's outbox after restart: got %d, want 0 (bob is registered at node 0)", got)
	}
	afterDir := directoryOf(t, c, 0)
	for _, r := range []*directory.Registration{regBob, regDave} {
		if got, ok := afterDir[r.Account]; !ok || got != *r {
			t.Errorf("node 0's registration of %s after restart: got %+v (held %v), want %+v", r.Account, got, ok, *r)
		}
	}
	if len(afterDir) != len(beforeDir) {
		t.Errorf("node 0's directory after restart: got %d registrations, want %d", len(afterDir), len(beforeDir))
	}

	// The node's own account is registered again, at the same peer, and
	// the other nodes see it over their APIs.
	own := c.Nodes[0].N.Key.Address()
	r, found, err := c.Nodes[0].Chat.Lookup(own)
	if err != nil || !found || r.NodePeer != c.Nodes[0].Host.ID().String() {
		t.Fatalf("node 0's own registration after restart: got %+v, %v, %v, want at peer %s", r, found, err, c.Nodes[0].Host.ID())
	}
	if r.Timestamp <= beforeDir[own].Timestamp {
		t.Errorf("node 0's own registration after restart: timestamp %d, want after the first one's %d", r.Timestamp, beforeDir[own].Timestamp)
	}
	c.WaitFor("node 0's account in every API's directory", 10*time.Second, func(i int) bool {
		got, status := getRegistration(t, c.Nodes[i].API.URL, own)
		return status == http.StatusOK && got == *r
	})
}

// TestNodeAccountRegisteredAtStart: each node registers its own account at
// its own peer, and every node's API shows every node's registration.
func TestNodeAccountRegisteredAtStart(t *testing.T) {
	c := nettest.Start(t, nettest.Options{Nodes: 3})
	c.WaitFor("every node's account in every directory", 10*time.Second, func(i int) bool {
		for _, o := range c.Nodes {
			got, status := getRegistration(t, c.Nodes[i].API.URL, o.N.Key.Address())
			if status != http.StatusOK || got.NodePeer != o.Host.ID().String() || got.Check() != nil {
				return false
			}
		}
		return true
	})
}

func directoryOf(t *testing.T, c *nettest.Cluster, i int) map[ledger.Address]directory.Registration {
	t.Helper()
	out := map[ledger.Address]directory.Registration{}
	if err := c.Nodes[i].Chat.Directory(func(r *directory.Registration) error { out[r.Account] = *r; return nil }); err != nil {
		t.Fatalf("node %d: directory: %v", i, err)
	}
	return out
}

// getRegistration GETs /directory/{account}.
func getRegistration(t *testing.T, url string, a ledger.Address) (directory.Registration, int) {
	t.Helper()
	var r directory.Registration
	resp, err := http.Get(url + "/directory/" + a.String())
	if err != nil {
		t.Fatalf("GET /directory/%s: %v", a, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			t.Fatalf("GET /directory/%s: decode: %v", a, err)
		}
	}
	return r, resp.StatusCode
}

// TestDeliveryOnceRegistered: a message to an account not registered yet
// waits in the outbox, and goes as soon as a registration of the account
// reaches the sender's node, not after the retry wait it had backed off to.
func TestDeliveryOnceRegistered(t *testing.T) {
	c := nettest.Start(t, nettest.Options{Nodes: 2, Chat: chatnet.Config{RetryMax: 10 * time.Second}})
	alice, erin := wallet.NewKey(), wallet.NewKey()
	m := message(alice, erin.Address(), "for when you arrive")
	if err := c.Nodes[0].Chat.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond) // attempts at 0, ~0.25, ~1 and ~2.25 s (ticks are every 250 ms); the next at ~4.5 s
	if got := c.Nodes[0].Chat.Outbox(); got != 1 {
		t.Fatalf("node 0's outbox before erin registers: got %d, want 1", got)
	}
	r := register(t, c, erin, 1, 1, time.Now().UnixMilli())
	waitRegistered(t, c, r)
	start := time.Now()
	c.WaitFor("the message on node 1", 5*time.Second, func(i int) bool { return i != 1 || holds(t, c, 1, m) })
	if d := time.Since(start); d > time.Second {
		t.Errorf("delivered %s after the registration reached node 0, want within 1 s", d.Round(time.Millisecond))
	}
	c.WaitFor("node 0's outbox empty", 5*time.Second, func(i int) bool { return i != 0 || c.Nodes[0].Chat.Outbox() == 0 })
}
