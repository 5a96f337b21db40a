package chat_test

import (
	"bytes"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"math/big"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/ledger"
)

// The chat vectors of docs/protocol.md live in testdata/vectors.json.
// TestVectors checks every claim the file makes against the package and
// against an independent spelling-out of the rules; `go test ./chat -run
// TestVectors -update` regenerates it. Generation is deterministic (fixed
// seeds, timestamps, texts and nonces), so the file only changes when the
// protocol does.

var update = flag.Bool("update", false, "rewrite testdata/vectors.json")

const vectorsPath = "testdata/vectors.json"

// vecEpoch is 2026-01-01T00:00:00Z in ms, the epoch of the ledger vectors.
const vecEpoch int64 = 1767225600000

// The keys are those of ledger/testdata/vectors.json: key n has the seed
// byte n repeated 32 times.
const (
	alice = 2
	bob   = 3
	carol = 4
)

func vecKey(n byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize))
}

func addr(priv ed25519.PrivateKey) ledger.Address {
	var a ledger.Address
	copy(a[:], priv.Public().(ed25519.PublicKey))
	return a
}

// signed returns text from alice to bob at vecEpoch, signed by alice.
func signed(text string) *chat.Message {
	m := &chat.Message{To: addr(vecKey(bob)), Message: text, Timestamp: vecEpoch}
	m.Sign(vecKey(alice))
	return m
}

// preimage spells the message preimage out independently of the package.
func preimage(m *chat.Message) []byte {
	p := []byte("LATTICE-CHAT-V1")
	p = append(p, m.From[:]...)
	p = append(p, m.To[:]...)
	p = binary.BigEndian.AppendUint64(p, uint64(m.Timestamp))
	p = binary.BigEndian.AppendUint16(p, uint16(len(m.Message)))
	return append(p, m.Message...)
}

func TestCheck(t *testing.T) {
	other := vecKey(carol)
	tests := []struct {
		name string
		pre  func(m *chat.Message) // before signing
		post func(m *chat.Message) // after signing
		want string                // "" for valid, else a part of the error
	}{
		{"valid", nil, nil, ""},
		{"one byte", func(m *chat.Message) { m.Message = "x" }, nil, ""},
		{"4096 bytes", func(m *chat.Message) { m.Message = strings.Repeat("a", 4096) }, nil, ""},
		{"4096 bytes of 2-byte runes", func(m *chat.Message) { m.Message = strings.Repeat("é", 2048) }, nil, ""},
		{"4097 bytes", func(m *chat.Message) { m.Message = strings.Repeat("a", 4097) }, nil, "4097 bytes, more than the 4096"},
		{"4097 bytes, rune straddling the limit", func(m *chat.Message) { m.Message = strings.Repeat("a", 4095) + "é" }, nil, "4097 bytes, more than the 4096"},
		{"multi-byte UTF-8", func(m *chat.Message) { m.Message = "Grüße — 日本語 🙂" }, nil, ""},
		{"timestamp 1", func(m *chat.Message) { m.Timestamp = 1 }, nil, ""},
		{"largest timestamp", func(m *chat.Message) { m.Timestamp = math.MaxInt64 }, nil, ""},
		{"message to oneself", func(m *chat.Message) { m.To = addr(vecKey(alice)) }, nil, ""},

		{"zero from", nil, func(m *chat.Message) { m.From = ledger.Address{} }, "from is required"},
		{"zero to", func(m *chat.Message) { m.To = ledger.Address{} }, nil, "to is required"},
		{"empty text", func(m *chat.Message) { m.Message = "" }, nil, "message is empty"},
		{"invalid UTF-8 byte", func(m *chat.Message) { m.Message = "hi \xff" }, nil, "not valid UTF-8"},
		{"truncated rune", func(m *chat.Message) { m.Message = "é"[:1] }, nil, "not valid UTF-8"},
		{"UTF-16 surrogate", func(m *chat.Message) { m.Message = "\xed\xa0\x80" }, nil, "not valid UTF-8"},
		{"zero timestamp", func(m *chat.Message) { m.Timestamp = 0 }, nil, "timestamp 0 is not a positive"},
		{"negative timestamp", func(m *chat.Message) { m.Timestamp = -1 }, nil, "timestamp -1 is not a positive"},
		{"smallest timestamp", func(m *chat.Message) { m.Timestamp = math.MinInt64 }, nil, "is not a positive"},
		{"zero signature", nil, func(m *chat.Message) { m.Signature = ledger.Signature{} }, "signature is required"},
		{"signature by another key", nil, func(m *chat.Message) {
			h := m.Hash()
			copy(m.Signature[:], ed25519.Sign(other, h[:]))
		}, "signature is not from's"},
		{"signed by another key, from kept", nil, func(m *chat.Message) {
			from := m.From
			m.Sign(other)
			m.From = from
		}, "signature is not from's"},
		{"from changed after signing", nil, func(m *chat.Message) { m.From = addr(other) }, "signature is not from's"},
		{"to changed after signing", nil, func(m *chat.Message) { m.To = addr(other) }, "signature is not from's"},
		{"one byte of the text changed after signing", nil, func(m *chat.Message) {
			b := []byte(m.Message)
			b[len(b)-1]++
			m.Message = string(b)
		}, "signature is not from's"},
		{"text extended after signing", nil, func(m *chat.Message) { m.Message += "!" }, "signature is not from's"},
		{"timestamp changed after signing", nil, func(m *chat.Message) { m.Timestamp++ }, "signature is not from's"},
		{"last hex digit of the signature changed", nil, func(m *chat.Message) {
			s := []byte(m.Signature.String())
			if s[len(s)-1] == '0' {
				s[len(s)-1] = '1'
			} else {
				s[len(s)-1] = '0'
			}
			if err := m.Signature.UnmarshalText(s); err != nil {
				panic(err)
			}
		}, "signature is not from's"},
		{"first byte of the signature changed", nil, func(m *chat.Message) { m.Signature[0] ^= 0x80 }, "signature is not from's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &chat.Message{To: addr(vecKey(bob)), Message: "Hello, Bob!", Timestamp: vecEpoch}
			if tt.pre != nil {
				tt.pre(m)
			}
			m.Sign(vecKey(alice))
			if tt.post != nil {
				tt.post(m)
			}
			err := m.Check()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want nil", err)
			case tt.want == "":
			case err == nil:
				t.Errorf("got nil, want an error saying %q", tt.want)
			case !errors.Is(err, chat.ErrInvalid):
				t.Errorf("got %v, want an error wrapping ErrInvalid", err)
			case !strings.Contains(err.Error(), tt.want):
				t.Errorf("got %q, want an error saying %q", err, tt.want)
			}
		})
	}
}

func TestSignAndHash(t *testing.T) {
	priv := vecKey(alice)
	m := &chat.Message{From: addr(vecKey(carol)), To: addr(vecKey(bob)), Message: "hi", Timestamp: vecEpoch}
	m.Sign(priv)
	if got, want := m.From, addr(priv); got != want {
		t.Errorf("Sign: from got %s, want the signer %s", got, want)
	}
	pre := preimage(m)
	if got := m.AppendPreimage(nil); !bytes.Equal(got, pre) {
		t.Errorf("AppendPreimage got %x, want %x", got, pre)
	}
	if got, want := len(pre), 15+32+32+8+2+len(m.Message); got != want {
		t.Errorf("preimage length got %d, want %d", got, want)
	}
	if got := m.AppendPreimage([]byte("prefix")); !bytes.Equal(got, append([]byte("prefix"), pre...)) {
		t.Errorf("AppendPreimage to a prefix got %x", got)
	}
	if got, want := m.Hash(), ledger.Hash(sha256.Sum256(pre)); got != want {
		t.Errorf("Hash got %s, want SHA-256 of the preimage %s", got, want)
	}
	h := m.Hash()
	if !ed25519.Verify(priv.Public().(ed25519.PublicKey), h[:], m.Signature[:]) {
		t.Errorf("signature %s does not verify over the digest", m.Signature)
	}

	// The hash is the message's identity: it covers every field but the
	// signature.
	base := *m
	for name, edit := range map[string]func(m *chat.Message){
		"from":      func(m *chat.Message) { m.From[31] ^= 1 },
		"to":        func(m *chat.Message) { m.To[0] ^= 1 },
		"text":      func(m *chat.Message) { m.Message = "ho" },
		"timestamp": func(m *chat.Message) { m.Timestamp++ },
	} {
		c := base
		edit(&c)
		if c.Hash() == base.Hash() {
			t.Errorf("changing %s: got the same hash, want another", name)
		}
	}
	c := base
	c.Signature[5] ^= 1
	if got, want := c.Hash(), base.Hash(); got != want {
		t.Errorf("changing the signature: got hash %s, want %s", got, want)
	}
}

func TestCheckTime(t *testing.T) {
	const now, past, future = int64(1_000_000_000), int64(60_000), int64(5_000)
	tests := []struct {
		name                  string
		ts, now, past, future int64
		want                  string // "" for nil, else a part of the error
	}{
		{"now", now, now, past, future, ""},
		{"exactly future ahead", now + future, now, past, future, ""},
		{"one ms past the future edge", now + future + 1, now, past, future, "ahead"},
		{"far ahead", math.MaxInt64, now, past, future, "ahead"},
		{"exactly past behind", now - past, now, past, future, ""},
		{"one ms past the past edge", now - past - 1, now, past, future, "behind"},
		{"far behind", 1, now, past, future, "behind"},
		{"open future", math.MaxInt64, now, past, 0, ""},
		{"open future, past still closed", now - past - 1, now, past, 0, "behind"},
		{"open past", math.MinInt64, now, 0, future, ""},
		{"open past, future still closed", now + future + 1, now, 0, future, "ahead"},
		{"both open", math.MinInt64, now, 0, 0, ""},
		{"both open, ahead", math.MaxInt64, now, 0, 0, ""},
		{"zero-width window, on it", now, now, 0, 0, ""},
	}
	for _, tt := range tests {
		err := chat.CheckTime(tt.ts, tt.now, tt.past, tt.future)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: CheckTime(%d, %d, %d, %d) got %v, want nil", tt.name, tt.ts, tt.now, tt.past, tt.future, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: CheckTime(%d, %d, %d, %d) got %v, want an error saying %q", tt.name, tt.ts, tt.now, tt.past, tt.future, err, tt.want)
		}
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	sealed := &chat.Message{To: addr(vecKey(bob)), Timestamp: vecEpoch}
	if err := chat.Seal(vecKey(alice), sealed, []byte("secret"), bytes.NewReader(make([]byte, 12))); err != nil {
		t.Fatal(err)
	}
	sealed.Sign(vecKey(alice))
	tests := []struct {
		name string
		m    *chat.Message
	}{
		{"short", signed("Hello, Bob!")},
		{"one byte", signed("x")},
		{"multi-byte UTF-8", signed("Grüße — 日本語 🙂")},
		{"4096 bytes", signed(strings.Repeat("z", chat.MaxMessageBytes))},
		{"sealed", sealed},
		// The binary form carries what Check refuses: it checks shape only.
		{"unsigned, empty", &chat.Message{}},
		{"negative timestamp, invalid UTF-8", &chat.Message{Timestamp: math.MinInt64, Message: "\xff\xfe"}},
	}
	for _, tt := range tests {
		b, err := tt.m.MarshalBinary()
		if err != nil {
			t.Errorf("%s: MarshalBinary got %v, want nil", tt.name, err)
			continue
		}
		if got, want := len(b), 32+32+8+2+len(tt.m.Message)+64; got != want {
			t.Errorf("%s: %d bytes, want %d", tt.name, got, want)
		}
		want := slices.Concat(tt.m.From[:], tt.m.To[:], binary.BigEndian.AppendUint64(nil, uint64(tt.m.Timestamp)),
			binary.BigEndian.AppendUint16(nil, uint16(len(tt.m.Message))), []byte(tt.m.Message), tt.m.Signature[:])
		if !bytes.Equal(b, want) {
			t.Errorf("%s: MarshalBinary got %x, want %x", tt.name, b, want)
		}
		if got := tt.m.AppendBinary([]byte{1, 2}); !bytes.Equal(got, append([]byte{1, 2}, b...)) {
			t.Errorf("%s: AppendBinary got %x, want 0102 then %x", tt.name, got, b)
		}
		back := chat.Message{Message: "old", Timestamp: 99}
		if err := back.UnmarshalBinary(b); err != nil {
			t.Errorf("%s: UnmarshalBinary got %v, want nil", tt.name, err)
			continue
		}
		if back != *tt.m {
			t.Errorf("%s: round trip got %+v, want %+v", tt.name, back, *tt.m)
		}
		if got, want := back.Check() == nil, tt.m.Check() == nil; got != want {
			t.Errorf("%s: after the round trip Check passes: got %v, want %v", tt.name, got, want)
		}
	}
	long := chat.Message{Message: strings.Repeat("a", chat.MaxMessageBytes+1)}
	if b, err := long.MarshalBinary(); !errors.Is(err, chat.ErrInvalid) {
		t.Errorf("MarshalBinary of 4097 bytes got %x, %v, want ErrInvalid", b, err)
	}
}

func TestUnmarshalBinaryRefuses(t *testing.T) {
	good, err := signed("Hello, Bob!").MarshalBinary() // 11 bytes of text
	if err != nil {
		t.Fatal(err)
	}
	withLength := func(n uint16, text int) []byte {
		b := append([]byte(nil), good[:72]...)
		b = binary.BigEndian.AppendUint16(b, n)
		b = append(b, bytes.Repeat([]byte{'a'}, text)...)
		return append(b, good[len(good)-64:]...)
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"one byte", []byte{0}},
		{"137 bytes, one short of an empty message", make([]byte, 137)},
		{"header only", good[:74]},
		{"last byte missing", good[:len(good)-1]},
		{"trailing byte", append(append([]byte(nil), good...), 0)},
		{"trailing signature", append(append([]byte(nil), good...), good[len(good)-64:]...)},
		{"length says one more than the text", withLength(12, 11)},
		{"length says one less than the text", withLength(10, 11)},
		{"length says 0 with text", withLength(0, 11)},
		{"length 4097 with a text of 4097", withLength(4097, 4097)},
		{"length 65535 with a text of 65535", withLength(65535, 65535)},
		{"length 65535, short", withLength(65535, 0)},
	}
	for _, tt := range tests {
		m := chat.Message{Message: "untouched", Timestamp: 7}
		err := m.UnmarshalBinary(tt.data)
		if !errors.Is(err, chat.ErrInvalid) {
			t.Errorf("%s: UnmarshalBinary got %v, want ErrInvalid", tt.name, err)
		}
		if want := (chat.Message{Message: "untouched", Timestamp: 7}); m != want {
			t.Errorf("%s: on error the message got %+v, want it unchanged", tt.name, m)
		}
	}
	// The edges that are accepted.
	for _, n := range []int{0, 11, chat.MaxMessageBytes} {
		var m chat.Message
		if err := m.UnmarshalBinary(withLength(uint16(n), n)); err != nil {
			t.Errorf("text of %d bytes: UnmarshalBinary got %v, want nil", n, err)
		}
	}
}

func TestJSON(t *testing.T) {
	m := signed("Hello, Bob!")
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	})
	if want := []string{"from", "message", "signature", "timestamp", "to"}; !slices.Equal(keys, want) {
		t.Errorf("JSON %s: got fields %v, want %v", data, keys, want)
	}
	if got, want := string(fields["from"]), `"`+m.From.String()+`"`; got != want {
		t.Errorf("from got %s, want lowercase hex %s", got, want)
	}
	if got, want := string(fields["timestamp"]), "1767225600000"; got != want {
		t.Errorf("timestamp got %s, want the number %s", got, want)
	}
	var back chat.Message
	if err := json.Unmarshal(data, &back); err != nil || back != *m {
		t.Errorf("JSON round trip got %+v, %v, want %+v", back, err, *m)
	}
}

func FuzzUnmarshalBinary(f *testing.F) {
	for _, text := range []string{"Hello, Bob!", "x", "Grüße — 日本語 🙂", strings.Repeat("z", chat.MaxMessageBytes)} {
		b, err := signed(text).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	good, _ := signed("Hello, Bob!").MarshalBinary()
	f.Add(good[:len(good)-1])
	f.Add(append(good, 0))
	f.Add(make([]byte, 138))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var m chat.Message
		if err := m.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, chat.ErrInvalid) {
				t.Fatalf("UnmarshalBinary error %v does not wrap ErrInvalid", err)
			}
			return
		}
		again, err := m.MarshalBinary()
		if err != nil {
			t.Fatalf("a decoded message does not re-encode: %v", err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("round trip got %x, want %x", again, data)
		}
		_ = m.Check() // must not panic
		_ = m.Hash()
		_, _ = chat.Open(vecKey(alice), &m)
	})
}

// Test vectors.

type vectorFile struct {
	Comment  []string        `json:"comment"`
	Keys     []vectorKey     `json:"keys"`
	Messages []messageVector `json:"messages"`
}

type vectorKey struct {
	Name    string         `json:"name"`
	Seed    string         `json:"seed"`
	Address ledger.Address `json:"address"`
}

type messageVector struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	FromSeed    string         `json:"from_seed"`
	ToSeed      string         `json:"to_seed"`
	From        ledger.Address `json:"from"`
	To          ledger.Address `json:"to"`
	Timestamp   int64          `json:"timestamp"`
	// Text is the message text, or for a sealed message the plaintext.
	Text string `json:"text"`
	// For a sealed message: the inputs and intermediate values of Seal.
	Nonce          string `json:"nonce,omitempty"`
	SharedSecret   string `json:"shared_secret,omitempty"`
	Key            string `json:"key,omitempty"`
	AdditionalData string `json:"additional_data,omitempty"`
	SealedText     string `json:"sealed_text,omitempty"`

	Message   chat.Message     `json:"message"`
	Preimage  string           `json:"preimage"`
	Hash      ledger.Hash      `json:"hash"`
	Signature ledger.Signature `json:"signature"`
	Binary    string           `json:"binary"`
}

var vectorKeys = []struct {
	name string
	n    byte
}{{"alice", alice}, {"bob", bob}}

func generateVectors() ([]byte, error) {
	f := vectorFile{Comment: []string{
		"Test vectors for Lattice chat messages; see docs/protocol.md, \"Chat messages and directory registrations\".",
		"Generated by `go test ./chat -run TestVectors -update` (chat/message_test.go) and checked by the same test.",
		"The keys are those of ledger/testdata/vectors.json (key n has the seed byte n repeated 32 times: 2 is alice, 3 is bob).",
		"text is the message text, or for a sealed message the plaintext; message is the JSON form the node serves.",
		"preimage, hash (its SHA-256), signature (ed25519 of the 32-byte hash) and binary (the wire form) are hex.",
		"Sealed messages also give the nonce, the X25519 shared_secret, the HKDF-SHA256 key, the AEAD additional_data (hex)",
		"and sealed_text, the message text Seal produces (\"e2e1:\" and base64url without padding of nonce || ciphertext || tag).",
	}}
	for _, k := range vectorKeys {
		priv := vecKey(k.n)
		f.Keys = append(f.Keys, vectorKey{k.name, hex.EncodeToString(priv.Seed()), addr(priv)})
	}
	for _, c := range []struct {
		name, desc string
		from, to   byte
		ts         int64
		text       string
		nonce      []byte // nil for a message in the clear
	}{
		{"plain", "Alice writes to Bob in the clear.", alice, bob, vecEpoch + 60_000, "Hello, Bob! Lunch at noon?", nil},
		{"utf8", "Bob answers in the clear with multi-byte UTF-8 (2-, 3- and 4-byte sequences): the length field counts bytes, not characters.", bob, alice, vecEpoch + 61_000, "Grüße aus Zürich — 日本語 🙂", nil},
		{"sealed", "Alice writes to Bob end-to-end encrypted, with the nonce 000102…0b.", alice, bob, vecEpoch + 62_000, "The door code is 4711.", seq(0, 12)},
		{"sealed reply", "Bob answers end-to-end encrypted: the same shared secret as \"sealed\", but another key, since the HKDF info puts from before to.", bob, alice, vecEpoch + 63_000, "Thanks, see you there.", seq(12, 12)},
	} {
		fromPriv, toPriv := vecKey(c.from), vecKey(c.to)
		m := chat.Message{To: addr(toPriv), Message: c.text, Timestamp: c.ts}
		v := messageVector{
			Name: c.name, Description: c.desc,
			FromSeed: hex.EncodeToString(fromPriv.Seed()), ToSeed: hex.EncodeToString(toPriv.Seed()),
			From: addr(fromPriv), To: addr(toPriv), Timestamp: c.ts, Text: c.text,
		}
		if c.nonce != nil {
			if err := chat.Seal(fromPriv, &m, []byte(c.text), bytes.NewReader(c.nonce)); err != nil {
				return nil, err
			}
			secret, err := chat.SharedSecret(fromPriv, m.To)
			if err != nil {
				return nil, err
			}
			key, err := hkdf.Key(sha256.New, secret, nil, string(sealInfo(&m)), 32)
			if err != nil {
				return nil, err
			}
			v.Nonce, v.SharedSecret, v.Key = hex.EncodeToString(c.nonce), hex.EncodeToString(secret), hex.EncodeToString(key)
			v.AdditionalData, v.SealedText = hex.EncodeToString(sealAD(&m)), m.Message
		}
		m.Sign(fromPriv)
		bin, err := m.MarshalBinary()
		if err != nil {
			return nil, err
		}
		v.Message, v.Preimage, v.Hash, v.Signature, v.Binary = m, hex.EncodeToString(m.AppendPreimage(nil)), m.Hash(), m.Signature, hex.EncodeToString(bin)
		f.Messages = append(f.Messages, v)
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// seq returns n bytes counting up from start.
func seq(start, n byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

// sealInfo and sealAD spell out the HKDF info and the AEAD additional data
// independently of the package.
func sealInfo(m *chat.Message) []byte {
	return slices.Concat([]byte("LATTICE-CHAT-E2E-V1"), m.From[:], m.To[:])
}

func sealAD(m *chat.Message) []byte {
	return binary.BigEndian.AppendUint64(sealInfo(m), uint64(m.Timestamp))
}

// x25519Secret computes the shared secret of the spec from scratch: the
// clamped first half of SHA-512 of the seed as the scalar (crypto/ecdh
// clamps), and the other key's Edwards y mapped to Montgomery u = (1+y)/(1-y)
// mod 2^255-19 with math/big.
func x25519Secret(seed []byte, other ledger.Address) ([]byte, error) {
	h := sha512.Sum512(seed)
	sk, err := ecdh.X25519().NewPrivateKey(h[:32])
	if err != nil {
		return nil, err
	}
	p := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	le := slices.Clone(other[:])
	le[31] &= 0x7f // the sign of x
	slices.Reverse(le)
	y := new(big.Int).SetBytes(le)
	num := new(big.Int).Add(big.NewInt(1), y)
	den := new(big.Int).Sub(big.NewInt(1), y)
	den.Mod(den, p)
	u := num.Mul(num, den.ModInverse(den, p))
	u.Mod(u, p)
	ub := u.FillBytes(make([]byte, 32))
	slices.Reverse(ub)
	pk, err := ecdh.X25519().NewPublicKey(ub)
	if err != nil {
		return nil, err
	}
	return sk.ECDH(pk)
}

func TestVectors(t *testing.T) {
	want, err := generateVectors()
	if err != nil {
		t.Fatalf("generating vectors: %v", err)
	}
	if *update {
		if err := os.WriteFile(vectorsPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatalf("%v (run go test ./chat -run TestVectors -update)", err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("%s is stale: run go test ./chat -run TestVectors -update", vectorsPath)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f vectorFile
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("decoding %s: %v", vectorsPath, err)
	}
	if len(f.Keys) == 0 || len(f.Messages) == 0 {
		t.Fatal("no vectors")
	}
	for _, k := range f.Keys {
		if got := addr(ed25519.NewKeyFromSeed(mustHex(t, k.Seed))); got != k.Address {
			t.Errorf("key %s: seed gives address %s, file says %s", k.Name, got, k.Address)
		}
	}
	sealed := 0
	for _, v := range f.Messages {
		t.Run(v.Name, func(t *testing.T) {
			fromPriv := ed25519.NewKeyFromSeed(mustHex(t, v.FromSeed))
			toPriv := ed25519.NewKeyFromSeed(mustHex(t, v.ToSeed))
			m := v.Message
			if got := addr(fromPriv); got != v.From || m.From != v.From {
				t.Errorf("from: seed gives %s, message says %s, file says %s", got, m.From, v.From)
			}
			if got := addr(toPriv); got != v.To || m.To != v.To {
				t.Errorf("to: seed gives %s, message says %s, file says %s", got, m.To, v.To)
			}
			if m.Timestamp != v.Timestamp {
				t.Errorf("timestamp: message says %d, file says %d", m.Timestamp, v.Timestamp)
			}
			if v.Nonce == "" {
				if m.Message != v.Text {
					t.Errorf("text: message says %q, file says %q", m.Message, v.Text)
				}
			} else {
				sealed++
				checkSealedVector(t, v, fromPriv, toPriv)
			}
			pre := preimage(&m)
			if got := hex.EncodeToString(pre); got != v.Preimage {
				t.Errorf("preimage got\n%s\nfile says\n%s", got, v.Preimage)
			}
			if got := hex.EncodeToString(m.AppendPreimage(nil)); got != v.Preimage {
				t.Errorf("AppendPreimage got\n%s\nfile says\n%s", got, v.Preimage)
			}
			if sum := ledger.Hash(sha256.Sum256(pre)); sum != v.Hash || m.Hash() != v.Hash {
				t.Errorf("hash: SHA-256 of the preimage %s, Hash %s, file says %s", sum, m.Hash(), v.Hash)
			}
			if got := ed25519.Sign(fromPriv, v.Hash[:]); !bytes.Equal(got, v.Signature[:]) || m.Signature != v.Signature {
				t.Errorf("signature: signing the hash gives %x, message carries %s, file says %s", got, m.Signature, v.Signature)
			}
			resigned := chat.Message{To: m.To, Message: m.Message, Timestamp: m.Timestamp}
			if resigned.Sign(fromPriv); resigned != m {
				t.Errorf("Sign got %+v, want %+v", resigned, m)
			}
			if err := m.Check(); err != nil {
				t.Errorf("Check got %v, want nil", err)
			}
			bin := mustHex(t, v.Binary)
			if got, err := m.MarshalBinary(); err != nil || !bytes.Equal(got, bin) {
				t.Errorf("binary got %x, %v, file says %s", got, err, v.Binary)
			}
			if got := slices.Concat(pre[15:], m.Signature[:]); !bytes.Equal(got, bin) {
				t.Errorf("binary is not the preimage without its tag, then the signature: got %x, file says %s", got, v.Binary)
			}
			var back chat.Message
			if err := back.UnmarshalBinary(bin); err != nil || back != m {
				t.Errorf("UnmarshalBinary got %+v, %v, want %+v", back, err, m)
			}
		})
	}
	if sealed == 0 {
		t.Error("no sealed vector")
	}
}

func checkSealedVector(t *testing.T, v messageVector, fromPriv, toPriv ed25519.PrivateKey) {
	t.Helper()
	m := v.Message
	if m.Message != v.SealedText {
		t.Errorf("text: message says %q, file's sealed_text %q", m.Message, v.SealedText)
	}
	if !chat.IsSealed(&m) {
		t.Errorf("IsSealed(%q) got false, want true", m.Message)
	}
	nonce := mustHex(t, v.Nonce)
	re := chat.Message{To: v.To, Timestamp: v.Timestamp}
	if err := chat.Seal(fromPriv, &re, []byte(v.Text), bytes.NewReader(nonce)); err != nil || re.Message != v.SealedText || re.From != v.From {
		t.Errorf("Seal got %q from %s, %v; file says %q from %s", re.Message, re.From, err, v.SealedText, v.From)
	}
	secret := mustHex(t, v.SharedSecret)
	for _, s := range []struct {
		name  string
		priv  ed25519.PrivateKey
		other ledger.Address
	}{{"sender's", fromPriv, v.To}, {"recipient's", toPriv, v.From}} {
		if got, err := chat.SharedSecret(s.priv, s.other); err != nil || !bytes.Equal(got, secret) {
			t.Errorf("SharedSecret from the %s side got %x, %v, file says %s", s.name, got, err, v.SharedSecret)
		}
		if got, err := x25519Secret(s.priv.Seed(), s.other); err != nil || !bytes.Equal(got, secret) {
			t.Errorf("X25519 spelled out, from the %s side, got %x, %v, file says %s", s.name, got, err, v.SharedSecret)
		}
	}
	key, err := hkdf.Key(sha256.New, secret, nil, string(sealInfo(&m)), 32)
	if err != nil || hex.EncodeToString(key) != v.Key {
		t.Errorf("HKDF key got %x, %v, file says %s", key, err, v.Key)
	}
	ad := sealAD(&m)
	if got := hex.EncodeToString(ad); got != v.AdditionalData {
		t.Errorf("additional data got %s, file says %s", got, v.AdditionalData)
	}
	if !strings.HasPrefix(v.SealedText, "e2e1:") {
		t.Fatalf("sealed_text %q lacks the prefix e2e1:", v.SealedText)
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(v.SealedText[len("e2e1:"):])
	if err != nil {
		t.Fatalf("sealed_text is not base64url without padding: %v", err)
	}
	if got, want := len(raw), 12+len(v.Text)+16; got != want {
		t.Errorf("sealed payload %d bytes, want nonce + plaintext + tag = %d", got, want)
	}
	if !bytes.Equal(raw[:12], nonce) {
		t.Errorf("sealed payload opens with %x, want the nonce %s", raw[:12], v.Nonce)
	}
	if pt, err := openSpelledOut(key, raw, ad); err != nil || string(pt) != v.Text {
		t.Errorf("AES-256-GCM spelled out opens to %q, %v, want %q", pt, err, v.Text)
	}
	for _, priv := range []ed25519.PrivateKey{fromPriv, toPriv} {
		if pt, err := chat.Open(priv, &m); err != nil || string(pt) != v.Text {
			t.Errorf("Open by %s got %q, %v, want %q", addr(priv), pt, err, v.Text)
		}
	}
	if !utf8.ValidString(m.Message) || len(m.Message) > chat.MaxMessageBytes {
		t.Errorf("sealed text of %d bytes is not a valid message text", len(m.Message))
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}
