package timekeeping_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/latticenet/lattice/internal/testkit/golden"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/timekeeping"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors.json")

func key(i int) ed25519.PrivateKey {
	seed := make([]byte, 32)
	seed[0] = byte(0x10 + i)
	return ed25519.NewKeyFromSeed(seed)
}

func addr(k ed25519.PrivateKey) ledger.Address {
	var a ledger.Address
	copy(a[:], k.Public().(ed25519.PublicKey))
	return a
}

var (
	network = ledger.Hash{0x6e, 0x65, 0x74}
	lease   = ledger.Hash{0x1e, 0xa5, 0xe0}
	notice  = ledger.Hash{0x40, 0x71, 0xce} // a consumer's notice, which an ending names
)

// committee is 3 of 4 keys, 5 s precision; ks[i] in ascending order of
// address, the order a block carries attestations in.
func committee() (timekeeping.Committee, []ed25519.PrivateKey) {
	var ks []ed25519.PrivateKey
	var as []ledger.Address
	for i := range 4 {
		ks = append(ks, key(i))
	}
	slices.SortFunc(ks, func(a, b ed25519.PrivateKey) int { x, y := addr(a), addr(b); return bytes.Compare(x[:], y[:]) })
	for _, k := range ks {
		as = append(as, addr(k))
	}
	return timekeeping.Committee{Keys: as, Threshold: 3, PrecisionMS: 5000}, ks
}

func TestJudge(t *testing.T) {
	c, ks := committee()
	const t0 = 1767225600000
	at := func(i int, ts int64) ledger.Attestation {
		return timekeeping.Sign(ks[i], network, timekeeping.Start, lease, ts)
	}
	outsider := key(9)
	cases := []struct {
		name   string
		atts   []ledger.Attestation
		c      *timekeeping.Committee
		want   int64
		detail string
	}{
		{name: "three of four, median", atts: []ledger.Attestation{at(0, t0+300), at(1, t0), at(2, t0+100)}, want: t0 + 100},
		{name: "all four, lower middle", atts: []ledger.Attestation{at(0, t0+300), at(1, t0), at(2, t0+100), at(3, t0+400)}, want: t0 + 100},
		{name: "a lying timekeeper moves nothing past the honest range", atts: []ledger.Attestation{at(0, t0+4000), at(1, t0), at(2, t0+100)}, want: t0 + 100},
		{name: "spread exactly the precision", atts: []ledger.Attestation{at(0, t0), at(1, t0+5000), at(2, t0+5000)}, want: t0 + 5000},
		{name: "too few", atts: []ledger.Attestation{at(0, t0), at(1, t0)}, detail: "threshold is 3"},
		{name: "too spread", atts: []ledger.Attestation{at(0, t0), at(1, t0+5001), at(2, t0)}, detail: "more than the committee's precision"},
		{name: "one key twice", atts: []ledger.Attestation{at(0, t0), at(0, t0+1), at(2, t0)}, detail: "each key once"},
		{name: "not in order of key", atts: []ledger.Attestation{at(1, t0), at(0, t0), at(2, t0)}, detail: "ascending order of public key"},
		{name: "not a member", atts: []ledger.Attestation{timekeeping.Sign(outsider, network, timekeeping.Start, lease, t0), at(0, t0), at(1, t0)}, detail: "not a member"},
		{name: "signed for the end, not the start", atts: []ledger.Attestation{at(0, t0), at(1, t0), timekeeping.Sign(ks[2], network, timekeeping.End, lease, t0)}, detail: "does not verify"},
		{name: "signed for another lease", atts: []ledger.Attestation{at(0, t0), at(1, t0), timekeeping.Sign(ks[2], network, timekeeping.Start, ledger.Hash{9}, t0)}, detail: "does not verify"},
		{name: "signed on another network", atts: []ledger.Attestation{at(0, t0), at(1, t0), timekeeping.Sign(ks[2], ledger.Hash{9}, timekeeping.Start, lease, t0)}, detail: "does not verify"},
		{name: "timestamp changed after signing", atts: func() []ledger.Attestation {
			a := at(2, t0)
			a.Timestamp++
			return []ledger.Attestation{at(0, t0), at(1, t0), a}
		}(), detail: "does not verify"},
		{name: "no committee", atts: []ledger.Attestation{at(0, t0)}, c: &timekeeping.Committee{}, detail: "no timekeeper committee"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cc := c
			if tc.c != nil {
				cc = *tc.c
			}
			got, err := timekeeping.Judge(network, cc, timekeeping.Start, lease, tc.atts)
			if tc.detail == "" {
				if err != nil || got != tc.want {
					t.Fatalf("Judge = %d, %v; want %d", got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, timekeeping.ErrInvalid) || !strings.Contains(err.Error(), tc.detail) {
				t.Fatalf("Judge = %d, %v; want an error saying %q", got, err, tc.detail)
			}
		})
	}
}

func TestEquivocation(t *testing.T) {
	_, ks := committee()
	a := timekeeping.Sign(ks[0], network, timekeeping.End, lease, 1000)
	b := timekeeping.Sign(ks[0], network, timekeeping.End, lease, 2000)
	if ev, ok := timekeeping.Equivocation(network, timekeeping.End, lease, 5000, a, b); !ok || ev.Key != addr(ks[0]) || ev.Purpose != "end" {
		t.Fatalf("two timestamps for one lease's end are no evidence: %+v %v", ev, ok)
	}
	if _, ok := timekeeping.Equivocation(network, timekeeping.End, lease, 5000, a, a); ok {
		t.Fatal("one attestation twice is evidence")
	}
	forged := b
	forged.Signature[0] ^= 1
	if _, ok := timekeeping.Equivocation(network, timekeeping.End, lease, 5000, a, forged); ok {
		t.Fatal("a forged attestation is evidence")
	}
	other := timekeeping.Sign(ks[1], network, timekeeping.End, lease, 2000)
	if _, ok := timekeeping.Equivocation(network, timekeeping.End, lease, 5000, a, other); ok {
		t.Fatal("two keys' attestations are evidence")
	}
	// Starts are renewed every half precision window: two starts that far
	// apart are an honest member's; closer, they are evidence.
	start := func(ts int64) ledger.Attestation {
		return timekeeping.Sign(ks[0], network, timekeeping.Start, lease, ts)
	}
	for _, tc := range []struct {
		a, b int64
		want bool
	}{
		{1000, 3501, false}, {3501, 1000, false}, {1000, 3500, true}, {1000, 1001, true}, {3500, 1000, true},
	} {
		if _, ok := timekeeping.Equivocation(network, timekeeping.Start, lease, 5000, start(tc.a), start(tc.b)); ok != tc.want {
			t.Errorf("starts at %d and %d, a window of 5000 ms: evidence %v, want %v", tc.a, tc.b, ok, tc.want)
		}
	}
	if _, ok := timekeeping.Equivocation(network, timekeeping.Start, lease, 0, start(1000), start(1001)); ok {
		t.Error("starts of a lease whose committee is not known (precision 0) are evidence")
	}
}

func TestRenews(t *testing.T) {
	for _, tc := range []struct {
		purpose           timekeeping.Purpose
		precision, signed int64
		now               int64
		want              bool
	}{
		{timekeeping.Start, 5000, 1000, 3501, true},
		{timekeeping.Start, 5000, 1000, 3500, false},
		{timekeeping.Start, 5000, 1000, 1000, false},
		{timekeeping.Start, 5000, 9000, 1000, false}, // the clock went back
		{timekeeping.Start, 0, 1000, 90000, false},
		{timekeeping.End, 5000, 1000, 90000, false},
		{timekeeping.Expire, 5000, 1000, 90000, false},
		{timekeeping.Started, 5000, 1000, 90000, false},
		{timekeeping.Ending, 5000, 1000, 90000, false},
	} {
		if got := timekeeping.Renews(tc.purpose, tc.precision, tc.signed, tc.now); got != tc.want {
			t.Errorf("Renews(%s, precision %d, signed %d, now %d) = %v, want %v", tc.purpose, tc.precision, tc.signed, tc.now, got, tc.want)
		}
	}
}

type vecFile struct {
	Comment      []string     `json:"comment"`
	Network      ledger.Hash  `json:"network"`
	Lease        ledger.Hash  `json:"lease_hash"`
	Notice       ledger.Hash  `json:"notice_hash"`
	Committee    vecCommittee `json:"committee"`
	Attestations []vecAtt     `json:"attestations"`
	Judged       int64        `json:"judged_start_time"`
}

type vecCommittee struct {
	Seeds       []string         `json:"seeds"`
	Keys        []ledger.Address `json:"keys"`
	Threshold   int              `json:"threshold"`
	PrecisionMS int64            `json:"precision_ms"`
}

type vecAtt struct {
	Purpose     string             `json:"purpose"`
	Preimage    string             `json:"preimage"`
	Digest      ledger.Hash        `json:"digest"`
	Attestation ledger.Attestation `json:"attestation"`
}

func generate() vecFile {
	c, ks := committee()
	f := vecFile{
		Comment: []string{
			"Attestation vectors (docs/protocol.md, section 22). Seeds are ed25519 seeds (hex); each signature is",
			"ed25519 over digest = SHA-256(preimage). judged_start_time is the median of the three start attestations.",
			"The ending names the consumer's notice (notice_hash) in the lease's place.",
			"Regenerate: go test ./timekeeping -run TestVectors -update",
		},
		Network: network, Lease: lease, Notice: notice,
		Committee: vecCommittee{Keys: c.Keys, Threshold: c.Threshold, PrecisionMS: c.PrecisionMS},
	}
	for _, k := range ks {
		f.Committee.Seeds = append(f.Committee.Seeds, hex.EncodeToString(k.Seed()))
	}
	const t0 = 1767225600000
	for i, ts := range []int64{t0 + 250, t0, t0 + 1200} {
		a := timekeeping.Sign(ks[i], network, timekeeping.Start, lease, ts)
		f.Attestations = append(f.Attestations, vecAtt{Purpose: "start",
			Preimage: hex.EncodeToString(timekeeping.Preimage(network, timekeeping.Start, lease, ts)),
			Digest:   timekeeping.Digest(network, timekeeping.Start, lease, ts), Attestation: a})
	}
	end := timekeeping.Sign(ks[3], network, timekeeping.End, lease, t0+3600000)
	f.Attestations = append(f.Attestations, vecAtt{Purpose: "end",
		Preimage: hex.EncodeToString(timekeeping.Preimage(network, timekeeping.End, lease, t0+3600000)),
		Digest:   timekeeping.Digest(network, timekeeping.End, lease, t0+3600000), Attestation: end})
	ending := timekeeping.Sign(ks[2], network, timekeeping.Ending, notice, t0+900000)
	f.Attestations = append(f.Attestations, vecAtt{Purpose: "ending",
		Preimage: hex.EncodeToString(timekeeping.Preimage(network, timekeeping.Ending, notice, t0+900000)),
		Digest:   timekeeping.Digest(network, timekeeping.Ending, notice, t0+900000), Attestation: ending})
	var starts []ledger.Attestation
	for _, a := range f.Attestations[:3] {
		starts = append(starts, a.Attestation)
	}
	f.Judged, _ = timekeeping.Judge(network, c, timekeeping.Start, lease, starts)
	return f
}

func TestVectors(t *testing.T) {
	have := golden.JSON(t, "testdata/vectors.json", generate(), *update)
	var f vecFile
	if err := json.Unmarshal(have, &f); err != nil {
		t.Fatal(err)
	}
	for i, v := range f.Attestations {
		p, err := timekeeping.ParsePurpose(v.Purpose)
		if err != nil {
			t.Fatal(err)
		}
		subject := f.Lease
		if p == timekeeping.Ending {
			subject = f.Notice
		}
		if !timekeeping.Verify(v.Attestation, f.Network, p, subject) || timekeeping.Digest(f.Network, p, subject, v.Attestation.Timestamp) != v.Digest {
			t.Fatalf("attestation %d does not verify as the file says", i)
		}
	}
	if f.Judged != 1767225600250 {
		t.Fatalf("judged start time %d", f.Judged)
	}
}

// FuzzJudge checks that Judge never panics, and that a time it answers
// lies within the attested timestamps.
func FuzzJudge(f *testing.F) {
	c, ks := committee()
	f.Add(int64(1000), int64(1200), int64(900), uint8(7), uint8(0))
	f.Fuzz(func(t *testing.T, t0, t1, t2 int64, signers, corrupt uint8) {
		var atts []ledger.Attestation
		for i, ts := range []int64{t0, t1, t2} {
			a := timekeeping.Sign(ks[(int(signers)>>i)%4], network, timekeeping.Start, lease, ts)
			if corrupt&(1<<i) != 0 {
				a.Signature[int(corrupt)%64] ^= 1
			}
			atts = append(atts, a)
		}
		got, err := timekeeping.Judge(network, c, timekeeping.Start, lease, atts)
		if err != nil {
			return
		}
		if got != t0 && got != t1 && got != t2 {
			t.Fatalf("judged %d, not one of the attested times", got)
		}
	})
}

// TestJudgeBoundsNeedNoPrecision: an expiry or an end is a bound, judged
// however far apart its attestations are; a start must agree within the
// precision.
func TestJudgeBoundsNeedNoPrecision(t *testing.T) {
	c, ks := committee()
	const t0 = 1767225600000
	for _, p := range []timekeeping.Purpose{timekeeping.End, timekeeping.Expire} {
		atts := []ledger.Attestation{
			timekeeping.Sign(ks[0], network, p, lease, t0),
			timekeeping.Sign(ks[1], network, p, lease, t0+60_000),
			timekeeping.Sign(ks[2], network, p, lease, t0+600_000),
		}
		if got, err := timekeeping.Judge(network, c, p, lease, atts); err != nil || got != t0+60_000 {
			t.Errorf("%s spread over 10 minutes: %d, %v; want the median %d", p, got, err, t0+60_000)
		}
		if picked, err := timekeeping.Pick(network, c, p, lease, atts); err != nil || len(picked) != 3 {
			t.Errorf("Pick of the %s: %v, %v", p, picked, err)
		}
	}
}
