package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/libp2p/go-yamux/v5"
)

// ErrGuest is an error the guest answered with.
var ErrGuest = errors.New("agent: guest")

// Client is the host's side of one guest's agent.
type Client struct {
	sess *yamux.Session
}

// NewClient starts the host's side of the session on conn, the stream to
// the guest's agent port.
func NewClient(conn net.Conn) (*Client, error) {
	cfg := yamuxConfig()
	// The host opens every stream and accepts none: a stream the guest
	// opens is reset at once, so that a hostile guest cannot make the
	// host buffer a window's worth of bytes for each of hundreds of
	// streams nobody reads (64 MiB at yamux's defaults).
	cfg.MaxIncomingStreams = 0
	cfg.AcceptBacklog = 1
	sess, err := yamux.Client(conn, cfg, nil)
	if err != nil {
		return nil, err
	}
	return &Client{sess: sess}, nil
}

// Close ends the session.
func (c *Client) Close() error { return c.sess.Close() }

// Ping waits until the guest's agent answers on a stream, or ctx ends.
func (c *Client) Ping(ctx context.Context) error {
	st, err := c.sess.OpenStream(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	_, _, err = c.roundTrip(ctx, st, &Request{Op: "ping"})
	return err
}

// Exec runs a command in the guest and returns its result. The request is
// checked here as the guest would (ErrBadRequest).
func (c *Client) Exec(ctx context.Context, argv []string, stdin []byte, timeout time.Duration) (ExecResult, error) {
	req := &Request{Op: "exec", Argv: argv, Stdin: stdin, TimeoutMS: timeout.Milliseconds()}
	if err := req.Check(); err != nil {
		return ExecResult{}, err
	}
	st, err := c.sess.OpenStream(ctx)
	if err != nil {
		return ExecResult{}, err
	}
	defer st.Close()
	rep, _, err := c.roundTrip(ctx, st, req)
	if err != nil {
		return ExecResult{}, err
	}
	if rep.Exec == nil {
		return ExecResult{}, fmt.Errorf("%w: an exec answered without a result", ErrGuest)
	}
	return *rep.Exec, nil
}

// Dial connects to a TCP port on the guest's loopback through the agent:
// the stream returned is that connection.
func (c *Client) Dial(ctx context.Context, port int) (net.Conn, error) {
	req := &Request{Op: "dial", Port: port}
	if err := req.Check(); err != nil {
		return nil, err
	}
	st, err := c.sess.OpenStream(ctx)
	if err != nil {
		return nil, err
	}
	_, br, err := c.roundTrip(ctx, st, req)
	if err != nil {
		st.Close()
		return nil, err
	}
	return bufferedConn{st, br}, nil
}

// bufferedConn is a stream whose first bytes were read ahead, with its
// reply, into r.
type bufferedConn struct {
	*yamux.Stream
	r *bufio.Reader
}

func (c bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// roundTrip writes req on st and reads the guest's reply line, within ctx,
// through the buffered reader it returns, which may hold what followed.
func (c *Client) roundTrip(ctx context.Context, st *yamux.Stream, req *Request) (reply, *bufio.Reader, error) {
	if dl, ok := ctx.Deadline(); ok {
		st.SetDeadline(dl)
		defer st.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { st.SetDeadline(time.Now()) })
	defer stop()
	if err := writeLine(st, req); err != nil {
		return reply{}, nil, fmt.Errorf("agent: sending: %w", err)
	}
	br := bufio.NewReaderSize(st, 64<<10)
	line, err := readLine(br, 4*MaxOutput+64<<10)
	if err != nil {
		if ctx.Err() != nil {
			return reply{}, nil, ctx.Err()
		}
		return reply{}, nil, fmt.Errorf("agent: reading the answer: %w", err)
	}
	rep, err := decodeReply(line)
	if err != nil {
		return reply{}, nil, err
	}
	return rep, br, nil
}
