package ledger

import "strconv"

// parseCanonical decodes a block written the way the API writes blocks: one
// object of known, distinct, exactly spelled keys whose values are plain
// strings (no escapes) or integers, and nothing after it. It declines
// (ok=false) anything else, including arrays, objects and null, so that
// encoding/json decides every unusual input and words every error; it never
// accepts what encoding/json would refuse, nor reads a value differently.
//
// It exists because reflection-based decoding costs about as much as the
// rest of an HTTP submission's non-cryptographic work.
func parseCanonical(data []byte) (b *Block, ok bool) {
	p := scanner{data: data}
	p.space()
	if !p.take('{') {
		return nil, false
	}
	b = new(Block)
	var seen uint32
	p.space()
	if p.take('}') {
		return p.end(b)
	}
	for {
		p.space()
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if !p.take(':') {
			return nil, false
		}
		p.space()
		bit, ok := canonicalField(b, &p, k)
		if !ok || seen&bit != 0 {
			return nil, false
		}
		seen |= bit
		p.space()
		if p.take('}') {
			return p.end(b)
		}
		if !p.take(',') {
			return nil, false
		}
	}
}

// canonicalField reads the value of key k into b and returns the key's bit,
// or ok=false to decline.
func canonicalField(b *Block, p *scanner, k []byte) (bit uint32, ok bool) {
	text := func(bit uint32, u interface{ UnmarshalText([]byte) error }) (uint32, bool) {
		v, ok := p.str()
		if !ok || u.UnmarshalText(v) != nil {
			return 0, false
		}
		return bit, true
	}
	u32 := func(bit uint32, dst *uint32) (uint32, bool) {
		if p.i < len(p.data) && p.data[p.i] == '-' {
			return 0, false // encoding/json refuses even -0 for unsigned fields
		}
		v, ok := p.int()
		if !ok || v > 1<<32-1 {
			return 0, false
		}
		*dst = uint32(v)
		return bit, true
	}
	switch string(k) {
	case "type":
		return text(1<<0, &b.Type)
	case "account":
		return text(1<<1, &b.Account)
	case "previous":
		return text(1<<2, &b.Previous)
	case "balance":
		return text(1<<3, &b.Balance)
	case "asset":
		return text(1<<4, &b.Asset)
	case "timestamp":
		v, ok := p.int()
		b.Timestamp = v
		return 1 << 5, ok
	case "hash":
		return text(1<<6, &b.Hash)
	case "signature":
		return text(1<<7, &b.Signature)
	case "representative":
		return text(1<<8, &b.Representative)
	case "pow_nonce":
		v, ok := p.int()
		b.PowNonce = v
		return 1 << 9, ok
	case "destination":
		return text(1<<10, &b.Destination)
	case "amount":
		return text(1<<11, &b.Amount)
	case "source":
		return text(1<<12, &b.Source)
	case "vcpus":
		return u32(1<<13, &b.VCPUs)
	case "memory_mb":
		return u32(1<<14, &b.MemoryMB)
	case "disk_gb":
		return u32(1<<15, &b.DiskGB)
	case "duration":
		return u32(1<<16, &b.Duration)
	case "access_pub_key":
		return text(1<<17, &b.AccessPubKey)
	case "certificate_hash":
		return text(1<<18, &b.CertificateHash)
	case "statechain_index":
		if p.i < len(p.data) && p.data[p.i] == '-' {
			return 0, false // encoding/json refuses even -0 for unsigned fields
		}
		v, ok := p.int() // beyond int64: encoding/json's business
		b.StateChainIndex = uint64(v)
		return 1 << 19, ok
	}
	// attestations, keyset, signatures, and anything unknown or spelled
	// differently: encoding/json's business.
	return 0, false
}

type scanner struct {
	data []byte
	i    int
}

func (p *scanner) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *scanner) take(c byte) bool {
	if p.i < len(p.data) && p.data[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string without escapes or control characters and returns
// its bytes (a slice of the input).
func (p *scanner) str() ([]byte, bool) {
	if !p.take('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			return p.data[start : p.i-1], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false // escapes, control bytes and non-ASCII: decline
		}
		p.i++
	}
	return nil, false
}

// int reads an integer literal: an optional minus, then 0 or a non-zero
// digit and more digits, within int64, with no fraction or exponent.
func (p *scanner) int() (int64, bool) {
	start := p.i
	p.take('-')
	digits := p.i
	for p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
		p.i++
	}
	n := p.i - digits
	if n == 0 || (n > 1 && p.data[digits] == '0') {
		return 0, false
	}
	if p.i < len(p.data) {
		switch p.data[p.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	v, err := strconv.ParseInt(string(p.data[start:p.i]), 10, 64)
	return v, err == nil
}

// end accepts b if only whitespace follows.
func (p *scanner) end(b *Block) (*Block, bool) {
	p.space()
	if p.i != len(p.data) {
		return nil, false
	}
	return b, true
}
