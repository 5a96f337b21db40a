package chat_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/ledger"
)

// openSpelledOut decrypts a sealed payload (nonce || ciphertext || tag)
// with AES-256-GCM, independently of the package.
func openSpelledOut(key, raw, ad []byte) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return aead.Open(nil, raw[:12], raw[12:], ad)
}

// sealedMessage returns plaintext sealed and signed by alice for bob at
// vecEpoch, with a fixed nonce.
func sealedMessage(t testing.TB, plaintext []byte) *chat.Message {
	t.Helper()
	m := &chat.Message{To: addr(vecKey(bob)), Timestamp: vecEpoch}
	if err := chat.Seal(vecKey(alice), m, plaintext, bytes.NewReader(seq(0, 12))); err != nil {
		t.Fatal(err)
	}
	m.Sign(vecKey(alice))
	return m
}

func TestMaxSealedPlaintext(t *testing.T) {
	// 4096 bytes of text less the 5 of the prefix leave 4091 characters of
	// base64, which carry 3068 bytes; less the nonce and the tag, 3040.
	if got, want := chat.MaxSealedPlaintext, 3040; got != want {
		t.Errorf("MaxSealedPlaintext got %d, want %d", got, want)
	}
	if got, want := base64.RawURLEncoding.EncodedLen(12+chat.MaxSealedPlaintext+16)+len(chat.SealedPrefix), chat.MaxMessageBytes; got != want {
		t.Errorf("a sealed text of MaxSealedPlaintext is %d bytes, want %d", got, want)
	}
}

func TestSealOpen(t *testing.T) {
	binaryBytes := make([]byte, 256)
	for i := range binaryBytes {
		binaryBytes[i] = byte(i)
	}
	tests := []struct {
		name      string
		plaintext []byte
	}{
		{"empty", nil},
		{"short", []byte("The door code is 4711.")},
		{"multi-byte UTF-8", []byte("Grüße — 日本語 🙂")},
		{"not UTF-8", binaryBytes},
		{"MaxSealedPlaintext", bytes.Repeat([]byte{0xff}, chat.MaxSealedPlaintext)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &chat.Message{To: addr(vecKey(bob)), Timestamp: vecEpoch}
			if err := chat.Seal(vecKey(alice), m, tt.plaintext, rand.Reader); err != nil {
				t.Fatalf("Seal got %v, want nil", err)
			}
			if got, want := m.From, addr(vecKey(alice)); got != want {
				t.Errorf("Seal: from got %s, want %s", got, want)
			}
			if !chat.IsSealed(m) || !strings.HasPrefix(m.Message, "e2e1:") {
				t.Errorf("Seal: text got %.20q, want it to open with e2e1:", m.Message)
			}
			if got, want := len(m.Message), len("e2e1:")+base64.RawURLEncoding.EncodedLen(12+len(tt.plaintext)+16); got != want {
				t.Errorf("sealed text of %d bytes, want %d", got, want)
			}
			if !utf8.ValidString(m.Message) || len(m.Message) > chat.MaxMessageBytes {
				t.Errorf("sealed text of %d bytes is not a valid message text", len(m.Message))
			}
			m.Sign(vecKey(alice))
			if err := m.Check(); err != nil {
				t.Errorf("Check of the sealed message got %v, want nil", err)
			}
			for _, k := range []struct {
				name string
				n    byte
			}{{"sender", alice}, {"recipient", bob}} {
				pt, err := chat.Open(vecKey(k.n), m)
				if err != nil || !bytes.Equal(pt, tt.plaintext) {
					t.Errorf("Open by the %s got %q, %v, want %q", k.name, pt, err, tt.plaintext)
				}
			}
			if pt, err := chat.Open(vecKey(carol), m); err == nil || errors.Is(err, chat.ErrNotSealed) {
				t.Errorf("Open by a third key got %q, %v, want an error", pt, err)
			}
			// A binary round trip keeps it readable.
			b, _ := m.MarshalBinary()
			var back chat.Message
			if err := back.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			if pt, err := chat.Open(vecKey(bob), &back); err != nil || !bytes.Equal(pt, tt.plaintext) {
				t.Errorf("Open after a binary round trip got %q, %v, want %q", pt, err, tt.plaintext)
			}
		})
	}
}

func TestSealTooLong(t *testing.T) {
	m := &chat.Message{To: addr(vecKey(bob)), Timestamp: vecEpoch}
	if err := chat.Seal(vecKey(alice), m, make([]byte, chat.MaxSealedPlaintext+1), rand.Reader); err == nil {
		t.Errorf("Seal of MaxSealedPlaintext+1 bytes got nil (a text of %d bytes), want an error", len(m.Message))
	}
	if m.Message != "" {
		t.Errorf("a refused Seal set the text to %.20q…, want it empty", m.Message)
	}
}

func TestSealSameSeedsSameText(t *testing.T) {
	a, b := sealedMessage(t, []byte("x")), sealedMessage(t, []byte("x"))
	if a.Message != b.Message {
		t.Errorf("Seal with the same nonce got %q and %q, want the same text", a.Message, b.Message)
	}
	c := &chat.Message{To: addr(vecKey(bob)), Timestamp: vecEpoch}
	if err := chat.Seal(vecKey(alice), c, []byte("x"), bytes.NewReader(seq(1, 12))); err != nil {
		t.Fatal(err)
	}
	if c.Message == a.Message {
		t.Errorf("Seal with another nonce got the same text %q, want another", c.Message)
	}
}

func TestSealNonceError(t *testing.T) {
	m := &chat.Message{To: addr(vecKey(bob)), Timestamp: vecEpoch}
	if err := chat.Seal(vecKey(alice), m, []byte("x"), bytes.NewReader(make([]byte, 11))); err == nil {
		t.Errorf("Seal with an 11-byte nonce source got nil, text %q, want an error", m.Message)
	}
}

func TestSealToBadKey(t *testing.T) {
	for _, tt := range []struct {
		name string
		to   ledger.Address
		want string
	}{
		// y = 0 is the point (sqrt(-1), 0), of order 4.
		{"zero, a point of order 4", ledger.Address{}, "low-order"},
		// y = 1 is the neutral element.
		{"the identity", ledger.Address{1}, "low-order"},
		// y = 2 gives x^2 = 3/(4d + 1), which has no root.
		{"not on the curve", ledger.Address{2}, "not a valid public key"},
	} {
		m := &chat.Message{To: tt.to, Timestamp: vecEpoch}
		if err := chat.Seal(vecKey(alice), m, []byte("x"), rand.Reader); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Seal got %v, want an error saying %q", tt.name, err, tt.want)
		}
		if s, err := chat.SharedSecret(vecKey(alice), tt.to); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: SharedSecret got %x, %v, want an error saying %q", tt.name, s, err, tt.want)
		}
	}
}

func TestSharedSecret(t *testing.T) {
	ab, err := chat.SharedSecret(vecKey(alice), addr(vecKey(bob)))
	if err != nil {
		t.Fatal(err)
	}
	ba, err := chat.SharedSecret(vecKey(bob), addr(vecKey(alice)))
	if err != nil {
		t.Fatal(err)
	}
	ac, err := chat.SharedSecret(vecKey(alice), addr(vecKey(carol)))
	if err != nil {
		t.Fatal(err)
	}
	if len(ab) != 32 {
		t.Errorf("shared secret of %d bytes, want 32", len(ab))
	}
	if !bytes.Equal(ab, ba) {
		t.Errorf("alice's side got %x, bob's %x, want them equal", ab, ba)
	}
	if bytes.Equal(ab, ac) {
		t.Errorf("alice-bob and alice-carol got the same secret %x, want different", ab)
	}
	if want, err := x25519Secret(vecKey(alice).Seed(), addr(vecKey(bob))); err != nil || !bytes.Equal(ab, want) {
		t.Errorf("got %x, want the spelled-out X25519 %x (%v)", ab, want, err)
	}
}

func TestOpenRefusesAltered(t *testing.T) {
	carolAddr := addr(vecKey(carol))
	reencode := func(m *chat.Message, edit func(raw []byte) []byte) {
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(m.Message, "e2e1:"))
		if err != nil {
			panic(err)
		}
		m.Message = "e2e1:" + base64.RawURLEncoding.EncodeToString(edit(raw))
	}
	tests := []struct {
		name string
		edit func(m *chat.Message)
	}{
		{"ciphertext byte changed", func(m *chat.Message) { reencode(m, func(r []byte) []byte { r[12] ^= 1; return r }) }},
		{"last ciphertext byte changed", func(m *chat.Message) { reencode(m, func(r []byte) []byte { r[len(r)-17] ^= 0x80; return r }) }},
		{"tag byte changed", func(m *chat.Message) { reencode(m, func(r []byte) []byte { r[len(r)-1] ^= 1; return r }) }},
		{"nonce byte changed", func(m *chat.Message) { reencode(m, func(r []byte) []byte { r[0] ^= 1; return r }) }},
		{"byte appended", func(m *chat.Message) { reencode(m, func(r []byte) []byte { return append(r, 0) }) }},
		{"last byte cut", func(m *chat.Message) { reencode(m, func(r []byte) []byte { return r[:len(r)-1] }) }},
		{"only nonce and tag left", func(m *chat.Message) { reencode(m, func(r []byte) []byte { return r[:28] }) }},
		{"shorter than nonce and tag", func(m *chat.Message) { reencode(m, func(r []byte) []byte { return r[:27] }) }},
		{"prefix alone", func(m *chat.Message) { m.Message = "e2e1:" }},
		{"not base64url", func(m *chat.Message) { m.Message = "e2e1:" + strings.Repeat("+/", 30) }},
		{"padded", func(m *chat.Message) { m.Message += "==" }},
		{"timestamp changed", func(m *chat.Message) { m.Timestamp++ }},
		{"from changed", func(m *chat.Message) { m.From = carolAddr }},
		{"to changed", func(m *chat.Message) { m.To = carolAddr }},
		{"from and to swapped", func(m *chat.Message) { m.From, m.To = m.To, m.From }},
	}
	for _, tt := range tests {
		m := sealedMessage(t, []byte("The door code is 4711."))
		tt.edit(m)
		for _, k := range []struct {
			name string
			n    byte
		}{{"alice", alice}, {"bob", bob}, {"carol", carol}} {
			if pt, err := chat.Open(vecKey(k.n), m); err == nil || errors.Is(err, chat.ErrNotSealed) {
				t.Errorf("%s: Open by %s got %q, %v, want an error", tt.name, k.name, pt, err)
			}
		}
	}
	// Re-signing an altered envelope does not help: the ciphertext is bound
	// to from, to and the timestamp, not only through the signature.
	m := sealedMessage(t, []byte("x"))
	m.Timestamp++
	m.Sign(vecKey(alice))
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	if pt, err := chat.Open(vecKey(bob), m); err == nil {
		t.Errorf("a re-signed message with another timestamp opens to %q, want an error", pt)
	}
}

func TestOpenNotSealed(t *testing.T) {
	for _, text := range []string{"Hello, Bob!", "", "e2e1", "E2E1:AAAA", " e2e1:AAAA", "e2e2:AAAA"} {
		m := signed("x")
		m.Message = text
		if chat.IsSealed(m) {
			t.Errorf("IsSealed(%q) got true, want false", text)
		}
		for _, n := range []byte{alice, bob, carol} {
			if pt, err := chat.Open(vecKey(n), m); !errors.Is(err, chat.ErrNotSealed) {
				t.Errorf("Open(%q) got %q, %v, want ErrNotSealed", text, pt, err)
			}
		}
	}
	if m := sealedMessage(t, []byte("x")); !chat.IsSealed(m) {
		t.Errorf("IsSealed(%q) got false, want true", m.Message)
	}
}

func TestSealToSelf(t *testing.T) {
	m := &chat.Message{To: addr(vecKey(alice)), Timestamp: vecEpoch}
	if err := chat.Seal(vecKey(alice), m, []byte("note to self"), rand.Reader); err != nil {
		t.Fatal(err)
	}
	if pt, err := chat.Open(vecKey(alice), m); err != nil || string(pt) != "note to self" {
		t.Errorf("Open of a note to self got %q, %v, want %q", pt, err, "note to self")
	}
	if pt, err := chat.Open(vecKey(bob), m); err == nil {
		t.Errorf("Open by another key got %q, want an error", pt)
	}
}

func FuzzOpen(f *testing.F) {
	for _, pt := range []string{"", "The door code is 4711.", strings.Repeat("a", 100)} {
		m := sealedMessage(f, []byte(pt))
		f.Add(strings.TrimPrefix(m.Message, "e2e1:"), m.Timestamp)
	}
	f.Add("", vecEpoch)
	f.Add("AAAA", int64(0))
	f.Add(strings.Repeat("A", 37), int64(-1))
	f.Add("!!!!\n\r====", vecEpoch)
	f.Fuzz(func(t *testing.T, text string, ts int64) {
		m := &chat.Message{From: addr(vecKey(alice)), To: addr(vecKey(bob)), Timestamp: ts, Message: "e2e1:" + text}
		a, errA := chat.Open(vecKey(alice), m)
		b, errB := chat.Open(vecKey(bob), m)
		if errors.Is(errA, chat.ErrNotSealed) || errors.Is(errB, chat.ErrNotSealed) {
			t.Fatalf("Open of %q got ErrNotSealed", m.Message)
		}
		// Both ends derive the same key, so they read the same.
		if (errA == nil) != (errB == nil) || !bytes.Equal(a, b) {
			t.Fatalf("alice got %q, %v; bob got %q, %v", a, errA, b, errB)
		}
		if _, err := chat.Open(vecKey(carol), m); err == nil {
			t.Fatalf("a third key opened %q", m.Message)
		}
	})
}
