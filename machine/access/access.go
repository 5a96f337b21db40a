// Package access is the credential of the endpoints that act on a
// lease's machine (exec, the TCP tunnel): the request signed with the
// lease's access key, an ed25519 key the consumer named in the lease.
//
// A request carries
//
//	Authorization: Lattice-Ed25519 key=<hex>, timestamp=<ms>, nonce=<hex>, signature=<hex>
//
// where the signature is over Message: a tag, the network, the method,
// the request target (path and query, as sent), the timestamp, the nonce
// and the SHA-256 of the body. The provider that runs the machine checks
// it (Guard): the key must be the lease's access key, the timestamp
// within Window of the provider's clock, and the nonce unused. The
// package is pure apart from the Guard's memory of nonces; docs/api.md
// ("Machine credentials") gives vectors.
package access

import (
	"cmp"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/latticenet/lattice/ledger"
)

// Scheme is the Authorization header's scheme.
const Scheme = "Lattice-Ed25519"

// Tag opens every signed message, so that no other signature of the key
// (a block, a chat message) can pass for a request's.
const Tag = "LATTICE-MACHINE-REQUEST-V1"

// Window is how far a request's timestamp may be from the provider's
// clock, either way; a nonce is remembered as long.
const Window = 5 * time.Minute

// A Guard's memory of nonces is bounded, and shared fairly among the
// keys (each one lease's holder) it admits:
//
//   - MaxNoncesPerKey bounds one key's: a key may make 4096 requests in
//     10 minutes, and past that is refused (ErrBusy) until its oldest
//     expire.
//   - MaxNonces bounds all keys' together, so that a few busy keys
//     (32 at their bound) fill it.
//   - Past MaxNonces, a key that holds fewer than FloorPerKey nonces is
//     still admitted, into a Reserve no busy key may use: however many
//     requests other lease holders make, every key may make 64 requests
//     in 10 minutes, unless 256 other keys already hold their 64 of the
//     reserve too. The guard never holds more than MaxNonces+Reserve.
const (
	MaxNonces       = 1 << 17
	MaxNoncesPerKey = 1 << 12
	FloorPerKey     = 1 << 6
	Reserve         = 1 << 14
)

// Errors of a credential. Every one but ErrWrongKey means the request is
// not authenticated (HTTP 401); ErrWrongKey means it is, by a key that
// may not act on the machine (403).
var (
	ErrMissing   = errors.New("no credential: sign the request with the lease's access key (Authorization: " + Scheme + " ...)")
	ErrMalformed = errors.New("malformed credential")
	ErrSignature = errors.New("the credential's signature does not verify")
	ErrExpired   = errors.New("the credential's timestamp is outside the provider's window")
	ErrReplayed  = errors.New("the credential's nonce was used before")
	ErrBusy      = errors.New("too many requests in the window")
	ErrWrongKey  = errors.New("the credential's key is not the lease's access key")
)

// Credential is a request's signature and what it signs besides the
// request.
type Credential struct {
	Key       ledger.Address
	Timestamp int64 // Unix milliseconds
	Nonce     [16]byte
	Signature [ed25519.SignatureSize]byte
}

// Request is what a credential signs of an HTTP request.
type Request struct {
	Method string
	// Target is the request target as sent: the path, and "?" and the
	// raw query when there is one ("/tunnel/<lease>/tcp?port=22").
	Target string
	Body   []byte
}

// Message is the byte string a credential signs: Tag, then the network's
// genesis hash (32 bytes), then the method, the target and the
// timestamp's decimal digits each followed by a newline, then the nonce
// (16 bytes) and the body's SHA-256 (32 bytes).
func Message(network ledger.Hash, r Request, ts int64, nonce [16]byte) []byte {
	sum := sha256.Sum256(r.Body)
	m := make([]byte, 0, len(Tag)+32+len(r.Method)+len(r.Target)+24+16+32)
	m = append(m, Tag...)
	m = append(m, network[:]...)
	m = append(m, r.Method...)
	m = append(m, '\n')
	m = append(m, r.Target...)
	m = append(m, '\n')
	m = strconv.AppendInt(m, ts, 10)
	m = append(m, '\n')
	m = append(m, nonce[:]...)
	m = append(m, sum[:]...)
	return m
}

// Sign signs r at now with a fresh random nonce.
func Sign(priv ed25519.PrivateKey, network ledger.Hash, r Request, now time.Time) Credential {
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		panic(err) // crypto/rand does not fail
	}
	return SignWith(priv, network, r, now.UnixMilli(), nonce)
}

// SignWith signs r with the given timestamp and nonce (vectors, tests).
func SignWith(priv ed25519.PrivateKey, network ledger.Hash, r Request, ts int64, nonce [16]byte) Credential {
	c := Credential{Timestamp: ts, Nonce: nonce}
	copy(c.Key[:], priv.Public().(ed25519.PublicKey))
	copy(c.Signature[:], ed25519.Sign(priv, Message(network, r, ts, nonce)))
	return c
}

// Header is the credential as an Authorization header's value.
func (c Credential) Header() string {
	return fmt.Sprintf("%s key=%s, timestamp=%d, nonce=%s, signature=%s", Scheme, c.Key,
		c.Timestamp, hex.EncodeToString(c.Nonce[:]), hex.EncodeToString(c.Signature[:]))
}

// Parse reads an Authorization header's value: the scheme, then the four
// parameters, each once, in any order, separated by commas and spaces.
// An empty header is ErrMissing.
func Parse(header string) (Credential, error) {
	var c Credential
	if strings.TrimSpace(header) == "" {
		return c, ErrMissing
	}
	scheme, params, ok := strings.Cut(header, " ")
	if !ok || scheme != Scheme {
		return c, fmt.Errorf("%w: the scheme must be %s", ErrMalformed, Scheme)
	}
	seen := map[string]bool{}
	for p := range strings.SplitSeq(params, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || seen[k] {
			return c, fmt.Errorf("%w: parameter %q", ErrMalformed, trim(p))
		}
		seen[k] = true
		var err error
		switch k {
		case "key":
			c.Key, err = ledger.ParseAddress(v)
		case "timestamp":
			c.Timestamp, err = strconv.ParseInt(v, 10, 64)
			if err == nil && c.Timestamp < 0 {
				err = errors.New("negative")
			}
		case "nonce":
			err = decodeHex(c.Nonce[:], v)
		case "signature":
			err = decodeHex(c.Signature[:], v)
		default:
			err = errors.New("unknown parameter")
		}
		if err != nil {
			return c, fmt.Errorf("%w: %s: %v", ErrMalformed, trim(k), err)
		}
	}
	for _, k := range []string{"key", "timestamp", "nonce", "signature"} {
		if !seen[k] {
			return c, fmt.Errorf("%w: no %s", ErrMalformed, k)
		}
	}
	return c, nil
}

func decodeHex(dst []byte, s string) error {
	if len(s) != 2*len(dst) {
		return fmt.Errorf("%d hex digits, want %d", len(s), 2*len(dst))
	}
	_, err := hex.Decode(dst, []byte(s))
	return err
}

func trim(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Verify checks the credential's signature of r.
func (c Credential) Verify(network ledger.Hash, r Request) error {
	if !ed25519.Verify(c.Key.PublicKey(), Message(network, r, c.Timestamp, c.Nonce), c.Signature[:]) {
		return ErrSignature
	}
	return nil
}

// Authorizes checks what needs neither a clock nor a memory of nonces:
// that c signs r on the network, by the key want (ErrSignature, then
// ErrWrongKey). A node that forwards a request to the provider checks
// this first; the provider's Guard checks it and the rest.
func (c Credential) Authorizes(network ledger.Hash, want ledger.Address, r Request) error {
	if err := c.Verify(network, r); err != nil {
		return err
	}
	if c.Key != want {
		return ErrWrongKey
	}
	return nil
}

// Guard checks credentials for one provider: signature, key, time and
// nonce. It refuses credentials timestamped before it was made, and,
// given a Journal (Keep), keeps the nonces it admits across restarts: a
// credential stamped up to Window ahead of the clock, admitted once,
// would otherwise be admitted again by the next guard, whose memory
// starts empty.
type Guard struct {
	network ledger.Hash
	now     func() time.Time
	since   int64
	journal Journal

	mu     sync.Mutex
	seen   map[keyNonce]int64 // a key's nonce -> when it may be forgotten
	perKey map[ledger.Address]int
	// order lists nonces by when they were recorded, to forget them.
	order []nonceAt
}

// keyNonce is a nonce of one key: keys never use up each other's.
type keyNonce struct {
	key   ledger.Address
	nonce [16]byte
}

type nonceAt struct {
	keyNonce
	until int64
}

// Journal keeps a guard's nonces durable. Record returns once the nonce
// of key, to be kept until the Unix millisecond until, would outlive a
// crash; Forget drops nonces past their time, durably or not.
type Journal interface {
	Record(key ledger.Address, nonce [16]byte, until int64) error
	Forget(used []Used)
}

// Used is a nonce a key used, and until when it must be refused.
type Used struct {
	Key   ledger.Address
	Nonce [16]byte
	Until int64
}

// Keep gives g a journal and the nonces it recorded before (in any
// order): those not yet past their time are refused as replays again.
// It is called before the guard checks anything.
func (g *Guard) Keep(j Journal, recorded []Used) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.journal = j
	now := g.now().UnixMilli()
	slices.SortFunc(recorded, func(a, b Used) int { return cmp.Compare(a.Until, b.Until) })
	var past []Used
	for _, u := range recorded {
		kn := keyNonce{u.Key, u.Nonce}
		if _, dup := g.seen[kn]; dup {
			continue
		}
		if u.Until < now {
			past = append(past, u)
			continue
		}
		g.seen[kn] = u.Until
		g.perKey[u.Key]++
		g.order = append(g.order, nonceAt{kn, u.Until})
	}
	if len(past) > 0 {
		j.Forget(past)
	}
}

// NewGuard returns a guard for the network's requests on the clock now.
func NewGuard(network ledger.Hash, now func() time.Time) *Guard {
	if now == nil {
		now = time.Now
	}
	return &Guard{network: network, now: now, since: now().UnixMilli(), seen: map[keyNonce]int64{}, perKey: map[ledger.Address]int{}}
}

// Check admits the request r signed by c on a machine whose lease names
// the access key want, and records the nonce. The errors are the
// package's, wrapped with detail.
func (g *Guard) Check(c Credential, want ledger.Address, r Request) error {
	if err := c.Authorizes(g.network, want, r); err != nil {
		return err
	}
	now := g.now().UnixMilli()
	w := Window.Milliseconds()
	switch {
	case c.Timestamp < now-w || c.Timestamp > now+w:
		return fmt.Errorf("%w: signed at %d, the provider's clock reads %d (±%s)", ErrExpired, c.Timestamp, now, Window)
	case c.Timestamp < g.since:
		return fmt.Errorf("%w: signed at %d, before the provider started at %d: sign it again", ErrExpired, c.Timestamp, g.since)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var past []Used
	for len(g.order) > 0 && g.order[0].until < now {
		old := g.order[0]
		delete(g.seen, old.keyNonce)
		if g.perKey[old.key]--; g.perKey[old.key] <= 0 {
			delete(g.perKey, old.key)
		}
		g.order = g.order[1:]
		past = append(past, Used{old.key, old.nonce, old.until})
	}
	if len(past) > 0 && g.journal != nil {
		g.journal.Forget(past)
	}
	kn := keyNonce{c.Key, c.Nonce}
	if _, ok := g.seen[kn]; ok {
		return ErrReplayed
	}
	if err := g.room(c.Key); err != nil {
		return err
	}
	// The timestamp is at most now+w, and admitted until it is w old:
	// past now+2w the nonce cannot come back. until grows with now, so
	// order stays sorted.
	until := now + 2*w
	if g.journal != nil {
		if err := g.journal.Record(c.Key, c.Nonce, until); err != nil {
			return fmt.Errorf("%w: the nonce could not be recorded: %v", ErrBusy, err)
		}
	}
	g.seen[kn] = until
	g.perKey[c.Key]++
	g.order = append(g.order, nonceAt{kn, until})
	return nil
}

// room says whether key may have one more nonce remembered; g.mu is held.
func (g *Guard) room(key ledger.Address) error {
	held, all := g.perKey[key], len(g.seen)
	switch {
	case held >= MaxNoncesPerKey:
		return fmt.Errorf("%w: this key made %d requests in the last %s", ErrBusy, held, 2*Window)
	case all >= MaxNonces+Reserve, all >= MaxNonces && held >= FloorPerKey:
		return fmt.Errorf("%w: the provider holds %d requests of all keys in the last %s", ErrBusy, all, 2*Window)
	}
	return nil
}
