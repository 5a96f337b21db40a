package nodeapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/nodeapi"
	"github.com/latticenet/lattice/wallet"
)

// The Chat and Directory endpoints, on a one-node nettest cluster (a real
// chat service needs a p2p host). The chat service's clock is the test's
// and stands still unless a test moves it, so time windows and rate limits
// are exact; the defaults hold otherwise (MaxClockSkew 5 minutes, 5
// messages a second with a burst of 20, registrations 0.2 a second with a
// burst of 5).

// chatHarness is a harness on a node with chat.
type chatHarness struct {
	*harness
	c   *nettest.Cluster
	svc *chatnet.Service
	api string // the API's URL
}

func newChatHarness(t *testing.T, cfg chatnet.Config) *chatHarness {
	t.Helper()
	clock := &testClock{}
	clock.ms.Store(time.Now().UnixMilli())
	cfg.Now = clock.now
	c := nettest.Start(t, nettest.Options{Nodes: 1, Chat: cfg, Wrap: func(h http.Handler) http.Handler {
		return openapitest.Node.Handler(t, h)
	}})
	nd := c.Nodes[0]
	hc := nd.API.Client()
	hc.Timeout = 30 * time.Second
	h := &harness{t: t, n: nd.N, api: nd.Handler, url: nd.API.URL, hc: hc, clock: clock}
	return &chatHarness{harness: h, c: c, svc: nd.Chat, api: nd.API.URL}
}

func (h *chatHarness) now() int64 { return h.clock.ms.Load() }

// msg returns a message from k to to, stamped ts, signed.
func msg(from wallet.Key, to ledger.Address, text string, ts int64) *chat.Message {
	m := &chat.Message{To: to, Message: text, Timestamp: ts}
	m.Sign(from.Private())
	return m
}

// reg returns a registration of k's account at peer, stamped ts, signed.
func reg(k wallet.Key, peer string, ts int64) *directory.Registration {
	r := &directory.Registration{NodePeer: peer, Timestamp: ts}
	r.Sign(k.Private())
	return r
}

// otherPeer is a peer ID of no node of the test's.
const otherPeer = "12D3KooWRBhwfeP2Y4TCx1SM6s9rUoHhR5STiGwxBhgFRcw3UERE"

func (h *chatHarness) peer() string { return h.c.Nodes[0].Host.ID().String() }

// messages GETs /chat/messages of account.
func (h *chatHarness) messages(account ledger.Address, query string) []chat.Message {
	h.t.Helper()
	var out []chat.Message
	h.getJSON("/chat/messages?account="+account.String()+query, &out)
	return out
}

// chatState is every read a submission can change, as raw JSON.
type chatState struct{ messages, contacts, directory string }

func (h *chatHarness) state(accounts ...ledger.Address) chatState {
	h.t.Helper()
	var s chatState
	for _, a := range accounts {
		s.messages += h.getJSON("/chat/messages?account="+a.String(), nil).String()
	}
	s.contacts = h.getJSON("/chat/contacts", nil).String()
	s.directory = h.getJSON("/directory", nil).String()
	return s
}

// refused posts body to path and checks the answer is status with an
// error naming fragments, and that nothing changed.
func (h *chatHarness) refused(path string, body any, status int, what string, accounts []ledger.Address, fragments ...string) resp {
	h.t.Helper()
	before := h.state(accounts...)
	r := h.post(path, body)
	checkError(h.t, r, status, what, fragments...)
	if after := h.state(accounts...); after != before {
		h.t.Errorf("%s changed the node:\nbefore %+v\nafter  %+v", what, before, after)
	}
	return r
}

func (h *chatHarness) accepted(path string, body any, what string) {
	h.t.Helper()
	r := h.post(path, body)
	h.okJSON(r, what, nil)
	if got := strings.TrimSpace(r.String()); got != `{"ok":true}` {
		h.t.Errorf("%s: body %s, want {\"ok\":true}", what, got)
	}
}

// edit returns v's JSON with f applied to it as an object.
func edit(t *testing.T, v any, f func(map[string]any)) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		t.Fatal(err)
	}
	f(obj)
	if data, err = json.Marshal(obj); err != nil {
		t.Fatal(err)
	}
	return data
}

func raw(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// flipLastHex changes the last hex digit of a signature.
func flipLastHex(s string) string {
	last := s[len(s)-1]
	if last == '0' {
		return s[:len(s)-1] + "1"
	}
	return s[:len(s)-1] + "0"
}

// TestChatSendRefused: every malformed, badly signed or badly timed
// message is 400 with a reason, and stores nothing.
func TestChatSendRefused(t *testing.T) {
	h := newChatHarness(t, chatnet.Config{})
	alice, bob := wallet.NewKey(), wallet.NewKey()
	now := h.now()
	accounts := []ledger.Address{alice.Address(), bob.Address()}
	good := func() *chat.Message { return msg(alice, bob.Address(), "hello bob", now) }
	const limit = 6*chat.MaxMessageBytes + 1024

	for _, tc := range []struct {
		name      string
		body      func(t *testing.T) any
		fragments []string
	}{
		{"text altered after signing", func(*testing.T) any { m := good(); m.Message = "hello bob!"; return m },
			[]string{"signature"}},
		{"last hex digit of the signature changed", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) { o["signature"] = flipLastHex(o["signature"].(string)) })
		}, []string{"signature"}},
		{"signature missing", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) { delete(o, "signature") })
		}, []string{"signature is required"}},
		{"signature not hex", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) { o["signature"] = strings.Repeat("zz", 64) })
		}, []string{"signature"}},
		{"unknown field", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) { o["sealed"] = true })
		}, []string{"unknown field", "sealed"}},
		{"trailing object", func(t *testing.T) any { return append(raw(t, good()), "{}"...) }, []string{"trailing"}},
		{"trailing brace", func(t *testing.T) any { return append(raw(t, good()), '}') }, []string{"trailing"}},
		{"trailing bracket", func(t *testing.T) any { return append(raw(t, good()), ']') }, []string{"trailing"}},
		{"malformed JSON", func(*testing.T) any { return `{"from":` }, nil},
		{"empty body", func(*testing.T) any { return "" }, nil},
		{"body over the limit", func(*testing.T) any {
			return msg(alice, bob.Address(), strings.Repeat("x", limit), now)
		}, []string{fmt.Sprintf("exceeds %d bytes", limit)}},
		{"text of 4097 bytes", func(*testing.T) any {
			return msg(alice, bob.Address(), strings.Repeat("x", chat.MaxMessageBytes+1), now)
		}, []string{"4097 bytes", "4096"}},
		{"empty text", func(*testing.T) any { return msg(alice, bob.Address(), "", now) }, []string{"empty"}},
		{"lone surrogate, decoded as U+FFFD", func(t *testing.T) any {
			// What a client meant by "\ud800" (its WTF-8 form) is not
			// what the node decodes: the signature cannot match.
			data := raw(t, msg(alice, bob.Address(), "\xed\xa0\x80", now))
			data = bytes.Replace(data, []byte(`"message":"\ufffd\ufffd\ufffd"`), []byte(`"message":"\ud800"`), 1)
			if !bytes.Contains(data, []byte(`"message":"\ud800"`)) {
				t.Fatalf("body %s: no lone surrogate", data)
			}
			return data
		}, []string{"signature"}},
		{"6 minutes ahead", func(*testing.T) any {
			return msg(alice, bob.Address(), "from the future", now+(6*time.Minute).Milliseconds())
		}, []string{"ahead"}},
		{"6 minutes behind", func(*testing.T) any {
			return msg(alice, bob.Address(), "from the past", now-(6*time.Minute).Milliseconds())
		}, []string{"behind"}},
		{"zero timestamp", func(*testing.T) any { return msg(alice, bob.Address(), "when?", 0) }, []string{"timestamp"}},
		{"zero to", func(*testing.T) any { return msg(alice, ledger.Address{}, "to nobody", now) }, []string{"to is required"}},
		{"to missing", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) { delete(o, "to") })
		}, []string{"to is required"}},
		{"zero from", func(*testing.T) any { m := good(); m.From = ledger.Address{}; return m }, []string{"from is required"}},
		{"from of another key", func(*testing.T) any { m := good(); m.From = bob.Address(); return m }, []string{"signature"}},
		{"to not an address", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) { o["to"] = "bob" })
		}, []string{"address"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			h.refused("/chat/send", tc.body(t), http.StatusBadRequest, "POST /chat/send", accounts, tc.fragments...)
		})
	}
	h.t = t

	// Within the window, and the longest text even escaped six bytes a
	// byte, are accepted.
	for _, m := range []*chat.Message{
		msg(alice, bob.Address(), "4 minutes ahead", now+(4*time.Minute).Milliseconds()),
		msg(alice, bob.Address(), "4 minutes behind", now-(4*time.Minute).Milliseconds()),
		msg(alice, bob.Address(), strings.Repeat("<", chat.MaxMessageBytes), now),
	} {
		if n := len(raw(t, m)); n > limit {
			t.Fatalf("a %d-byte message is %d bytes of JSON, more than the limit %d", len(m.Message), n, limit)
		}
		h.accepted("/chat/send", m, "POST /chat/send "+m.Message[:min(len(m.Message), 16)])
		if got := h.messages(bob.Address(), "&since="+strconv.FormatInt(m.Timestamp-1, 10)); !slices.Contains(got, *m) {
			t.Errorf("messages of bob after sending %.16q: got %d, not the one sent", m.Message, len(got))
		}
	}
}

// TestChatSendIdempotentAndRateLimited: the same message twice is stored
// once; the 21st message within a second from one account is 429 with
// Retry-After and a message that names the rate, and is not stored.
func TestChatSendIdempotentAndRateLimited(t *testing.T) {
	h := newChatHarness(t, chatnet.Config{})
	alice, bob := wallet.NewKey(), wallet.NewKey()
	now := h.now()

	m := msg(alice, bob.Address(), "twice", now)
	h.accepted("/chat/send", m, "POST /chat/send, first")
	h.accepted("/chat/send", m, "POST /chat/send, again")
	if got := h.messages(bob.Address(), ""); !slices.Equal(got, []chat.Message{*m}) {
		t.Errorf("messages of bob after sending one twice: got %+v, want it once", got)
	}

	carol := wallet.NewKey()
	for i := range 20 {
		h.accepted("/chat/send", msg(carol, bob.Address(), fmt.Sprintf("flood %d", i), now+int64(i)), fmt.Sprintf("POST /chat/send, message %d of 20", i+1))
	}
	r := h.refused("/chat/send", msg(carol, bob.Address(), "flood 21", now+20), http.StatusTooManyRequests,
		"POST /chat/send, the 21st", []ledger.Address{carol.Address(), bob.Address()}, "rate limited", carol.Address().String(), "5 messages a second")
	if got := r.header.Get("Retry-After"); got != "1" {
		t.Errorf("429's Retry-After: got %q, want \"1\"", got)
	}
	if got := len(h.messages(carol.Address(), "")); got != 20 {
		t.Errorf("messages of carol: got %d, want 20", got)
	}
	// Another account is not held back by carol's flood.
	h.accepted("/chat/send", msg(alice, bob.Address(), "still fine", now+1), "POST /chat/send from alice during carol's flood")
	// A second later there is room again.
	h.advance(time.Second)
	h.accepted("/chat/send", msg(carol, bob.Address(), "flood 21, later", now+21), "POST /chat/send, a second later")

	// Registrations: five at once, the sixth refused.
	dave := wallet.NewKey()
	for i := range 5 {
		h.accepted("/directory/register", reg(dave, h.peer(), h.now()+int64(i)), fmt.Sprintf("POST /directory/register %d of 5", i+1))
	}
	r = h.refused("/directory/register", reg(dave, h.peer(), h.now()+5), http.StatusTooManyRequests,
		"POST /directory/register, the 6th", nil, "rate limited", "0.2 registrations a second")
	if got := r.header.Get("Retry-After"); got != "5" {
		t.Errorf("429's Retry-After: got %q, want \"5\"", got)
	}

	// Replays of an older registration are refused for what they are,
	// without using up the account's allowance: erin registers twice,
	// anyone replays the first, and erin's next registration is taken.
	erin := wallet.NewKey()
	first := reg(erin, h.peer(), h.now())
	h.accepted("/directory/register", first, "POST /directory/register, erin's first")
	h.accepted("/directory/register", reg(erin, h.peer(), h.now()+1), "POST /directory/register, erin's second")
	for i := range 10 {
		h.refused("/directory/register", first, http.StatusBadRequest, fmt.Sprintf("POST /directory/register, erin's first replayed (%d)", i+1),
			nil, "a newer registration")
	}
	h.accepted("/directory/register", reg(erin, h.peer(), h.now()+2), "POST /directory/register, erin's third, after the replays")
}

// TestDirectoryRegisterRefused: malformed, badly signed, badly timed or
// stale registrations are 400 with a reason, and change nothing; the
// registration held is replaced only by a newer one, and submitting it
// again is idempotent.
func TestDirectoryRegisterRefused(t *testing.T) {
	h := newChatHarness(t, chatnet.Config{})
	now := h.now()
	k := wallet.NewKey()
	good := func() *directory.Registration { return reg(k, h.peer(), now) }

	for _, tc := range []struct {
		name      string
		body      func(t *testing.T) any
		fragments []string
	}{
		{"node_peer altered after signing", func(*testing.T) any {
			r := good()
			r.NodePeer = otherPeer
			return r
		}, []string{"signature"}},
		{"timestamp altered after signing", func(*testing.T) any { r := good(); r.Timestamp++; return r }, []string{"signature"}},
		{"last hex digit of the signature changed", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) { o["signature"] = flipLastHex(o["signature"].(string)) })
		}, []string{"signature"}},
		{"signature missing", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) { delete(o, "signature") })
		}, []string{"signature is required"}},
		{"node_peer base58 but not a peer ID", func(*testing.T) any { return reg(k, "QmNotAPeer", now) },
			[]string{"not a peer ID"}},
		{"node_peer not base58", func(*testing.T) any { return reg(k, "12D3KooW/0OIl", now) }, []string{"not a peer ID"}},
		{"node_peer empty", func(*testing.T) any { return reg(k, "", now) }, []string{"node_peer is required"}},
		{"zero account", func(*testing.T) any { r := good(); r.Account = ledger.Address{}; return r }, []string{"account is required"}},
		{"unknown field", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) { o["node_addrs"] = []string{} })
		}, []string{"unknown field", "node_addrs"}},
		{"trailing object", func(t *testing.T) any { return append(raw(t, good()), "{}"...) }, []string{"trailing"}},
		{"trailing brace", func(t *testing.T) any { return append(raw(t, good()), '}') }, []string{"trailing"}},
		{"body over the limit", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) { o["node_peer"] = strings.Repeat("1", 30000) })
		}, []string{"exceeds"}},
		{"6 minutes ahead", func(*testing.T) any { return reg(k, h.peer(), now+(6*time.Minute).Milliseconds()) }, []string{"ahead"}},
		{"6 minutes behind", func(*testing.T) any { return reg(k, h.peer(), now-(6*time.Minute).Milliseconds()) }, []string{"behind"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			h.refused("/directory/register", tc.body(t), http.StatusBadRequest, "POST /directory/register", nil, tc.fragments...)
			if status := h.get("/directory/" + k.Address().String()).status; status != http.StatusNotFound {
				t.Errorf("GET /directory/{account} after a refused registration: status %d, want 404", status)
			}
		})
	}
	h.t = t

	held := reg(k, h.peer(), now)
	h.accepted("/directory/register", held, "POST /directory/register")
	h.accepted("/directory/register", held, "POST /directory/register, the same again")
	older := reg(k, h.peer(), now-1)
	h.refused("/directory/register", older, http.StatusBadRequest, "POST /directory/register, older", nil,
		"newer registration", strconv.FormatInt(now, 10))
	var got directory.Registration
	h.getJSON("/directory/"+k.Address().String(), &got)
	if got != *held {
		t.Errorf("GET /directory/{account} after an older one: got %+v, want %+v", got, *held)
	}
	// Same timestamp, lesser digest: refused too; greater: replaces.
	other := reg(k, otherPeer, now)
	if directory.Newer(other, held) {
		h.accepted("/directory/register", other, "POST /directory/register, same timestamp, greater digest")
		held = other
	} else {
		h.refused("/directory/register", other, http.StatusBadRequest, "POST /directory/register, same timestamp, lesser digest", nil, "same timestamp", "wins the tie")
	}
	h.advance(5 * time.Second) // a token for one more registration of k's
	newer := reg(k, h.peer(), now+1)
	h.accepted("/directory/register", newer, "POST /directory/register, newer")
	h.getJSON("/directory/"+k.Address().String(), &got)
	if got != *newer {
		t.Errorf("GET /directory/{account} after a newer one: got %+v, want %+v", got, *newer)
	}
}

// TestChatReads covers GET /chat/messages, /chat/contacts, /directory and
// /directory/{account}.
func TestChatReads(t *testing.T) {
	h := newChatHarness(t, chatnet.Config{})
	alice, bob, carol, dave := wallet.NewKey(), wallet.NewKey(), wallet.NewKey(), wallet.NewKey()
	T := h.now() - 1000
	m1 := msg(alice, bob.Address(), "hi bob", T)
	m2 := msg(carol, dave.Address(), "hi dave", T+10)
	m3 := msg(bob, alice.Address(), "hi alice", T+20)
	m4 := msg(carol, alice.Address(), "hi alice, from carol", T+30)
	for _, m := range []*chat.Message{m1, m2, m3, m4} {
		h.accepted("/chat/send", m, "POST /chat/send "+m.Message)
	}

	for _, tc := range []struct {
		name    string
		account ledger.Address
		query   string
		want    []*chat.Message
	}{
		{"alice, sent and received, newest first", alice.Address(), "", []*chat.Message{m4, m3, m1}},
		{"bob", bob.Address(), "", []*chat.Message{m3, m1}},
		{"dave", dave.Address(), "", []*chat.Message{m2}},
		{"since excludes its own millisecond", alice.Address(), "&since=" + strconv.FormatInt(T, 10), []*chat.Message{m4, m3}},
		{"since a millisecond before", alice.Address(), "&since=" + strconv.FormatInt(T-1, 10), []*chat.Message{m4, m3, m1}},
		{"since the newest", alice.Address(), "&since=" + strconv.FormatInt(T+30, 10), nil},
		{"since 0", alice.Address(), "&since=0", []*chat.Message{m4, m3, m1}},
		{"an account with none", wallet.NewKey().Address(), "", nil},
	} {
		t.Run("messages/"+tc.name, func(t *testing.T) {
			h.t = t
			r := h.getJSON("/chat/messages?account="+tc.account.String()+tc.query, nil)
			var got []chat.Message
			if err := json.Unmarshal(r.body, &got); err != nil {
				t.Fatal(err)
			}
			want := []chat.Message{}
			for _, m := range tc.want {
				want = append(want, *m)
			}
			if got == nil || !slices.Equal(got, want) {
				t.Errorf("got %s, want %+v", r.body, want)
			}
		})
	}
	for _, tc := range []struct {
		name, query string
		fragments   []string
	}{
		{"no account", "", []string{"account is required"}},
		{"empty account", "?account=", []string{"account is empty"}},
		{"account not hex", "?account=alice", []string{"invalid account"}},
		{"account too short", "?account=" + alice.Address().String()[:62], []string{"invalid account"}},
		{"since not a number", "?account=" + alice.Address().String() + "&since=yesterday", []string{"since"}},
	} {
		t.Run("messages/"+tc.name, func(t *testing.T) {
			h.t = t
			checkError(t, h.get("/chat/messages"+tc.query), http.StatusBadRequest, "GET /chat/messages"+tc.query, tc.fragments...)
		})
	}
	h.t = t

	// Contacts: by their latest message, newest first; of two with the
	// same, the lesser address first.
	pair := func(a, b ledger.Address) []ledger.Address {
		if bytes.Compare(a[:], b[:]) > 0 {
			a, b = b, a
		}
		return []ledger.Address{a, b}
	}
	want := append(pair(alice.Address(), carol.Address()), bob.Address(), dave.Address()) // T+30, T+30, T+20, T+10
	var contacts []ledger.Address
	h.getJSON("/chat/contacts", &contacts)
	if !slices.Equal(contacts, want) {
		t.Errorf("GET /chat/contacts: got %v, want %v", contacts, want)
	}
	// A new message to dave makes dave's conversation the most recent.
	m5 := msg(bob, dave.Address(), "hi dave, from bob", T+40)
	h.accepted("/chat/send", m5, "POST /chat/send "+m5.Message)
	want = append(pair(bob.Address(), dave.Address()), pair(alice.Address(), carol.Address())...)
	h.getJSON("/chat/contacts", &contacts)
	if !slices.Equal(contacts, want) {
		t.Errorf("GET /chat/contacts after a newer message: got %v, want %v", contacts, want)
	}

	// The directory: the node's own account and those registered, by
	// account.
	regs := []*directory.Registration{reg(alice, h.peer(), h.now()), reg(bob, otherPeer, h.now())}
	for _, r := range regs {
		h.accepted("/directory/register", r, "POST /directory/register")
	}
	own, found, err := h.svc.Lookup(h.c.Nodes[0].N.Key.Address())
	if err != nil || !found {
		t.Fatalf("the node's own registration: %v, %v", found, err)
	}
	wantDir := []directory.Registration{*own, *regs[0], *regs[1]}
	slices.SortFunc(wantDir, func(a, b directory.Registration) int { return bytes.Compare(a.Account[:], b.Account[:]) })
	var list []directory.Registration
	r := h.getJSON("/directory", &list)
	if !slices.Equal(list, wantDir) {
		t.Errorf("GET /directory: got %s, want %+v", r.body, wantDir)
	}
	var one directory.Registration
	r = h.getJSON("/directory/"+bob.Address().String(), &one)
	if one != *regs[1] {
		t.Errorf("GET /directory/{bob}: got %s, want %+v", r.body, *regs[1])
	}
	checkFields(t, r.body, "GET /directory/{bob}", "account", "node_peer", "timestamp", "signature")
	nobody := wallet.NewKey().Address()
	checkError(t, h.get("/directory/"+nobody.String()), http.StatusNotFound, "GET /directory/{unknown}", nobody.String(), "not registered")
	checkError(t, h.get("/directory/zz"), http.StatusBadRequest, "GET /directory/zz", "account")
	checkError(t, h.get("/directory/"+nobody.String()+"00"), http.StatusBadRequest, "GET /directory/{66 hex}", "account")
}

// --- the event stream ---

type sseEvent struct {
	id  uint64
	msg chat.Message
}

// sse is an open GET /chat/events.
type sse struct {
	t      *testing.T
	events chan sseEvent
	// starts are the ids of id-only blocks (no event), such as the one a
	// stream opens with.
	starts chan uint64
	body   io.ReadCloser
	cancel context.CancelFunc
	done   chan struct{}
}

// openEvents opens the event stream at query with Last-Event-ID lastID
// (when not empty) and checks it is 200 text/event-stream.
func (h *chatHarness) openEvents(query, lastID string) *sse {
	h.t.Helper()
	t := h.t
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.api+"/chat/events"+query, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		t.Fatalf("GET /chat/events%s: %s %q %s, want 200 text/event-stream", query, res.Status, res.Header.Get("Content-Type"), body)
	}
	s := &sse{t: t, events: make(chan sseEvent, 64), starts: make(chan uint64, 64), body: res.Body, cancel: cancel, done: make(chan struct{})}
	t.Cleanup(s.close)
	go func() {
		defer close(s.done)
		defer close(s.events)
		sc := bufio.NewScanner(res.Body)
		var ev sseEvent
		var name string
		var hasID bool
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				id, err := strconv.ParseUint(strings.TrimPrefix(line, "id: "), 10, 64)
				if err != nil {
					t.Errorf("event id %q: %v", line, err)
				}
				ev.id, hasID = id, true
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.msg); err != nil {
					t.Errorf("event data %q: %v", line, err)
				}
			case line == "":
				if name == "message" {
					s.events <- ev
				} else if hasID {
					select {
					case s.starts <- ev.id:
					default:
					}
				}
				ev, name, hasID = sseEvent{}, "", false
			}
		}
	}()
	return s
}

// close disconnects and waits for the reader.
func (s *sse) close() {
	s.cancel()
	s.body.Close()
	<-s.done
}

// next returns the next event.
func (s *sse) next() sseEvent {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			s.t.Fatal("the event stream ended, want an event")
		}
		return ev
	case <-time.After(5 * time.Second):
		s.t.Fatal("no event within 5 s")
	}
	return sseEvent{}
}

// start returns the id of the next id-only block: the first is where
// the stream starts.
func (s *sse) start() uint64 {
	s.t.Helper()
	select {
	case id := <-s.starts:
		return id
	case <-time.After(5 * time.Second):
		s.t.Fatal("no id-only block within 5 s")
	}
	return 0
}

// quiet checks no event comes within d.
func (s *sse) quiet(d time.Duration) {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if ok {
			s.t.Errorf("got event %d %+v, want none", ev.id, ev.msg)
		}
	case <-time.After(d):
	}
}

// ended checks the stream ends (EOF) within d.
func (s *sse) ended(d time.Duration) {
	s.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-deadline:
			s.t.Fatalf("the event stream still open after %s, want it ended", d)
		}
	}
}

func (h *chatHarness) send(m *chat.Message) {
	h.t.Helper()
	h.accepted("/chat/send", m, "POST /chat/send "+m.Message)
}

// TestChatEventsResume: a client that reconnects with Last-Event-ID gets
// exactly the events of its account it missed, in order, then live ones; a
// client that connects without one gets live events only.
func TestChatEventsResume(t *testing.T) {
	h := newChatHarness(t, chatnet.Config{})
	alice, bob, carol, dave := wallet.NewKey(), wallet.NewKey(), wallet.NewKey(), wallet.NewKey()
	T := h.now()
	h.send(msg(alice, bob.Address(), "before anyone listened", T))
	query := "?account=" + bob.Address().String()

	s := h.openEvents(query, "")
	seen := []*chat.Message{msg(alice, bob.Address(), "one", T+1), msg(bob, alice.Address(), "two", T+2)}
	var ids []uint64
	for _, m := range seen {
		h.send(m)
		ev := s.next()
		if ev.msg != *m {
			t.Fatalf("live event: got %+v, want %+v", ev.msg, *m)
		}
		ids = append(ids, ev.id)
	}
	if ids[1] <= ids[0] {
		t.Errorf("event ids %v, want increasing", ids)
	}
	s.close()

	missed := []*chat.Message{msg(carol, bob.Address(), "three", T+3), msg(alice, bob.Address(), "four", T+4)}
	h.send(missed[0])
	h.send(msg(carol, dave.Address(), "not bob's", T+5))
	h.send(missed[1])

	s = h.openEvents(query, strconv.FormatUint(ids[1], 10))
	last := ids[1]
	for i, m := range missed {
		ev := s.next()
		if ev.msg != *m || ev.id <= last {
			t.Fatalf("replayed event %d: got id %d %+v, want id after %d %+v", i, ev.id, ev.msg, last, *m)
		}
		last = ev.id
	}
	live := msg(dave, bob.Address(), "five", T+6)
	h.send(live)
	if ev := s.next(); ev.msg != *live || ev.id <= last {
		t.Fatalf("live event after the replay: got id %d %+v, want id after %d %+v", ev.id, ev.msg, last, *live)
	}
	s.quiet(100 * time.Millisecond)

	// Resuming from the first id replays everything since.
	all := h.openEvents(query, strconv.FormatUint(ids[0], 10))
	for _, m := range []*chat.Message{seen[1], missed[0], missed[1], live} {
		if ev := all.next(); ev.msg != *m {
			t.Fatalf("replay from id %d: got %+v, want %+v", ids[0], ev.msg, *m)
		}
	}
	all.quiet(100 * time.Millisecond)

	// Without Last-Event-ID, nothing is replayed.
	fresh := h.openEvents(query, "")
	fresh.quiet(100 * time.Millisecond)
	later := msg(alice, bob.Address(), "six", T+7)
	h.send(later)
	if ev := fresh.next(); ev.msg != *later {
		t.Fatalf("new client's first event: got %+v, want %+v", ev.msg, *later)
	}
}

// TestChatEventsResumeAcrossRestart: event ids are the node's, kept with
// its messages, so a client that reconnects after the node restarted
// resumes where it was and misses nothing. An id beyond the newest (the
// node lost its chat store, or was restored from a backup) is not
// refused, which would stop a browser's EventSource for good: the stream
// starts at the current event, its id-only block sets the client's id to
// the node's newest, and the next message stored reaches it.
func TestChatEventsResumeAcrossRestart(t *testing.T) {
	h := newChatHarness(t, chatnet.Config{})
	alice, bob := wallet.NewKey(), wallet.NewKey()
	T := h.now()
	query := "?account=" + bob.Address().String()
	s := h.openEvents(query, "")
	first := msg(alice, bob.Address(), "before the restart", T)
	h.send(first)
	seen := s.next()
	s.close()
	missed := msg(alice, bob.Address(), "missed", T+1)
	h.send(missed)

	h.c.Stop(0)
	nd := h.c.Restart(0)
	h.harness = &harness{t: t, n: nd.N, api: nd.Handler, url: nd.API.URL, hc: nd.API.Client(), clock: h.clock}
	h.api = nd.API.URL
	h.svc = nd.Chat

	for _, tc := range []struct {
		name, lastID string
		want         []*chat.Message // replayed, in order
	}{
		{"the last id seen before the restart", strconv.FormatUint(seen.id, 10), []*chat.Message{missed}},
		{"an id beyond the newest", "999999999", nil},
		{"the largest id", "18446744073709551615", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			s := h.openEvents(query, tc.lastID)
			last := seen.id
			for _, m := range tc.want {
				ev := s.next()
				if ev.msg != *m || ev.id <= last {
					t.Fatalf("replayed: got id %d %+v, want an id after %d, %+v", ev.id, ev.msg, last, *m)
				}
				last = ev.id
			}
			// The stream starts at the node's newest message, whatever
			// the client's id was.
			if got := s.start(); got != last {
				t.Errorf("Last-Event-ID %s: the stream starts at id %d, want %d (the newest)", tc.lastID, got, last)
			}
			live := msg(alice, bob.Address(), "after the reconnect: "+tc.name, h.now())
			h.send(live)
			if ev := s.next(); ev.msg != *live || ev.id != last+1 {
				t.Fatalf("live event: got id %d %+v, want id %d %+v", ev.id, ev.msg, last+1, *live)
			}
			seen.id = last + 1
			s.close()
		})
	}
}

// TestChatEventsFilterAndErrors: a stream of one account shows only its
// messages; one of no account shows all; a bad account or Last-Event-ID
// is 400.
func TestChatEventsFilterAndErrors(t *testing.T) {
	h := newChatHarness(t, chatnet.Config{})
	alice, bob, carol, dave := wallet.NewKey(), wallet.NewKey(), wallet.NewKey(), wallet.NewKey()
	T := h.now()
	bobs := h.openEvents("?account="+bob.Address().String(), "")
	everyone := h.openEvents("", "")
	other := msg(carol, dave.Address(), "not for bob", T)
	mine := msg(alice, bob.Address(), "for bob", T+1)
	h.send(other)
	h.send(mine)
	if ev := bobs.next(); ev.msg != *mine {
		t.Errorf("bob's stream: got %+v, want only %+v", ev.msg, *mine)
	}
	bobs.quiet(100 * time.Millisecond)
	for _, m := range []*chat.Message{other, mine} {
		if ev := everyone.next(); ev.msg != *m {
			t.Errorf("unfiltered stream: got %+v, want %+v", ev.msg, *m)
		}
	}

	for _, tc := range []struct {
		name, query, lastID string
		fragments           []string
	}{
		{"Last-Event-ID not a number", "", "abc", []string{"Last-Event-ID", "abc"}},
		{"Last-Event-ID negative", "", "-1", []string{"Last-Event-ID"}},
		{"account not hex", "?account=bob", "", []string{"invalid account"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, h.api+"/chat/events"+tc.query, nil)
			if tc.lastID != "" {
				req.Header.Set("Last-Event-ID", tc.lastID)
			}
			res, err := h.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			checkError(t, resp{status: res.StatusCode, header: res.Header, body: body}, http.StatusBadRequest, "GET /chat/events", tc.fragments...)
		})
	}

	// A public address holds MaxEventStreamsPerSource
	// streams (429 past it), the node MaxEventStreams (503 past it).
	var held []string
	for range nodeapi.MaxEventStreamsPerSource {
		held = append(held, "192.0.2.7")
	}
	h.holdAll("streams", held...)
	r := h.from("192.0.2.7", "GET", "/chat/events", "")
	checkError(t, r, http.StatusTooManyRequests, "GET /chat/events past the address's bound", "the most one address may have")
	checkRetryAfter(t, r, "10", "GET /chat/events past the address's bound")
	for i := range nodeapi.MaxEventStreams { // the two streams above are open too
		release, err := h.harness.api.Hold("streams", fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
		if err != nil {
			break
		}
		t.Cleanup(release)
	}
	r = h.from("198.51.100.1", "GET", "/chat/events", "")
	checkError(t, r, http.StatusServiceUnavailable, "GET /chat/events past the node's bound", "the most it serves")
	checkRetryAfter(t, r, "10", "GET /chat/events past the node's bound")
}

// TestChatEventsEndAtShutdown: open event streams end promptly when the
// node stops them (StopStreams) or its HTTP server shuts down, and new
// ones are refused.
func TestChatEventsEndAtShutdown(t *testing.T) {
	t.Run("StopStreams", func(t *testing.T) {
		h := newChatHarness(t, chatnet.Config{})
		a, b := h.openEvents("", ""), h.openEvents("?account="+wallet.NewKey().Address().String(), "")
		h.svc.StopStreams()
		a.ended(time.Second)
		b.ended(time.Second)
		checkError(t, h.get("/chat/events"), http.StatusServiceUnavailable, "GET /chat/events after StopStreams", "shutting down")
	})
	t.Run("server shutdown", func(t *testing.T) {
		h := newChatHarness(t, chatnet.Config{})
		s := h.openEvents("", "")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		if err := h.c.Nodes[0].API.Config.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("Shutdown took %s with an event stream open, want under 1 s", d)
		}
		s.ended(time.Second)
	})
}

// TestChatSourceRateLimited: new keys cost nothing, so the address that
// submits is limited too, messages and registrations together.
func TestChatSourceRateLimited(t *testing.T) {
	h := newChatHarness(t, chatnet.Config{SourceRate: 1, SourceBurst: 3})
	bob := wallet.NewKey()
	for i := range 2 {
		h.accepted("/chat/send", msg(wallet.NewKey(), bob.Address(), fmt.Sprintf("fresh key %d", i), h.now()), fmt.Sprintf("POST /chat/send from a fresh key, %d of 3", i+1))
	}
	h.accepted("/directory/register", reg(wallet.NewKey(), h.peer(), h.now()), "POST /directory/register from a fresh key, 3 of 3")
	r := h.refused("/chat/send", msg(wallet.NewKey(), bob.Address(), "one too many", h.now()), http.StatusTooManyRequests,
		"POST /chat/send, the 4th from one address", []ledger.Address{bob.Address()}, "rate limited", "address 127.0.0.1", "1 messages and registrations a second")
	if got := r.header.Get("Retry-After"); got != "1" {
		t.Errorf("429's Retry-After: got %q, want \"1\"", got)
	}
	h.refused("/directory/register", reg(wallet.NewKey(), h.peer(), h.now()), http.StatusTooManyRequests,
		"POST /directory/register, the 5th from one address", nil, "address 127.0.0.1")
	h.advance(time.Second)
	h.accepted("/chat/send", msg(wallet.NewKey(), bob.Address(), "a second later", h.now()), "POST /chat/send a second later")
}
