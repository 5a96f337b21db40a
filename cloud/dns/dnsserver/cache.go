package dnsserver

import (
	"encoding/binary"
	"hash/maphash"
	"sync"

	"github.com/miekg/dns"
)

// The packet cache. An authoritative answer over UDP depends only on the
// query's bytes after its ID (flags, question, EDNS) and on the zones: the
// same bytes get the same answer until a zone changes. So the UDP path
// keeps each answer it packed, keyed by those bytes, and answers a repeat
// by copying it and setting the query's ID, without unpacking the query or
// packing a message. Update empties the cache; an answer computed before
// an Update is not stored after it (the generation check). PowerDNS
// answers from a packet cache the same way.

const (
	cacheShards   = 16
	cacheMaxBytes = 32 << 20 // keys and answers, all shards; a full shard is emptied and starts again
	cacheMaxQuery = 512      // longer queries are not cached
)

type packetCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

type cacheShard struct {
	mu      sync.Mutex
	gen     uint64
	entries map[string]cachedAnswer
	bytes   int // of keys and answers
}

type cachedAnswer struct {
	wire  []byte // the answer, with the ID of the query that made it
	rcode int
}

func newPacketCache() *packetCache {
	c := &packetCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].entries = map[string]cachedAnswer{}
	}
	return c
}

// cacheable reports whether a query may be answered from the cache: a
// plain QUERY with one question, small enough to be a key.
func cacheable(q []byte) bool {
	if len(q) < 12 || len(q) > cacheMaxQuery {
		return false
	}
	bits := binary.BigEndian.Uint16(q[2:])
	return bits&(1<<15) == 0 && (bits>>11)&0xF == dns.OpcodeQuery && binary.BigEndian.Uint16(q[4:]) == 1 &&
		binary.BigEndian.Uint16(q[6:]) == 0 && binary.BigEndian.Uint16(q[8:]) == 0
}

func (c *packetCache) shard(key []byte) *cacheShard {
	return &c.shards[maphash.Bytes(c.seed, key)%cacheShards]
}

// answer writes into buf the cached answer to query q, with q's ID, and
// returns it and its rcode; ok is false on a miss.
func (c *packetCache) answer(q, buf []byte) (wire []byte, rcode int, gen uint64, ok bool) {
	key := q[2:]
	sh := c.shard(key)
	sh.mu.Lock()
	a, ok := sh.entries[string(key)]
	gen = sh.gen
	sh.mu.Unlock()
	if !ok {
		return nil, 0, gen, false
	}
	wire = append(buf[:0], a.wire...)
	copy(wire, q[:2])
	return wire, a.rcode, gen, true
}

// store keeps the answer to q unless the zones changed since gen was read.
// Only NOERROR, NXDOMAIN and REFUSED answers are kept.
func (c *packetCache) store(q, wire []byte, gen uint64) {
	if len(wire) < 12 {
		return
	}
	rcode := int(wire[3] & 0xF)
	if rcode != dns.RcodeSuccess && rcode != dns.RcodeNameError && rcode != dns.RcodeRefused {
		return
	}
	key := q[2:]
	sh := c.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.gen != gen {
		return
	}
	size := len(key) + len(wire)
	if sh.bytes+size > cacheMaxBytes/cacheShards {
		sh.entries, sh.bytes = map[string]cachedAnswer{}, 0
	}
	if old, ok := sh.entries[string(key)]; ok {
		sh.bytes -= len(key) + len(old.wire)
	}
	sh.entries[string(key)] = cachedAnswer{wire: append([]byte(nil), wire...), rcode: rcode}
	sh.bytes += size
}

// clear empties the cache: the zones changed.
func (c *packetCache) clear() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		sh.gen++
		sh.entries, sh.bytes = map[string]cachedAnswer{}, 0
		sh.mu.Unlock()
	}
}
