package agent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libp2p/go-yamux/v5"
)

// pair serves a guest session in this process over a pipe and returns the
// host's client: the protocol, without a VM (package qemu boots real ones).
func pair(t *testing.T) *Client {
	t.Helper()
	host, guest := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); serveSession(ctx, guest) }()
	c, err := NewClient(host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); cancel(); guest.Close(); <-done })
	return c
}

func TestExec(t *testing.T) {
	c := pair(t)
	ctx := t.Context()
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		argv   []string
		stdin  string
		limit  time.Duration
		check  func(ExecResult) bool
		reqErr error
	}{
		{"output and exit code", []string{"sh", "-c", "cat; echo e >&2; exit 7"}, "in", 0,
			func(r ExecResult) bool {
				return r.ExitCode == 7 && string(r.Stdout) == "in" && string(r.Stderr) == "e\n"
			}, nil},
		{"missing command", []string{"/no/such"}, "", 0,
			func(r ExecResult) bool { return r.ExitCode == -1 && r.Error != "" }, nil},
		{"timeout", []string{"sleep", "5"}, "", 200 * time.Millisecond,
			func(r ExecResult) bool { return r.ExitCode == -1 && r.TimedOut }, nil},
		{"output cut", []string{"head", "-c", strconv.Itoa(MaxOutput + 10), "/dev/zero"}, "", 0,
			func(r ExecResult) bool { return len(r.Stdout) == MaxOutput && r.StdoutTruncated }, nil},
		{"no command", nil, "", 0, nil, ErrBadRequest},
		{"stdin too large", []string{"cat"}, strings.Repeat("x", MaxStdin+1), 0, nil, ErrBadRequest},
		{"timeout too long", []string{"true"}, "", MaxTimeout + time.Second, nil, ErrBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Exec(ctx, tt.argv, []byte(tt.stdin), tt.limit)
			if tt.reqErr != nil {
				if !errors.Is(err, tt.reqErr) {
					t.Fatalf("Exec = %v, want %v", err, tt.reqErr)
				}
				return
			}
			if err != nil || !tt.check(res) {
				t.Errorf("Exec = %+v, %v", res, err)
			}
		})
	}
}

func TestDial(t *testing.T) {
	c := pair(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		line, _ := bufio.NewReader(conn).ReadString('\n')
		io.WriteString(conn, "echo "+line)
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	conn, err := c.Dial(t.Context(), port)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "hello\n")
	got, err := io.ReadAll(conn)
	conn.Close()
	if err != nil || string(got) != "echo hello\n" {
		t.Errorf("through Dial: %q, %v", got, err)
	}
	ln.Close()
	if _, err := c.Dial(t.Context(), port); !errors.Is(err, ErrGuest) {
		t.Errorf("dial of a closed port: %v, want ErrGuest", err)
	}
	if _, err := c.Dial(t.Context(), 0); !errors.Is(err, ErrBadRequest) {
		t.Errorf("dial of port 0: %v, want ErrBadRequest", err)
	}
}

// TestBadRequestsAnswered: the guest answers a request it cannot parse
// or refuses with an error, and goes on serving.
func TestBadRequestsAnswered(t *testing.T) {
	c := pair(t)
	for _, line := range []string{"not json", `{"op":"format-disk"}`, `{"op":"exec"}`, `{"op":"dial","port":70000}`} {
		st, err := c.sess.OpenStream(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(st, line+"\n")
		rep, err := readLine(bufio.NewReader(st), 1<<16)
		st.Close()
		if err != nil || !strings.Contains(string(rep), "bad request") {
			t.Errorf("%s: answered %q, %v; want a bad request error", line, rep, err)
		}
	}
	if err := c.Ping(t.Context()); err != nil {
		t.Errorf("after bad requests: %v", err)
	}
}

func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"op":"exec","argv":["sh","-c","true"],"stdin":"aGk=","timeout_ms":1000}`))
	f.Add([]byte(`{"op":"dial","port":22}`))
	f.Add([]byte(`{"op":"ping"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		req, err := decodeRequest(line)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("error %v is not ErrBadRequest", err)
			}
			return
		}
		if req.Check() != nil {
			t.Fatal("a decoded request fails its check")
		}
	})
}

func FuzzDecodeReply(f *testing.F) {
	f.Add([]byte(`{"exec":{"exit_code":0,"stdout":"aGk=","stderr":""}}`))
	f.Add([]byte(`{"error":"no"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		rep, err := decodeReply(line)
		if err != nil {
			if !errors.Is(err, ErrGuest) {
				t.Fatalf("error %v is not ErrGuest", err)
			}
			return
		}
		if e := rep.Exec; e != nil && (len(e.Stdout) > MaxOutput || len(e.Stderr) > MaxOutput) {
			t.Fatal("an exec result over the limit was taken")
		}
	})
}

// TestCheckTimeout checks exec timeouts in milliseconds at the edges: one
// whose nanoseconds wrap around int64 is refused, not taken as a short or
// negative one.
func TestCheckTimeout(t *testing.T) {
	for _, tc := range []struct {
		ms int64
		ok bool
	}{
		{0, true}, {1, true}, {MaxTimeout.Milliseconds(), true}, {MaxTimeout.Milliseconds() + 1, false},
		{-1, false}, {1 << 58, false}, {18_446_744_073_710, false}, {math.MaxInt64, false},
	} {
		err := (&Request{Op: "exec", Argv: []string{"true"}, TimeoutMS: tc.ms}).Check()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrBadRequest)) {
			t.Errorf("timeout_ms %d: Check = %v, want ok %v", tc.ms, err, tc.ok)
		}
	}
}

// TestGuestOpensNothing: the host accepts no stream from the guest: a
// hostile guest that opens streams toward the host and writes into them
// finds each reset at once, so the host holds none of their bytes, and
// the host's own requests still work.
func TestGuestOpensNothing(t *testing.T) {
	host, guest := net.Pipe()
	c, err := NewClient(host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gs, err := yamux.Server(guest, yamuxConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	go func() { // the guest's side still serves the host's requests
		for {
			st, err := gs.AcceptStream()
			if err != nil {
				return
			}
			go serveStream(t.Context(), st)
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	chunk := make([]byte, 64<<10)
	for i := range 8 {
		st, err := gs.OpenStream(ctx)
		if err != nil {
			continue // refused at once: as good
		}
		st.SetWriteDeadline(time.Now().Add(5 * time.Second))
		var werr error
		for range 16 { // 1 MiB, four times a stream's window
			if _, werr = st.Write(chunk); werr != nil {
				break
			}
		}
		if werr == nil || errors.Is(werr, os.ErrDeadlineExceeded) {
			t.Fatalf("stream %d the guest opened took 1 MiB or stalled (%v): the host held it open", i, werr)
		}
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("the host's own request after the guest's streams: %v", err)
	}
}

// TestExecEndsWithItsCaller: a command ends, with every process it
// started, when its time is up and when the host gives up on it (the
// provider's slot for it is free again then, so a command left running
// would let a caller run any number at once by hanging up).
func TestExecEndsWithItsCaller(t *testing.T) {
	c := pair(t)
	for _, hangUp := range []bool{false, true} {
		t.Run(map[bool]string{false: "time up", true: "caller gone"}[hangUp], func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			limit := time.Minute
			if !hangUp {
				limit = 300 * time.Millisecond
			}
			done := make(chan error, 1)
			go func() {
				_, err := c.Exec(ctx, []string{"sh", "-c", "sleep 60 & echo $$ $! > " + pidfile + "; wait"}, nil, limit)
				done <- err
			}()
			var pids []int
			for deadline := time.Now().Add(10 * time.Second); len(pids) < 2; time.Sleep(10 * time.Millisecond) {
				b, _ := os.ReadFile(pidfile)
				if f := strings.Fields(string(b)); len(f) == 2 && strings.HasSuffix(string(b), "\n") {
					for _, w := range f {
						pid, _ := strconv.Atoi(w)
						pids = append(pids, pid)
					}
				}
				if time.Now().After(deadline) {
					t.Fatal("the command did not start")
				}
			}
			if hangUp {
				cancel()
			}
			<-done
			// A process is gone once it is no more, or a zombie that
			// nobody reaped yet.
			running := func(pid int) bool {
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
				f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
				return err == nil && len(f) > 0 && f[0] != "Z"
			}
			for _, pid := range pids {
				for deadline := time.Now().Add(5 * time.Second); running(pid); time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						syscall.Kill(pid, syscall.SIGKILL)
						t.Fatalf("process %d of the command (the shell and its child: %v) still runs 5 s after its end", pid, pids)
					}
				}
			}
		})
	}
}
