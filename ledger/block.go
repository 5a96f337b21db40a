package ledger

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/latticenet/lattice/internal/strictjson"
)

// Signature is an ed25519 signature. JSON carries it as 128 hex characters;
// the empty string is the zero Signature (no signature).
type Signature [ed25519.SignatureSize]byte

// IsZero reports whether s is the zero Signature.
func (s Signature) IsZero() bool { return s == Signature{} }

// String returns the lowercase hex form, or "" for the zero Signature.
func (s Signature) String() string {
	if s.IsZero() {
		return ""
	}
	return hex.EncodeToString(s[:])
}

// MarshalText implements encoding.TextMarshaler.
func (s Signature) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Signature) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*s = Signature{}
		return nil
	}
	if len(b) != 2*len(s) {
		return fmt.Errorf("signature: want 128 hex characters, got %d", len(b))
	}
	if _, err := hex.Decode(s[:], b); err != nil {
		return errors.New("signature: not hexadecimal")
	}
	return nil
}

// Attestation is a timekeeper's signed statement about time, carried by
// lease_accept and lease_settle blocks.
type Attestation struct {
	PublicKey Address   `json:"public_key"`
	Timestamp int64     `json:"timestamp"`
	Signature Signature `json:"signature"`
}

// MultisigSignature is one keyset member's signature of a block hash.
type MultisigSignature struct {
	PublicKey Address   `json:"public_key"`
	Signature Signature `json:"signature"`
}

// Block is one entry of an account's chain. A field equal to its zero value
// is absent: it is left out of the JSON and encoded as zeros (see
// docs/protocol.md), so a client may omit it or send its zero value.
type Block struct {
	Type            BlockType           `json:"type"`
	Account         Address             `json:"account"`
	Previous        Hash                `json:"previous"`
	Balance         Amount              `json:"balance"`
	Asset           Asset               `json:"asset"`
	Timestamp       int64               `json:"timestamp"`
	Hash            Hash                `json:"hash"`
	Signature       Signature           `json:"signature,omitzero"`
	Representative  Address             `json:"representative,omitzero"`
	PowNonce        int64               `json:"pow_nonce"`
	Destination     Address             `json:"destination,omitzero"`
	Amount          Amount              `json:"amount,omitzero"`
	Source          Hash                `json:"source,omitzero"`
	VCPUs           uint32              `json:"vcpus,omitzero"`
	MemoryMB        uint32              `json:"memory_mb,omitzero"`
	DiskGB          uint32              `json:"disk_gb,omitzero"`
	Duration        uint32              `json:"duration,omitzero"`
	AccessPubKey    Address             `json:"access_pub_key,omitzero"`
	CertificateHash Hash                `json:"certificate_hash,omitzero"`
	Attestations    []Attestation       `json:"attestations,omitempty"`
	Keyset          *Keyset             `json:"keyset,omitempty"`
	Signatures      []MultisigSignature `json:"signatures,omitempty"`
	// StateChainIndex is the governance state-chain index whose terms a
	// lease block is judged by. Only lease blocks carry it (an extension
	// of the API's block, see docs/protocol.md).
	StateChainIndex uint64 `json:"statechain_index,omitzero"`
}

// MaxBlockJSON bounds the size of a block's JSON form. The largest valid
// block (MaxAttestations attestations, MaxKeys keys and signatures) is well
// under it.
const MaxBlockJSON = 64 << 10

// DecodeJSON reads r to its end and parses it as one block (see ParseJSON).
// A read error, such as *http.MaxBytesError, is returned wrapped.
func DecodeJSON(r io.Reader) (*Block, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading the block: %w", err)
	}
	return ParseJSON(data)
}

// ParseJSON parses one block strictly: unknown fields, trailing data and
// values of the wrong shape are errors that name the offending field.
//
// Blocks in the form the API writes them take a fast path (parseCanonical);
// anything else, including every malformed input, goes through
// encoding/json, which decides and explains. A fuzz test checks that the
// two agree wherever the fast path answers.
func ParseJSON(data []byte) (*Block, error) {
	b, ok := parseCanonical(data)
	if !ok {
		var err error
		if b, err = parseReflect(data); err != nil {
			return nil, err
		}
	}
	// A field equal to its zero value is absent, keyset included.
	if b.Keyset != nil && b.Keyset.Threshold == 0 && len(b.Keyset.Keys) == 0 {
		b.Keyset = nil
	}
	for _, f := range [...]struct {
		name string
		set  bool
	}{
		{"type", b.Type != 0}, {"account", !b.Account.IsZero()}, {"asset", b.Asset != 0},
		{"timestamp", b.Timestamp != 0}, {"hash", !b.Hash.IsZero()},
	} {
		if !f.set {
			return nil, fmt.Errorf("field %q is required", f.name)
		}
	}
	return b, nil
}

// parseReflect decodes with encoding/json.
func parseReflect(data []byte) (*Block, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b Block
	if err := dec.Decode(&b); err != nil {
		return nil, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON object")
	}
	// encoding/json takes "Amount" for "amount" and the last of a key
	// given twice; a block's fields are exact and given once.
	if err := strictjson.Keys(data, &b); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	return &b, nil
}

// jsonError turns encoding/json's errors into messages in the body's own
// terms: the field, the JSON value it wants and the one it got
// (strictjson.Explain), never a Go type.
func jsonError(err error) error {
	if e := strictjson.Explain(err); e != err {
		return e
	}
	// Text-unmarshal failures and unknown fields are plain errors whose
	// text already names the problem.
	return fmt.Errorf("invalid JSON: %w", err)
}

// Clone returns a deep copy of b.
func (b *Block) Clone() *Block {
	c := *b
	c.Attestations = append([]Attestation(nil), b.Attestations...)
	c.Signatures = append([]MultisigSignature(nil), b.Signatures...)
	if b.Keyset != nil {
		k := b.Keyset.Clone()
		c.Keyset = &k
	}
	return &c
}

// Seal computes and sets b.Hash from the block's content. Call it after the
// content is final and before signing and proof of work.
func (b *Block) Seal() Hash {
	b.Hash = b.ComputeHash()
	return b.Hash
}

// Sign sets b.Signature to priv's signature of b.Hash.
func (b *Block) Sign(priv ed25519.PrivateKey) {
	copy(b.Signature[:], ed25519.Sign(priv, b.Hash[:]))
}

// AddSignature appends priv's signature of b.Hash to b.Signatures, for
// multisig accounts.
func (b *Block) AddSignature(priv ed25519.PrivateKey) {
	var s MultisigSignature
	copy(s.PublicKey[:], priv.Public().(ed25519.PublicKey))
	copy(s.Signature[:], ed25519.Sign(priv, b.Hash[:]))
	b.Signatures = append(b.Signatures, s)
}
