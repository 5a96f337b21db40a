package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nettest"
)

// httpDo sends a request with an optional JSON body and returns the
// status and the body of the answer.
func httpDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp.StatusCode, string(data)
}

// bodyLines splits what --sign-only printed into its lines, each one JSON
// object, and fails unless there are want of them.
func bodyLines(t *testing.T, r result, want int) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.stdout == "" {
		lines = nil
	}
	if len(lines) != want || !strings.HasSuffix(r.stdout, "\n") {
		t.Fatalf("--sign-only printed %d lines, want %d ending in a newline:\n%s", len(lines), want, r.stdout)
	}
	for _, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("--sign-only printed %q, not one JSON object a line: %v", l, err)
		}
	}
	return lines
}

// postSigned checks that the block printed on line is not in the ledger,
// posts it to /blocks/TYPE and checks that the node accepts it.
func postSigned(t *testing.T, node, line string) {
	t.Helper()
	var b ledger.Block
	if err := json.Unmarshal([]byte(line), &b); err != nil {
		t.Fatalf("--sign-only printed %q, not a block: %v", line, err)
	}
	if code, body := httpDo(t, "GET", node+"/blocks/"+b.Hash.String(), ""); code != http.StatusNotFound {
		t.Fatalf("--sign-only submitted its %s block: GET /blocks/%s answers %d %s before the test posts it", b.Type, b.Hash, code, body)
	}
	code, body := httpDo(t, "POST", node+"/blocks/"+b.Type.String(), line)
	if code != http.StatusOK || !strings.Contains(body, b.Hash.String()) {
		t.Fatalf("POST /blocks/%s of the --sign-only body: %d %s", b.Type, code, body)
	}
	if code, body := httpDo(t, "GET", node+"/blocks/"+b.Hash.String(), ""); code != http.StatusOK {
		t.Fatalf("GET /blocks/%s after the post: %d %s", b.Hash, code, body)
	}
}

// TestSignOnlyBlocks: --sign-only makes send, receive, claim and multisig
// open and update print their signed block, the body of POST
// /blocks/TYPE, and submit nothing; the node accepts the printed body.
func TestSignOnlyBlocks(t *testing.T) {
	tn := newTestNode(t)
	bkey, bob := tn.newKey("bob")
	akey, a := tn.newKey("a")
	_, b := tn.newKey("b")

	r := tn.mustAs(tn.gkey, "send", "--to", bob, "--amount", "2", "--sign-only")
	postSigned(t, tn.url, bodyLines(t, r, 1)[0])
	// --json changes nothing: the body is JSON already.
	r = tn.mustAs(tn.gkey, "send", "--to", bob, "--amount", "1.5", "--asset", "native", "--sign-only", "--json")
	postSigned(t, tn.url, bodyLines(t, r, 1)[0])

	// Two pending sends: two receive blocks, the second on the first.
	r = tn.mustAs(bkey, "receive", "--sign-only")
	if code, body := httpDo(t, "GET", tn.url+"/accounts/"+bob, ""); code != http.StatusNotFound {
		t.Fatalf("receive --sign-only made Bob's account: %d %s", code, body)
	}
	for _, l := range bodyLines(t, r, 2) {
		postSigned(t, tn.url, l)
	}
	if r := tn.mustAs(bkey, "receive", "--sign-only"); r.stdout != "" || !strings.Contains(r.stderr, "nothing pending") {
		t.Errorf("receive --sign-only with nothing pending: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if bal := parseBalance(t, tn.mustAs(bkey, "balance").stdout); bal.units["native"] != "3.5" {
		t.Errorf("Bob's balance after posting the bodies = %v, want 3.5 native", bal.units)
	}

	r = tn.mustAs(bkey, "claim", "--sign-only")
	postSigned(t, tn.url, bodyLines(t, r, 1)[0])

	r = tn.mustAs(akey, "multisig open", "--keys", a+","+b, "--threshold", "1", "--signers", akey, "--sign-only")
	line := bodyLines(t, r, 1)[0]
	postSigned(t, tn.url, line)
	var open ledger.Block
	if err := json.Unmarshal([]byte(line), &open); err != nil {
		t.Fatal(err)
	}
	ms := open.Account.String()
	r = tn.mustAs(akey, "multisig update", "--account", ms, "--keys", a, "--threshold", "1", "--signers", akey, "--sign-only")
	postSigned(t, tn.url, bodyLines(t, r, 1)[0])
	if code, body := httpDo(t, "GET", tn.url+"/accounts/"+ms+"/keyset", ""); code != http.StatusOK || strings.Contains(body, b) {
		t.Errorf("keyset after the posted update: %d %s, want only %s", code, body, a)
	}
}

// TestSignOnlyChat: chat send and directory register print the signed
// message and registration with --sign-only and submit nothing; the node
// accepts the printed bodies.
func TestSignOnlyChat(t *testing.T) {
	cleanEnv(t)
	c := nettest.Start(t, nettest.Options{Nodes: 1})
	node := c.Nodes[0].API.URL
	dir := t.TempDir()
	alice := newChatUser(t, dir, "alice", node)
	bob := newChatUser(t, dir, "bob", node)

	line := bodyLines(t, alice.must("directory register", "--sign-only"), 1)[0]
	if code, body := httpDo(t, "GET", node+"/directory/"+alice.addr, ""); code != http.StatusNotFound {
		t.Fatalf("directory register --sign-only registered: %d %s", code, body)
	}
	if code, body := httpDo(t, "POST", node+"/directory/register", line); code != http.StatusOK || body != "{\"ok\":true}\n" {
		t.Fatalf("POST /directory/register of the --sign-only body: %d %s", code, body)
	}
	if code, body := httpDo(t, "GET", node+"/directory/"+alice.addr, ""); code != http.StatusOK || !strings.Contains(body, c.Nodes[0].Host.ID().String()) {
		t.Fatalf("GET /directory/%s after the post: %d %s", alice.addr, code, body)
	}

	for _, args := range [][]string{{"--to", bob.addr, "--sign-only", "hello", "bob"}, {"--to", bob.addr, "--encrypt", "--sign-only", "sealed"}} {
		line := bodyLines(t, alice.must("chat send", args...), 1)[0]
		var m messageJSON
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.From != alice.addr || m.To != bob.addr || m.Plaintext != nil {
			t.Fatalf("chat send --sign-only printed %q (%v), want the ChatMessage from Alice to Bob", line, err)
		}
		if _, body := httpDo(t, "GET", node+"/chat/messages?account="+alice.addr, ""); strings.Contains(body, m.Signature) {
			t.Fatalf("chat send --sign-only sent the message: %s", body)
		}
		if code, body := httpDo(t, "POST", node+"/chat/send", line); code != http.StatusOK || body != "{\"ok\":true}\n" {
			t.Fatalf("POST /chat/send of the --sign-only body: %d %s", code, body)
		}
		if _, body := httpDo(t, "GET", node+"/chat/messages?account="+alice.addr, ""); !strings.Contains(body, m.Signature) {
			t.Fatalf("the posted message is not on the node: %s", body)
		}
	}
	// Bob reads both, the sealed one decrypted.
	r := bob.must("chat read")
	if !strings.Contains(r.stdout, "hello bob") || !strings.Contains(r.stdout, "🔒 sealed") {
		t.Errorf("Bob's chat read after the posted messages:\n%s", r.stdout)
	}
}
