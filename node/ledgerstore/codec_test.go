package ledgerstore

import (
	"testing"

	"github.com/latticenet/lattice/ledger"
)

// TestDecodeAmount: a weight record is exactly 16 bytes; a shorter or
// longer one is corrupt, not read as its first 16 bytes.
func TestDecodeAmount(t *testing.T) {
	amt := ledger.AmountFromParts(1, 2)
	good := appendAmount(nil, amt)
	tests := []struct {
		name    string
		v       []byte
		want    ledger.Amount
		corrupt bool
	}{
		{"16 bytes", good, amt, false},
		{"15 bytes", good[:15], ledger.Amount{}, true},
		{"17 bytes", append(appendAmount(nil, amt), 0), ledger.Amount{}, true},
		{"empty", nil, ledger.Amount{}, true},
	}
	for _, tt := range tests {
		got, err := decodeAmount(tt.v)
		if (err != nil) != tt.corrupt {
			t.Errorf("%s: got error %v, want corrupt %v", tt.name, err, tt.corrupt)
		}
		if !tt.corrupt && got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
