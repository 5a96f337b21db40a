// Package dnsserver is the platform's authoritative DNS server, on UDP and
// TCP (github.com/miekg/dns). It answers from the zones' snapshots (package
// dnszone does the answering), which a change through the API replaces at
// once; transfers zones (AXFR, and IXFR answered with the whole zone) to
// the addresses allowed; and sends NOTIFY to the configured secondaries
// after every change, so that NSD, Knot, BIND or PowerDNS can serve the
// zones beside it.
package dnsserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/net/netutil"

	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

// UDPSize is the largest UDP answer the server sends, and the size it
// advertises in EDNS: 1232 bytes, which crosses any path without IP
// fragmentation (the DNS flag day 2020 value).
const UDPSize = 1232

// Options configure a server.
type Options struct {
	// TransferFrom are the networks allowed to transfer zones (AXFR,
	// IXFR); nobody else may.
	TransferFrom []netip.Prefix
	// Notify are the secondaries (host:port) told of every change to a
	// zone (RFC 1996); they then transfer it, if TransferFrom lets them.
	Notify []string
	Logger *slog.Logger
}

// Server answers for the zones it holds.
type Server struct {
	opts  Options
	zones atomic.Pointer[map[string]*dnszone.Snapshot] // by name with a final dot

	notifiers []*notifier // one per secondary

	notifyFrom net.IP // the address NOTIFYs leave from; nil: the kernel's choice

	queries  atomic.Uint64
	refused  atomic.Uint64
	notFound atomic.Uint64

	cache *packetCache // UDP answers by query (cache.go)
}

// New returns a server with no zones: Update adds them.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{opts: opts, cache: newPacketCache()}
	for _, t := range opts.Notify {
		s.notifiers = append(s.notifiers, &notifier{target: t, pending: map[string]bool{}, wake: make(chan struct{}, 1)})
	}
	s.zones.Store(&map[string]*dnszone.Snapshot{})
	return s
}

// Update sets zone name's snapshot (nil removes the zone) and schedules a
// NOTIFY of its secondaries. Its signature fits dnsstore.Store.Watch.
func (s *Server) Update(name string, snap *dnszone.Snapshot) {
	key := dns.Fqdn(name)
	for {
		old := s.zones.Load()
		next := make(map[string]*dnszone.Snapshot, len(*old)+1)
		for k, v := range *old {
			next[k] = v
		}
		if snap == nil {
			delete(next, key)
		} else {
			next[key] = snap
		}
		if s.zones.CompareAndSwap(old, &next) {
			break
		}
	}
	s.cache.clear() // after the swap: an answer from the old zones made meanwhile is not stored
	if snap != nil {
		for _, n := range s.notifiers {
			n.add(name)
		}
	}
}

// zoneFor finds the zone qname is in: the longest zone name it ends with.
func (s *Server) zoneFor(qname string) *dnszone.Snapshot {
	zones := *s.zones.Load()
	for name := qname; name != ""; {
		if z := zones[name]; z != nil {
			return z
		}
		i := strings.IndexByte(name, '.')
		if i < 0 || i == len(name)-1 {
			break
		}
		name = name[i+1:]
	}
	return nil
}

// ServeDNS answers one message.
func (s *Server) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	s.queries.Add(1)
	// miekg/dns does not recover a handler's panic: one packet must never
	// take the platform down.
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("dns: handler panic", "panic", p, "remote", w.RemoteAddr().String())
			m := new(dns.Msg)
			m.SetRcodeFormatError(r)
			m.Rcode = dns.RcodeServerFailure
			w.WriteMsg(m)
		}
	}()
	if len(r.Question) != 1 {
		// The header promised a question the packet does not hold.
		m := new(dns.Msg)
		m.SetRcodeFormatError(r)
		w.WriteMsg(m)
		return
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Compress = true
	tcp := isTCP(w)
	size := dns.MinMsgSize
	if tcp {
		size = dns.MaxMsgSize
	}
	opt := r.IsEdns0()
	if opt != nil {
		// Every answer to an EDNS query carries our OPT (RFC 6891 §6.1.1).
		m.SetEdns0(UDPSize, false)
		if opt.Version() != 0 {
			m.Rcode = dns.RcodeBadVers // its upper bits go in the OPT record
			w.WriteMsg(m)
			return
		}
		if !tcp {
			size = max(dns.MinMsgSize, min(int(opt.UDPSize()), UDPSize))
		}
	}
	refuse := func() {
		s.refused.Add(1)
		m.Rcode = dns.RcodeRefused
		w.WriteMsg(m)
	}
	if r.Opcode == dns.OpcodeNotify {
		refuse() // we are the primary: nobody notifies us
		return
	}
	q := r.Question[0]
	qname := dnszone.LowerASCII(q.Name)
	var z *dnszone.Snapshot
	if !strings.Contains(qname, `\`) {
		// A name with an escaped dot or other escape holds a label no
		// zone here can have; cutting it at its dots would misplace it.
		z = s.zoneFor(qname)
	}
	if z == nil || q.Qclass != dns.ClassINET && q.Qclass != dns.ClassANY {
		refuse()
		return
	}
	if r.IsTsig() != nil {
		// No TSIG keys are configured: a signed request cannot be
		// verified (RFC 8945 §5.2 answers NOTAUTH).
		m.Rcode = dns.RcodeNotAuth
		w.WriteMsg(m)
		return
	}
	switch q.Qtype {
	case dns.TypeAXFR, dns.TypeIXFR:
		if !tcp || !s.mayTransfer(w.RemoteAddr()) {
			refuse()
			return
		}
		if qname != dns.Fqdn(z.Name) {
			// A zone is transferred by its apex's name only (RFC 5936 §2.2.1).
			m.Rcode = dns.RcodeNotAuth
			w.WriteMsg(m)
			return
		}
		s.transfer(w, r, z)
		return
	}
	ans := z.Answer(qname, q.Qtype)
	if q.Qtype == dns.TypeANY && !tcp && len(ans.Answer) > 0 {
		// ANY over UDP gets one RRset (RFC 8482): a small question must
		// not buy a large answer for someone whose address it forges.
		first := ans.Answer[0].Header().Rrtype
		n := 0
		for n < len(ans.Answer) && ans.Answer[n].Header().Rrtype == first {
			n++
		}
		ans.Answer, ans.Extra = ans.Answer[:n], nil
	}
	m.Rcode, m.Authoritative = ans.Rcode, ans.Authoritative
	m.Answer, m.Ns = ans.Answer, ans.Ns
	m.Extra = append(ans.Extra, m.Extra...) // the OPT, if any, last
	if ans.Rcode == dns.RcodeNameError {
		s.notFound.Add(1)
	}
	if len(ans.Extra) > 0 && m.Len() > size {
		// The additional records are a courtesy: drop them before
		// anything that was asked for, and say nothing was cut (TC is
		// for a cut answer, RFC 2181 §9).
		m.Extra = m.Extra[len(ans.Extra):]
	}
	if !tcp && m.Len() > size {
		// Cut over UDP: the TC bit alone, with no records, so that a
		// forged source address gets no more than it sent (a record set
		// of any size is a tenant's to make); the client asks over TCP.
		m.Truncated = true
		m.Answer, m.Ns = nil, nil
		m.Extra = opts(m)
	} else {
		m.Truncate(size) // over TCP, 64 KiB
	}
	if err := w.WriteMsg(m); err != nil {
		s.opts.Logger.Debug("dns: writing an answer", "err", err, "remote", w.RemoteAddr().String())
	}
}

func isTCP(w dns.ResponseWriter) bool {
	_, ok := w.RemoteAddr().(*net.TCPAddr)
	return ok
}

// mayTransfer reports whether addr may transfer zones.
func (s *Server) mayTransfer(addr net.Addr) bool {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return false
	}
	for _, p := range s.opts.TransferFrom {
		if p.Contains(ap.Addr().Unmap()) {
			return true
		}
	}
	return false
}

// transfer sends zone z whole: the SOA, every record, the SOA again, in
// messages of at most transferChunk bytes (uncompressed: a TCP message
// holds 64 KiB at most). An IXFR gets the same (RFC 1995 §4
// lets a server answer one with the whole zone).
func (s *Server) transfer(w dns.ResponseWriter, r *dns.Msg, z *dnszone.Snapshot) {
	soa := z.SOA()
	if q := r.Question[0]; q.Qtype == dns.TypeIXFR && len(r.Ns) == 1 {
		if have, ok := r.Ns[0].(*dns.SOA); ok && have.Serial == soa.Serial {
			// The secondary is current: one SOA says so.
			m := new(dns.Msg)
			m.SetReply(r)
			m.Authoritative = true
			m.Answer = []dns.RR{soa}
			w.WriteMsg(m)
			return
		}
	}
	ch := make(chan *dns.Envelope)
	done := make(chan error, 1)
	go func() { done <- new(dns.Transfer).Out(w, r, ch) }()
	rrs := append([]dns.RR{soa}, z.Records()...)
	rrs = append(rrs, soa)
	for len(rrs) > 0 {
		n, size := 0, 0
		for n < len(rrs) && (n == 0 || size+dns.Len(rrs[n]) <= transferChunk) {
			size += dns.Len(rrs[n])
			n++
		}
		select {
		case ch <- &dns.Envelope{RR: rrs[:n]}:
		case err := <-done:
			s.opts.Logger.Warn("dns: zone transfer cut off", "zone", z.Name, "remote", w.RemoteAddr().String(), "err", err)
			return
		}
		rrs = rrs[n:]
	}
	close(ch)
	if err := <-done; err != nil {
		s.opts.Logger.Warn("dns: zone transfer failed", "zone", z.Name, "remote", w.RemoteAddr().String(), "err", err)
		return
	}
	s.opts.Logger.Info("dns: zone transferred", "zone", z.Name, "serial", soa.Serial, "remote", w.RemoteAddr().String())
}

// MaxTCP bounds the TCP connections served at once (NSD's tcp-count is 100).
const MaxTCP = 256

// localIP is the address a listener is bound to, nil for every address.
func localIP(a net.Addr) net.IP {
	if t, ok := a.(*net.TCPAddr); ok && !t.IP.IsUnspecified() {
		return t.IP
	}
	return nil
}

// transferChunk bounds the records of one transfer message, in bytes.
const transferChunk = 32 << 10

// Serve answers on udp and tcp, which the caller has bound, and on more
// UDP sockets of the same port if given (see Listen), and notifies
// secondaries, until ctx ends; then it stops the listeners and returns.
func (s *Server) Serve(ctx context.Context, udp net.PacketConn, tcp net.Listener, moreUDP ...net.PacketConn) error {
	accept := func(h dns.Header) dns.MsgAcceptAction { return dns.DefaultMsgAcceptFunc(h) }
	// Each TCP connection holds a file descriptor of the whole platform's:
	// past MaxTCP at once, more wait in the kernel's backlog.
	s.notifyFrom = localIP(tcp.Addr())
	servers := []*dns.Server{
		{Listener: netutil.LimitListener(tcp, MaxTCP), Handler: s, MsgAcceptFunc: accept, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
			IdleTimeout: func() time.Duration { return 10 * time.Second }},
	}
	var batched []net.PacketConn
	for _, pc := range append([]net.PacketConn{udp}, moreUDP...) {
		if batchable(pc) {
			batched = append(batched, pc)
			continue
		}
		servers = append(servers, &dns.Server{PacketConn: pc, Handler: s, MsgAcceptFunc: accept, UDPSize: UDPSize})
	}
	errs := make(chan error, len(servers)+len(batched))
	var readers sync.WaitGroup
	for _, pc := range batched {
		readers.Add(1)
		go func() {
			defer readers.Done()
			errs <- s.serveUDP(pc)
		}()
	}
	defer func() {
		for _, pc := range batched {
			pc.Close()
		}
		readers.Wait()
	}()
	started := make(chan struct{}, len(servers))
	for _, srv := range servers {
		srv.NotifyStartedFunc = func() { started <- struct{}{} }
		go func() { errs <- srv.ActivateAndServe() }()
	}
	// Every server must have started before any can be shut down: a
	// shutdown before the start is refused, and the server would then
	// run on for good.
	var err error
	running := 0
	for running < len(servers) && err == nil {
		select {
		case <-started:
			running++
		case err = <-errs:
		}
	}
	notified := make(chan struct{})
	nctx, stopNotify := context.WithCancel(ctx)
	go func() {
		defer close(notified)
		s.notifyLoop(nctx)
	}()
	if err == nil {
		select {
		case <-ctx.Done():
		case err = <-errs:
		}
	}
	stopNotify()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range servers {
		srv.ShutdownContext(sctx) // one that failed to start answers an error: nothing to stop
	}
	<-notified
	return err
}

// notifier sends the NOTIFYs of one secondary, so that a silent one
// delays nobody else's.
type notifier struct {
	target  string
	mu      sync.Mutex
	pending map[string]bool // zones changed since they were last sent
	wake    chan struct{}
}

func (n *notifier) add(zone string) {
	n.mu.Lock()
	n.pending[zone] = true
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *notifier) take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	zones := make([]string, 0, len(n.pending))
	for z := range n.pending {
		zones = append(zones, z)
	}
	clear(n.pending)
	return zones
}

// notifyLoop sends the NOTIFYs that Update schedules until ctx ends: each
// secondary's in turn, zone by zone, changes made meanwhile coalesced.
func (s *Server) notifyLoop(ctx context.Context) {
	var wg sync.WaitGroup
	for _, n := range s.notifiers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case <-n.wake:
				}
				for _, zone := range n.take() {
					if err := s.notify(ctx, zone, n.target); err != nil && ctx.Err() == nil {
						s.opts.Logger.Warn("dns: a secondary did not answer our NOTIFY", "zone", zone, "secondary", n.target, "err", err)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// notify tells target that zone changed, over UDP, trying up to 5 times
// 2 s apart (RFC 1996 §3.6), until it answers.
func (s *Server) notify(ctx context.Context, zone, target string) error {
	m := new(dns.Msg)
	m.SetNotify(dns.Fqdn(zone))
	m.Authoritative = true
	if z := s.zoneFor(dns.Fqdn(zone)); z != nil {
		m.Answer = []dns.RR{z.SOA()}
	}
	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	if s.notifyFrom != nil {
		// From the address the secondary knows us by (its allow-notify).
		c.Dialer = &net.Dialer{LocalAddr: &net.UDPAddr{IP: s.notifyFrom}}
	}
	var err error
	for try := 0; try < 5; try++ {
		var in *dns.Msg
		in, _, err = c.ExchangeContext(ctx, m, target)
		if err == nil {
			if in.Rcode != dns.RcodeSuccess {
				return fmt.Errorf("answered %s", dns.RcodeToString[in.Rcode])
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(2 * time.Second):
			}
		}
	}
	return err
}

// Stats are the server's counters since it started.
type Stats struct {
	Queries, Refused, NXDomain uint64
	Zones                      int
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	return Stats{Queries: s.queries.Load(), Refused: s.refused.Load(), NXDomain: s.notFound.Load(), Zones: len(*s.zones.Load())}
}

// opts are m's OPT records: its last additional record, if it is one
// (the server appends the OPT last).
func opts(m *dns.Msg) []dns.RR {
	if n := len(m.Extra); n > 0 {
		if _, ok := m.Extra[n-1].(*dns.OPT); ok {
			return m.Extra[n-1:]
		}
	}
	return nil
}
