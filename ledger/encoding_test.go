package ledger_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// fullBlock returns a block with every field set, valid or not, so that
// round trips cover every field.
func fullBlock() *ledger.Block {
	k := wallet.NewKey()
	b := &ledger.Block{Type: ledger.TypeLeaseAccept, Account: k.Address(), Previous: ledger.Hash{1}, Balance: ledger.AmountFromParts(3, 4),
		Asset: ledger.Stable, Timestamp: t0, Representative: ledger.Address{2}, PowNonce: -5, Destination: ledger.Address{3},
		Amount: ledger.NewAmount(77), Source: ledger.Hash{4}, VCPUs: 2, MemoryMB: 1024, DiskGB: 10, Duration: 3600,
		AccessPubKey: ledger.Address{5}, CertificateHash: ledger.Hash{6},
		Attestations: []ledger.Attestation{{PublicKey: ledger.Address{7}, Timestamp: t0 + 1, Signature: ledger.Signature{8}}},
		Keyset:       &ledger.Keyset{Keys: []ledger.Address{{9}, {10}}, Threshold: 2}}
	b.Seal()
	b.AddSignature(k.Private())
	return b
}

func TestBinaryRoundTrip(t *testing.T) {
	for _, b := range []*ledger.Block{fullBlock(), leaseBlock(), {Type: ledger.TypeSend, Account: ledger.Address{1}, Asset: ledger.Native, Timestamp: 1}} {
		b.Seal()
		data, err := b.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got ledger.Block
		if err := got.UnmarshalBinary(data); err != nil {
			t.Fatalf("UnmarshalBinary: %v", err)
		}
		again, _ := got.MarshalBinary()
		if !bytes.Equal(data, again) || got.Hash != b.Hash {
			t.Errorf("round trip of %s changed the block", b.Type)
		}
		for n := range data {
			if err := new(ledger.Block).UnmarshalBinary(data[:n]); !errors.Is(err, ledger.ErrEncoding) {
				t.Fatalf("UnmarshalBinary of %d of %d bytes: got %v, want ErrEncoding", n, len(data), err)
			}
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	b := fullBlock()
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ledger.ParseJSON(data)
	if err != nil {
		t.Fatalf("ParseJSON(%s): %v", data, err)
	}
	if got.ComputeHash() != b.Hash || got.PowNonce != b.PowNonce || len(got.Signatures) != 1 {
		t.Errorf("JSON round trip changed the block:\n%s", data)
	}
	// Big numbers travel as strings.
	for _, want := range []string{`"balance":"55340232221128654852"`, `"amount":"77"`, `"asset":"stable"`, `"type":"lease_accept"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("JSON %s lacks %s", data, want)
		}
	}
}

func TestParseJSONErrors(t *testing.T) {
	good := `"account":"` + strings.Repeat("ab", 32) + `","previous":"` + strings.Repeat("0", 64) + `","balance":"0","asset":"native","timestamp":1,"hash":"` + strings.Repeat("cd", 32) + `"`
	tests := []struct{ name, body, want string }{
		{"empty", ``, "empty body"},
		{"not an object", `[1]`, "want a JSON object"},
		{"truncated", `{"type":"send"`, "truncated"},
		{"syntax", `{"type":send}`, "malformed JSON"},
		{"unknown type", `{"type":"mint",` + good + `}`, `unknown block type "mint"`},
		{"unknown field", `{"type":"send","color":"red",` + good + `}`, `unknown field "color"`},
		{"short account", `{"type":"send","account":"abcd"}`, "want 64 hex characters, got 4"},
		{"non-hex hash", `{"type":"send","hash":"` + strings.Repeat("zz", 32) + `"}`, "not hexadecimal"},
		{"short signature", `{"type":"send","signature":"abcd"}`, "want 128 hex characters"},
		{"negative balance", `{"type":"send","balance":"-1"}`, "not an unsigned decimal integer"},
		{"numeric balance", `{"type":"send","balance":5}`, `balance: want a string, got a number`},
		{"bad asset", `{"type":"send","asset":"gold"}`, `asset "gold"`},
		{"negative vcpus", `{"type":"send","vcpus":-1}`, `vcpus: want an integer from 0 to 4294967295, got -1`},
		{"trailing data", `{"type":"send",` + good + `} {}`, "after the JSON object"},
		{"missing type", `{` + good + `}`, `"type" is required`},
		{"field in capitals", `{"type":"send","Amount":"1",` + good + `}`, `unknown field "Amount", did you mean "amount"?`},
		{"key given twice", `{"type":"send","amount":"1","amount":"2",` + good + `}`, `given twice in one object: "amount"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ledger.ParseJSON([]byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseJSON(%s): got %v, want an error containing %q", tt.body, err, tt.want)
			}
		})
	}
}

func TestWorkThreshold(t *testing.T) {
	w := newWorld(t)
	w.p = ledger.Params{Work: ledger.DevWork}
	a := wallet.NewKey()
	b := signed(w.must(wallet.Claim(w.head(a.Address()), w.tick(1))), a)
	for n := int64(0); ; n++ {
		if !ledger.DevWork.Send.Met(b.Hash, n) {
			b.PowNonce = n
			break
		}
	}
	if err := w.submit(b); !errors.Is(err, ledger.ErrInsufficientWork) {
		t.Fatalf("submit with too little work: got %v, want ErrInsufficientWork", err)
	}
	for n := int64(0); ; n++ {
		if ledger.DevWork.Send.Met(b.Hash, n) {
			b.PowNonce = n
			break
		}
	}
	w.ok(b)
}

func TestAmounts(t *testing.T) {
	tests := []struct {
		units string
		base  string
		shown string
		err   bool
	}{
		{"0", "0", "0", false},
		{"1", "1000000", "1", false},
		{"1.5", "1500000", "1.5", false},
		{"0.000001", "1", "0.000001", false},
		{"007.25", "7250000", "7.25", false},
		{"340282366920938463463374607431768.211455", "340282366920938463463374607431768211455", "340282366920938463463374607431768.211455", false},
		{"340282366920938463463374607431768.211456", "", "", true},
		{"1.0000001", "", "", true},
		{"-1", "", "", true},
		{"1.", "", "", true},
		{".5", "", "", true},
		{"1e6", "", "", true},
		{"", "", "", true},
	}
	for _, tt := range tests {
		a, err := ledger.ParseUnits(tt.units)
		if (err != nil) != tt.err {
			t.Errorf("ParseUnits(%q) error = %v, want error %v", tt.units, err, tt.err)
			continue
		}
		if err != nil {
			continue
		}
		if a.String() != tt.base || a.Units() != tt.shown {
			t.Errorf("ParseUnits(%q) = %s base units shown %s, want %s shown %s", tt.units, a, a.Units(), tt.base, tt.shown)
		}
		if back, err := ledger.ParseAmount(a.String()); err != nil || back != a {
			t.Errorf("ParseAmount(%s) = %v, %v", a, back, err)
		}
	}
	for _, bad := range []string{"", "01", "+1", "1.0", " 1", "340282366920938463463374607431768211456"} {
		if _, err := ledger.ParseAmount(bad); err == nil {
			t.Errorf("ParseAmount(%q) succeeded, want error", bad)
		}
	}
	max, _ := ledger.ParseAmount("340282366920938463463374607431768211455")
	if _, err := max.Add(ledger.NewAmount(1)); !errors.Is(err, ledger.ErrOverflow) {
		t.Errorf("max+1: got %v, want ErrOverflow", err)
	}
	if _, err := ledger.NewAmount(1).Sub(ledger.NewAmount(2)); !errors.Is(err, ledger.ErrOverflow) {
		t.Errorf("1-2: got %v, want ErrOverflow", err)
	}
}

// TestCanonicalJSONTakesFastPath: blocks as the API writes them, without
// multisig fields, decode without reflection.
func TestCanonicalJSONTakesFastPath(t *testing.T) {
	w := newWorld(t)
	a := w.funded(100)
	for _, b := range []*ledger.Block{
		signed(w.must(wallet.Send(w.head(a.Address()), wallet.NewKey().Address(), ledger.NewAmount(7), ledger.Native, w.tick(1))), a),
		signed(w.must(wallet.Claim(w.head(a.Address()), w.tick(1))), a),
	} {
		data, _ := json.Marshal(b)
		got, ok := ledger.ParseCanonicalForTest(data)
		if !ok {
			t.Fatalf("fast path declined %s", data)
		}
		if got.ComputeHash() != b.Hash || got.Signature != b.Signature || got.PowNonce != b.PowNonce {
			t.Errorf("fast path misread %s", data)
		}
	}
}

// TestNoKeysetDecodesAsNone: a block without a keyset comes out of the
// binary and JSON decoders without one, whether the JSON leaves the field
// out or writes it empty; a keyset there would make Check refuse the send.
func TestNoKeysetDecodesAsNone(t *testing.T) {
	k := wallet.NewKey()
	send := signed(must(t)(wallet.Send(wallet.Head{Account: k.Address(), Balances: [2]ledger.Amount{ledger.NewAmount(5)}},
		ledger.Address{1}, ledger.NewAmount(2), ledger.Native, t0)), k)
	bin, err := send.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(send)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		decode func() (*ledger.Block, error)
	}{
		{"binary", func() (*ledger.Block, error) {
			b := new(ledger.Block)
			return b, b.UnmarshalBinary(bin)
		}},
		{"JSON without the field", func() (*ledger.Block, error) { return ledger.ParseJSON(js) }},
		{"JSON with an empty keyset", func() (*ledger.Block, error) {
			return ledger.ParseJSON(append([]byte(`{"keyset":{"threshold":0,"keys":[]},`), js[1:]...))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.decode()
			if err != nil {
				t.Fatal(err)
			}
			if got.Keyset != nil {
				t.Errorf("keyset: got %+v, want none", *got.Keyset)
			}
			if err := (ledger.Params{}).Check(got); err != nil {
				t.Errorf("Check: got %v, want nil", err)
			}
		})
	}
}

func must(t *testing.T) func(*ledger.Block, error) *ledger.Block {
	return func(b *ledger.Block, err error) *ledger.Block {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}
