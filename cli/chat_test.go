package cli

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/wallet"
)

// chatUser is a key file and the node its owner uses.
type chatUser struct {
	t    *testing.T
	key  string
	addr string
	node string
}

func newChatUser(t *testing.T, dir, name, node string) *chatUser {
	t.Helper()
	k := wallet.NewKey()
	path := filepath.Join(dir, name+".json")
	if err := wallet.SaveKey(path, k); err != nil {
		t.Fatal(err)
	}
	return &chatUser{t: t, key: path, addr: k.Address().String(), node: node}
}

// run runs `lattice CMD --node NODE --key KEY ARGS...`: cmd is the command
// and its subcommand ("chat send").
func (u *chatUser) run(cmd string, args ...string) result {
	u.t.Helper()
	full := append(strings.Fields(cmd), "--node", u.node, "--key", u.key)
	return run(u.t, append(full, args...)...)
}

func (u *chatUser) must(cmd string, args ...string) result {
	u.t.Helper()
	return ok(u.t, u.run(cmd, args...), append(strings.Fields(cmd), args...)...)
}

// short is how chat read shows an address.
func short(addr string) string { return addr[:6] + "…" + addr[len(addr)-4:] }

// eventually polls cond until it holds, failing the test after 20 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s, still waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// chatLine matches one message of chat read and follow: local time, from →
// to, text.
var chatLine = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  (\S+) → (\S+)  (.*)$`)

// conversation parses chat read's output into "from → to  text" lines.
func conversation(t *testing.T, out string) []string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		m := chatLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("chat read line %q is not TIME  FROM → TO  TEXT (output %q)", l, out)
		}
		lines = append(lines, m[1]+" → "+m[2]+"  "+m[3])
	}
	return lines
}

// messageJSON is a message of --json output.
type messageJSON struct {
	From         string  `json:"from"`
	To           string  `json:"to"`
	Message      string  `json:"message"`
	Timestamp    int64   `json:"timestamp"`
	Signature    string  `json:"signature"`
	Plaintext    *string `json:"plaintext"`
	DecryptError string  `json:"decrypt_error"`
}

// TestChatTwoNodes: two people, each registered at a node of their own,
// send each other plain and encrypted messages; each reads the whole
// conversation, decrypted, at their own node.
func TestChatTwoNodes(t *testing.T) {
	cleanEnv(t)
	c := nettest.Start(t, nettest.Options{Nodes: 2})
	dir := t.TempDir()
	alice := newChatUser(t, dir, "alice", c.Nodes[0].API.URL)
	bob := newChatUser(t, dir, "bob", c.Nodes[1].API.URL)
	peer0, peer1 := c.Nodes[0].Host.ID().String(), c.Nodes[1].Host.ID().String()

	// Not registered yet.
	wantFail(t, alice.run("directory show"), 1, "your account "+alice.addr+" is not registered", "lattice directory register")

	r := alice.must("directory register")
	if want := "registered " + alice.addr + " at the node at " + alice.node + " (peer " + peer0 + ")\n"; !strings.HasPrefix(r.stdout, want) {
		t.Errorf("directory register printed %q, want it to start with %q", r.stdout, want)
	}
	var reg struct {
		Account   string `json:"account"`
		NodePeer  string `json:"node_peer"`
		Timestamp int64  `json:"timestamp"`
		Signature string `json:"signature"`
	}
	decode(t, bob.must("directory register", "--json"), &reg)
	if reg.Account != bob.addr || reg.NodePeer != peer1 || reg.Timestamp <= 0 || len(reg.Signature) != 128 {
		t.Errorf("directory register --json = %+v, want bob's account at node 1's peer %s", reg, peer1)
	}
	// The registrations reach both nodes.
	for _, u := range []*chatUser{alice, bob} {
		for _, node := range []string{alice.node, bob.node} {
			eventually(t, u.addr+"'s registration at "+node, func() bool {
				return run(t, "directory", "show", u.addr, "--node", node, "--json").code == 0
			})
		}
	}
	show := alice.must("directory show").stdout
	if want := "account     " + alice.addr + "\nnode peer   " + peer0 + "  (the node at " + alice.node + ")\nregistered  20"; !strings.HasPrefix(show, want) {
		t.Errorf("directory show (own) = %q, want it to start with %q", show, want)
	}
	show = alice.must("directory show", bob.addr).stdout
	if !strings.Contains(show, "node peer   "+peer1+"\n") || strings.Contains(show, "(the node at") || !strings.Contains(show, " ago)") {
		t.Errorf("directory show bob at node 0 = %q, want node 1's peer, not marked as this node", show)
	}
	decode(t, alice.must("directory show", bob.addr, "--json"), &reg)
	if reg.Account != bob.addr || reg.NodePeer != peer1 {
		t.Errorf("directory show --json = %+v, want bob at node 1", reg)
	}

	// The conversation. The commands run in microseconds here: a pause
	// after each message gives each its own millisecond, and the
	// conversation its order.
	pause := func() { time.Sleep(3 * time.Millisecond) }
	r = alice.must("chat send", "--to", bob.addr, "hello", "bob")
	pause()
	if !regexp.MustCompile(`^sent to `+bob.addr+`\nmessage [0-9a-f]{64}\n$`).MatchString(r.stdout) || r.stderr != "" {
		t.Errorf("chat send printed %q, %q; want the recipient and the message hash, no note", r.stdout, r.stderr)
	}
	r = alice.must("chat send", "--to", bob.addr, "--encrypt", "the door code is 4711")
	pause()
	if !strings.HasPrefix(r.stdout, "sent to "+bob.addr+", end-to-end encrypted\n") {
		t.Errorf("chat send --encrypt printed %q", r.stdout)
	}
	var sent messageJSON
	decode(t, bob.must("chat send", "--to", alice.addr, "--json", "hi", "alice"), &sent)
	pause()
	if sent.From != bob.addr || sent.To != alice.addr || sent.Message != "hi alice" || sent.Plaintext != nil || len(sent.Signature) != 128 {
		t.Errorf("chat send --json = %+v, want bob's signed message", sent)
	}
	bob.must("chat send", "--to", alice.addr, "--encrypt", "--", "-5 °C here,\nsee you 🔑")

	want := map[*chatUser][]string{
		alice: {
			"you → " + short(bob.addr) + "  hello bob",
			"you → " + short(bob.addr) + "  🔒 the door code is 4711",
			short(bob.addr) + " → you  hi alice",
			short(bob.addr) + " → you  🔒 -5 °C here,",
		},
		bob: {
			short(alice.addr) + " → you  hello bob",
			short(alice.addr) + " → you  🔒 the door code is 4711",
			"you → " + short(alice.addr) + "  hi alice",
			"you → " + short(alice.addr) + "  🔒 -5 °C here,",
		},
	}
	for _, u := range []*chatUser{alice, bob} {
		var out string
		eventually(t, "the four messages at "+u.node, func() bool {
			out = u.must("chat read").stdout
			return strings.Count(out, "\n") == 5 // the last message is two lines
		})
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		got := conversation(t, strings.Join(lines[:4], "\n"))
		for i := range want[u] {
			if got[i] != want[u][i] {
				t.Errorf("chat read at %s, line %d = %q, want %q", u.node, i, got[i], want[u][i])
			}
		}
		// The second line of a text stands under its first.
		if col := strings.Index(lines[3], "🔒"); lines[4] != strings.Repeat(" ", len([]rune(lines[3][:col])))+"see you 🔑" {
			t.Errorf("chat read continuation line %q, want \"see you 🔑\" under the text of %q", lines[4], lines[3])
		}
	}

	// --json: the messages as the node has them, the sealed ones with
	// their plaintext.
	var msgs []messageJSON
	decode(t, bob.must("chat read", "--json", "--with", alice.addr), &msgs)
	if len(msgs) != 4 {
		t.Fatalf("chat read --json: %d messages, want 4", len(msgs))
	}
	for i, m := range msgs {
		sealed := strings.HasPrefix(m.Message, chat.SealedPrefix)
		switch {
		case i%2 == 1 && (!sealed || m.Plaintext == nil):
			t.Errorf("message %d = %+v, want it sealed with its plaintext", i, m)
		case i%2 == 0 && (sealed || m.Plaintext != nil):
			t.Errorf("message %d = %+v, want it plain, without plaintext", i, m)
		case i > 0 && m.Timestamp < msgs[i-1].Timestamp:
			t.Errorf("message %d is older than the one before: want oldest first", i)
		}
	}
	if *msgs[1].Plaintext != "the door code is 4711" || *msgs[3].Plaintext != "-5 °C here,\nsee you 🔑" {
		t.Errorf("plaintexts %q and %q", *msgs[1].Plaintext, *msgs[3].Plaintext)
	}

	// --since: exclusive Unix ms, RFC 3339, a duration ago.
	since := strconv.FormatInt(msgs[1].Timestamp, 10)
	if got := conversation(t, strings.SplitN(alice.must("chat read", "--since", since).stdout, "\n", 3)[0]); got[0] != want[alice][2] {
		t.Errorf("chat read --since the second message's time starts with %q, want %q", got[0], want[alice][2])
	}
	if n := strings.Count(alice.must("chat read", "--since", since).stdout, "\n"); n != 3 {
		t.Errorf("chat read --since the second message's time: %d lines, want 3 (two messages)", n)
	}
	if out := alice.must("chat read", "--since", "1h").stdout; strings.Count(out, "\n") != 5 {
		t.Errorf("chat read --since 1h = %q, want all four", out)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if out := alice.must("chat read", "--since", future).stdout; !strings.HasPrefix(out, "no messages since ") {
		t.Errorf("chat read --since an hour ahead = %q, want no messages", out)
	}
	stranger := wallet.NewKey().Address().String()
	if out := alice.must("chat read", "--with", stranger).stdout; out != "no messages with "+stranger+" on the node at "+alice.node+"\n" {
		t.Errorf("chat read --with a stranger = %q", out)
	}

	// Contacts: every account with messages at the node.
	contacts := mustRun(t, "chat", "contacts", "--node", alice.node).stdout
	if !strings.Contains(contacts, alice.addr+"\n") || !strings.Contains(contacts, bob.addr+"\n") || strings.Count(contacts, "\n") != 2 {
		t.Errorf("chat contacts = %q, want alice and bob, one a line", contacts)
	}
	var cs []string
	decode(t, run(t, "chat", "contacts", "--json", "--node", bob.node), &cs)
	if len(cs) != 2 {
		t.Errorf("chat contacts --json = %q, want two addresses", cs)
	}

	// A sealed message that does not open says so. Carol gets one whose
	// ciphertext was altered before it was signed.
	carol := newChatUser(t, dir, "carol", alice.node)
	carol.must("directory register")
	ak, err := wallet.LoadKey(alice.key)
	if err != nil {
		t.Fatal(err)
	}
	carolAddr, _ := ledger.ParseAddress(carol.addr)
	m := chat.Message{To: carolAddr, Timestamp: time.Now().UnixMilli()}
	if err := chat.Seal(ak.Private(), &m, []byte("for carol"), rand.Reader); err != nil {
		t.Fatal(err)
	}
	b := []byte(m.Message)
	if i := len(chat.SealedPrefix) + 20; b[i] == 'A' { // past the nonce
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	m.Message = string(b)
	m.Sign(ak.Private())
	if err := nodeclient.New(alice.node, nil).SendChat(context.Background(), &m); err != nil {
		t.Fatal(err)
	}
	out := carol.must("chat read").stdout
	if got := conversation(t, out); len(got) != 1 || !strings.HasPrefix(got[0], short(alice.addr)+" → you  🔒 [encrypted; cannot decrypt: ") {
		t.Errorf("chat read of an altered sealed message = %q, want it marked undecryptable", out)
	}
	decode(t, carol.must("chat read", "--json"), &msgs)
	if len(msgs) != 1 || msgs[0].Plaintext != nil || !strings.Contains(msgs[0].DecryptError, "does not decrypt") {
		t.Errorf("chat read --json of an altered sealed message = %+v, want a decrypt_error", msgs)
	}

	// A recipient not in the directory gets a note; the message waits.
	dave := newChatUser(t, dir, "dave", bob.node)
	r = alice.must("chat send", "--to", dave.addr, "are you there?")
	if !strings.Contains(r.stderr, "note: "+short(dave.addr)+" is not in the directory yet") {
		t.Errorf("chat send to an unregistered account: stderr %q, want a note", r.stderr)
	}
	dave.must("directory register")
	eventually(t, "the message to dave delivered once he registered", func() bool {
		return strings.Contains(dave.must("chat read").stdout, "are you there?")
	})
}

// followed runs `chat follow` as u in a goroutine until the test cancels
// its context.
type followed struct {
	stdout, stderr syncBuffer
	cancel         context.CancelFunc
	done           chan int
}

func follow(t *testing.T, u *chatUser, args ...string) *followed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &followed{cancel: cancel, done: make(chan int, 1)}
	full := append([]string{"chat", "follow", "--node", u.node, "--key", u.key}, args...)
	go func() { f.done <- mainContext(ctx, full, &f.stdout, &f.stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-f.done:
		case <-time.After(10 * time.Second):
			t.Errorf("chat follow did not end 10 s after its context")
		}
	})
	eventually(t, "chat follow connected", func() bool {
		select {
		case code := <-f.done:
			t.Fatalf("chat follow exited %d: %s", code, f.stderr.String())
		default:
		}
		return strings.Contains(f.stderr.String(), "following the messages of "+u.addr)
	})
	return f
}

// lines returns the complete lines f printed.
func (f *followed) lines() []string {
	out := f.stdout.String()
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		return strings.Split(out[:i], "\n")
	}
	return nil
}

// TestChatFollow: chat follow --json prints each message as it arrives,
// once, decrypted; when the stream drops it reconnects and prints what
// came meanwhile, with or without an event to resume after; it ends with
// its context, exit 0.
func TestChatFollow(t *testing.T) {
	cleanEnv(t)
	c := nettest.Start(t, nettest.Options{Nodes: 1})
	node := c.Nodes[0].API.URL
	// Bob follows through a proxy the test can cut.
	target, _ := url.Parse(node)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	proxy := httptest.NewServer(rp)
	t.Cleanup(proxy.Close)

	dir := t.TempDir()
	alice := newChatUser(t, dir, "alice", node)
	bob := newChatUser(t, dir, "bob", proxy.URL)
	alice.must("directory register")
	bob.must("directory register")
	alice.must("chat send", "--to", bob.addr, "from before") // not printed: it came before

	f := follow(t, bob, "--json")
	var got []messageJSON
	// wantLines waits until f printed n lines, and decodes them.
	wantLines := func(n int, what string) {
		t.Helper()
		eventually(t, what, func() bool { return len(f.lines()) >= n })
		got = nil
		for _, l := range f.lines() {
			var m messageJSON
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("chat follow --json line %q: %v", l, err)
			}
			got = append(got, m)
		}
		if len(got) != n {
			t.Fatalf("chat follow --json printed %d lines, want %d:\n%s", len(got), n, f.stdout.String())
		}
	}

	// A drop before any event: the stream resumes from the id it opened
	// with, so what comes meanwhile arrives.
	proxy.CloseClientConnections()
	alice.must("chat send", "--to", bob.addr, "while the stream was down")
	wantLines(1, "the message sent while the stream was down")
	if got[0].Message != "while the stream was down" || got[0].From != alice.addr || got[0].Plaintext != nil {
		t.Errorf("first line = %+v", got[0])
	}
	eventually(t, "reconnected", func() bool { return strings.Contains(f.stderr.String(), "reconnected") })

	// Live, encrypted.
	alice.must("chat send", "--to", bob.addr, "--encrypt", "live and secret")
	wantLines(2, "the live message")
	if !strings.HasPrefix(got[1].Message, chat.SealedPrefix) || got[1].Plaintext == nil || *got[1].Plaintext != "live and secret" {
		t.Errorf("second line = %+v, want the sealed message with its plaintext", got[1])
	}

	// A drop after an event: the stream resumes after it.
	proxy.CloseClientConnections()
	alice.must("chat send", "--to", bob.addr, "resumed")
	bob.must("chat send", "--to", alice.addr, "and bob's own")
	wantLines(4, "the messages after the second drop")
	if got[2].Message != "resumed" || got[3].Message != "and bob's own" || got[3].From != bob.addr {
		t.Errorf("lines after the second drop = %+v", got[2:])
	}
	if n := strings.Count(f.stderr.String(), "reconnected"); n != 2 {
		t.Errorf("stderr says reconnected %d times, want 2:\n%s", n, f.stderr.String())
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(f.lines()); n != 4 {
		t.Errorf("chat follow printed %d lines, want 4 (each message once):\n%s", n, f.stdout.String())
	}

	f.cancel()
	select {
	case code := <-f.done:
		if code != 0 {
			t.Errorf("chat follow ended by its context: exit %d, want 0\nstderr: %s", code, f.stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("chat follow did not end 10 s after its context")
	}
	f.done <- 0 // for the cleanup
}

// TestChatFollowText: without --json, follow prints the lines chat read
// does.
func TestChatFollowText(t *testing.T) {
	cleanEnv(t)
	c := nettest.Start(t, nettest.Options{Nodes: 1})
	dir := t.TempDir()
	alice := newChatUser(t, dir, "alice", c.Nodes[0].API.URL)
	bob := newChatUser(t, dir, "bob", c.Nodes[0].API.URL)
	// The profile in use gives the node and the key.
	if _, err := saveDevProfile("dev", dir, bob.node, bob.key, "", filepath.Join(dir, "no-admin-key")); err != nil {
		t.Fatal(err)
	}
	if r := mustRun(t, "directory", "register"); !strings.HasPrefix(r.stdout, "registered "+bob.addr+" at the node at "+bob.node) {
		t.Errorf("directory register with the profile printed %q", r.stdout)
	}
	f := follow(t, bob)
	alice.must("chat send", "--to", bob.addr, "--encrypt", "psst")
	eventually(t, "the message", func() bool { return len(f.lines()) == 1 })
	if got := conversation(t, f.lines()[0]); got[0] != short(alice.addr)+" → you  🔒 psst" {
		t.Errorf("chat follow printed %q", got[0])
	}
	if got := conversation(t, mustRun(t, "chat", "read").stdout); len(got) != 1 || got[0] != short(alice.addr)+" → you  🔒 psst" {
		t.Errorf("chat read with the profile printed %q", got)
	}
}

// TestChatErrors: usage errors exit 2 before any request; what the node
// or the directory refuses exits 1 and says why.
func TestChatErrors(t *testing.T) {
	cleanEnv(t)
	c := nettest.Start(t, nettest.Options{Nodes: 1})
	dir := t.TempDir()
	alice := newChatUser(t, dir, "alice", c.Nodes[0].API.URL)
	bob := newChatUser(t, dir, "bob", c.Nodes[0].API.URL)
	bob.must("directory register")

	for _, tt := range []struct {
		name string
		cmd  string
		args []string
		want []string
	}{
		{"no --to", "chat send", []string{"hello"}, []string{"--to is required"}},
		{"a bad address", "chat send", []string{"--to", "bob", "hello"}, []string{"--to", "64 hex characters"}},
		{"no text", "chat send", []string{"--to", bob.addr}, []string{"want the TEXT"}},
		{"an empty text", "chat send", []string{"--to", bob.addr, ""}, []string{"the text is empty"}},
		{"a blank text", "chat send", []string{"--to", bob.addr, " ", "\n"}, []string{"the text is empty"}},
		{"a text over the limit", "chat send", []string{"--to", bob.addr, strings.Repeat("x", chat.MaxMessageBytes+1)},
			[]string{"the text is 4097 bytes", "at most 4096 bytes"}},
		{"a text over the limit in words", "chat send", []string{"--to", bob.addr, strings.Repeat("x", 2048), strings.Repeat("y", 2048)},
			[]string{"the text is 4097 bytes", "at most 4096 bytes"}},
		{"an encrypted text over its limit", "chat send", []string{"--to", bob.addr, "--encrypt", strings.Repeat("x", chat.MaxSealedPlaintext+1)},
			[]string{"the text is 3041 bytes", "an encrypted message carries at most 3040 bytes"}},
		{"not UTF-8", "chat send", []string{"--to", bob.addr, "caf\xe9"}, []string{"not valid UTF-8"}},
		{"an unknown flag", "chat send", []string{"--to", bob.addr, "--loud", "hi"}, []string{"-loud"}},
		{"a flag after the text", "chat send", []string{"--to", bob.addr, "hello", "--encrypt"},
			[]string{"the text holds --encrypt, a flag of this command", "put -- before the text"}},
		{"a flag with a value after the text", "chat send", []string{"--to", bob.addr, "hi", "-node=http://x"},
			[]string{"the text holds -node=http://x"}},
		{"read with a bad address", "chat read", []string{"--with", "bob"}, []string{"--with"}},
		{"read since nonsense", "chat read", []string{"--since", "yesterday"}, []string{`--since "yesterday"`, "RFC 3339"}},
		{"read since a negative duration", "chat read", []string{"--since", "-1h"}, []string{`--since "-1h"`}},
		{"read with an argument", "chat read", []string{"bob"}, []string{`unexpected argument "bob"`}},
		{"follow with an argument", "chat follow", []string{"bob"}, []string{`unexpected argument "bob"`}},
		{"register with an argument", "directory register", []string{"bob"}, []string{`unexpected argument "bob"`}},
		{"show a bad address", "directory show", []string{"bob"}, []string{"64 hex characters"}},
		{"show two addresses", "directory show", []string{bob.addr, bob.addr}, []string{"at most one ADDRESS"}},
		{"an unknown chat command", "chat shout", nil, []string{`unknown command "shout"`, "lattice chat -h"}},
		{"an unknown directory command", "directory list", nil, []string{`unknown command "list"`, "lattice directory -h"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := alice.run(tt.cmd, tt.args...)
			wantFail(t, r, 2, tt.want...)
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
		})
	}
	wantFail(t, run(t, "chat"), 2, "want send, read, follow or contacts", "Usage: lattice chat COMMAND")
	wantFail(t, run(t, "directory"), 2, "want register or show", "Usage: lattice directory COMMAND")

	// The limits themselves are fine.
	alice.must("chat send", "--to", bob.addr, strings.Repeat("x", chat.MaxMessageBytes))
	alice.must("chat send", "--to", bob.addr, "--encrypt", strings.Repeat("é", chat.MaxSealedPlaintext/2))

	// An account nobody registered.
	stranger := wallet.NewKey().Address().String()
	wantFail(t, alice.run("directory show", stranger), 1, "account "+stranger+" is not registered in the directory of the node at "+alice.node,
		"lattice directory register")
	r := alice.run("directory show", stranger, "--json")
	var e struct {
		Command    string `json:"command"`
		Error      string `json:"error"`
		ExitStatus int    `json:"exit_status"`
	}
	if err := json.Unmarshal([]byte(r.stderr), &e); err != nil || r.code != 1 || !strings.Contains(e.Error, "not registered") || e.ExitStatus != 1 {
		t.Errorf("directory show --json of an unregistered account: exit %d, stderr %q; want a JSON error, exit 1", r.code, r.stderr)
	}

	// A missing key file.
	nokey := &chatUser{t: t, key: filepath.Join(dir, "none.json"), node: alice.node}
	wantFail(t, nokey.run("chat send", "--to", bob.addr, "hi"), 1, "no key file at", "lattice key new")
	wantFail(t, nokey.run("directory show"), 1, "give an ADDRESS, or create a key")

	// A node that cannot be reached, and one without chat.
	down := &chatUser{t: t, key: alice.key, node: deadURL(t)}
	wantFail(t, down.run("chat send", "--to", bob.addr, "hi"), 1, "cannot reach the node at "+down.node)
	wantFail(t, run(t, "chat", "contacts", "--node", down.node), 1, "cannot reach the node at "+down.node)
	tn := newTestNode(t) // a node without the peer-to-peer network
	plain := &chatUser{t: t, key: alice.key, node: tn.url}
	wantFail(t, plain.run("chat send", "--to", bob.addr, "hi"), 1, "serves no chat or directory", "no endpoint POST /chat/send")
	wantFail(t, plain.run("chat read"), 1, "serves no chat or directory")
	wantFail(t, plain.run("chat follow"), 1, "serves no chat or directory")
	wantFail(t, run(t, "chat", "contacts", "--node", tn.url), 1, "serves no chat or directory")
	wantFail(t, plain.run("directory show"), 1, "serves no chat or directory")
	wantFail(t, plain.run("directory register"), 1, "reports no peer ID")
}

// TestChatHelp: every command's -h says what it does, with examples, and
// exits 0.
func TestChatHelp(t *testing.T) {
	cleanEnv(t)
	for _, cmd := range []string{"chat send", "chat read", "chat follow", "chat contacts", "directory register", "directory show"} {
		r := run(t, append(strings.Fields(cmd), "-h")...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "Usage: lattice "+cmd) || !strings.Contains(r.stdout, "\nExamples:\n") ||
			!strings.Contains(r.stdout, "\n  lattice "+cmd) ||
			!strings.Contains(r.stdout, "LATTICE_NODE") || r.stderr != "" {
			t.Errorf("lattice %s -h: exit %d, stdout %q, stderr %q; want 0, the usage, the flags and examples on stdout", cmd, r.code, r.stdout, r.stderr)
		}
	}
	for _, cmd := range []string{"chat", "directory"} {
		for _, h := range []string{"-h", "--help", "help"} {
			r := run(t, cmd, h)
			if r.code != 0 || !strings.HasPrefix(r.stdout, "Usage: lattice "+cmd+" COMMAND") || !strings.Contains(r.stdout, "Examples:") {
				t.Errorf("lattice %s %s: exit %d, stdout %q", cmd, h, r.code, r.stdout)
			}
		}
	}
	r := mustRun(t, "help")
	for _, cmd := range []string{"chat", "directory"} {
		if !regexp.MustCompile(`(?m)^  ` + cmd + ` +\S`).MatchString(r.stdout) {
			t.Errorf("lattice help does not list %s:\n%s", cmd, r.stdout)
		}
	}
}

func TestSinceFlag(t *testing.T) {
	now := time.Date(2026, 11, 24, 13, 18, 11, 0, time.UTC)
	for _, tt := range []struct {
		in   string
		want int64
	}{
		{"1795526291371", 1795526291371},
		{"0", 0},
		{"2026-11-24T13:18:11Z", now.UnixMilli()},
		{"2026-11-24T14:18:11.5+01:00", now.UnixMilli() + 500},
		{"1h", now.Add(-time.Hour).UnixMilli()},
		{"90s", now.Add(-90 * time.Second).UnixMilli()},
		{"0s", now.UnixMilli()},
	} {
		got, err := sinceFlag(tt.in, now)
		if err != nil || got != tt.want {
			t.Errorf("sinceFlag(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "yesterday", "-1h", "99999999999999999999", "2026-11-24", "1.5", "-5"} {
		if _, err := sinceFlag(in, now); err == nil {
			t.Errorf("sinceFlag(%q) succeeded, want a usage error", in)
		}
	}
}

func TestChatLine(t *testing.T) {
	me, other := wallet.NewKey(), wallet.NewKey()
	m := chat.Message{From: other.Address(), To: me.Address(), Message: "a\x1b[2Jb\r\u202etxt\tok\nsecond", Timestamp: 1795526291371}
	got := reveal(me, m).line(me.Address())
	prefix := time.UnixMilli(m.Timestamp).Local().Format(time.DateTime) + "  " + shortAddr(other.Address()) + " → you  "
	want := prefix + "a\uFFFD[2Jb\uFFFD\uFFFDtxt\tok\n" + strings.Repeat(" ", len([]rune(prefix))) + "second"
	if got != want {
		t.Errorf("line =\n%q\nwant\n%q", got, want)
	}
	if s := shortAddr(other.Address()); len([]rune(s)) != 11 || !strings.HasPrefix(other.Address().String(), s[:6]) {
		t.Errorf("shortAddr = %q", s)
	}
	// A sealed message the reader is no party to.
	sealed := chat.Message{To: other.Address(), Timestamp: 1}
	if err := chat.Seal(other.Private(), &sealed, []byte("x"), rand.Reader); err != nil {
		t.Fatal(err)
	}
	if got := reveal(me, sealed).line(me.Address()); !strings.Contains(got, "🔒 [encrypted; cannot decrypt: the message is neither from nor to this key]") {
		t.Errorf("line of a sealed message for others = %q", got)
	}
}

// TestChatWhereYouAre: the words of a message are never read as flags;
// registering at a second node says you moved; reading at a node you are
// not registered at says where your messages go.
func TestChatWhereYouAre(t *testing.T) {
	cleanEnv(t)
	c := nettest.Start(t, nettest.Options{Nodes: 2})
	dir := t.TempDir()
	alice := newChatUser(t, dir, "alice", c.Nodes[0].API.URL)
	bob := newChatUser(t, dir, "bob", c.Nodes[0].API.URL)
	alice.must("directory register")
	bob.must("directory register")
	alice.must("chat send", "--to", bob.addr, "please run ls -la --encrypt now")
	msgs, err := nodeclient.New(c.Nodes[0].API.URL, nil).ChatMessages(context.Background(), mustAddr(t, bob.addr), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Message != "please run ls -la --encrypt now" {
		t.Fatalf("stored messages = %+v, want the text with its dashes, unencrypted", msgs)
	}

	// Bob moves to node 1: the register says so, and names his flags.
	bob.node = c.Nodes[1].API.URL
	eventually(t, "bob's first registration everywhere", func() bool {
		_, err := nodeclient.New(c.Nodes[1].API.URL, nil).Registration(context.Background(), mustAddr(t, bob.addr))
		return err == nil
	})
	time.Sleep(5 * time.Millisecond) // a later timestamp than the first registration
	out := bob.must("directory register")
	for _, want := range []string{"moved from peer " + c.Nodes[0].Host.ID().String(), "--node " + bob.node, "--key " + bob.key} {
		if !strings.Contains(out.stdout, want) {
			t.Errorf("directory register after a move says:\n%s\nwant it to contain %q", out.stdout, want)
		}
	}
	// Reading at node 0, where Bob is no longer registered, says so.
	bob.node = c.Nodes[0].API.URL
	eventually(t, "node 0 knows bob moved", func() bool {
		r, err := nodeclient.New(c.Nodes[0].API.URL, nil).Registration(context.Background(), mustAddr(t, bob.addr))
		return err == nil && r.NodePeer == c.Nodes[1].Host.ID().String()
	})
	read := bob.must("chat read")
	if !strings.Contains(read.stderr, "you are registered at another node (peer "+c.Nodes[1].Host.ID().String()+"): messages to you reach you there") {
		t.Errorf("chat read at the old node: stderr %q, want a note naming the node bob is registered at", read.stderr)
	}
}

func mustAddr(t *testing.T, s string) ledger.Address {
	t.Helper()
	a, err := ledger.ParseAddress(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
