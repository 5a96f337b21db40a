package agent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/libp2p/go-yamux/v5"
)

// FindPort returns the device of the virtio-serial port named name
// (/dev/vportNpM), as the guest's sysfs lists it.
func FindPort(name string) (string, error) {
	dirs, err := filepath.Glob("/sys/class/virtio-ports/vport*")
	if err != nil {
		return "", err
	}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "name"))
		if err == nil && strings.TrimSpace(string(b)) == name {
			return filepath.Join("/dev", filepath.Base(d)), nil
		}
	}
	return "", fmt.Errorf("agent: no virtio-serial port named %s (is virtio_console loaded?)", name)
}

// ServeGuest serves the host's requests on the guest's port device until
// ctx ends. When the host goes away (the session breaks) it starts a new
// session on the same port, for the host that comes next.
func ServeGuest(ctx context.Context, device string) error {
	return serveSessions(ctx, func() (net.Conn, error) {
		f, err := os.OpenFile(device, os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		return fileConn{f}, nil
	})
}

// serveSessions serves session after session on the port open opens: each
// waits for a host's hello (skipping whatever came before) and lasts until
// it breaks, which closes the port (the only way to stop the session's
// reader), so the next one opens it again.
func serveSessions(ctx context.Context, open func() (net.Conn, error)) error {
	for ctx.Err() == nil {
		conn, err := open()
		if err != nil {
			return err
		}
		stop := context.AfterFunc(ctx, func() { conn.Close() })
		r := bufio.NewReaderSize(conn, 64<<10)
		c, err := guestHandshake(r, conn)
		for errors.Is(err, ErrHandshake) && ctx.Err() == nil {
			c, err = guestHandshake(r, conn) // a flood of leftovers: keep hunting
		}
		if err == nil {
			err = serveSession(ctx, c)
		}
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil
		}
		fmt.Fprintf(os.Stderr, "lattice guest agent: session ended (%v); waiting for the host's next hello\n", err)
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// serveSession serves one yamux session on conn.
func serveSession(ctx context.Context, conn net.Conn) error {
	sess, err := yamux.Server(conn, yamuxConfig(), nil)
	if err != nil {
		return err
	}
	defer sess.Close()
	go func() {
		select {
		case <-ctx.Done():
			sess.Close()
		case <-sess.CloseChan():
		}
	}()
	for {
		st, err := sess.AcceptStream()
		if err != nil {
			return err
		}
		go serveStream(ctx, st)
	}
}

func serveStream(ctx context.Context, st *yamux.Stream) {
	defer st.Close()
	br := bufio.NewReaderSize(st, 64<<10)
	line, err := readLine(br, maxRequest)
	if err != nil {
		writeLine(st, reply{Error: err.Error()})
		return
	}
	req, err := decodeRequest(line)
	if err != nil {
		writeLine(st, reply{Error: err.Error()})
		return
	}
	switch req.Op {
	case "ping":
		writeLine(st, reply{})
	case "exec":
		// The host sends nothing after the request, and closes or resets
		// the stream only once it has the answer or has given up on it:
		// a command whose caller is gone goes too, rather than run on
		// past the slot the provider gave it.
		ectx, cancel := context.WithCancel(ctx)
		go func() {
			io.Copy(io.Discard, br)
			cancel()
		}()
		res := runExec(ectx, &req)
		writeLine(st, reply{Exec: &res})
		st.SetReadDeadline(time.Now()) // ends the watch
	case "dial":
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(req.Port)), 5*time.Second)
		if err != nil {
			writeLine(st, reply{Error: err.Error()})
			return
		}
		defer c.Close()
		if err := writeLine(st, reply{}); err != nil {
			return
		}
		splice(bufferedConn{st, br}, c.(*net.TCPConn))
	}
}

// runExec runs req's command with its stdin, bounded in time and output.
func runExec(ctx context.Context, req *Request) ExecResult {
	ctx, cancel := context.WithTimeout(ctx, req.timeout())
	defer cancel()
	cmd := exec.CommandContext(ctx, req.Argv[0], req.Argv[1:]...)
	cmd.Stdin = bytes.NewReader(req.Stdin)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second // a child holding the pipes open cannot hold the answer
	// The command leads a process group of its own, which ends with it:
	// what it started in the background cannot outlive its time.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Run()
	res := ExecResult{Stdout: stdout.b, Stderr: stderr.b, StdoutTruncated: stdout.over, StderrTruncated: stderr.over}
	var exit *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		res.ExitCode, res.TimedOut = -1, true
	case err == nil:
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	default:
		res.ExitCode, res.Error = -1, err.Error()
	}
	return res
}

// capped keeps the first MaxOutput bytes written to it.
type capped struct {
	b    []byte
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := MaxOutput - len(c.b); len(p) > room {
		c.b = append(c.b, p[:max(room, 0)]...)
		c.over = true
	} else {
		c.b = append(c.b, p...)
	}
	return len(p), nil
}

// splice copies a to b and b to a until both directions end, passing a
// half-close on where the other side supports it.
func splice(a, b io.ReadWriteCloser) {
	done := make(chan struct{}, 2)
	cp := func(dst, src io.ReadWriteCloser) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else {
			dst.Close()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}

// Command is the argument that makes a binary the guest agent: every
// image's init runs `lattice guest-agent`.
const Command = "guest-agent"

// ServeIfAsked makes this process the guest agent, and exits with its
// code, when it was started as one (os.Args[1] is Command); otherwise it
// returns. A test binary that a driver copies into an image as its agent
// calls it first in TestMain.
func ServeIfAsked() {
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(GuestMain())
	}
}

// GuestMain is `lattice guest-agent`, which every image's init keeps
// running: it finds the agent's port (its driver may still be loading)
// and serves it. It returns the process's exit code.
//
// SIGTERM and SIGINT get their default action back, whatever the caller
// set up (the lattice command turns them into its context's end, which
// the agent does not watch): at shutdown, init sends every process
// SIGTERM and waits for it to exit (systemd for up to 90 seconds) before
// it powers off, and the agent must go at once.
func GuestMain() int {
	signal.Reset(syscall.SIGTERM, os.Interrupt)
	var dev string
	var err error
	for i := 0; i < 100; i++ {
		if dev, err = FindPort(PortName); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lattice guest agent:", err)
		return 1
	}
	if err := ServeGuest(context.Background(), dev); err != nil {
		fmt.Fprintln(os.Stderr, "lattice guest agent:", err)
		return 1
	}
	return 0
}
