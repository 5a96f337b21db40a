package blockload

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestMain makes the test binary a driver process when a test starts it
// with childEnv set.
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

var child = Driver{Command: []string{os.Args[0]}, Env: []string{"BLOCKLOAD_TEST_DRIVER=1"}}

// recorder is a node stand-in that records what each stream posted, in
// order; a body of "fail" is answered 409.
type recorder struct {
	mu   sync.Mutex
	seen map[string][]string // stream -> bodies
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if string(body) == "fail" {
		http.Error(w, "refused", http.StatusConflict)
		return
	}
	stream, _, _ := strings.Cut(string(body), ".")
	rec.mu.Lock()
	rec.seen[stream] = append(rec.seen[stream], r.URL.Path+" "+string(body))
	rec.mu.Unlock()
	w.Write([]byte(`{"hash":"x"}`))
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

func TestDrivers(t *testing.T) {
	for _, tt := range []struct {
		name string
		d    Driver
	}{
		{"in process", Driver{}},
		{"own process", child},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{seen: map[string][]string{}}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			st := streams(12, 25)
			r, err := tt.d.Start(context.Background(), strings.TrimPrefix(srv.URL, "http://"), 4, st)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ph, err := r.Drive()
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
				if got := rec.seen[fmt.Sprint(i)]; !slices.Equal(got, want) {
					t.Errorf("stream %d arrived as %q, want %q", i, got, want)
				}
			}
			if _, err := r.Drive(); err == nil {
				t.Error("a second Drive succeeded")
			}
		})
	}
}

// A refused request fails the run, from either place, with the node's
// answer in the error.
func TestDriversStopOnRefusal(t *testing.T) {
	for _, d := range []Driver{{}, child} {
		rec := &recorder{seen: map[string][]string{}}
		srv := httptest.NewServer(rec)
		st := streams(2, 3)
		st[1][1].Body = []byte("fail")
		r, err := d.Start(context.Background(), strings.TrimPrefix(srv.URL, "http://"), 2, st)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Drive()
		r.Close()
		srv.Close()
		if err == nil || (d.Command == nil && !strings.Contains(err.Error(), "409 refused")) {
			t.Errorf("%s: err = %v, want the 409", d.Where(), err)
		}
		if got := rec.seen["1"]; len(got) != 1 {
			t.Errorf("%s: stream 1 went on after its refusal: %q", d.Where(), got)
		}
	}
}

func TestStartProcessFails(t *testing.T) {
	srv := httptest.NewServer(&recorder{seen: map[string][]string{}})
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, tt := range []struct {
		name      string
		argv, env []string
		addr      string
	}{
		{"no command", nil, nil, addr},
		{"a command that is not a driver", []string{"true"}, nil, addr},
		{"a driver that cannot connect", child.Command, child.Env, "127.0.0.1:1"},
	} {
		if p, err := StartProcess(context.Background(), tt.argv, tt.env, tt.addr, 1, streams(1, 1)); err == nil {
			p.Close()
			t.Errorf("%s: started", tt.name)
		}
	}
}
