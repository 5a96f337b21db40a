package cli

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAddressesAndWrongServices: a host:port is taken for a URL; a client
// pointed at the other service (or the S3 endpoint) says so instead of
// printing that service's raw answer; an unreachable cloud API gets the
// same hint as an unreachable node.
func TestAddressesAndWrongServices(t *testing.T) {
	tn := newTestNode(t)
	cloud := newS3Cloud(t)
	hostPort := strings.TrimPrefix(tn.url, "http://")

	// host:port for the node.
	r := run(t, "balance", "--node", hostPort, "--key", tn.gkey)
	if r.code != 0 || !strings.Contains(r.stdout, "native") {
		t.Errorf("balance --node %s: exit %d, %q %q; want the balance", hostPort, r.code, r.stdout, r.stderr)
	}
	// host:port for the cloud API.
	r = run(t, "s3", "ls", "--api", strings.TrimPrefix(cloud.url, "http://"))
	if r.code != 0 {
		t.Errorf("s3 ls --api host:port: exit %d, %q", r.code, r.stderr)
	}

	// The wallet pointed at the cloud API.
	wantFail(t, run(t, "balance", "--node", cloud.url, "--key", tn.gkey), 1, "answers as the Lattice cloud API", "--node")
	// The s3 commands pointed at the node.
	wantFail(t, run(t, "s3", "ls", "--api", tn.url), 1, "answers as a Lattice ledger node", "--api")
	// An unreachable cloud API.
	wantFail(t, run(t, "s3", "ls", "--api", deadURL(t)), 1, "cannot reach the cloud API", "lattice dev")
}

// TestBusyPortFailsBeforeState: a port in use fails `lattice dev` and
// `lattice cloud` before they create a data directory or an admin key,
// and the error names the flag that changes the port.
func TestBusyPortFailsBeforeState(t *testing.T) {
	cleanEnv(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"dev", "--http", addr, "--api", "127.0.0.1:0", "--s3", "127.0.0.1:0", "--p2p", "/ip4/127.0.0.1/tcp/0"}, "--http"},
		{[]string{"dev", "--http", "127.0.0.1:0", "--api", addr, "--s3", "127.0.0.1:0", "--p2p", "/ip4/127.0.0.1/tcp/0"}, "--api"},
		{[]string{"dev", "--http", "127.0.0.1:0", "--api", "127.0.0.1:0", "--s3", addr, "--p2p", "/ip4/127.0.0.1/tcp/0"}, "--s3"},
		{[]string{"dev", "--http", "127.0.0.1:0", "--api", "127.0.0.1:0", "--s3", "127.0.0.1:0", "--p2p", "/ip4/127.0.0.1/tcp/" + addr[strings.LastIndex(addr, ":")+1:]}, "--p2p"},
		{[]string{"cloud", "--api", addr, "--s3", "127.0.0.1:0"}, "--api"},
		{[]string{"cloud", "--api", "127.0.0.1:0", "--s3", addr}, "--s3"},
	} {
		dir := filepath.Join(t.TempDir(), "state")
		r := run(t, append(tc.args, "--data", dir)...)
		if r.code == 0 || !strings.Contains(r.stderr, "address already in use") || !strings.Contains(r.stderr, tc.flag) {
			t.Errorf("%v: exit %d, stderr %q; want a failure naming %s", tc.args, r.code, r.stderr, tc.flag)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: the data directory was created (%v)", tc.args, err)
		}
		if strings.Contains(r.stdout, "admin API key") {
			t.Errorf("%v: printed an admin key before failing:\n%s", tc.args, r.stdout)
		}
	}
}

// TestNodeBusyPortFailsBeforeState: the same for `lattice node`.
func TestNodeBusyPortFailsBeforeState(t *testing.T) {
	cleanEnv(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := filepath.Join(t.TempDir(), "state")
	r := run(t, "node", "--data", dir, "--http", busy.Addr().String(), "--p2p", "/ip4/127.0.0.1/tcp/0")
	if r.code == 0 || !strings.Contains(r.stderr, "--http") {
		t.Errorf("node on a busy port: exit %d, stderr %q; want a failure naming --http", r.code, r.stderr)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the data directory was created (%v)", err)
	}
}

func TestWhen(t *testing.T) {
	const now = 1795526291371 // 2026-11-24 13:18:11 UTC
	for _, tt := range []struct {
		ms   int64
		want string
	}{
		{now + 86_400_000, "2026-11-25 13:18:11 UTC (in 24h0m)"},
		{now + 3*3_600_000 + 12*60_000 + 30_000, "2026-11-24 16:30:41 UTC (in 3h13m)"},
		{now + 45_500, "2026-11-24 13:18:56 UTC (in 46s)"},
		{now - 90_000, "2026-11-24 13:16:41 UTC (1m30s ago)"},
		{now, "2026-11-24 13:18:11 UTC (now)"},
		// Past what a Duration holds: the widest one, not a wrapped one.
		{now + 1<<58, "9135683-12-01 12:46:43 UTC (in 2562047h47m)"},
	} {
		if got := when(tt.ms, now); got != tt.want {
			t.Errorf("when(%d) = %q, want %q", tt.ms, got, tt.want)
		}
	}
}

// TestJSONErrors: with --json, errors are JSON on stderr too, with the
// exit status.
func TestJSONErrors(t *testing.T) {
	cleanEnv(t)
	r := run(t, "balance", "--json", "--node", deadURL(t), "--key", filepath.Join(t.TempDir(), "none.json"))
	var e struct {
		Command    string `json:"command"`
		Error      string `json:"error"`
		ExitStatus int    `json:"exit_status"`
	}
	if err := json.Unmarshal([]byte(r.stderr), &e); err != nil || r.code == 0 || e.Command != "balance" || e.Error == "" || e.ExitStatus != r.code {
		t.Errorf("balance --json failing: exit %d, stderr %q (%v); want a JSON error with the exit status", r.code, r.stderr, err)
	}
	r = run(t, "send", "--json", "--to", "nonsense", "--amount", "1")
	if err := json.Unmarshal([]byte(r.stderr), &e); err != nil || r.code != 2 || e.ExitStatus != 2 {
		t.Errorf("send --json with a bad address: exit %d, stderr %q; want a JSON usage error, exit 2", r.code, r.stderr)
	}
}

// TestAmountPrecisionSaid: an amount with more decimals than the ledger
// keeps says how many it may have.
func TestAmountPrecisionSaid(t *testing.T) {
	cleanEnv(t)
	wantFail(t, run(t, "send", "--to", strings.Repeat("a", 64), "--amount", "1.1234567"), 2, "at most 6 decimals")
}
