package nodeclient

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/machine/access"
	"github.com/latticenet/lattice/node/nodewire"
)

// Access is what signs requests on a lease's machine: the lease's access
// key and the network's genesis hash (GET /node's genesis).
type Access struct {
	Key     ed25519.PrivateKey
	Network ledger.Hash
}

// sign signs the request the client is about to send.
func (a Access) sign(req *http.Request, body []byte) {
	c := access.Sign(a.Key, a.Network, access.Request{Method: req.Method, Target: req.URL.RequestURI(), Body: body}, time.Now())
	req.Header.Set("Authorization", c.Header())
}

// VMs returns the machines the node runs as a provider.
func (c *Client) VMs(ctx context.Context) ([]nodewire.VM, error) {
	var v []nodewire.VM
	return v, c.do(ctx, "GET", "/vms", nil, &v)
}

// VM returns lease h's machine, as its provider's node reports it.
func (c *Client) VM(ctx context.Context, h ledger.Hash) (nodewire.VM, error) {
	var v nodewire.VM
	return v, c.do(ctx, "GET", "/vms/"+h.String(), nil, &v)
}

// Exec runs command in lease h's machine, signed with a.
func (c *Client) Exec(ctx context.Context, h ledger.Hash, a Access, command string) (nodewire.ExecResult, error) {
	body, _ := json.Marshal(nodewire.ExecRequest{Command: command})
	req, err := http.NewRequestWithContext(ctx, "POST", c.base+"/vms/"+h.String()+"/exec", bytes.NewReader(body))
	if err != nil {
		return nodewire.ExecResult{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	a.sign(req, body)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nodewire.ExecResult{}, fmt.Errorf("node %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nodewire.ExecResult{}, c.apiError(resp)
	}
	var v nodewire.ExecResult
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return v, fmt.Errorf("node %s exec: decode response: %w", c.base, err)
	}
	return v, nil
}

// TunnelConn is an open tunnel: a byte stream to a guest port, a
// net.Conn. CloseWrite ends what the client sends (the guest reads EOF)
// and leaves the other way open. The guest's first bytes may have come
// with the node's answer: every read goes through Read (the TCP
// connection is not embedded, so that io.Copy cannot take its WriteTo
// and skip them).
type TunnelConn struct {
	c    *net.TCPConn
	r    *bufio.Reader
	path string
}

// Path says how the tunnel's bytes travel from the node to the VM, as
// the node answered: "local" (the node provides the lease), "direct" (a
// direct connection to the provider's node) or "relayed" (through a
// relay: the provider is behind NAT and hole punching has not given a
// direct connection). "" from a node that does not say.
func (t *TunnelConn) Path() string { return t.path }

func (t *TunnelConn) Read(p []byte) (int, error) {
	if t.r != nil && t.r.Buffered() > 0 {
		return t.r.Read(p)
	}
	return t.c.Read(p)
}

func (t *TunnelConn) Write(p []byte) (int, error) { return t.c.Write(p) }
func (t *TunnelConn) Close() error                { return t.c.Close() }

// Reset closes the tunnel at once with a TCP reset, so the node aborts
// its side rather than passing an end of stream on.
func (t *TunnelConn) Reset() error {
	t.c.SetLinger(0)
	return t.c.Close()
}
func (t *TunnelConn) CloseWrite() error                  { return t.c.CloseWrite() }
func (t *TunnelConn) LocalAddr() net.Addr                { return t.c.LocalAddr() }
func (t *TunnelConn) RemoteAddr() net.Addr               { return t.c.RemoteAddr() }
func (t *TunnelConn) SetDeadline(d time.Time) error      { return t.c.SetDeadline(d) }
func (t *TunnelConn) SetReadDeadline(d time.Time) error  { return t.c.SetReadDeadline(d) }
func (t *TunnelConn) SetWriteDeadline(d time.Time) error { return t.c.SetWriteDeadline(d) }

// Tunnel opens a TCP tunnel to port of lease h's machine, signed with a:
// POST /tunnel/{h}/tcp?port=N upgraded to the raw stream. The node must
// be reached over plain HTTP (a node's API is served so).
func (c *Client) Tunnel(ctx context.Context, h ledger.Hash, a Access, port int) (*TunnelConn, error) {
	u, err := url.Parse(c.base + "/tunnel/" + h.String() + "/tcp?port=" + strconv.Itoa(port))
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("nodeclient: a tunnel needs the node's plain http:// URL, not %s", u.Scheme)
	}
	req, err := http.NewRequestWithContext(ctx, "POST", u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "tcp")
	a.sign(req, nil)
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	// The client's own dialer when it has one (a test's network namespace,
	// a SOCKS dialer), so a tunnel goes where the client's requests go.
	dial := (&net.Dialer{}).DialContext
	if t, ok := c.hc.Transport.(*http.Transport); ok && t.DialContext != nil {
		dial = t.DialContext
	}
	conn, err := dial(ctx, "tcp", host)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", c.base, err)
	}
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		// Before the request: a signature is good once.
		conn.Close()
		return nil, fmt.Errorf("nodeclient: a tunnel needs a TCP connection, and the client's dialer gave a %T", conn)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("node %s: %w", c.base, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("node %s: %w", c.base, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer conn.Close()
		return nil, c.apiError(resp)
	}
	if !stop() {
		conn.Close()
		return nil, ctx.Err()
	}
	conn.SetDeadline(time.Time{})
	return &TunnelConn{c: tc, r: br, path: resp.Header.Get("Lattice-Tunnel-Path")}, nil
}

var _ net.Conn = (*TunnelConn)(nil)
