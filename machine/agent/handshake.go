package agent

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// The handshake that opens every session (docs/machines.md). The serial
// port outlives the host's connections to it: a guest may still hold the
// session of a host that went away, and bytes of that host's last attempt
// may still be in flight when the next one begins. So before any yamux
// frame the host writes a hello line with a fresh nonce, the guest, which
// skips everything until a hello, answers a ready line with that nonce,
// and the host skips everything until it reads it. Only then do both
// start a session: neither reads the other's leftovers as frames.
const (
	helloTag = "LATTICE-AGENT-HELLO "
	readyTag = "LATTICE-AGENT-READY "
	// maxHunt bounds what either side skips looking for the other's line.
	maxHunt = 1 << 20
)

// ErrHandshake is a session that could not be opened.
var ErrHandshake = errors.New("agent: handshake")

func newNonce() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// hunt reads r until a line that starts with tag and returns the rest of
// that line; what comes before is skipped.
func hunt(r *bufio.Reader, tag string) (string, error) {
	skipped := 0
	for skipped < maxHunt {
		line, err := r.ReadSlice('\n')
		skipped += len(line)
		if err == bufio.ErrBufferFull {
			continue // a long run of leftovers: not a line of ours
		}
		if err != nil {
			return "", err
		}
		if i := indexTag(line, tag); i >= 0 {
			return string(line[i+len(tag) : len(line)-1]), nil
		}
	}
	return "", fmt.Errorf("%w: no %q line in %d bytes", ErrHandshake, tag[:len(tag)-1], skipped)
}

// indexTag finds tag in line: leftovers may run into it without a newline
// between them.
func indexTag(line []byte, tag string) int {
	for i := 0; i+len(tag) <= len(line); i++ {
		if string(line[i:i+len(tag)]) == tag {
			return i
		}
	}
	return -1
}

// bufConn is a connection whose reads go through a bufio.Reader that may
// already hold bytes read past the handshake.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// HostHandshake opens a session on conn from the host's side: it writes a
// hello and waits, until ctx ends, for the guest's ready with its nonce.
// It returns the connection to start the session on.
func HostHandshake(ctx context.Context, conn net.Conn) (net.Conn, error) {
	nonce := newNonce()
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
		defer conn.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	if _, err := io.WriteString(conn, helloTag+nonce+"\n"); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHandshake, err)
	}
	r := bufio.NewReaderSize(conn, 4096)
	for {
		got, err := hunt(r, readyTag)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w: %v", ErrHandshake, ctx.Err())
			}
			return nil, fmt.Errorf("%w: %v", ErrHandshake, err)
		}
		if got == nonce {
			return bufConn{conn, r}, nil
		}
		// A ready for an earlier attempt's hello: keep looking.
	}
}

// guestHandshake waits on conn for a host's hello and answers it; it
// returns the connection to serve the session on.
func guestHandshake(r *bufio.Reader, conn net.Conn) (net.Conn, error) {
	nonce, err := hunt(r, helloTag)
	if err != nil {
		return nil, err
	}
	if len(nonce) != 16 {
		return nil, fmt.Errorf("%w: a hello with nonce %q", ErrHandshake, nonce)
	}
	if _, err := io.WriteString(conn, readyTag+nonce+"\n"); err != nil {
		return nil, err
	}
	return bufConn{conn, r}, nil
}
