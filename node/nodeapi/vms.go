package nodeapi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/vmnet"
)

// maxExecBody bounds POST /vms/{leaseHash}/exec's body: the bound the
// request keeps on its way to the provider.
const maxExecBody = vmnet.MaxExecBody

func (s *Server) vmRoutes(m routes) {
	m.HandleFunc("GET /vms", s.vms)
	m.HandleFunc("GET /vms/{leaseHash}", s.vm)
	m.HandleFunc("POST /vms/{leaseHash}/exec", s.exec)
	m.HandleFunc("POST /tunnel/{leaseHash}/tcp", s.tunnel)
}

// vms answers GET /vms: the machines this node runs as a provider.
func (s *Server) vms(w http.ResponseWriter, r *http.Request) {
	q, ok := queryParams(w, r)
	if !ok {
		return
	}
	if len(q) > 0 {
		writeError(w, http.StatusBadRequest, "GET /vms takes no query parameters")
		return
	}
	writeJSON(w, http.StatusOK, s.opts.VMs.List())
}

func leaseHashOf(w http.ResponseWriter, r *http.Request) (ledger.Hash, bool) {
	h, err := ledger.ParseHash(r.PathValue("leaseHash"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid lease hash in path: "+err.Error())
		return h, false
	}
	return h, true
}

// knownLease says whether lease h is in this node's ledger, answering 404
// `lease not found: <h>` (the contract's words, and vmnet.ErrUnknownLease's)
// or a storage failure itself when it is not.
func (s *Server) knownLease(w http.ResponseWriter, r *http.Request, h ledger.Hash) bool {
	_, found, err := ledger.GetLease(s.n.Store, h)
	switch {
	case err != nil:
		s.internal(w, r, err)
		return false
	case !found:
		writeError(w, http.StatusNotFound, fmt.Sprintf("%v: %s", vmnet.ErrUnknownLease, h))
		return false
	}
	return true
}

// vm answers GET /vms/{leaseHash}, from this node or the lease's
// provider: 404 `lease not found` when the lease is not in this node's
// ledger, `VM not found` when it is but has no VM (yet).
func (s *Server) vm(w http.ResponseWriter, r *http.Request) {
	h, ok := leaseHashOf(w, r)
	if !ok {
		return
	}
	vm, err := s.opts.VMs.Get(r.Context(), h)
	if err != nil {
		// vmnet says `VM not found: no lease ...` for a lease not in the
		// ledger; the API tells the two apart, as exec and the tunnel
		// do. The ledger is read after Get, not before: a provider keeps
		// the record of a VM whose lease a fork rolled back, and shows it.
		if errors.Is(err, vmnet.ErrNotFound) && !s.knownLease(w, r, h) {
			return
		}
		s.vmError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, vm)
}

// vmError answers a vmnet error with its status.
func (s *Server) vmError(w http.ResponseWriter, r *http.Request, err error) {
	code := vmnet.Status(err)
	if code == http.StatusInternalServerError {
		if r.Context().Err() != nil {
			writeError(w, http.StatusGatewayTimeout, "the machine did not answer in time: "+err.Error())
			return
		}
		s.internal(w, r, err)
		return
	}
	writeError(w, code, err.Error())
}

// call reads what the provider needs to judge a request on a machine.
func call(r *http.Request, h ledger.Hash, body []byte) vmnet.Call {
	return vmnet.Call{Lease: h, Target: r.URL.RequestURI(), Authorization: r.Header.Get("Authorization"), Body: body}
}

// exec answers POST /vms/{leaseHash}/exec: the command runs in the
// lease's machine, at this node or its provider's, for the holder of the
// lease's access key.
func (s *Server) exec(w http.ResponseWriter, r *http.Request) {
	h, ok := leaseHashOf(w, r)
	if !ok {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxExecBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is more than %d bytes", maxExecBody))
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, "reading the body: "+err.Error())
		return
	}
	// The provider judges the body too, but a malformed one is refused
	// here without a trip over the network.
	if _, err := vmnet.ParseExec(body); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	res, err := s.opts.VMs.Exec(r.Context(), call(r, h, body))
	if err != nil {
		s.vmError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// tunnel answers POST /tunnel/{leaseHash}/tcp?port=N: once the lease's
// provider has connected to the guest's port, 101 Switching Protocols
// (Upgrade: tcp), and the connection becomes that port's byte stream,
// carried over the peer-to-peer network when another node provides it.
// A lease not in the ledger is 404 whatever else is wrong with the
// request (the contract: "the tunnel answers 404 for an unknown lease"),
// so the lease is looked up before the port and the body are judged.
func (s *Server) tunnel(w http.ResponseWriter, r *http.Request) {
	h, ok := leaseHashOf(w, r)
	if !ok || !s.knownLease(w, r, h) {
		return
	}
	q, ok := queryParams(w, r, "port")
	if !ok {
		return
	}
	if _, err := vmnet.TunnelPort(q); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		writeError(w, http.StatusBadRequest, "a tunnel request has no body")
		return
	}
	rc := http.NewResponseController(w)
	st, err := s.opts.VMs.Tunnel(r.Context(), call(r, h, nil))
	if err != nil {
		s.vmError(w, r, err)
		return
	}
	// The status goes out with the hijack (net/http flushes a written
	// header then), through every wrapper that records it.
	path := vmnet.PathOf(st)
	w.Header().Set("Connection", "Upgrade")
	w.Header().Set("Upgrade", "tcp")
	w.Header().Set(TunnelPathHeader, path)
	w.WriteHeader(http.StatusSwitchingProtocols)
	conn, buf, err := rc.Hijack()
	if err != nil {
		st.Close()
		s.n.Log.Error("tunnel: hijacking the connection", "err", err)
		return
	}
	conn.SetDeadline(time.Time{})
	tc, ok := conn.(tcpConn)
	if !ok {
		conn.Close()
		st.Close()
		return
	}
	end := s.tunnels.add(tc)
	defer end()
	// Bytes the client sent after its request, already read.
	client := &bufferedTCP{c: tc, r: buf.Reader}
	s.n.Log.Info("tunnel opened", "lease", h, "path", path)
	up, down := vmnet.Splice(client, st)
	s.n.Log.Info("tunnel closed", "lease", h, "path", path, "up", up, "down", down)
}

// TunnelPathHeader names, in a tunnel's 101 answer, how its bytes travel
// to the VM (vmnet.PathOf): local, direct or relayed.
const TunnelPathHeader = "Lattice-Tunnel-Path"

// bufferedTCP is a hijacked connection whose first bytes may sit in the
// server's reader. It does not embed the connection: io.Copy would take
// the connection's WriteTo and skip those bytes.
type bufferedTCP struct {
	c tcpConn
	r *bufio.Reader
}

// tcpConn is what a tunnel needs of its client's connection: a TCP
// connection's half-close and reset, whatever wraps it (the server's
// bounds on connections do).
type tcpConn interface {
	net.Conn
	CloseWrite() error
	SetLinger(sec int) error
}

func (b *bufferedTCP) Read(p []byte) (int, error) {
	if b.r != nil && b.r.Buffered() > 0 {
		return b.r.Read(p)
	}
	return b.c.Read(p)
}

func (b *bufferedTCP) Write(p []byte) (int, error) { return b.c.Write(p) }
func (b *bufferedTCP) CloseWrite() error           { return b.c.CloseWrite() }
func (b *bufferedTCP) Close() error                { return b.c.Close() }

// Reset closes the connection with a TCP reset (see vmnet.Abort).
func (b *bufferedTCP) Reset() error { return vmnet.Abort(b.c) }

// tunnelSet holds the open tunnels' connections, so that a node that
// stops closes them (StopStreams) instead of waiting for them.
type tunnelSet struct {
	mu    sync.Mutex
	conns map[tcpConn]bool
	shut  bool
}

func (t *tunnelSet) add(c tcpConn) (end func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.shut {
		c.Close()
		return func() {}
	}
	if t.conns == nil {
		t.conns = map[tcpConn]bool{}
	}
	t.conns[c] = true
	return func() {
		t.mu.Lock()
		delete(t.conns, c)
		t.mu.Unlock()
	}
}

func (t *tunnelSet) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.shut = true
	for c := range t.conns {
		c.Close()
	}
}
