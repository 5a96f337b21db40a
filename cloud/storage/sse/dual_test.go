package sse

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func newDualKey() []byte { return append(NewKey(), NewKey()...) }

// TestDualRoundTrip: a dual-layer key gives streams of the LSE2 format,
// of StreamSize's length, which decrypt whole and at any offset.
func TestDualRoundTrip(t *testing.T) {
	key := newDualKey()
	for _, n := range sizes {
		plain := body(n)
		stream := encrypt(t, key, plain)
		if string(stream[:4]) != magicDual {
			t.Fatalf("%d bytes: magic %q", n, stream[:4])
		}
		want := 20 + int64(n) + 32*chunks(int64(n))
		if got := StreamSize(key, int64(n)); int64(len(stream)) != want || got != want {
			t.Errorf("%d bytes: a stream of %d, StreamSize says %d, want %d", n, len(stream), got, want)
		}
		got, err := decrypt(key, stream, int64(n))
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("%d bytes: decrypted %d bytes, %v", n, len(got), err)
		}
		if n > 3 {
			d, _ := NewDecrypter(key, bytes.NewReader(stream), int64(n))
			d.Seek(int64(n-3), io.SeekStart)
			if tail, err := io.ReadAll(d); err != nil || !bytes.Equal(tail, plain[n-3:]) {
				t.Fatalf("%d bytes: the last three: %x, %v", n, tail, err)
			}
		}
	}
	if Layers(key) != 2 || Layers(NewKey()) != 1 || Layers(make([]byte, 48)) != 0 {
		t.Fatal("Layers miscounts")
	}
	if _, err := NewEncrypter(make([]byte, 48), bytes.NewReader(nil)); err == nil {
		t.Fatal("a key of 48 bytes was taken")
	}
}

// TestDualLayersAreBoth: each layer's key is needed, in its place; one
// layer alone, the keys swapped, or a stream of the other kind do not
// decrypt.
func TestDualLayersAreBoth(t *testing.T) {
	key := newDualKey()
	inner, outer := key[:KeySize], key[KeySize:]
	n := 2*ChunkSize + 10
	plain := body(n)
	stream := encrypt(t, key, plain)
	single := encrypt(t, inner, plain)
	chunk := ChunkSize + 2*tagSize
	header := 20
	swapped := bytes.Clone(stream)
	copy(swapped[header:], stream[header+chunk:header+2*chunk])
	copy(swapped[header+chunk:], stream[header:header+chunk])
	flip := func(i int) []byte { s := bytes.Clone(stream); s[i] ^= 1; return s }
	cases := []struct {
		name   string
		key    []byte
		stream []byte
	}{
		{"the inner key alone", inner, stream},
		{"the outer key alone", outer, stream},
		{"the keys swapped", append(bytes.Clone(outer), inner...), stream},
		{"the inner key and another outer", append(bytes.Clone(inner), NewKey()...), stream},
		{"another inner key", append(NewKey(), outer...), stream},
		{"a single-layer stream under a dual key", key, single},
		{"a bit of the outer prefix", key, flip(15)},
		{"a bit of the inner prefix", key, flip(5)},
		{"a bit of a chunk", key, flip(header + 100)},
		{"chunks swapped", key, swapped},
		{"the last chunk cut off", key, stream[:header+2*chunk]},
	}
	for _, tc := range cases {
		got, err := decrypt(tc.key, tc.stream, int64(n))
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %d bytes, %v; want ErrCorrupt", tc.name, len(got), err)
		}
	}
}
