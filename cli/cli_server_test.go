package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/wallet"
)

func TestGenesisNew(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "keys", "genesis-key.json")
	out := filepath.Join(dir, "genesis.json")

	// The key file is created when missing.
	r := mustRun(t, "genesis", "new", "--key", key, "--network", "n", "--work", "dev", "--out", out)
	k, err := wallet.LoadKey(key)
	if err != nil {
		t.Fatalf("genesis new did not leave a usable key: %v", err)
	}
	if st, err := os.Stat(key); err != nil {
		t.Error(err)
	} else if st.Mode().Perm() != 0o600 {
		t.Errorf("genesis key file mode = %04o, want 0600", st.Mode().Perm())
	}
	net, err := node.LoadNetwork(out)
	if err != nil {
		t.Fatalf("node.LoadNetwork of the written genesis: %v", err)
	}
	if net.Name != "n" || net.Work != ledger.DevWork || net.Genesis.Account != k.Address() || net.Genesis.Balance.Units() != "1000000000" {
		t.Errorf("genesis = %s %+v, account %s, supply %s; want n, dev work, %s, 1000000000",
			net.Name, net.Work, net.Genesis.Account, net.Genesis.Balance.Units(), k.Address())
	}
	if want := "genesis " + net.Genesis.Hash.String() + " written to " + out + ": 1000000000 native to " + k.Address().String() + "\n"; r.stdout != want {
		t.Errorf("genesis new printed %q, want %q", r.stdout, want)
	}

	// The key is never the profile's: lattice dev's throw-away key once
	// came to own a new network's whole supply.
	writeProfiles(t, `{"current":"dev","profiles":{"dev":{"node":"http://127.0.0.1:8080","key":"`+key+`"}}}`)
	wantFail(t, run(t, "genesis", "new", "--network", "n", "--out", filepath.Join(dir, "g0.json")), 2, "--key and --network are required")
	wantFail(t, run(t, "genesis", "new", "--key", key, "--network", "n", "--out", filepath.Join(dir, "g0.json"), "--governance-keys", k.Address().String()),
		2, "--governance-threshold must be 1 to 1")
	t.Setenv("LATTICE_KEY", key)
	mustRun(t, "genesis", "new", "--network", "n", "--out", filepath.Join(dir, "g0.json"))
	t.Setenv("LATTICE_KEY", "")

	// Never makes the key where the genesis file goes (it would replace
	// it), however the two paths are written.
	same := filepath.Join(dir, "both.json")
	for _, outPath := range []string{same, dir + "/keys/../both.json"} {
		wantFail(t, run(t, "genesis", "new", "--key", same, "--network", "n", "--out", outPath), 2, "--out and --key name the same file")
		if _, err := os.Stat(same); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the refused genesis new left %s: %v", same, err)
		}
	}

	// Nor through a path that names it another way (a symlinked
	// directory): the genesis file is never written over a file, so the
	// key made there stays.
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	wantFail(t, run(t, "genesis", "new", "--key", filepath.Join(dir, "link", "g.json"), "--network", "n", "--out", filepath.Join(real, "g.json")), 1, "not overwriting")
	if _, err := wallet.LoadKey(filepath.Join(real, "g.json")); err != nil {
		t.Fatalf("the key made through the link: %v", err)
	}

	// Never overwrites.
	before, _ := os.ReadFile(out)
	wantFail(t, run(t, "genesis", "new", "--key", key, "--network", "other", "--out", out), 1, out, "not overwriting")
	if after, _ := os.ReadFile(out); !bytes.Equal(before, after) {
		t.Errorf("genesis new changed an existing genesis file")
	}

	// An existing key, another supply, public work by default.
	out2 := filepath.Join(dir, "g2.json")
	mustRun(t, "genesis", "new", "--key", key, "--network", "pub", "--supply", "5.5", "--out", out2)
	net2, err := node.LoadNetwork(out2)
	if err != nil {
		t.Fatal(err)
	}
	if net2.Work != ledger.PublicWork || net2.Genesis.Account != k.Address() || net2.Genesis.Balance != ledger.NewAmount(5_500_000) {
		t.Errorf("second genesis = %+v / %+v, want public work, same key, 5.5 units", net2.Work, net2.Genesis)
	}

	// A named representative holds the supply's weight.
	out3 := filepath.Join(dir, "g3.json")
	rep := wallet.NewKey().Address()
	r = mustRun(t, "genesis", "new", "--key", key, "--network", "rep", "--work", "dev", "--representative", rep.String(), "--out", out3)
	net3, err := node.LoadNetwork(out3)
	if err != nil {
		t.Fatal(err)
	}
	if net3.Genesis.Representative != rep || !strings.HasSuffix(r.stdout, ", represented by "+rep.String()+"\n") {
		t.Errorf("genesis with --representative: %s, printed %q", net3.Genesis.Representative, r.stdout)
	}
	// Without a governance keyset the genesis account governs alone.
	if ks := net3.GovernanceKeyset(); ks.Threshold != 1 || len(ks.Keys) != 1 || ks.Keys[0] != k.Address() {
		t.Errorf("default governance keyset: %+v", ks)
	}

	// A governance keyset of 2 of 3 keys, written into the file.
	out4 := filepath.Join(dir, "g4.json")
	g1, g2, g3 := wallet.NewKey().Address(), wallet.NewKey().Address(), wallet.NewKey().Address()
	keys := g1.String() + "," + g2.String() + "," + g3.String()
	mustRun(t, "genesis", "new", "--key", key, "--network", "gov", "--work", "dev", "--governance-keys", keys, "--governance-threshold", "2", "--out", out4)
	net4, err := node.LoadNetwork(out4)
	if err != nil {
		t.Fatal(err)
	}
	if ks := net4.GovernanceKeyset(); ks.Threshold != 2 || len(ks.Keys) != 3 || !ks.Contains(g2) {
		t.Errorf("governance keyset: %+v", ks)
	}
	wantFail(t, run(t, "genesis", "new", "--key", key, "--network", "gov", "--governance-keys", keys, "--governance-threshold", "4", "--out", filepath.Join(dir, "g5.json")), 2, "threshold")
	wantFail(t, run(t, "genesis", "new", "--key", key, "--network", "gov", "--governance-threshold", "1", "--out", filepath.Join(dir, "g6.json")), 2, "--governance-keys")
	wantFail(t, run(t, "genesis", "new", "--key", key, "--network", "gov", "--governance-keys", "nothex", "--governance-threshold", "1", "--out", filepath.Join(dir, "g7.json")), 2, "--governance-keys")
	for _, f := range []string{"g5.json", "g6.json", "g7.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("a refused genesis new wrote %s", f)
		}
	}

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no network", []string{"--key", key, "--out", filepath.Join(dir, "x.json")}, "--network"},
		{"bad representative", []string{"--key", key, "--network", "n", "--representative", "xyz", "--out", filepath.Join(dir, "x.json")}, "--representative"},
		{"no key", []string{"--network", "n", "--out", filepath.Join(dir, "x.json")}, "--key"},
		{"bad work", []string{"--key", key, "--network", "n", "--work", "fast", "--out", filepath.Join(dir, "x.json")}, `--work "fast"`},
		{"zero supply", []string{"--key", key, "--network", "n", "--supply", "0", "--out", filepath.Join(dir, "x.json")}, `--supply "0"`},
		{"bad supply", []string{"--key", key, "--network", "n", "--supply", "lots", "--out", filepath.Join(dir, "x.json")}, `--supply "lots"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantFail(t, run(t, append([]string{"genesis", "new"}, tt.args...)...), 2, tt.want)
			if _, err := os.Stat(filepath.Join(dir, "x.json")); err == nil {
				t.Errorf("a refused genesis new wrote its --out file")
			}
		})
	}
}

func TestAudit(t *testing.T) {
	tn := newTestNode(t)
	xkey, x := tn.newKey("x")
	_, y := tn.newKey("y")
	tn.mustAs(tn.gkey, "send", "--to", x, "--amount", "7")
	tn.mustAs(tn.gkey, "send", "--to", y, "--amount", "1")
	tn.mustAs(xkey, "receive")
	tn.mustAs(xkey, "claim")

	// A running node's ledger is locked: audit refuses rather than read it
	// under the engine.
	if r := run(t, "audit", "--data", tn.dataDir, "--json"); r.code == 0 {
		t.Errorf("audit of a running node's data succeeded: %s", r.stdout)
	} else if !strings.Contains(r.stderr, "in use by a running node") {
		t.Errorf("audit of a running node's data: got %q, want it to say the node is running", r.stderr)
	}

	tn.close()
	var rep struct {
		OK           bool   `json:"ok"`
		Accounts     int    `json:"accounts"`
		Blocks       int    `json:"blocks"`
		Pending      int    `json:"pending"`
		NativeSupply string `json:"native_supply"`
		StableMinted string `json:"stable_minted"`
	}
	decode(t, mustRun(t, "audit", "--data", tn.dataDir, "--json"), &rep)
	// Accounts: genesis and x (y only has a pending receipt). Blocks:
	// genesis, two sends, a receive, a claim.
	if !rep.OK || rep.Accounts != 2 || rep.Blocks != 5 || rep.Pending != 1 || rep.NativeSupply != "1000000000" || rep.StableMinted != "100000000" {
		t.Errorf("audit --json = %+v, want ok, 2 accounts, 5 blocks, 1 pending, supply 1000000000, minted 100000000", rep)
	}
	r := mustRun(t, "audit", "--data", tn.dataDir)
	if want := "ledger OK: 2 accounts, 5 blocks, 1 pending; native supply 1000, stable minted 100\n"; r.stdout != want {
		t.Errorf("audit printed %q, want %q", r.stdout, want)
	}

	// LATTICE_DATA stands in for --data.
	t.Setenv("LATTICE_DATA", tn.dataDir)
	mustRun(t, "audit", "--json")
}

// syncBuffer is a bytes.Buffer a server goroutine writes while the test
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// server is a server command (dev, node) running Main in a goroutine.
type server struct {
	t              *testing.T
	stdout, stderr syncBuffer
	done           chan int
	url            string
	stopped        bool
}

const (
	startTimeout = 20 * time.Second
	stopTimeout  = 20 * time.Second
)

// startServer runs Main(args) in a goroutine and waits until its stdout
// matches ready, whose first group is the node's URL.
func startServer(t *testing.T, ready *regexp.Regexp, args ...string) *server {
	t.Helper()
	// A channel of our own for SIGINT: while it is registered the signal
	// never takes the default action (killing the test binary), even if it
	// arrived when no Main is listening. Every registered channel receives
	// it, so it does not keep the server's signal.NotifyContext from
	// seeing it.
	safety := make(chan os.Signal, 1)
	signal.Notify(safety, os.Interrupt)
	t.Cleanup(func() { signal.Stop(safety) })

	s := &server{t: t, done: make(chan int, 1)}
	go func() { s.done <- Main(args, &s.stdout, &s.stderr) }()
	t.Cleanup(func() {
		if !s.stopped {
			s.stop()
		}
	})
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case code := <-s.done:
			s.stopped = true
			t.Fatalf("lattice %s exited with %d before it was ready\nstdout: %s\nstderr: %s",
				strings.Join(args, " "), code, s.stdout.String(), s.stderr.String())
		case <-deadline.C:
			t.Fatalf("lattice %s not ready after %v\nstdout: %s\nstderr: %s",
				strings.Join(args, " "), startTimeout, s.stdout.String(), s.stderr.String())
		case <-tick.C:
			if m := ready.FindStringSubmatch(s.stdout.String()); m != nil {
				s.url = m[1]
				return s
			}
		}
	}
}

// stop sends the test process SIGINT, which the server's
// signal.NotifyContext turns into a graceful shutdown, and returns Main's
// exit code.
func (s *server) stop() int {
	s.t.Helper()
	s.stopped = true
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		s.t.Fatalf("kill -INT: %v", err)
	}
	select {
	case code := <-s.done:
		return code
	case <-time.After(stopTimeout):
		s.t.Errorf("server did not stop %v after SIGINT\nstdout: %s\nstderr: %s", stopTimeout, s.stdout.String(), s.stderr.String())
		return -1
	}
}

// getNode fetches GET /node from url.
func getNode(t *testing.T, url string) nodewire.NodeInfo {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url + "/node")
	if err != nil {
		t.Fatalf("GET %s/node: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/node: %s", url, resp.Status)
	}
	var info nodewire.NodeInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatalf("GET %s/node: %v", url, err)
	}
	return info
}

// devReady matches dev's banner once it is whole: the URL is printed
// before the lines the tests check.
var devReady = regexp.MustCompile(`(?s)node API\s+(http://\S+)\n.*\nStop with Ctrl-C\.\n`)

func TestDev(t *testing.T) {
	cleanEnv(t)
	dir := filepath.Join(t.TempDir(), "dev")
	keyPath := filepath.Join(dir, "dev-key.json")
	genesisPath := filepath.Join(dir, "genesis.json")

	s := startServer(t, devReady, "dev", "--data", dir, "--http", "127.0.0.1:0", "--api", "127.0.0.1:0")
	out := s.stdout.String()

	st, err := os.Stat(keyPath)
	if err != nil {
		t.Fatalf("dev key: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("dev key mode = %04o, want 0600", st.Mode().Perm())
	}
	key, err := wallet.LoadKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	net, err := node.LoadNetwork(genesisPath)
	if err != nil {
		t.Fatalf("dev genesis: %v", err)
	}
	if net.Name != "dev" || net.Work != ledger.DevWork || net.Genesis.Account != key.Address() {
		t.Errorf("dev network = %s %+v %s, want dev, dev work, the dev key's account %s", net.Name, net.Work, net.Genesis.Account, key.Address())
	}
	for _, want := range []string{
		"dev key     " + keyPath,
		"account     " + key.Address().String() + " (the genesis account, created with 1000000000 native)",
		"profile     dev, in ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dev output lacks %q:\n%s", want, out)
		}
	}
	// The cloud platform runs beside the node, with its admin key on disk.
	adminKey := filepath.Join(dir, "cloud", "admin-api-key")
	if st, err := os.Stat(adminKey); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("admin API key file: %v, %v; want mode 0600", st, err)
	}
	secret, _ := os.ReadFile(adminKey)
	if !strings.Contains(out, strings.TrimSpace(string(secret))) || !strings.HasPrefix(string(secret), "lat_live_") {
		t.Errorf("dev output does not show the admin key %q once:\n%s", secret, out)
	}
	info := getNode(t, s.url)
	if info.Network != "dev" || info.Genesis != net.Genesis.Hash || info.Version != node.Version {
		t.Errorf("GET /node = %+v, want network dev, genesis %s", info, net.Genesis.Hash)
	}

	// The profile dev wrote makes the client commands work with no flags
	// and no exports: the wallet and the cloud's (with the admin key).
	b := parseBalance(t, mustRun(t, "balance").stdout)
	mustRun(t, "s3", "mb", "from-the-profile")
	if r := mustRun(t, "s3", "ls"); !strings.Contains(r.stdout, "from-the-profile") {
		t.Errorf("s3 ls through the dev profile: %q", r.stdout)
	}
	parseBalance(t, mustRun(t, "--profile", "dev", "balance").stdout)
	parseBalance(t, mustRun(t, "balance", "--profile=dev").stdout)
	if r := mustRun(t, "profile", "ls"); !strings.Contains(r.stdout, "*  dev") {
		t.Errorf("profile ls = %q, want dev as the current profile", r.stdout)
	}
	// A flag or a variable still wins over the profile.
	wantFail(t, run(t, "balance", "--node", deadURL(t)), 1, "cannot reach the node")
	t.Setenv("LATTICE_PROFILE", "nonesuch")
	wantFail(t, run(t, "balance"), 2, "profile \"nonesuch\" is not in")
	t.Setenv("LATTICE_PROFILE", "")
	// The whole supply less the provider's stake money (devProviderFunds).
	if b.account != key.Address().String() || b.units["native"] != "999900000" {
		t.Errorf("dev key balance = %+v, want 999900000 native", b)
	}
	var bj balanceJSON
	decode(t, mustRun(t, "balance", "--json"), &bj)
	if bj.Balances["native"] != "999900000000000" {
		t.Errorf("dev key balance --json = %v, want 999900000000000 base units", bj.Balances)
	}
	xkey := filepath.Join(t.TempDir(), "x.json")
	x := strings.TrimSpace(mustRun(t, "key", "new", "--out", xkey).stdout)
	mustRun(t, "send", "--to", x, "--amount", "1")
	t.Setenv("LATTICE_NODE", "")
	t.Setenv("LATTICE_KEY", "")

	if code := s.stop(); code != 0 {
		t.Fatalf("dev exited %d after SIGINT, want 0\nstderr: %s", code, s.stderr.String())
	}
	if !strings.Contains(s.stderr.String(), "shutting down") {
		t.Errorf("dev stderr %q does not say it is shutting down", s.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "node", "ledger")); err != nil {
		t.Errorf("dev keeps the node under DIR/node: %v", err)
	}
	// dev logs to DIR/dev.log too, at info, as JSON naming each service,
	// and its banner says so.
	if !strings.Contains(s.stdout.String(), "log         "+filepath.Join(dir, "dev.log")) {
		t.Errorf("dev's banner does not say where its log goes:\n%s", s.stdout.String())
	}
	devLog, err := os.ReadFile(filepath.Join(dir, "dev.log"))
	if err != nil {
		t.Fatalf("dev.log: %v", err)
	}
	for _, want := range []string{`"service":"node"`, `"service":"dev"`, `"msg":"http"`} {
		if !bytes.Contains(devLog, []byte(want)) {
			t.Errorf("dev.log lacks %s", want)
		}
	}

	// A second start reuses the key, the genesis and the ledger.
	keyBefore, _ := os.ReadFile(keyPath)
	genesisBefore, _ := os.ReadFile(genesisPath)
	s = startServer(t, devReady, "dev", "--data", dir, "--http", "127.0.0.1:0", "--api", "127.0.0.1:0")
	if !strings.Contains(s.stdout.String(), "account     "+key.Address().String()) || strings.Contains(s.stdout.String(), "created the admin API key") {
		t.Errorf("second dev start has another account, or a new admin key:\n%s", s.stdout.String())
	}
	if info := getNode(t, s.url); info.Genesis != net.Genesis.Hash {
		t.Errorf("second dev start runs genesis %s, want %s", info.Genesis, net.Genesis.Hash)
	}
	b = parseBalance(t, mustRun(t, "balance", "--node", s.url, "--key", keyPath).stdout)
	if b.units["native"] != "999899999" {
		t.Errorf("dev key balance after restart = %s, want 999899999 (the send persisted)", b.units["native"])
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("second dev exited %d, want 0\nstderr: %s", code, s.stderr.String())
	}
	keyAfter, _ := os.ReadFile(keyPath)
	genesisAfter, _ := os.ReadFile(genesisPath)
	if !bytes.Equal(keyBefore, keyAfter) || !bytes.Equal(genesisBefore, genesisAfter) {
		t.Errorf("second dev start rewrote the dev key or genesis")
	}

	// The stopped dev node's ledger audits clean.
	var rep struct {
		OK       bool `json:"ok"`
		Accounts int  `json:"accounts"`
		Pending  int  `json:"pending"`
	}
	r := mustRun(t, "audit", "--data", filepath.Join(dir, "node"), "--json")
	// The dev account and the provider's (funded from it); the send to x.
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || !rep.OK || rep.Accounts != 2 || rep.Pending != 1 {
		t.Errorf("audit of dev = %+v (%v), want ok, 2 accounts, 1 pending", rep, err)
	}
}

func TestDevDataDefaults(t *testing.T) {
	home := cleanEnv(t)
	envDir := filepath.Join(t.TempDir(), "from-env")
	for _, tt := range []struct {
		name, env, want string
	}{
		{"default under HOME", "", filepath.Join(home, ".lattice", "dev")},
		{"LATTICE_DATA", envDir, envDir},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LATTICE_DATA", tt.env)
			s := startServer(t, devReady, "dev", "--http", "127.0.0.1:0", "--api", "127.0.0.1:0")
			if _, err := wallet.LoadKey(filepath.Join(tt.want, "dev-key.json")); err != nil {
				t.Errorf("dev key under %s: %v", tt.want, err)
			}
			if code := s.stop(); code != 0 {
				t.Errorf("dev exited %d, want 0", code)
			}
		})
	}
}

func TestDevUsage(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	wantFail(t, run(t, "dev", "--data", dir, "--log-level", "loud"), 2, "log level")
	wantFail(t, run(t, "dev", "--data", dir, "--http", "256.0.0.1:bad"), 1, "listen")

	// A node's or a platform's own data directory is not dev's: it says
	// so and writes nothing there.
	for entry, server := range map[string]string{"ledger": "lattice node", "meta": "lattice cloud"} {
		d := filepath.Join(t.TempDir(), "data")
		if err := os.MkdirAll(filepath.Join(d, entry), 0o700); err != nil {
			t.Fatal(err)
		}
		wantFail(t, run(t, "dev", "--data", d, "--http", "127.0.0.1:0", "--api", "127.0.0.1:0"), 1, "is the data directory of a "+server)
		if names, _ := os.ReadDir(d); len(names) != 1 {
			t.Errorf("dev refused %s's directory and wrote %v into it", server, names)
		}
	}
}

var nodeReady = regexp.MustCompile(`lattice node: network "cfgnet", API (http://\S+)\n`)

func TestNodeConfig(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "genesis-key.json")
	genesis := filepath.Join(dir, "genesis.json")
	mustRun(t, "genesis", "new", "--key", key, "--network", "cfgnet", "--work", "dev", "--out", genesis)
	k, err := wallet.LoadKey(key)
	if err != nil {
		t.Fatal(err)
	}
	d1, d2, d3 := filepath.Join(dir, "d1"), filepath.Join(dir, "d2"), filepath.Join(dir, "d3")
	conf := filepath.Join(dir, "node.json")
	confJSON, _ := json.Marshal(map[string]string{"data": d1, "http": "127.0.0.1:0", "genesis": genesis, "log_level": "error",
		"proxy_networks": "203.0.113.0/24, 2001:db8::7"})
	if err := os.WriteFile(conf, confJSON, 0o600); err != nil {
		t.Fatal(err)
	}

	// nodeKey returns the address of the node key the node keeps in its
	// data directory; GET /node reports it, which tells which directory a
	// node runs from.
	nodeKey := func(dataDir string) ledger.Address {
		t.Helper()
		k, err := wallet.LoadKey(filepath.Join(dataDir, "node-key.json"))
		if err != nil {
			t.Fatalf("node key in %s: %v", dataDir, err)
		}
		return k.Address()
	}

	tests := []struct {
		name    string
		args    []string
		dataEnv string // LATTICE_DATA
		confEnv string // LATTICE_CONFIG
		want    string // the data directory used
	}{
		{"config", []string{"--config", conf}, "", "", d1},
		{"config from LATTICE_CONFIG", nil, "", conf, d1},
		{"env beats config", []string{"--config", conf}, d2, "", d2},
		{"flag beats env and config", []string{"--config", conf, "--data", d3}, d2, "", d3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LATTICE_DATA", tt.dataEnv)
			t.Setenv("LATTICE_CONFIG", tt.confEnv)
			s := startServer(t, nodeReady, append([]string{"node"}, tt.args...)...)
			info := getNode(t, s.url)
			if info.Network != "cfgnet" || info.Account != nodeKey(tt.want) {
				t.Errorf("GET /node = %+v, want network cfgnet run from %s", info, tt.want)
			}
			b := parseBalance(t, mustRun(t, "balance", "--node", s.url, "--key", key).stdout)
			if b.account != k.Address().String() || b.units["native"] != "1000000000" {
				t.Errorf("genesis balance = %+v, want 1000000000 native", b)
			}
			if code := s.stop(); code != 0 {
				t.Errorf("node exited %d after SIGINT, want 0\nstderr: %s", code, s.stderr.String())
			}
		})
	}

	// A restart needs no genesis file.
	s := startServer(t, nodeReady, "node", "--data", d1, "--http", "127.0.0.1:0", "--log-level", "error")
	if info := getNode(t, s.url); info.Account != nodeKey(d1) {
		t.Errorf("restart of %s serves node %s", d1, info.Account)
	}
	if code := s.stop(); code != 0 {
		t.Errorf("node exited %d, want 0", code)
	}

	write := func(name string, v any) string {
		data, _ := json.Marshal(v)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	skewConf := write("skew.json", map[string]string{"data": d1, "max_clock_skew": "-1m"})
	proxyConf := write("proxy.json", map[string]string{"data": d1, "proxy_networks": "198.51.100.0/33"})
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown config key", []string{"--config", write("unknown.json", map[string]string{"data": d1, "htpp": "127.0.0.1:0"})}, 1, `unknown keys htpp`},
		{"bad clock skew", []string{"--data", d1, "--max-clock-skew", "soon"}, 2, "--max-clock-skew"},
		{"bad clock skew in config", []string{"--config", skewConf}, 2, `--max-clock-skew "-1m": want a positive duration like 10m (--max-clock-skew is set by the key "max_clock_skew" of config ` + skewConf + ")"},
		{"bad log level", []string{"--data", d1, "--log-level", "loud"}, 2, "log level"},
		{"bad proxy network", []string{"--data", d1, "--proxy-networks", "203.0.113.0/24,proxy.example"}, 2, `--proxy-networks "proxy.example": want an address or a network such as 192.0.2.0/24`},
		{"proxy network of the whole internet", []string{"--data", d1, "--proxy-networks", "203.0.113.0/24,0.0.0.0/0"}, 2, `--proxy-networks "0.0.0.0/0": a network wider than /8 is no set of proxies`},
		{"bad proxy network in config", []string{"--config", proxyConf}, 2, `--proxy-networks "198.51.100.0/33": want an address or a network such as 192.0.2.0/24 (--proxy-networks is set by the key "proxy_networks" of config ` + proxyConf + ")"},
		{"no genesis for a new directory", []string{"--data", filepath.Join(dir, "empty"), "--http", "127.0.0.1:0"}, 1, "give a genesis file (--data \"" + filepath.Join(dir, "empty") + "\")"},
		{"genesis of another network", []string{"--data", d1, "--genesis", write("other.json", otherNetwork(t)), "--http", "127.0.0.1:0"}, 1, "holds network \"cfgnet\""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"node"}, tt.args...)...)
			wantFail(t, r, tt.code, tt.want)
			if !slices.Contains(tt.args, "--config") && strings.Contains(r.stderr, "is set by") {
				t.Errorf("a value given on the command line is said to come from elsewhere: %s", r.stderr)
			}
		})
	}
	// A value from the environment says so too.
	t.Run("bad clock skew in the environment", func(t *testing.T) {
		t.Setenv("LATTICE_MAX_CLOCK_SKEW", "soon")
		wantFail(t, run(t, "node", "--data", d1), 2, `--max-clock-skew "soon": want a positive duration like 10m (--max-clock-skew is set by the environment variable LATTICE_MAX_CLOCK_SKEW)`)
	})
	// The refused first start made nothing: a key and an empty database
	// left there were taken for a ledger by a later audit.
	if _, err := os.Stat(filepath.Join(dir, "empty")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a first start without a genesis file made its data directory (%v)", err)
	}
}

// otherNetwork returns a valid network definition that is not cfgnet.
func otherNetwork(t *testing.T) *node.Network {
	k := wallet.NewKey()
	return &node.Network{Name: "other", Work: ledger.DevWork,
		Genesis: ledger.NewGenesis(k.Private(), ledger.NewAmount(1), time.Now().UnixMilli())}
}

func TestAuditRefusesMissingLedger(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	wantFail(t, run(t, "audit", "--data", dir), 1, "no ledger")
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("audit of an empty directory created %d entries in it", len(entries))
	}
}
