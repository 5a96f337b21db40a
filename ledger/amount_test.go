package ledger_test

import (
	"errors"
	"math/big"
	"testing"

	"github.com/latticenet/lattice/ledger"
)

// TestMulDivCeil checks MulDivCeil against math/big, including products that
// need more than 128 bits before the division.
func TestMulDivCeil(t *testing.T) {
	max, _ := ledger.ParseAmount("340282366920938463463374607431768211455")
	tests := []struct {
		a    ledger.Amount
		m, d uint64
	}{
		{ledger.NewAmount(0), 67, 100},
		{ledger.NewAmount(1), 67, 100},
		{ledger.NewAmount(100), 67, 100},
		{ledger.NewAmount(101), 67, 100},
		{ledger.NewAmount(3), 1, 3},
		{ledger.NewAmount(1_000_000_000_000_000), 67, 100},
		{ledger.AmountFromParts(1, 0), 67, 100},
		{ledger.AmountFromParts(1<<63, 12345), 99, 100},
		{max, 67, 100},
		{max, 100, 100},
		{max, 1<<64 - 1, 1<<64 - 1},
		{max, 2, 1},
		{ledger.AmountFromParts(1<<63, 0), 2, 1},
		{ledger.AmountFromParts(1<<62, 0), 3, 2},
		// hi·m fills its 64 bits and lo·m carries into them: the carry
		// must reach the top word (a mutant subtracting it survived).
		{ledger.AmountFromParts((1<<64-1)/3, 1<<63), 3, 4},
	}
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	for _, tt := range tests {
		hi, lo := tt.a.Parts()
		want := new(big.Int).Lsh(new(big.Int).SetUint64(hi), 64)
		want.Or(want, new(big.Int).SetUint64(lo))
		want.Mul(want, new(big.Int).SetUint64(tt.m))
		d := new(big.Int).SetUint64(tt.d)
		want.Add(want, new(big.Int).Sub(d, big.NewInt(1)))
		want.Div(want, d)

		got, err := tt.a.MulDivCeil(tt.m, tt.d)
		if want.Cmp(limit) >= 0 {
			if !errors.Is(err, ledger.ErrOverflow) {
				t.Errorf("%s.MulDivCeil(%d, %d) = %s, %v, want ErrOverflow", tt.a, tt.m, tt.d, got, err)
			}
			continue
		}
		if err != nil || got.String() != want.String() {
			t.Errorf("%s.MulDivCeil(%d, %d) = %s, %v, want %s", tt.a, tt.m, tt.d, got, err, want)
		}
	}
}
