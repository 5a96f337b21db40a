package vmnet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/internal/strictjson"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/machine/access"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/node/p2p"
)

// protocol is the stream a node opens to a lease's provider for what it
// cannot answer itself: one request frame, one answer frame, and for a
// tunnel that is opened the raw bytes both ways after them.
const protocol = "vm/1"

// Frame limits: a request carries an exec body at most (MaxExecBody,
// base64 in the frame's JSON, with the credential and the target:
// 716,800 bytes, docs/protocol.md section 25.2); an answer an exec's
// output (twice agent.MaxOutput, JSON-escaped). A frame's buffer grows
// with the bytes that arrive, never to the length a peer claims (see
// readFrame).
const (
	maxRequestFrame = MaxExecBody*4/3 + 16<<10
	maxAnswerFrame  = 16 << 20
)

// MaxExecBody bounds an exec request's body, at the API and on the way
// to the provider alike: an ExecRequest whose command is at most
// nodewire.MaxCommandBytes, JSON-escaped (Go's encoder writes <, > and &
// as \u003c, six bytes), with room to spare.
const MaxExecBody = 8*nodewire.MaxCommandBytes + 1024

// Ops of the protocol.
const (
	opShow   = "show"
	opExec   = "exec"
	opTunnel = "tunnel"
)

// Call is a request on a lease's machine as the node's API received it.
type Call struct {
	Lease ledger.Hash
	// Target is the request target as sent (path and raw query), and
	// Authorization its Authorization header: the provider checks the
	// credential against them.
	Target        string
	Authorization string
	Body          []byte
}

type wireRequest struct {
	Op            string      `json:"op"`
	Lease         ledger.Hash `json:"lease"`
	Target        string      `json:"target,omitzero"`
	Authorization string      `json:"authorization,omitzero"`
	Body          []byte      `json:"body,omitzero"`
}

type wireAnswer struct {
	Status int                  `json:"status"`
	Error  string               `json:"error,omitzero"`
	VM     *nodewire.VM         `json:"vm,omitzero"`
	Result *nodewire.ExecResult `json:"result,omitzero"`
}

// StatusError is an answer other than success, with the HTTP status the
// API gives it.
type StatusError struct {
	Code int
	Msg  string
}

func (e *StatusError) Error() string { return e.Msg }

// Status is the HTTP status of err, an error of this package's calls.
func Status(err error) int {
	var se *StatusError
	switch {
	case errors.As(err, &se):
		return se.Code
	case errors.Is(err, ErrUnknownLease), errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, access.ErrWrongKey):
		return http.StatusForbidden
	case errors.Is(err, access.ErrMissing), errors.Is(err, access.ErrMalformed), errors.Is(err, access.ErrSignature),
		errors.Is(err, access.ErrExpired), errors.Is(err, access.ErrReplayed):
		return http.StatusUnauthorized
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, ErrNotRunning):
		return http.StatusConflict
	case errors.Is(err, ErrBusy), errors.Is(err, access.ErrBusy):
		return http.StatusTooManyRequests
	case errors.Is(err, ErrUnreachable):
		return http.StatusBadGateway
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// route says where lease h's machine answers: here (nil peer) or at the
// provider's node.
func (s *Service) route(ctx context.Context, h ledger.Hash) (*ledger.LeaseRecord, peer.ID, error) {
	r, found, err := ledger.GetLease(s.n.Store, h)
	if err != nil {
		return nil, "", err
	}
	if !found {
		return nil, "", fmt.Errorf("%w: %s", ErrUnknownLease, h)
	}
	if !r.Accepted() {
		return r, "", fmt.Errorf("%w: lease %s is not accepted by its provider", ErrNotFound, h)
	}
	if s.cfg.Provider != nil && r.Provider == s.cfg.Provider.Address() && r.CertificateHash == certificate(s.h.ID()) {
		return r, "", nil
	}
	// A peer this node is connected to, or the one FindPeer names.
	for _, id := range s.h.Peers() {
		if certificate(id) == r.CertificateHash {
			return r, id, nil
		}
	}
	if s.cfg.FindPeer == nil {
		return r, "", fmt.Errorf("%w: no connected peer is the node lease %s's accept names", ErrUnreachable, h)
	}
	id, err := s.cfg.FindPeer(ctx, r.Provider, r.CertificateHash)
	if err != nil {
		return r, "", fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	if certificate(id) != r.CertificateHash {
		return r, "", fmt.Errorf("%w: peer %s is not the node the accept names", ErrUnreachable, id)
	}
	return r, id, nil
}

// certificate is what a provider's accepts name for its node: SHA-256 of
// the node's peer ID.
func certificate(id peer.ID) ledger.Hash { return ledger.Hash(sha256.Sum256([]byte(id))) }

// Get returns lease h's VM: this node's record, or its provider's.
func (s *Service) Get(ctx context.Context, h ledger.Hash) (nodewire.VM, error) {
	if vm, ok := s.local(h); ok {
		return vm, nil
	}
	r, id, err := s.route(ctx, h)
	if err != nil {
		if errors.Is(err, ErrUnknownLease) {
			err = fmt.Errorf("%w: no lease %s", ErrNotFound, h)
		}
		return nodewire.VM{}, err
	}
	if id == "" {
		return nodewire.VM{}, fmt.Errorf("%w: lease %s has no VM yet (%s)", ErrNotFound, h, r.Status())
	}
	ans, st, err := s.remote(ctx, id, wireRequest{Op: opShow, Lease: h})
	if st != nil {
		st.Close()
	}
	if err != nil {
		return nodewire.VM{}, err
	}
	if ans.VM == nil || ans.VM.LeaseHash != h {
		return nodewire.VM{}, fmt.Errorf("%w: a malformed answer", ErrUnreachable)
	}
	return *ans.VM, nil
}

// Exec runs c's ExecRequest in lease c.Lease's machine, here or at its
// provider, which checks c's credential.
func (s *Service) Exec(ctx context.Context, c Call) (nodewire.ExecResult, error) {
	r, id, err := s.route(ctx, c.Lease)
	if err != nil {
		return nodewire.ExecResult{}, err
	}
	if id == "" {
		return s.execLocal(ctx, c)
	}
	if err := s.precheck(r, c); err != nil {
		return nodewire.ExecResult{}, err
	}
	ans, st, err := s.remote(ctx, id, wireRequest{Op: opExec, Lease: c.Lease, Target: c.Target, Authorization: c.Authorization, Body: c.Body})
	if st != nil {
		st.Close()
	}
	if err != nil {
		return nodewire.ExecResult{}, err
	}
	if ans.Result == nil {
		return nodewire.ExecResult{}, fmt.Errorf("%w: a malformed answer", ErrUnreachable)
	}
	return *ans.Result, nil
}

// Tunnel opens a byte stream to the guest port c.Target names (?port=N)
// of lease c.Lease's machine, here or through its provider, which checks
// c's credential. The caller closes it.
func (s *Service) Tunnel(ctx context.Context, c Call) (Stream, error) {
	r, id, err := s.route(ctx, c.Lease)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return s.tunnelLocal(ctx, c)
	}
	if err := s.precheck(r, c); err != nil {
		return nil, err
	}
	_, st, err := s.remote(ctx, id, wireRequest{Op: opTunnel, Lease: c.Lease, Target: c.Target, Authorization: c.Authorization})
	if err != nil {
		if st != nil {
			st.Close()
		}
		return nil, err
	}
	st.SetDeadline(time.Time{}) // a tunnel lasts as long as its ends keep it
	return st, nil
}

// Stream is a tunnel's end: a byte stream both ways that can be closed
// one way (CloseWrite: the other side reads EOF) or both.
type Stream interface {
	io.ReadWriteCloser
	CloseWrite() error
}

// How a tunnel's bytes travel (PathOf).
const (
	PathLocal   = "local"   // this node provides the lease
	PathDirect  = "direct"  // over a direct connection to the provider's node
	PathRelayed = "relayed" // through a relay: the provider's node is behind NAT, and hole punching has not (yet) given a direct connection
)

// PathOf says how the bytes of a stream Tunnel returned travel:
// PathLocal, PathDirect or PathRelayed.
func PathOf(st Stream) string {
	ns, ok := st.(network.Stream)
	switch {
	case !ok:
		return PathLocal
	case p2p.Relayed(ns):
		return PathRelayed
	}
	return PathDirect
}

// remote sends req to the provider's node and reads its answer; on
// success the stream is returned open, for a tunnel's bytes.
func (s *Service) remote(ctx context.Context, id peer.ID, req wireRequest) (*wireAnswer, network.Stream, error) {
	st, err := s.h.Open(ctx, id, protocol)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	if req.Op == opExec {
		st.SetDeadline(time.Now().Add(s.cfg.ExecTimeout + 20*time.Second))
	}
	stop := context.AfterFunc(ctx, func() { st.Reset() })
	defer stop()
	data, _ := json.Marshal(req)
	if err := writeFrame(st, data); err != nil {
		st.Reset()
		return nil, nil, fmt.Errorf("%w: sending: %v", ErrUnreachable, err)
	}
	if req.Op != opTunnel {
		st.CloseWrite()
	}
	data, err = readFrame(st, maxAnswerFrame)
	if err != nil {
		st.Reset()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf("%w: no answer: %v", ErrUnreachable, err)
	}
	ans := new(wireAnswer)
	if err := json.Unmarshal(data, ans); err != nil {
		st.Reset()
		return nil, nil, fmt.Errorf("%w: a malformed answer: %v", ErrUnreachable, err)
	}
	if ans.Status != http.StatusOK {
		st.Close()
		code := ans.Status
		if code < 400 || code > 599 {
			code = http.StatusBadGateway
		}
		return nil, nil, &StatusError{Code: code, Msg: "the provider's node: " + ans.Error}
	}
	return ans, st, nil
}

// serveStream answers another node's request on a lease this node
// provides.
func (s *Service) serveStream(st network.Stream) {
	defer st.Close()
	req, err := decodeRequest(st)
	if err != nil {
		s.answer(st, &wireAnswer{Status: http.StatusBadRequest, Error: "a malformed request: " + trim(err.Error())})
		st.Reset()
		return
	}
	// A command may run for ExecTimeout: the stream's deadline (the
	// host's 30 s) moves past it.
	st.SetDeadline(time.Now().Add(s.cfg.ExecTimeout + 15*time.Second))
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.ExecTimeout+10*time.Second)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { st.Reset() })
	defer stop()
	c := Call{Lease: req.Lease, Target: req.Target, Authorization: req.Authorization, Body: req.Body}
	fail := func(err error) {
		s.answer(st, &wireAnswer{Status: Status(err), Error: err.Error()})
	}
	// Only what this node provides: never a hop further.
	if _, id, err := s.route(ctx, req.Lease); err != nil || id != "" {
		if err == nil {
			err = fmt.Errorf("%w: this node does not provide lease %s", ErrNotFound, req.Lease)
		}
		fail(err)
		return
	}
	switch req.Op {
	case opShow:
		vm, ok := s.local(req.Lease)
		if !ok {
			fail(fmt.Errorf("%w: lease %s has no VM yet", ErrNotFound, req.Lease))
			return
		}
		s.answer(st, &wireAnswer{Status: http.StatusOK, VM: &vm})
	case opExec:
		res, err := s.execLocal(ctx, c)
		if err != nil {
			fail(err)
			return
		}
		s.answer(st, &wireAnswer{Status: http.StatusOK, Result: &res})
	case opTunnel:
		conn, err := s.tunnelLocal(ctx, c)
		if err != nil {
			fail(err)
			return
		}
		defer conn.Close()
		if err := s.answer(st, &wireAnswer{Status: http.StatusOK}); err != nil {
			return
		}
		stop()
		st.SetDeadline(time.Time{})
		Splice(st, conn)
	default:
		fail(fmt.Errorf("%w: op %q", ErrBadRequest, trim(req.Op)))
	}
}

// decodeRequest reads a request frame: strict JSON, a known op, a lease.
func decodeRequest(r io.Reader) (wireRequest, error) {
	var req wireRequest
	data, err := readFrame(r, maxRequestFrame)
	if err != nil {
		return req, err
	}
	if err := strictjson.Unmarshal(data, &req); err != nil {
		return req, err
	}
	switch req.Op {
	case opShow, opExec, opTunnel:
	default:
		return req, fmt.Errorf("op %q", trim(req.Op))
	}
	if req.Lease.IsZero() {
		return req, errors.New("no lease")
	}
	return req, nil
}

func (s *Service) answer(st network.Stream, a *wireAnswer) error {
	data, _ := json.Marshal(a)
	return writeFrame(st, data)
}

// Frames are a 4-byte big-endian length, then that many bytes.
func writeFrame(w io.Writer, data []byte) error {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	_, err := w.Write(append(n[:], data...))
	return err
}

// readFrame reads a frame of at most max bytes. Its buffer grows as the
// bytes arrive: a peer that sends only a length, on as many streams as it
// may open, holds the memory it sent, not the memory it claimed, until
// the stream's deadline.
func readFrame(r io.Reader, max int) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := int64(binary.BigEndian.Uint32(n[:]))
	if size > int64(max) {
		return nil, fmt.Errorf("a frame of %d bytes, more than %d", size, max)
	}
	data, err := io.ReadAll(io.LimitReader(r, size))
	if err == nil && int64(len(data)) < size {
		err = fmt.Errorf("a frame of %d bytes ended after %d: %w", size, len(data), io.ErrUnexpectedEOF)
	}
	return data, err
}

func trim(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// precheck refuses, before a stream to the provider is opened for it, a
// call whose credential the provider would refuse whatever its clock and
// memory of nonces: missing, malformed, by another key than the lease's
// access key, or not signing this request. The provider checks it all
// again (check), with the time and the nonce.
func (s *Service) precheck(r *ledger.LeaseRecord, c Call) error {
	cred, err := access.Parse(c.Authorization)
	if err != nil {
		return err
	}
	return cred.Authorizes(s.n.Network.Genesis.Hash, r.AccessKey, access.Request{Method: http.MethodPost, Target: c.Target, Body: c.Body})
}

// check admits call c on lease r's machine as the request target want:
// its credential by the lease's access key, and the target what the
// caller says it is (so a credential signed for one lease, operation or
// port never serves another).
func (s *Service) check(r *ledger.LeaseRecord, c Call, want string) (url.Values, error) {
	cred, err := access.Parse(c.Authorization)
	if err != nil {
		return nil, err
	}
	if err := s.guard.Check(cred, r.AccessKey, access.Request{Method: http.MethodPost, Target: c.Target, Body: c.Body}); err != nil {
		return nil, err
	}
	path, query, _ := strings.Cut(c.Target, "?")
	if path != want {
		return nil, fmt.Errorf("%w: the credential signs %s, not %s", ErrBadRequest, trim(path), want)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("%w: query: %v", ErrBadRequest, err)
	}
	return q, nil
}

// TunnelPort reads the guest port of a tunnel's query: port, 1 to 65535.
func TunnelPort(q url.Values) (int, error) {
	v := q.Get("port")
	p, err := strconv.Atoi(v)
	if err != nil || p < 1 || p > 65535 || len(q["port"]) != 1 {
		return 0, fmt.Errorf("%w: port must be one TCP port from 1 to 65535, got %q", ErrBadRequest, trim(v))
	}
	return p, nil
}

// ParseExec reads and checks an ExecRequest body.
func ParseExec(body []byte) (nodewire.ExecRequest, error) {
	var req nodewire.ExecRequest
	if err := strictjson.Object(bytes.NewReader(body), &req); err != nil {
		return req, fmt.Errorf("%w: the body must be one ExecRequest: %v", ErrBadRequest, strictjson.Explain(err))
	}
	switch {
	case strings.TrimSpace(req.Command) == "":
		return req, fmt.Errorf("%w: command is required", ErrBadRequest)
	case len(req.Command) > nodewire.MaxCommandBytes:
		return req, fmt.Errorf("%w: command is %d bytes, more than %d", ErrBadRequest, len(req.Command), nodewire.MaxCommandBytes)
	case strings.IndexByte(req.Command, 0) >= 0:
		return req, fmt.Errorf("%w: command holds a NUL byte", ErrBadRequest)
	}
	return req, nil
}

// machine returns lease h's running machine and takes one of its slots
// of kind (tunnels or execs); release gives it back.
func (s *Service) machine(h ledger.Hash, tunnel bool) (m Machine, release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.machines[h]
	if !ok {
		rec, have := s.records[h]
		switch {
		case !have:
			return nil, nil, fmt.Errorf("%w: lease %s has no VM yet", ErrNotFound, h)
		case s.stopping[h]:
			return nil, nil, fmt.Errorf("%w: it is being stopped (its status says stopped once it is)", ErrNotRunning)
		}
		return nil, nil, fmt.Errorf("%w: it is %s", ErrNotRunning, rec.VM.Status)
	}
	u := s.inUse[h]
	if u == nil {
		u = &use{}
		s.inUse[h] = u
	}
	if tunnel && u.tunnels >= s.cfg.MaxTunnels || !tunnel && u.execs >= s.cfg.MaxExecs {
		return nil, nil, fmt.Errorf("%w: %d tunnels and %d commands under way", ErrBusy, u.tunnels, u.execs)
	}
	if tunnel {
		u.tunnels++
	} else {
		u.execs++
	}
	return m, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if tunnel {
			u.tunnels--
		} else {
			u.execs--
		}
		if u.tunnels == 0 && u.execs == 0 && s.inUse[h] == u {
			delete(s.inUse, h)
		}
	}, nil
}

// goneWait is how long a failed exec waits for its machine to exit, to
// tell a guest that went away from a fault of the agent's connection.
const goneWait = 2 * time.Second

// execLocal runs c on a machine of this provider.
func (s *Service) execLocal(ctx context.Context, c Call) (nodewire.ExecResult, error) {
	r, found, err := ledger.GetLease(s.n.Store, c.Lease)
	if err != nil || !found {
		return nodewire.ExecResult{}, cmpErr(err, fmt.Errorf("%w: %s", ErrUnknownLease, c.Lease))
	}
	q, err := s.check(r, c, "/vms/"+c.Lease.String()+"/exec")
	if err != nil {
		return nodewire.ExecResult{}, err
	}
	if len(q) > 0 {
		return nodewire.ExecResult{}, fmt.Errorf("%w: exec takes no query", ErrBadRequest)
	}
	req, err := ParseExec(c.Body)
	if err != nil {
		return nodewire.ExecResult{}, err
	}
	m, release, err := s.machine(c.Lease, false)
	if err != nil {
		return nodewire.ExecResult{}, err
	}
	defer release()
	// The guest's agent ends the command at ExecTimeout by the guest's
	// clock, which a loaded host slows (a TCG guest most): past a grace,
	// the answer is a time-out from here, not a silence that outlasts the
	// forwarding node's wait.
	ectx, cancel := context.WithTimeout(ctx, s.cfg.ExecTimeout+execGrace)
	defer cancel()
	res, err := m.Exec(ectx, []string{"/bin/sh", "-c", req.Command}, nil, s.cfg.ExecTimeout)
	if err != nil && ectx.Err() != nil && ctx.Err() == nil {
		s.log.Warn("exec: the guest did not answer by the command's time", "lease", c.Lease, "timeout", s.cfg.ExecTimeout+execGrace)
		return nodewire.ExecResult{ExitCode: -1, TimedOut: true,
			Stderr: fmt.Sprintf("lattice: the guest did not answer within %s", s.cfg.ExecTimeout+execGrace)}, nil
	}
	if err != nil {
		// A command that powers the guest off or reboots it (as Compute
		// on leases' reboot does) loses its answer with the guest:
		// that is the VM going away, not a fault of this node.
		select {
		case <-m.Done():
			return nodewire.ExecResult{}, fmt.Errorf("%w: it stopped during the command (%v)", ErrNotRunning, err)
		case <-time.After(goneWait):
		case <-ctx.Done():
		}
		return nodewire.ExecResult{}, fmt.Errorf("exec: %w", err)
	}
	out := nodewire.ExecResult{ExitCode: res.ExitCode, Stdout: string(res.Stdout), Stderr: string(res.Stderr),
		Truncated: res.StdoutTruncated || res.StderrTruncated, TimedOut: res.TimedOut}
	if res.Error != "" {
		out.Stderr += res.Error
	}
	return out, nil
}

// execGrace is how long past ExecTimeout the provider waits for the
// guest's answer to a command; the forwarding node waits 10 s more
// (serveStream), its HTTP client longer still.
const execGrace = 5 * time.Second

// tunnelLocal connects c to a port of a machine of this provider.
func (s *Service) tunnelLocal(ctx context.Context, c Call) (Stream, error) {
	r, found, err := ledger.GetLease(s.n.Store, c.Lease)
	if err != nil || !found {
		return nil, cmpErr(err, fmt.Errorf("%w: %s", ErrUnknownLease, c.Lease))
	}
	q, err := s.check(r, c, "/tunnel/"+c.Lease.String()+"/tcp")
	if err != nil {
		return nil, err
	}
	port, err := TunnelPort(q)
	if err != nil {
		return nil, err
	}
	m, release, err := s.machine(c.Lease, true)
	if err != nil {
		return nil, err
	}
	conn, err := m.Dial(ctx, port)
	if err != nil {
		release()
		return nil, &StatusError{Code: http.StatusBadGateway, Msg: fmt.Sprintf("the guest's port %d: %v", port, err)}
	}
	cw, ok := conn.(Stream)
	if !ok {
		conn.Close()
		release()
		return nil, errors.New("vmnet: the driver's connections cannot half-close")
	}
	rel := &released{Stream: cw}
	s.mu.Lock()
	u := s.inUse[c.Lease]
	if u.open == nil {
		u.open = map[*released]bool{}
	}
	u.open[rel] = true
	s.mu.Unlock()
	rel.release = func() {
		s.mu.Lock()
		delete(u.open, rel)
		s.mu.Unlock()
		release()
	}
	return rel, nil
}

// released gives a machine's slot back when its stream closes or is
// aborted.
type released struct {
	Stream
	release func()
	once    sync.Once
}

func (r *released) Close() error {
	err := r.Stream.Close()
	r.once.Do(r.release)
	return err
}

// Reset aborts the guest connection (see Abort).
func (r *released) Reset() error {
	err := Abort(r.Stream)
	r.once.Do(r.release)
	return err
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}
