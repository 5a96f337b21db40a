package dnsserver

import (
	"encoding/binary"
	"errors"
	"net"

	"github.com/miekg/dns"
	"golang.org/x/net/ipv4"
)

// udpBatch is how many datagrams one system call reads or writes.
const udpBatch = 32

// batchable reports whether pc can be served by serveUDP: a UDP socket
// bound to one address, whose answers leave from the address the queries
// came to. A socket bound to every address (0.0.0.0, ::) is left to
// miekg/dns, which reads each query's destination from a control message
// to answer from it.
func batchable(pc net.PacketConn) bool {
	_, ok := pc.(*net.UDPConn)
	a, isUDP := pc.LocalAddr().(*net.UDPAddr)
	return ok && isUDP && !a.IP.IsUnspecified()
}

// serveUDP answers the queries that come to pc until it is closed: it
// reads up to udpBatch datagrams a system call (recvmmsg on Linux),
// answers them in this goroutine, and writes the answers with one system
// call (sendmmsg). Over loopback and fast networks the system calls, not
// the answering, are what a query costs; batching them is what NSD does.
func (s *Server) serveUDP(pc net.PacketConn) error {
	conn := ipv4.NewPacketConn(pc) // its batches serve IPv6 sockets too
	in := make([]ipv4.Message, udpBatch)
	for i := range in {
		in[i].Buffers = [][]byte{make([]byte, dns.MaxMsgSize)}
	}
	out := make([]ipv4.Message, 0, udpBatch)
	bufs := make([][]byte, udpBatch)
	for i := range bufs {
		bufs[i] = make([]byte, 4096) // PackBuffer packs into len(buf)
	}
	w := &batchWriter{local: pc.LocalAddr()}
	for {
		n, err := conn.ReadBatch(in, 0)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		out = out[:0]
		for i := range in[:n] {
			addr, ok := in[i].Addr.(*net.UDPAddr)
			if !ok || addr.Port == 0 {
				continue // nothing can be sent back to port 0
			}
			q := in[i].Buffers[0][:in[i].N]
			cached := cacheable(q)
			var gen uint64
			if cached {
				wire, rcode, g, ok := s.cache.answer(q, bufs[len(out)])
				if ok {
					s.countCached(rcode)
					out = append(out, ipv4.Message{Buffers: [][]byte{wire}, Addr: addr})
					continue
				}
				gen = g
			}
			w.remote, w.buf, w.packed = addr, bufs[len(out)], nil
			s.handlePacket(w, q)
			if w.packed != nil {
				if cached {
					s.cache.store(q, w.packed, gen)
				}
				out = append(out, ipv4.Message{Buffers: [][]byte{w.packed}, Addr: addr})
			}
		}
		for len(out) > 0 {
			k, err := conn.WriteBatch(out, 0)
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return nil
				}
				// The first unsent answer cannot go (a destination the
				// kernel refuses): drop it alone, not the others.
				if k >= len(out) {
					break
				}
				s.opts.Logger.Debug("dns: writing an answer", "err", err, "to", out[k].Addr.String())
				k++
			}
			out = out[k:]
		}
	}
}

// countCached counts an answer from the packet cache as ServeDNS would
// have counted it.
func (s *Server) countCached(rcode int) {
	s.queries.Add(1)
	switch rcode {
	case dns.RcodeRefused:
		s.refused.Add(1)
	case dns.RcodeNameError:
		s.notFound.Add(1)
	}
}

// handlePacket answers one datagram as miekg/dns's server would: a
// response or a runt is ignored, a message that is not a query or a
// notify gets NOTIMP, a malformed one FORMERR.
func (s *Server) handlePacket(w dns.ResponseWriter, data []byte) {
	if len(data) < 12 {
		return
	}
	h := dns.Header{
		Id: binary.BigEndian.Uint16(data), Bits: binary.BigEndian.Uint16(data[2:]),
		Qdcount: binary.BigEndian.Uint16(data[4:]), Ancount: binary.BigEndian.Uint16(data[6:]),
		Nscount: binary.BigEndian.Uint16(data[8:]), Arcount: binary.BigEndian.Uint16(data[10:]),
	}
	reply := func(rcode int) {
		m := new(dns.Msg)
		m.Id, m.Response, m.Opcode, m.Rcode = h.Id, true, int(h.Bits>>11)&0xF, rcode
		w.WriteMsg(m)
	}
	switch dns.DefaultMsgAcceptFunc(h) {
	case dns.MsgIgnore:
		return
	case dns.MsgReject:
		reply(dns.RcodeFormatError)
		return
	case dns.MsgRejectNotImplemented:
		reply(dns.RcodeNotImplemented)
		return
	}
	req := new(dns.Msg)
	if err := req.Unpack(data); err != nil {
		reply(dns.RcodeFormatError)
		return
	}
	s.ServeDNS(w, req)
}

// batchWriter is the dns.ResponseWriter of one datagram of a batch: it
// packs the answer into buf for serveUDP to send with the others.
type batchWriter struct {
	local  net.Addr
	remote *net.UDPAddr
	buf    []byte
	packed []byte
}

func (w *batchWriter) LocalAddr() net.Addr  { return w.local }
func (w *batchWriter) RemoteAddr() net.Addr { return w.remote }

func (w *batchWriter) WriteMsg(m *dns.Msg) error {
	b, err := m.PackBuffer(w.buf)
	if err != nil {
		return err
	}
	w.packed = b
	return nil
}

func (w *batchWriter) Write(b []byte) (int, error) {
	w.packed = append(w.buf[:0], b...)
	return len(b), nil
}

func (w *batchWriter) Close() error        { return nil }
func (w *batchWriter) TsigStatus() error   { return nil }
func (w *batchWriter) TsigTimersOnly(bool) {}
func (w *batchWriter) Hijack()             {}
