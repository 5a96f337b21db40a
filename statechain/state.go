package statechain

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/latticenet/lattice/internal/strictjson"
	"github.com/latticenet/lattice/ledger"
)

// Kinds of refusal. Every error Check and Apply return for a bad block
// wraps one of these (errors.Is tells them apart) and says how, in words
// a person can act on.
var (
	ErrMalformed     = errors.New("malformed state-chain block")
	ErrBadHash       = errors.New("hash does not match block contents")
	ErrBadSignature  = errors.New("bad signature")
	ErrUnauthorized  = errors.New("not authorised by the governance keyset")
	ErrGap           = errors.New("index ahead of the tip")
	ErrWrongPrevious = errors.New("previous is not the tip")
	ErrStale         = errors.New("index already taken")
	ErrTimestamp     = errors.New("bad timestamp")
	ErrInvalidValue  = errors.New("invalid value")
)

// checkShape checks what a block must be on its own: a known operation,
// a key and value that fit it, bounded sizes, at most MaxSignatures
// signatures by distinct keys.
func (b *Block) checkShape() error {
	switch b.Operation {
	case OpSet, OpDelete:
		if err := CheckKey(b.Key); err != nil {
			return err
		}
	case OpUpdateKeyset:
		if b.Key != "" {
			return fmt.Errorf("%w: an update_keyset block has no key (got %q)", ErrMalformed, b.Key)
		}
	default:
		return fmt.Errorf("%w: operation must be set, delete or update_keyset, got %q", ErrMalformed, string(b.Operation))
	}
	switch {
	case b.Operation == OpDelete && b.Value != "":
		return fmt.Errorf("%w: a delete block has no value", ErrMalformed)
	case b.Operation != OpDelete && b.Value == "":
		return fmt.Errorf("%w: a %s block needs a value", ErrMalformed, b.Operation)
	case len(b.Value) > MaxValueBytes:
		return fmt.Errorf("%w: value is %d bytes, more than %d", ErrMalformed, len(b.Value), MaxValueBytes)
	case !utf8.ValidString(b.Value):
		return fmt.Errorf("%w: value is not valid UTF-8", ErrMalformed)
	case b.Timestamp <= 0:
		return fmt.Errorf("%w: timestamp %d is not a positive Unix time in milliseconds", ErrMalformed, b.Timestamp)
	case len(b.Signatures) > MaxSignatures:
		return fmt.Errorf("%w: %d signatures, more than %d", ErrMalformed, len(b.Signatures), MaxSignatures)
	case b.Index == 0 && len(b.Signatures) > 0:
		return fmt.Errorf("%w: block 0 comes from the genesis file and carries no signatures", ErrMalformed)
	}
	for i, s := range b.Signatures {
		for _, o := range b.Signatures[:i] {
			if o.PublicKey == s.PublicKey {
				return fmt.Errorf("%w: key %s signed twice", ErrMalformed, s.PublicKey)
			}
		}
	}
	return nil
}

// CheckKey checks a key's form: 1 to MaxKeyBytes bytes of lowercase
// letters, digits, '.', '_' and '-', starting with a letter or digit.
func CheckKey(k string) error {
	if k == "" || len(k) > MaxKeyBytes {
		return fmt.Errorf("%w: a key is 1 to %d bytes, got %d", ErrMalformed, MaxKeyBytes, len(k))
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '.' || c == '_' || c == '-')
		if !ok {
			return fmt.Errorf("%w: key %q: only lowercase letters, digits, '.', '_' and '-' (not first)", ErrMalformed, k)
		}
	}
	return nil
}

// CheckSignatures checks that b's signatures are valid signatures of its
// hash by distinct members of k, at least k.Threshold of them.
func CheckSignatures(b *Block, k ledger.Keyset) error {
	for i, s := range b.Signatures {
		if !k.Contains(s.PublicKey) {
			return fmt.Errorf("%w: signature %d is by %s, not a member of the keyset", ErrUnauthorized, i, s.PublicKey)
		}
		if !verify(s, b.Hash) {
			return fmt.Errorf("%w: signature %d does not verify under key %s", ErrBadSignature, i, s.PublicKey)
		}
	}
	if len(b.Signatures) < k.Threshold {
		return fmt.Errorf("%w: %d of the keyset's keys signed; its threshold is %d", ErrUnauthorized, len(b.Signatures), k.Threshold)
	}
	return nil
}

// ParseKeyset decodes an update_keyset value strictly: an object with keys
// (addresses, distinct, in ascending order) and threshold, valid as
// ledger.Keyset.Validate says.
func ParseKeyset(v string) (ledger.Keyset, error) {
	var k ledger.Keyset
	if err := strictjson.Unmarshal([]byte(v), &k); err != nil {
		return k, fmt.Errorf("%w: keyset: %v", ErrInvalidValue, err)
	}
	if err := k.Validate(); err != nil {
		return k, fmt.Errorf("%w: %v", ErrInvalidValue, err)
	}
	if c := KeysetValue(k); c != v {
		return k, fmt.Errorf("%w: keyset not in canonical form; write it as %s", ErrInvalidValue, c)
	}
	return k, nil
}

// Entry is a key's value and the index of the block that set it.
type Entry struct {
	Value string
	Index uint64
}

// State is the chain's state after its tip: the keyset in force and the
// key-value pairs. A State is never changed: Apply returns a new one.
type State struct {
	network ledger.Hash
	tip     *Block
	keyset  ledger.Keyset
	kv      map[string]Entry
}

// New returns the state after block 0 of network's state chain, which
// must be what Genesis makes: index 0, previous zero, an update_keyset
// with a valid keyset, no signatures, its hash right.
func New(network ledger.Hash, genesis *Block) (*State, error) {
	switch {
	case genesis.Index != 0 || !genesis.Previous.IsZero() || genesis.Operation != OpUpdateKeyset:
		return nil, fmt.Errorf("%w: block 0 must be an update_keyset at index 0 with a zero previous", ErrMalformed)
	}
	if err := genesis.checkShape(); err != nil {
		return nil, err
	}
	if h := genesis.ComputeHash(network); h != genesis.Hash {
		return nil, fmt.Errorf("%w: block says %s, contents hash to %s", ErrBadHash, genesis.Hash, h)
	}
	k, err := ParseKeyset(genesis.Value)
	if err != nil {
		return nil, err
	}
	return &State{network: network, tip: genesis.Clone(), keyset: k, kv: map[string]Entry{}}, nil
}

// Network is the ledger genesis hash the chain's blocks are bound to.
func (s *State) Network() ledger.Hash { return s.network }

// Tip returns a copy of the latest block.
func (s *State) Tip() *Block { return s.tip.Clone() }

// Index is the tip's index.
func (s *State) Index() uint64 { return s.tip.Index }

// Keyset is the keyset that must sign the next block.
func (s *State) Keyset() ledger.Keyset { return s.keyset.Clone() }

// Get returns key's entry.
func (s *State) Get(key string) (Entry, bool) {
	e, ok := s.kv[key]
	return e, ok
}

// Keys returns the keys set, in ascending order.
func (s *State) Keys() []string { return slices.Sorted(maps.Keys(s.kv)) }

// Check reports whether b may follow the tip: its shape and hash, index
// tip+1, previous the tip's hash, a timestamp no earlier than the tip's,
// a threshold of the keyset's signatures, and a value its key accepts
// (the change leaves valid parameters, Params). It names the rule broken.
func (s *State) Check(b *Block) error {
	_, err := s.next(b)
	return err
}

// Apply returns the state after b, or why b cannot follow the tip (as
// Check). A refused block changes nothing: the change is all or nothing.
func (s *State) Apply(b *Block) (*State, error) { return s.next(b) }

// ApplyAll returns the state after blocks, applied in order, or why the
// first that cannot follow fails (naming its index).
func (s *State) ApplyAll(blocks []*Block) (*State, error) {
	for _, b := range blocks {
		n, err := s.next(b)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", b.Index, err)
		}
		s = n
	}
	return s, nil
}

func (s *State) next(b *Block) (*State, error) {
	if err := b.checkShape(); err != nil {
		return nil, err
	}
	if h := b.ComputeHash(s.network); h != b.Hash {
		return nil, fmt.Errorf("%w: block says %s, contents hash to %s", ErrBadHash, b.Hash, h)
	}
	switch {
	case b.Index <= s.tip.Index:
		return nil, fmt.Errorf("%w: index %d is at or below the tip, %d", ErrStale, b.Index, s.tip.Index)
	case b.Index > s.tip.Index+1:
		return nil, fmt.Errorf("%w: index %d, the tip is %d", ErrGap, b.Index, s.tip.Index)
	case b.Previous != s.tip.Hash:
		return nil, fmt.Errorf("%w: previous %s, the tip (index %d) is %s", ErrWrongPrevious, b.Previous, s.tip.Index, s.tip.Hash)
	case b.Timestamp < s.tip.Timestamp:
		return nil, fmt.Errorf("%w: %d is earlier than the tip's %d", ErrTimestamp, b.Timestamp, s.tip.Timestamp)
	}
	if err := CheckSignatures(b, s.keyset); err != nil {
		return nil, err
	}
	n := &State{network: s.network, tip: b.Clone(), keyset: s.keyset, kv: s.kv}
	switch b.Operation {
	case OpUpdateKeyset:
		k, err := ParseKeyset(b.Value)
		if err != nil {
			return nil, err
		}
		n.keyset = k
	case OpSet:
		if err := CheckValue(b.Key, b.Value); err != nil {
			return nil, err
		}
		n.kv = maps.Clone(s.kv)
		n.kv[b.Key] = Entry{Value: b.Value, Index: b.Index}
	case OpDelete:
		if _, ok := s.kv[b.Key]; !ok {
			return nil, fmt.Errorf("%w: key %q is not set", ErrInvalidValue, b.Key)
		}
		n.kv = maps.Clone(s.kv)
		delete(n.kv, b.Key)
	}
	if _, err := n.Params(); err != nil {
		return nil, err
	}
	return n, nil
}

// CheckAlone checks what can be checked of a block without the chain: its
// shape, its hash on network, and that its value is one its operation and
// key accept, in canonical form. A keyholder signing offline runs it.
func CheckAlone(b *Block, network ledger.Hash) error {
	if err := b.checkShape(); err != nil {
		return err
	}
	if h := b.ComputeHash(network); h != b.Hash {
		return fmt.Errorf("%w: block says %s, contents hash to %s", ErrBadHash, b.Hash, h)
	}
	switch b.Operation {
	case OpSet:
		return CheckValue(b.Key, b.Value)
	case OpUpdateKeyset:
		_, err := ParseKeyset(b.Value)
		return err
	}
	return nil
}
