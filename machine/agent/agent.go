// Package agent is the guest agent of Lattice's virtual machines and its
// host side: exec (a command's exit code, stdout and stderr, with stdin,
// bounded in time and output) and dialling a guest TCP port, carried over
// one byte stream between host and guest (a virtio-serial port), so that
// neither needs the guest's network.
//
// The stream carries a yamux session: the host opens a stream per request,
// the guest serves each. A stream starts with one JSON line, the request;
// the guest answers with one JSON line, then, for a dial, the stream is
// the connection to the guest port, byte for byte, in both directions.
// docs/machines.md describes the protocol and its limits.
//
// The guest runs the lattice binary itself (`lattice guest-agent`), copied
// into every image with the libraries it needs: no Go toolchain is needed
// at run time.
package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/libp2p/go-yamux/v5"
)

// Limits of exec, for the guest and the host alike.
const (
	// MaxOutput is the most of each of stdout and stderr an exec returns;
	// what a command writes beyond it is discarded and Truncated is set.
	MaxOutput = 1 << 20
	// MaxStdin is the most stdin an exec request may carry.
	MaxStdin = 1 << 20
	// DefaultTimeout and MaxTimeout bound how long a command may run; one
	// still running then is killed and ExitCode is -1 with TimedOut.
	DefaultTimeout = 30 * time.Second
	MaxTimeout     = 10 * time.Minute
	// maxRequest bounds a request line (stdin is its largest part, as
	// base64).
	maxRequest = 2*MaxStdin + 64<<10
)

// PortName is the name of the virtio-serial port the agent speaks on.
const PortName = "lattice.agent"

// ErrBadRequest is a request the agent refuses.
var ErrBadRequest = errors.New("agent: bad request")

// Request is a stream's first line.
type Request struct {
	// Op is "exec", "dial" or "ping" (answered with an empty reply).
	Op string `json:"op"`
	// Exec: the command and its arguments (run as given, without a
	// shell), its stdin, and a timeout in milliseconds (0: DefaultTimeout).
	Argv      []string `json:"argv,omitempty"`
	Stdin     []byte   `json:"stdin,omitempty"`
	TimeoutMS int64    `json:"timeout_ms,omitempty"`
	// Dial: the guest TCP port, on the guest's loopback.
	Port int `json:"port,omitempty"`
}

// ExecResult is an exec's answer.
type ExecResult struct {
	ExitCode        int    `json:"exit_code"`
	Stdout          []byte `json:"stdout"`
	Stderr          []byte `json:"stderr"`
	StdoutTruncated bool   `json:"stdout_truncated,omitempty"`
	StderrTruncated bool   `json:"stderr_truncated,omitempty"`
	TimedOut        bool   `json:"timed_out,omitempty"`
	// Error says why the command could not run (not found, not
	// executable); ExitCode is then -1.
	Error string `json:"error,omitempty"`
}

// reply is the guest's first line on a stream.
type reply struct {
	Error string      `json:"error,omitempty"`
	Exec  *ExecResult `json:"exec,omitempty"`
}

// Check validates r as the guest does, so the host refuses what the
// guest would.
func (r *Request) Check() error {
	switch r.Op {
	case "exec":
		if len(r.Argv) == 0 || r.Argv[0] == "" {
			return fmt.Errorf("%w: exec needs a command", ErrBadRequest)
		}
		if len(r.Stdin) > MaxStdin {
			return fmt.Errorf("%w: stdin of %d bytes, over %d", ErrBadRequest, len(r.Stdin), MaxStdin)
		}
		if r.TimeoutMS < 0 || r.TimeoutMS > MaxTimeout.Milliseconds() { // in ms: a Duration would wrap
			return fmt.Errorf("%w: timeout %d ms, want 0 to %d", ErrBadRequest, r.TimeoutMS, MaxTimeout.Milliseconds())
		}
	case "dial":
		if r.Port < 1 || r.Port > 65535 {
			return fmt.Errorf("%w: port %d, want 1 to 65535", ErrBadRequest, r.Port)
		}
	case "ping":
	default:
		return fmt.Errorf("%w: unknown op %q", ErrBadRequest, r.Op)
	}
	return nil
}

func (r *Request) timeout() time.Duration {
	if r.TimeoutMS == 0 {
		return DefaultTimeout
	}
	return time.Duration(r.TimeoutMS) * time.Millisecond
}

// yamuxConfig is the session's configuration on both sides: the serial
// port is one reliable stream, so keepalives only detect a guest that
// stopped.
func yamuxConfig() *yamux.Config {
	c := yamux.DefaultConfig()
	c.LogOutput = io.Discard
	c.EnableKeepAlive = true
	c.KeepAliveInterval = 10 * time.Second
	return c
}

// fileConn is a file (the guest's serial port) as the net.Conn yamux
// wants.
type fileConn struct{ *os.File }

func (fileConn) LocalAddr() net.Addr  { return portAddr{} }
func (fileConn) RemoteAddr() net.Addr { return portAddr{} }

type portAddr struct{}

func (portAddr) Network() string { return "virtio-serial" }
func (portAddr) String() string  { return PortName }

// readLine reads one JSON line of at most max bytes from r, byte by byte:
// what follows it on the stream is not consumed.
func readLine(r io.Reader, max int) ([]byte, error) {
	var line []byte
	var b [1]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, err
		}
		if b[0] == '\n' {
			return line, nil
		}
		if len(line) >= max {
			return nil, fmt.Errorf("%w: line over %d bytes", ErrBadRequest, max)
		}
		line = append(line, b[0])
	}
}

func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// decodeRequest parses and checks a request line, as the guest does with
// what the host sends.
func decodeRequest(line []byte) (Request, error) {
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		return Request{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if err := req.Check(); err != nil {
		return Request{}, err
	}
	return req, nil
}

// decodeReply parses a reply line, as the host does with what the guest,
// which it does not trust, sends: a guest's error is ErrGuest, and an exec
// result over the limits is refused.
func decodeReply(line []byte) (reply, error) {
	var rep reply
	if err := json.Unmarshal(line, &rep); err != nil {
		return reply{}, fmt.Errorf("%w: a reply that does not parse: %v", ErrGuest, err)
	}
	if rep.Error != "" {
		return reply{}, fmt.Errorf("%w: %s", ErrGuest, rep.Error)
	}
	if e := rep.Exec; e != nil && (len(e.Stdout) > MaxOutput || len(e.Stderr) > MaxOutput) {
		return reply{}, fmt.Errorf("%w: an exec result over %d bytes", ErrGuest, MaxOutput)
	}
	return rep, nil
}
