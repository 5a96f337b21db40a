package stack_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/ledgernet"
	"github.com/latticenet/lattice/node/nodeapi"
	"github.com/latticenet/lattice/node/stack"
	"github.com/latticenet/lattice/wallet"
)

// journal records the calls the stack makes to the probe modules.
type journal struct {
	mu    sync.Mutex
	calls []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls = append(j.calls, s)
}

func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.calls)
}

// probe is a module that records its life and fails where told.
type probe struct {
	name          string
	j             *journal
	failProvision bool
	failValidate  bool
	sawNode       bool
}

func (p *probe) Name() string { return p.name }

func (p *probe) Provision(_ context.Context, s *stack.Stack) error {
	p.j.add("provision " + p.name)
	p.sawNode = s.Node() != nil && s.Host() != nil
	if p.failProvision {
		return errors.New("provision refused")
	}
	return nil
}

func (p *probe) API(*nodeapi.Options) { p.j.add("api " + p.name) }

func (p *probe) Validate() error {
	p.j.add("validate " + p.name)
	if p.failValidate {
		return errors.New("not valid")
	}
	return nil
}

func (p *probe) Close() error { p.j.add("close " + p.name); return nil }

func testNetwork(t *testing.T) *node.Network {
	t.Helper()
	supply, err := ledger.ParseUnits("1000")
	if err != nil {
		t.Fatal(err)
	}
	k := wallet.NewKey()
	return &node.Network{Name: "stacktest", Work: ledger.DevWork, Genesis: ledger.NewGenesis(k.Private(), supply, time.Now().UnixMilli())}
}

func config(t *testing.T, net *node.Network) stack.Config {
	return stack.Config{
		Node:    node.Config{DataDir: filepath.Join(t.TempDir(), "node"), Network: net},
		HTTP:    "127.0.0.1:0",
		Metrics: "127.0.0.1:0",
		P2P:     []string{"/ip4/127.0.0.1/tcp/0"},
	}
}

// TestLifeCycle: a whole node (ledger network and chat, between two
// probes) listens, provisions in order, serves its API and metrics, and
// closes everything in reverse order, once.
func TestLifeCycle(t *testing.T) {
	j := &journal{}
	first, last := &probe{name: "first", j: j}, &probe{name: "last", j: j}
	cfg := config(t, testNetwork(t))
	st := stack.New(cfg, first, stack.Ledger(ledgernet.Config{}), stack.Chat(chatnet.Config{}), last)
	if err := st.Listen(); err != nil {
		t.Fatal(err)
	}
	if err := st.Provision(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !first.sawNode || !last.sawNode {
		t.Error("a module was provisioned before the node and the host")
	}
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan string, 1)
	served := make(chan error, 1)
	go func() { served <- st.Serve(ctx, func(url string) { ready <- url }, nil) }()
	var url string
	select {
	case url = <-ready:
	case err := <-served:
		t.Fatalf("Serve returned before ready: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not ready after 10 s")
	}
	c := &http.Client{Timeout: 5 * time.Second}
	for _, path := range []string{"/node", "/healthz"} {
		resp, err := c.Get(url + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s", path, resp.Status)
		}
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return 20 s after its context ended")
	}
	if err := st.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	want := []string{"provision first", "provision last", "validate first", "validate last", "api first", "api last", "close last", "close first"}
	if got := j.list(); !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "http://"), time.Second); err == nil {
		t.Error("the API still accepts connections after Close")
	}
	// The ledger was closed: a new stack opens the same directory.
	again := stack.New(stack.Config{Node: cfg.Node, HTTP: "127.0.0.1:0", P2P: cfg.P2P})
	defer again.Close()
	if err := again.Listen(); err != nil {
		t.Fatal(err)
	}
	if err := again.Provision(t.Context()); err != nil {
		t.Fatalf("reopening the closed node's directory: %v", err)
	}
}

// TestFailuresCloseWhatWasOpened: whichever step fails, Close releases
// what was opened, modules last first (the failed one too), and the ports
// and the data directory are free again.
func TestFailuresCloseWhatWasOpened(t *testing.T) {
	net0 := testNetwork(t)
	for _, tt := range []struct {
		name      string
		modules   func(j *journal) []stack.Module
		wantErr   string
		wantCalls []string
	}{
		{"provision", func(j *journal) []stack.Module {
			return []stack.Module{&probe{name: "a", j: j}, &probe{name: "b", j: j, failProvision: true}, &probe{name: "c", j: j}}
		}, "b: provision refused", []string{"provision a", "provision b", "close b", "close a"}},
		{"validate", func(j *journal) []stack.Module {
			return []stack.Module{&probe{name: "a", j: j}, &probe{name: "b", j: j, failValidate: true}}
		}, "b: not valid", []string{"provision a", "provision b", "validate a", "validate b", "close b", "close a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j := &journal{}
			cfg := config(t, net0)
			st := stack.New(cfg, tt.modules(j)...)
			if err := st.Listen(); err != nil {
				t.Fatal(err)
			}
			addr := strings.TrimPrefix(st.URL(), "http://")
			err := st.Provision(t.Context())
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("Provision = %v, want %q", err, tt.wantErr)
			}
			if err := st.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if got := j.list(); !slices.Equal(got, tt.wantCalls) {
				t.Errorf("calls = %q, want %q", got, tt.wantCalls)
			}
			// Everything was released: the port binds, the ledger opens.
			again := stack.New(stack.Config{Node: cfg.Node, HTTP: addr, P2P: cfg.P2P})
			defer again.Close()
			if err := again.Listen(); err != nil {
				t.Fatalf("the API's port after Close: %v", err)
			}
			if err := again.Provision(t.Context()); err != nil {
				t.Fatalf("the data directory after Close: %v", err)
			}
		})
	}
}

// TestListenFailsBeforeAnyState: a taken port fails Listen, naming the
// flag, before the data directory exists.
func TestListenFailsBeforeAnyState(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := config(t, testNetwork(t))
	cfg.HTTP = taken.Addr().String()
	st := stack.New(cfg)
	defer st.Close()
	err = st.Listen()
	if err == nil || !strings.Contains(err.Error(), "--http") {
		t.Fatalf("Listen on a taken port = %v, want an error naming --http", err)
	}
	if _, err := os.Stat(cfg.Node.DataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the data directory after a failed Listen: %v, want none", err)
	}
}
