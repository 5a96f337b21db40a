package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/wallet"
)

// devNodeLine matches node i's line of a multi-node dev banner.
var devNodeLine = regexp.MustCompile(`(?m)^  node (\d+) +(http://\S+)  peer .*  data (\S+)$`)

// devNodeURLs returns the API URL of every node of a dev banner, node 0
// first.
func devNodeURLs(t *testing.T, s *server) []string {
	t.Helper()
	urls := []string{s.url}
	for _, m := range devNodeLine.FindAllStringSubmatch(s.stdout.String(), -1) {
		urls = append(urls, m[2])
	}
	return urls
}

// devFrontier is the frontier of addr at the node of url and whether that
// node has confirmed it ("" when the account is unknown there).
func devFrontier(t *testing.T, url, addr string) (string, bool) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	var acct struct {
		Frontier string `json:"frontier"`
	}
	if code := getJSONInto(t, c, url+"/accounts/"+addr, &acct); code == http.StatusNotFound {
		return "", false
	}
	var b struct {
		Confirmed bool `json:"confirmed"`
	}
	getJSONInto(t, c, url+"/blocks/"+acct.Frontier, &b)
	return acct.Frontier, b.Confirmed
}

func getJSONInto(t *testing.T, c *http.Client, url string, v any) int {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	} else if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return resp.StatusCode
}

// waitConfirmedEverywhere waits until every node of urls has addr's
// frontier want confirmed.
func waitConfirmedEverywhere(t *testing.T, urls []string, addr, want string) {
	t.Helper()
	for i, u := range urls {
		eventually(t, fmt.Sprintf("node %d to confirm %s", i, want), func() bool {
			f, ok := devFrontier(t, u, addr)
			return ok && f == want
		})
	}
}

// TestDevGrowsAndShrinks: the single-node dev network is node 0 of the
// multi-node one. Growing from one node to three keeps the ledger (the new
// nodes sync it from node 0 and confirm through it); going back to one
// keeps it too, and the data of the nodes left out. A network that shared
// the weight among three nodes still confirms with one: node 0 votes with
// the keys of the nodes left out.
func TestDevGrowsAndShrinks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts lattice dev five times")
	}
	cleanEnv(t)
	dir := filepath.Join(t.TempDir(), "dev")
	devArgs := func(n string) []string {
		return []string{"dev", "--data", dir, "--nodes", n, "--http", "127.0.0.1:0", "--api", "127.0.0.1:0"}
	}
	s := startServer(t, devReady, devArgs("1")...)
	devKey, err := wallet.LoadKey(filepath.Join(dir, "dev-key.json"))
	if err != nil {
		t.Fatal(err)
	}
	me := devKey.Address().String()
	x := strings.TrimSpace(mustRun(t, "key", "new", "--out", filepath.Join(t.TempDir(), "x.json")).stdout)
	mustRun(t, "send", "--to", x, "--amount", "1")
	f1, _ := devFrontier(t, s.url, me)
	waitConfirmedEverywhere(t, []string{s.url}, me, f1)
	if code := s.stop(); code != 0 {
		t.Fatalf("dev exited %d", code)
	}

	// Three nodes: the same ledger, synced by the new nodes, which the
	// banner says hold no weight; a block sent through node 1 confirms
	// everywhere.
	s = startServer(t, devReady, devArgs("3")...)
	out := s.stdout.String()
	urls := devNodeURLs(t, s)
	if len(urls) != 3 {
		t.Fatalf("3-node dev banner names %d nodes:\n%s", len(urls), out)
	}
	for _, want := range []string{
		"node data   " + filepath.Join(dir, "node") + "\n",
		"data " + filepath.Join(dir, "node-1") + "\n",
		"data " + filepath.Join(dir, "node-2") + "\n",
		"weight      none for node 1 and 2",
		"account     " + me + " (the genesis account, created with",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("3-node dev banner lacks %q:\n%s", want, out)
		}
	}
	waitConfirmedEverywhere(t, urls, me, f1)
	mustRun(t, "send", "--to", x, "--amount", "1", "--node", urls[1])
	f2, _ := devFrontier(t, urls[1], me)
	if f2 == f1 {
		t.Fatalf("the send through node 1 did not move the dev account's frontier")
	}
	waitConfirmedEverywhere(t, urls, me, f2)
	if code := s.stop(); code != 0 {
		t.Fatalf("dev exited %d", code)
	}

	// One node again: the ledger of three, the others' data kept.
	s = startServer(t, devReady, devArgs("1")...)
	for _, i := range []string{"1", "2"} {
		d := filepath.Join(dir, "node-"+i)
		if _, err := os.Stat(filepath.Join(d, "node-key.json")); err != nil {
			t.Errorf("node %s's data after shrinking: %v", i, err)
		}
		if want := "left out   " + d + " (node " + i; !strings.Contains(s.stdout.String(), want) {
			t.Errorf("1-node dev banner lacks %q:\n%s", want, s.stdout.String())
		}
	}
	waitConfirmedEverywhere(t, []string{s.url}, me, f2)
	if code := s.stop(); code != 0 {
		t.Fatalf("dev exited %d", code)
	}

	// A network born with three nodes shares the weight among them; with
	// one node running it still confirms, node 0 voting for the others.
	dir = filepath.Join(t.TempDir(), "dev3")
	s = startServer(t, devReady, devArgs("3")...)
	if strings.Contains(s.stdout.String(), "weight      none") {
		t.Errorf("a new 3-node dev network has weightless nodes:\n%s", s.stdout.String())
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("dev exited %d", code)
	}
	s = startServer(t, devReady, devArgs("1")...)
	devKey, err = wallet.LoadKey(filepath.Join(dir, "dev-key.json"))
	if err != nil {
		t.Fatal(err)
	}
	me = devKey.Address().String()
	before, _ := devFrontier(t, s.url, me)
	mustRun(t, "send", "--to", x, "--amount", "1", "--node", s.url, "--key", filepath.Join(dir, "dev-key.json"))
	after, _ := devFrontier(t, s.url, me)
	if after == before {
		t.Fatalf("the send did not move the dev account's frontier")
	}
	waitConfirmedEverywhere(t, []string{s.url}, me, after)
	// A keyset the dev key no longer governs alone: three nodes again need
	// a new timekeeper committee the dev key cannot name, and the network
	// starts anyway, saying so (it refused to start).
	mustRun(t, "gov", "keyset", "--keys", me+","+x, "--threshold", "2", "--node", s.url, "--key", filepath.Join(dir, "dev-key.json"))
	if code := s.stop(); code != 0 {
		t.Fatalf("dev exited %d", code)
	}
	s = startServer(t, devReady, devArgs("3")...)
	if want := "timekeepers not changed to nodes 0 to 2: not authorised by the governance keyset"; !strings.Contains(s.stdout.String(), want) {
		t.Errorf("dev banner after a keyset change lacks %q:\n%s", want, s.stdout.String())
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("dev exited %d", code)
	}
}

// TestMigrateDevLayout: an earlier version's multi-node directories are
// brought to today's layout, never mixed with a single node's ledger.
func TestMigrateDevLayout(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	mk := func(t *testing.T, dirs ...string) string {
		data := t.TempDir()
		for _, d := range dirs {
			if err := os.MkdirAll(filepath.Join(data, d, "ledger"), 0o700); err != nil {
				t.Fatal(err)
			}
		}
		return data
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	t.Run("only the multi-node ledger", func(t *testing.T) {
		data := mk(t, "node-0", "node-1")
		msg, err := migrateDevLayout(data, now)
		if err != nil || !strings.Contains(msg, "moved node 0's data") {
			t.Fatalf("migrate = %q, %v", msg, err)
		}
		if !exists(filepath.Join(data, "node", "ledger")) || exists(filepath.Join(data, "node-0")) || !exists(filepath.Join(data, "node-1")) {
			t.Errorf("after migrating: node/ledger %v, node-0 %v, node-1 %v; want node/ and node-1/ only",
				exists(filepath.Join(data, "node", "ledger")), exists(filepath.Join(data, "node-0")), exists(filepath.Join(data, "node-1")))
		}
	})
	t.Run("both ledgers", func(t *testing.T) {
		data := mk(t, "node", "node-0", "node-1", "node-x")
		msg, err := migrateDevLayout(data, now)
		aside := filepath.Join(data, "earlier-nodes-20261128T120000Z")
		if err != nil || !strings.Contains(msg, aside) {
			t.Fatalf("migrate = %q, %v; want it to name %s", msg, err, aside)
		}
		for p, want := range map[string]bool{
			filepath.Join(data, "node"): true, filepath.Join(data, "node-0"): false, filepath.Join(data, "node-1"): false,
			filepath.Join(data, "node-x"): true, filepath.Join(aside, "node-0", "ledger"): true, filepath.Join(aside, "node-1"): true,
		} {
			if exists(p) != want {
				t.Errorf("%s exists = %v, want %v", p, exists(p), want)
			}
		}
	})
	t.Run("today's layout", func(t *testing.T) {
		data := mk(t, "node", "node-1")
		if msg, err := migrateDevLayout(data, now); err != nil || msg != "" {
			t.Fatalf("migrate = %q, %v; want nothing done", msg, err)
		}
	})
}

// TestDevLogLevel: lattice dev shows warnings only on the terminal by
// default, its log at info and above with --log-level info, in the same
// format and policy as lattice node, while DATA/dev.log always gets info.
func TestDevLogLevel(t *testing.T) {
	cleanEnv(t)
	dir := filepath.Join(t.TempDir(), "dev")
	args := []string{"dev", "--data", dir, "--http", "127.0.0.1:0", "--api", "127.0.0.1:0", "--log-format", "text"}
	for _, tt := range []struct {
		level string
		shown bool
	}{{"", false}, {"info", true}} {
		a := args
		if tt.level != "" {
			a = append(slices.Clone(args), "--log-level", tt.level)
		}
		s := startServer(t, devReady, a...)
		eventually(t, "dev.log to record the start", func() bool {
			b, _ := os.ReadFile(filepath.Join(dir, "dev.log"))
			return strings.Count(string(b), `"msg":"dev network running"`) >= 1
		})
		if code := s.stop(); code != 0 {
			t.Fatalf("dev exited %d", code)
		}
		if got := strings.Contains(s.stderr.String(), `msg="dev network running"`); got != tt.shown {
			t.Errorf("--log-level %q: the terminal shows the info line = %v, want %v:\n%s", tt.level, got, tt.shown, s.stderr.String())
		}
	}
}
