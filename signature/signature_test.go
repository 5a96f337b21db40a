package signature_test

import (
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"filippo.io/edwards25519"
	"github.com/hdevalence/ed25519consensus"

	"github.com/latticenet/lattice/signature"
)

// signed is one (key, message, signature) triple.
type signed struct {
	pub      ed25519.PublicKey
	msg, sig []byte
}

func newSigned(t testing.TB, seed byte, msg string) signed {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(bytesOf(seed, ed25519.SeedSize))
	m := []byte(msg)
	return signed{priv.Public().(ed25519.PublicKey), m, ed25519.Sign(priv, m)}
}

func bytesOf(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

// withSmallOrderR signs s's message again with a point of order 8 added to
// the nonce point R, which the cofactored check ignores and the cofactorless
// one does not. seed is the seed of s's key.
//
// The order is 8, not 4, for the batch tests: a cofactorless batch
// equation multiplies the point by a random coefficient z, and misses it
// only when 8 divides z (one evaluation in 8; one in 4 for a point of
// order 4, which let a mutant survive a CI run).
func withSmallOrderR(t testing.TB, seed byte, s signed) signed {
	t.Helper()
	h := sha512.Sum512(bytesOf(seed, ed25519.SeedSize))
	a, err := new(edwards25519.Scalar).SetBytesWithClamping(h[:32])
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := hex.DecodeString("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
	torsion, err := new(edwards25519.Point).SetBytes(enc)
	if err != nil {
		t.Fatal(err)
	}
	times4 := new(edwards25519.Point).Add(torsion, torsion)
	times4.Add(times4, times4)
	if new(edwards25519.Point).MultByCofactor(torsion).Equal(edwards25519.NewIdentityPoint()) != 1 ||
		times4.Equal(edwards25519.NewIdentityPoint()) == 1 {
		t.Fatal("the torsion point is not of order 8")
	}
	nonce := sha512.Sum512(append([]byte("test nonce"), s.msg...))
	r, _ := new(edwards25519.Scalar).SetUniformBytes(nonce[:])
	R := new(edwards25519.Point).ScalarBaseMult(r)
	R.Add(R, torsion)
	k := sha512.New()
	k.Write(R.Bytes())
	k.Write(s.pub)
	k.Write(s.msg)
	kScalar, _ := new(edwards25519.Scalar).SetUniformBytes(k.Sum(nil))
	S := new(edwards25519.Scalar).MultiplyAdd(kScalar, a, r)
	return signed{s.pub, s.msg, append(R.Bytes(), S.Bytes()...)}
}

// withSPlusL returns s's signature with the group order added to S: the
// same point equation, but a non-canonical scalar, refused by every rule.
func withSPlusL(t testing.TB, s signed) signed {
	t.Helper()
	l, _ := hex.DecodeString("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")
	sig := append([]byte(nil), s.sig...)
	carry := 0
	for i := range 32 {
		v := int(sig[32+i]) + int(l[i]) + carry
		sig[32+i], carry = byte(v), v>>8
	}
	if carry != 0 {
		t.Fatal("S + L overflowed 32 bytes")
	}
	return signed{s.pub, s.msg, sig}
}

func flip(s signed, at int) signed {
	sig := append([]byte(nil), s.sig...)
	sig[at] ^= 1
	return signed{s.pub, s.msg, sig}
}

// TestVerifyRule pins the verification rule, ZIP 215, against Go's
// cofactorless crypto/ed25519: the same answers on ordinary signatures,
// and the documented differences on the edge cases.
func TestVerifyRule(t *testing.T) {
	good := newSigned(t, 1, "a block hash")
	identity := make([]byte, 32)
	identity[0] = 1
	// The identity point encoded as y = p + 1, a non-canonical encoding.
	nonCanonicalIdentity, _ := hex.DecodeString("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
	tests := []struct {
		name       string
		s          signed
		want, std  bool // ours, and crypto/ed25519's
		wantReason string
	}{
		{"valid", good, true, true, ""},
		{"other message", signed{good.pub, []byte("another"), good.sig}, false, false, ""},
		{"other key", signed{newSigned(t, 2, "").pub, good.msg, good.sig}, false, false, ""},
		{"R changed", flip(good, 0), false, false, ""},
		{"S changed", flip(good, 40), false, false, ""},
		{"S + L", withSPlusL(t, good), false, false, "S must be canonical"},
		{"short signature", signed{good.pub, good.msg, good.sig[:63]}, false, false, ""},
		{"short key", signed{good.pub[:31], good.msg, good.sig}, false, false, ""},
		{"small-order component in R", withSmallOrderR(t, 1, good), true, false, "cofactored equation"},
		{"small-order key, R identity, S zero", signed{identity, good.msg, append(append([]byte(nil), identity...), make([]byte, 32)...)}, true, true, ""},
		{"non-canonical R", signed{identity, good.msg, append(append([]byte(nil), nonCanonicalIdentity...), make([]byte, 32)...)}, true, false, "R may be non-canonical"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := signature.Verify(tt.s.pub, tt.s.msg, tt.s.sig); got != tt.want {
				t.Errorf("Verify = %v, want %v %s", got, tt.want, tt.wantReason)
			}
			if len(tt.s.pub) == ed25519.PublicKeySize {
				if got := ed25519.Verify(tt.s.pub, tt.s.msg, tt.s.sig); got != tt.std {
					t.Errorf("crypto/ed25519.Verify = %v, want %v", got, tt.std)
				}
			}
			// Whatever the batch around it, a signature gets the same answer.
			var b signature.Batch
			for i := range 5 {
				o := newSigned(t, byte(10+i), fmt.Sprint("other ", i))
				b.Add(o.pub, o.msg, o.sig)
			}
			b.Add(tt.s.pub, tt.s.msg, tt.s.sig)
			got := b.Verify()
			for i := range 5 {
				if !got[i] {
					t.Errorf("batch: valid signature %d refused", i)
				}
			}
			if got[5] != tt.want {
				t.Errorf("batch: got %v, want %v", got[5], tt.want)
			}
		})
	}
}

// edgeEncodings returns the 32-byte point encodings on which ZIP 215
// implementations have differed, each once: every encoding of a point of
// small order (a multiple of the order-8 point T; the 8 canonical ones and
// the 6 non-canonical ones, y + p where it fits in 255 bits and the sign
// bit set on x = 0), and y = k and y = p + k for k below 19 with either
// sign bit, the field's non-canonical corner, where they name a point. It
// also returns how many of them are of small order.
func edgeEncodings(t testing.TB) (encs [][]byte, smallOrder int) {
	t.Helper()
	prime := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	// le is the little-endian 32 bytes of y with the sign bit.
	le := func(y *big.Int, sign bool) []byte {
		b := y.FillBytes(make([]byte, 32))
		slices.Reverse(b)
		if sign {
			b[31] |= 0x80
		}
		return b
	}
	seen := map[[32]byte]bool{}
	add := func(b []byte) {
		if _, err := new(edwards25519.Point).SetBytes(b); err == nil && !seen[[32]byte(b)] {
			seen[[32]byte(b)] = true
			encs = append(encs, b)
		}
	}
	enc, _ := hex.DecodeString("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
	T, err := new(edwards25519.Point).SetBytes(enc)
	if err != nil {
		t.Fatal(err)
	}
	P := edwards25519.NewIdentityPoint()
	for range 8 {
		c := P.Bytes()
		c[31] &= 0x7f
		y := new(big.Int).SetBytes(reversed(c))
		for _, sign := range []bool{false, true} {
			add(le(y, sign))
			if yp := new(big.Int).Add(y, prime); yp.BitLen() <= 255 {
				add(le(yp, sign))
			}
		}
		P.Add(P, T)
	}
	smallOrder = len(encs)
	for k := range int64(19) {
		for _, y := range []*big.Int{big.NewInt(k), new(big.Int).Add(prime, big.NewInt(k))} {
			add(le(y, false))
			add(le(y, true))
		}
	}
	return encs, smallOrder
}

func reversed(b []byte) []byte {
	out := slices.Clone(b)
	slices.Reverse(out)
	return out
}

// TestAgreesWithReference holds Verify and the batch equation to the
// answers of ed25519consensus, the reference ZIP 215 implementation, where
// implementations have differed: every pair of edge encodings (above) as
// key and R, with S zero (which the small-order pairs pass) and one (which
// nothing here passes: [8]B is not the identity). Alone, in Batch.Verify
// among good signatures, and, where the reference accepts, in the batch
// equation itself, without the one-by-one fallback that would hide a batch
// refusing a good signature.
func TestAgreesWithReference(t *testing.T) {
	encs, smallOrder := edgeEncodings(t)
	// docs/protocol.md gives these counts.
	if smallOrder != 14 || len(encs) != 54 {
		t.Fatalf("%d small-order encodings (want all 14), %d in all (want 54)", smallOrder, len(encs))
	}
	one := make([]byte, 32)
	one[0] = 1
	others := []signed{newSigned(t, 2, "a"), newSigned(t, 3, "b"), newSigned(t, 4, "c")}
	msg := []byte("Zcash")
	var accepted, refused int
	for _, A := range encs {
		for _, R := range encs {
			for _, S := range [][]byte{make([]byte, 32), one} {
				sig := append(append([]byte(nil), R...), S...)
				want := ed25519consensus.Verify(A, msg, sig)
				if got := signature.Verify(A, msg, sig); got != want {
					t.Errorf("A %x R %x S %x: Verify %v, reference %v", A, R, S[0], got, want)
				}
				var b signature.Batch
				for _, o := range others {
					b.Add(o.pub, o.msg, o.sig)
				}
				b.Add(A, msg, sig)
				if got := b.Verify(); got[3] != want || !got[0] || !got[1] || !got[2] {
					t.Errorf("A %x R %x S %x: batch %v, reference %v", A, R, S[0], got, want)
				}
				if want {
					accepted++
					// Twice, so that the key's term folds two signatures.
					b.Add(A, msg, sig)
					if !signature.BatchPasses(&b) {
						t.Errorf("A %x R %x S %x: the batch equation refuses what the reference accepts", A, R, S[0])
					}
				} else {
					refused++
				}
			}
		}
	}
	// Both answers must occur, or the table tests nothing.
	if accepted == 0 || refused == 0 {
		t.Fatalf("accepted %d, refused %d", accepted, refused)
	}
}

// TestLargeBatches checks batches past the size at which curve25519-voi's
// multiscalar multiplication changes algorithm (Straus below 190 terms,
// Pippenger above; the node verifies up to 1024 gossiped blocks at once),
// with signatures by one key and by many, some with a small-order
// component in R, with the keys not yet cached and then cached.
func TestLargeBatches(t *testing.T) {
	for _, keys := range []int{1, 7, 300} {
		t.Run(fmt.Sprint(keys, " keys"), func(t *testing.T) {
			var sigs []signed
			for i := range 300 {
				seed := byte(100 + i%keys)
				if keys > 1 && i >= 150 {
					seed = byte(i % 256) // past 256 distinct seeds: reuse
				}
				s := newSigned(t, seed, fmt.Sprint("large ", keys, " ", i))
				if i%37 == 5 {
					s = withSmallOrderR(t, seed, s)
				}
				sigs = append(sigs, s)
			}
			var b signature.Batch
			for _, s := range sigs {
				b.Add(s.pub, s.msg, s.sig)
			}
			for _, cache := range []string{"cold", "warm"} {
				if !signature.BatchPasses(&b) {
					t.Fatalf("%s: a good batch of %d does not pass whole", cache, len(sigs))
				}
			}
			b.Reset()
			for i, s := range sigs {
				if i == 211 {
					s = flip(s, 40)
				}
				b.Add(s.pub, s.msg, s.sig)
			}
			if signature.BatchPasses(&b) {
				t.Fatal("a batch holding a bad signature passes whole")
			}
			for i, ok := range b.Verify() {
				if ok != (i != 211) {
					t.Errorf("signature %d: %v", i, ok)
				}
			}
		})
	}
}

// FuzzVerifyAgreesWithReference checks Verify against ed25519consensus on
// arbitrary keys, messages and signatures.
func FuzzVerifyAgreesWithReference(f *testing.F) {
	good := newSigned(f, 1, "seed")
	f.Add([]byte(good.pub), good.msg, good.sig)
	f.Add([]byte(good.pub), good.msg, withSmallOrderR(f, 1, good).sig)
	f.Add([]byte(good.pub), good.msg, withSPlusL(f, good).sig)
	encs, _ := edgeEncodings(f)
	f.Add(encs[0], []byte("Zcash"), append(append([]byte(nil), encs[3]...), make([]byte, 32)...))
	f.Fuzz(func(t *testing.T, pub, msg, sig []byte) {
		if got, want := signature.Verify(pub, msg, sig), ed25519consensus.Verify(pub, msg, sig); got != want {
			t.Fatalf("Verify %v, reference %v", got, want)
		}
	})
}

// TestBatchAgreesWithVerify checks Batch.Verify against Verify one by one
// on batches of every size up to 70 with bad signatures in random places.
func TestBatchAgreesWithVerify(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := make([]signed, 0, 80)
	for i := range 80 {
		s := newSigned(t, byte(i), fmt.Sprint("message ", i))
		switch rng.IntN(6) {
		case 0:
			s = flip(s, rng.IntN(64))
		case 1:
			s = withSmallOrderR(t, byte(i), s)
		case 2:
			s = signed{s.pub, []byte("tampered"), s.sig}
		}
		pool = append(pool, s)
	}
	var b signature.Batch
	for n := range 71 {
		b.Reset()
		picked := make([]signed, n)
		for i := range picked {
			picked[i] = pool[rng.IntN(len(pool))]
			b.Add(picked[i].pub, picked[i].msg, picked[i].sig)
		}
		if b.Len() != n {
			t.Fatalf("Len = %d, want %d", b.Len(), n)
		}
		got := b.Verify()
		if len(got) != n {
			t.Fatalf("batch of %d: %d answers", n, len(got))
		}
		for i, s := range picked {
			if want := signature.Verify(s.pub, s.msg, s.sig); got[i] != want {
				t.Errorf("batch of %d, signature %d: got %v, want %v", n, i, got[i], want)
			}
		}
	}
}

// TestBatchOneKey checks batches whose signatures share keys, which
// Batch.Verify folds into one term per key: a bad signature among a key's
// good ones is still found, wherever it sits.
func TestBatchOneKey(t *testing.T) {
	var chain, pair []signed
	for i := range 64 {
		chain = append(chain, newSigned(t, 7, fmt.Sprint("block ", i)))
		pair = append(pair, newSigned(t, byte(8+i%2), fmt.Sprint("block ", i)))
	}
	tests := []struct {
		name string
		sigs []signed
		bad  int // -1: none
	}{
		{"one key, all good", chain, -1},
		{"one key, first bad", chain, 0},
		{"one key, middle bad", chain, 31},
		{"one key, last bad", chain, 63},
		{"two keys alternating, all good", pair, -1},
		{"two keys alternating, one bad", pair, 10},
		{"one key, small-order R", chain, -2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sigs := append([]signed(nil), tt.sigs...)
			switch {
			case tt.bad >= 0:
				sigs[tt.bad] = signed{sigs[tt.bad].pub, []byte("tampered"), sigs[tt.bad].sig}
			case tt.bad == -2:
				// Valid under the cofactored rule: the batch must agree.
				sigs[5] = withSmallOrderR(t, 7, sigs[5])
			}
			var b signature.Batch
			for _, s := range sigs {
				b.Add(s.pub, s.msg, s.sig)
			}
			// Whole, without the fallback that would hide a refusal of
			// good signatures: with the keys not yet cached, then cached,
			// many times, each with new random coefficients, so that an
			// equation that misses a small-order component for some
			// coefficients (one in 8) is caught in all but 8⁻²⁰ runs.
			for round := range 20 {
				cache := "warm"
				if round == 0 {
					cache = "cold"
				}
				if got, want := signature.BatchPasses(&b), tt.bad < 0; got != want {
					t.Fatalf("%s, round %d: the batch passes whole: %v, want %v", cache, round, got, want)
				}
			}
			if err := signature.CheckCachedKeys(); err != nil {
				t.Error(err)
			}
			for i, got := range b.Verify() {
				if want := signature.Verify(sigs[i].pub, sigs[i].msg, sigs[i].sig); got != want {
					t.Errorf("signature %d: got %v, want %v", i, got, want)
				}
				if want := i != tt.bad; got != want {
					t.Errorf("signature %d: got %v, want %v", i, got, want)
				}
			}
		})
	}
}

// TestBatchPassesWhole checks that batches of good signatures pass as a
// whole, whatever mix of repeated and distinct keys they hold, including a
// key written in two encodings (the identity point as y = 1 and as the
// non-canonical y = p + 1, which ZIP 215 accepts and the cache keeps apart).
func TestBatchPassesWhole(t *testing.T) {
	identity := make([]byte, 32)
	identity[0] = 1
	identityPlusP, _ := hex.DecodeString("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
	zeroS := make([]byte, 32)
	// R = identity, S = 0 is a valid signature by the identity key of any
	// message under the cofactored check: [8]0B = [8]R + [8]kA = 0.
	trivial := func(pub []byte, msg string) signed {
		return signed{pub, []byte(msg), append(append([]byte(nil), identity...), zeroS...)}
	}
	var mixed []signed
	for i := range 70 {
		mixed = append(mixed, newSigned(t, byte(20+i%5*(1+i%3)), fmt.Sprint("mixed ", i)))
	}
	tests := []struct {
		name string
		sigs []signed
	}{
		{"identity key in two encodings", []signed{trivial(identity, "a"), trivial(identityPlusP, "b"), newSigned(t, 1, "c"), trivial(identity, "d")}},
		{"3, mixed keys", mixed[:3]},
		{"4, mixed keys", mixed[:4]},
		{"70, mixed keys", mixed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b signature.Batch
			for _, s := range tt.sigs {
				if !signature.Verify(s.pub, s.msg, s.sig) {
					t.Fatalf("%x does not verify alone", s.sig)
				}
				b.Add(s.pub, s.msg, s.sig)
			}
			for _, cache := range []string{"cold", "warm"} {
				if !signature.BatchPasses(&b) {
					t.Errorf("%s: the batch does not pass whole", cache)
				}
			}
			if err := signature.CheckCachedKeys(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestBatchConcurrent verifies batches with overlapping keys from several
// goroutines at once, sharing the key cache (run it with -race).
func TestBatchConcurrent(t *testing.T) {
	var pool []signed
	for i := range 48 {
		pool = append(pool, newSigned(t, byte(40+i%12), fmt.Sprint("concurrent ", i)))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b signature.Batch
			for round := range 20 {
				b.Reset()
				for i := range 16 {
					s := pool[(g*5+round*3+i)%len(pool)]
					b.Add(s.pub, s.msg, s.sig)
				}
				if !signature.BatchPasses(&b) {
					t.Errorf("goroutine %d, round %d: a good batch failed", g, round)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := signature.CheckCachedKeys(); err != nil {
		t.Error(err)
	}
}

// FuzzBatch checks that an arbitrary (key, message, signature) gets the
// same answer alone and inside a batch of valid signatures.
func FuzzBatch(f *testing.F) {
	good := newSigned(f, 1, "seed")
	f.Add([]byte(good.pub), good.msg, good.sig)
	f.Add([]byte(good.pub), good.msg, withSmallOrderR(f, 1, good).sig)
	f.Add(make([]byte, 32), []byte{}, make([]byte, 64))
	others := []signed{newSigned(f, 2, "a"), newSigned(f, 3, "b"), newSigned(f, 4, "c")}
	sameKey := []signed{newSigned(f, 1, "a"), newSigned(f, 1, "b"), newSigned(f, 1, "c")}
	f.Add([]byte(good.pub), []byte("another message"), good.sig)
	f.Fuzz(func(t *testing.T, pub, msg, sig []byte) {
		want := signature.Verify(pub, msg, sig)
		var b signature.Batch
		b.Add(others[0].pub, others[0].msg, others[0].sig)
		b.Add(pub, msg, sig)
		b.Add(others[1].pub, others[1].msg, others[1].sig)
		b.Add(others[2].pub, others[2].msg, others[2].sig)
		got := b.Verify()
		if got[1] != want || !got[0] || !got[2] || !got[3] {
			t.Fatalf("batch %v, alone %v", got, want)
		}
		// The same among signatures by good's key, whose term the fuzzed
		// signature shares when its key is good's.
		b.Reset()
		b.Add(sameKey[0].pub, sameKey[0].msg, sameKey[0].sig)
		b.Add(pub, msg, sig)
		b.Add(sameKey[1].pub, sameKey[1].msg, sameKey[1].sig)
		b.Add(sameKey[2].pub, sameKey[2].msg, sameKey[2].sig)
		got = b.Verify()
		if got[1] != want || !got[0] || !got[2] || !got[3] {
			t.Fatalf("batch by one key %v, alone %v", got, want)
		}
	})
}

func BenchmarkVerify(b *testing.B) {
	s := newSigned(b, 1, "a block hash")
	for b.Loop() {
		if !signature.Verify(s.pub, s.msg, s.sig) {
			b.Fatal("refused")
		}
	}
}

// BenchmarkBatch verifies batches of n signatures by n keys.
func BenchmarkBatch(b *testing.B) {
	benchmarkBatches(b, []int{2, 3, 4, 8, 16, 64, 256}, func(i int) byte { return byte(i) })
}

// BenchmarkBatchOneKey is a chain's blocks arriving together, as in sync:
// every signature by one key.
func BenchmarkBatchOneKey(b *testing.B) {
	benchmarkBatches(b, []int{16, 64}, func(int) byte { return 1 })
}

// benchmarkBatches verifies batches of each size, signature i by the key
// of seed(i), and reports the time per signature.
func benchmarkBatches(b *testing.B, sizes []int, seed func(i int) byte) {
	for _, n := range sizes {
		items := make([]signed, n)
		for i := range items {
			items[i] = newSigned(b, seed(i), fmt.Sprint("message ", i))
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var batch signature.Batch
			for b.Loop() {
				batch.Reset()
				for _, s := range items {
					batch.Add(s.pub, s.msg, s.sig)
				}
				for _, ok := range batch.Verify() {
					if !ok {
						b.Fatal("refused")
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1e3, "µs/signature")
		})
	}
}
