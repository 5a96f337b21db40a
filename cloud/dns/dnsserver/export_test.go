package dnsserver

import "github.com/miekg/dns"

// HandlePacket is handlePacket, for the fuzz target: a datagram's bytes
// as the batched UDP reader hands them over.
func HandlePacket(s *Server, w dns.ResponseWriter, data []byte) { s.handlePacket(w, data) }
