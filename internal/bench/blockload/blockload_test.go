package blockload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain makes the test binary a driver process when a test starts it
// with BLOCKLOAD_TEST_DRIVER set (see child).
func TestMain(m *testing.M) {
	if os.Getenv("BLOCKLOAD_TEST_DRIVER") != "" {
		if err := ServeProcess(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child runs the load generator in a process of its own: this test binary.
var child = Driver{Command: []string{os.Args[0]}, Env: []string{"BLOCKLOAD_TEST_DRIVER=1"}, Stderr: os.Stderr}

// recorder is a node stand-in that records what each stream posted, in
// order; a body of "fail" is answered 409, and one of "hang" is answered
// when release is closed.
type recorder struct {
	mu      sync.Mutex
	seen    map[string][]string // stream -> bodies
	hung    chan struct{}       // closed when a "hang" arrives
	release chan struct{}
}

func newRecorder() *recorder {
	return &recorder{seen: map[string][]string{}, hung: make(chan struct{}), release: make(chan struct{})}
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch string(body) {
	case "fail":
		http.Error(w, "refused", http.StatusConflict)
		return
	case "hang":
		close(rec.hung)
		<-rec.release
		return
	}
	stream, _, _ := strings.Cut(string(body), ".")
	rec.mu.Lock()
	rec.seen[stream] = append(rec.seen[stream], r.URL.Path+" "+string(body))
	rec.mu.Unlock()
	w.Write([]byte(`{"hash":"x"}`))
}

func (rec *recorder) stream(s string) []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.seen[s])
}

// listen starts rec on loopback; the test closes it.
func listen(t *testing.T, rec *recorder) string {
	srv := httptest.NewServer(rec)
	t.Cleanup(func() {
		select {
		case <-rec.release:
		default:
			close(rec.release)
		}
		srv.Close()
	})
	return strings.TrimPrefix(srv.URL, "http://")
}

// start starts d with a worker a stream, to post st to a new recorder;
// the test closes both.
func start(t *testing.T, d Driver, st [][]Request) (*recorder, Runner) {
	rec := newRecorder()
	r, err := d.Start(context.Background(), listen(t, rec), len(st), st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return rec, r
}

// streams makes n streams of k requests each; request j of stream i has
// the body "i.j".
func streams(n, k int) [][]Request {
	out := make([][]Request, n)
	for i := range out {
		for j := range k {
			out[i] = append(out[i], Request{Path: fmt.Sprintf("/blocks/t%d", j%2), Body: fmt.Appendf(nil, "%d.%d", i, j)})
		}
	}
	return out
}

var drivers = []struct {
	name string
	d    Driver
}{
	{"in process", Driver{}},
	{"own process", child},
}

func TestDrivers(t *testing.T) {
	for _, tt := range drivers {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			addr := listen(t, rec)
			st := streams(12, 25)
			r, err := tt.d.Start(context.Background(), addr, 4, st)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, own := r.(*Process); own != (tt.d.Where() == "process") {
				t.Fatalf("a %T for a driver that says %q", r, tt.d.Where())
			}
			ph, err := r.Drive(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if ph.Blocks != 12*25 || ph.PerSecond <= 0 || ph.P99ms < ph.P50ms {
				t.Errorf("phase %+v", ph)
			}
			for i, s := range st {
				var want []string
				for _, req := range s {
					want = append(want, req.Path+" "+string(req.Body))
				}
				if got := rec.stream(fmt.Sprint(i)); !slices.Equal(got, want) {
					t.Errorf("stream %d arrived as %q, want %q", i, got, want)
				}
			}
			if p, ok := r.(*Process); ok && p.cmd.ProcessState == nil {
				t.Error("the load generator process still runs after its report")
			}
			if _, err := r.Drive(context.Background()); err == nil {
				t.Error("a second Drive succeeded")
			}
			r.Close()
			r.Close() // twice is fine
		})
	}
}

// A refused request fails the run, from either place, with the node's
// answer in the error, and its stream goes no further.
func TestDriversStopOnRefusal(t *testing.T) {
	for _, tt := range drivers {
		t.Run(tt.name, func(t *testing.T) {
			st := streams(2, 3)
			st[1][1].Body = []byte("fail")
			rec, r := start(t, tt.d, st)
			_, err := r.Drive(context.Background())
			if err == nil || !strings.Contains(err.Error(), "409 refused") {
				t.Errorf("err = %v, want the 409", err)
			}
			if got := rec.stream("1"); len(got) != 1 {
				t.Errorf("stream 1 went on after its refusal: %q", got)
			}
		})
	}
}

// A run whose context ends stops, from either place, with the context's
// error.
func TestDriversStopWithContext(t *testing.T) {
	for _, tt := range drivers {
		t.Run(tt.name, func(t *testing.T) {
			st := streams(1, 3)
			st[0][1].Body = []byte("hang")
			rec, r := start(t, tt.d, st)
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-rec.hung
				cancel()
				if tt.d.Where() == "inprocess" {
					// The worker checks ctx between requests.
					close(rec.release)
				}
			}()
			done := make(chan error, 1)
			go func() { _, err := r.Drive(ctx); done <- err }()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Drive did not stop when its context ended")
			}
		})
	}
}

// Closing a driver process before it drives stops it.
func TestProcessCloseBeforeDrive(t *testing.T) {
	addr := listen(t, newRecorder())
	r, err := child.Start(context.Background(), addr, 2, streams(2, 2))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if p := r.(*Process); p.cmd.ProcessState == nil {
		t.Error("the load generator process still runs after Close")
	}
	if _, err := r.Drive(context.Background()); err == nil {
		t.Error("Drive after Close succeeded")
	}
}

func TestStartProcessFails(t *testing.T) {
	addr := listen(t, newRecorder())
	// An address nothing listens on: a listener's, once closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name      string
		ctx       context.Context
		argv, env []string
		addr      string
		want      string
	}{
		{"no command", context.Background(), nil, nil, addr, "no command"},
		{"a command that is not a driver", context.Background(), []string{"true"}, nil, addr, "stopped without a word"},
		{"a driver that cannot connect", context.Background(), child.Command, child.Env, closed, "connection refused"},
		{"a context already ended", cancelled, child.Command, child.Env, addr, "context canceled"},
	} {
		p, err := StartProcess(tt.ctx, tt.argv, tt.env, nil, tt.addr, 1, streams(1, 1))
		if err == nil {
			p.Close()
			t.Errorf("%s: started", tt.name)
		} else if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q in it", tt.name, err, tt.want)
		}
	}
}
