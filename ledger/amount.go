package ledger

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
)

// Amount is an unsigned 128-bit quantity of base units. JSON carries it as a
// decimal string (a BalanceString).
type Amount struct{ hi, lo uint64 }

// UnitDecimals is the number of decimals the CLI shows: 1 unit = 10^6 base units.
const UnitDecimals = 6

// ErrOverflow reports arithmetic beyond 128 bits or below zero.
var ErrOverflow = errors.New("ledger: amount out of range")

// NewAmount returns an Amount holding v base units.
func NewAmount(v uint64) Amount { return Amount{lo: v} }

// AmountFromParts builds an Amount from its high and low 64-bit halves.
func AmountFromParts(hi, lo uint64) Amount { return Amount{hi: hi, lo: lo} }

// Parts returns the high and low 64-bit halves of a.
func (a Amount) Parts() (hi, lo uint64) { return a.hi, a.lo }

// IsZero reports whether a is zero.
func (a Amount) IsZero() bool { return a.hi == 0 && a.lo == 0 }

// Cmp returns -1, 0 or +1 as a is less than, equal to or greater than b.
func (a Amount) Cmp(b Amount) int {
	switch {
	case a.hi < b.hi:
		return -1
	case a.hi > b.hi:
		return 1
	case a.lo < b.lo:
		return -1
	case a.lo > b.lo:
		return 1
	}
	return 0
}

// Add returns a+b, or ErrOverflow.
func (a Amount) Add(b Amount) (Amount, error) {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, c := bits.Add64(a.hi, b.hi, c)
	if c != 0 {
		return Amount{}, ErrOverflow
	}
	return Amount{hi, lo}, nil
}

// Sub returns a-b, or ErrOverflow when b > a.
func (a Amount) Sub(b Amount) (Amount, error) {
	lo, br := bits.Sub64(a.lo, b.lo, 0)
	hi, br := bits.Sub64(a.hi, b.hi, br)
	if br != 0 {
		return Amount{}, ErrOverflow
	}
	return Amount{hi, lo}, nil
}

// mulSmall returns a*m, or ErrOverflow.
func (a Amount) mulSmall(m uint64) (Amount, error) {
	h1, l := bits.Mul64(a.lo, m)
	h2, hi := bits.Mul64(a.hi, m)
	hi, c := bits.Add64(hi, h1, 0)
	if h2 != 0 || c != 0 {
		return Amount{}, ErrOverflow
	}
	return Amount{hi, l}, nil
}

// divSmall returns a/d and a%d.
func (a Amount) divSmall(d uint64) (Amount, uint64) {
	qhi, r := bits.Div64(0, a.hi, d)
	qlo, r := bits.Div64(r, a.lo, d)
	return Amount{qhi, qlo}, r
}

// MulDivCeil returns ⌈a·m/d⌉, computed exactly: the product is held in 192
// bits, so no precision is lost before the division. It returns ErrOverflow
// when the result does not fit in 128 bits, which can happen only when m > d.
// Consensus uses it for quorums (a percentage of a weight, rounded up, so
// that a quorum is never a hair below the fraction it stands for). d must not
// be zero.
func (a Amount) MulDivCeil(m, d uint64) (Amount, error) {
	if d == 0 {
		panic("ledger: MulDivCeil by zero")
	}
	q, r, err := a.mulDiv(m, d)
	if err == nil && r != 0 {
		return q.Add(NewAmount(1))
	}
	return q, err
}

// MulDivFloor returns ⌊a·m/d⌋, computed exactly as MulDivCeil is; it
// cannot overflow when m ≤ d. d must not be zero.
func (a Amount) MulDivFloor(m, d uint64) (Amount, error) {
	if d == 0 {
		panic("ledger: MulDivFloor by zero")
	}
	q, _, err := a.mulDiv(m, d)
	return q, err
}

// mulDiv returns a·m/d and its remainder (d > 0).
func (a Amount) mulDiv(m, d uint64) (Amount, uint64, error) {
	// a·m = w2·2^128 + w1·2^64 + w0.
	c0, w0 := bits.Mul64(a.lo, m)
	c1, w1 := bits.Mul64(a.hi, m)
	w1, carry := bits.Add64(w1, c0, 0)
	w2 := c1 + carry
	q2, r := bits.Div64(0, w2, d)
	q1, r := bits.Div64(r, w1, d)
	q0, r := bits.Div64(r, w0, d)
	if q2 != 0 {
		return Amount{}, 0, ErrOverflow
	}
	return Amount{q1, q0}, r, nil
}

// ParseAmount parses a decimal string of base units: digits only, no sign,
// no leading zeros (except "0" itself), at most 128 bits.
func ParseAmount(s string) (Amount, error) {
	if s == "" {
		return Amount{}, errors.New("empty amount")
	}
	if len(s) > 1 && s[0] == '0' {
		return Amount{}, fmt.Errorf("amount %q has a leading zero", s)
	}
	var a Amount
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return Amount{}, fmt.Errorf("amount %q is not an unsigned decimal integer", s)
		}
		var err error
		if a, err = a.mulSmall(10); err == nil {
			a, err = a.Add(NewAmount(uint64(c - '0')))
		}
		if err != nil {
			return Amount{}, fmt.Errorf("amount %q exceeds 128 bits", s)
		}
	}
	return a, nil
}

// String returns the decimal form of a in base units.
func (a Amount) String() string {
	if a.hi == 0 {
		return fmt.Sprint(a.lo)
	}
	var buf [40]byte
	i := len(buf)
	for !a.IsZero() {
		var r uint64
		a, r = a.divSmall(10)
		i--
		buf[i] = byte('0' + r)
	}
	return string(buf[i:])
}

// MarshalText implements encoding.TextMarshaler (a BalanceString).
func (a Amount) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *Amount) UnmarshalText(b []byte) error {
	v, err := ParseAmount(string(b))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// ParseUnits parses a human amount in units with up to six decimals, such as
// "12", "0.5" or "1.000001", into base units.
func ParseUnits(s string) (Amount, error) {
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || (hasDot && frac == "") {
		return Amount{}, fmt.Errorf("amount %q: want digits with up to %d decimals, like 12 or 0.5", s, UnitDecimals)
	}
	if len(frac) > UnitDecimals {
		return Amount{}, fmt.Errorf("amount %q has more than %d decimals", s, UnitDecimals)
	}
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	digits := whole + frac + strings.Repeat("0", UnitDecimals-len(frac))
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		digits = "0"
	}
	a, err := ParseAmount(digits)
	if err != nil {
		return Amount{}, fmt.Errorf("amount %q: %w", s, err)
	}
	return a, nil
}

// Units formats a in units with up to six decimals, trailing zeros removed:
// 1500000 base units is "1.5".
func (a Amount) Units() string {
	q, r := a.divSmall(1_000_000)
	if r == 0 {
		return q.String()
	}
	frac := strings.TrimRight(fmt.Sprintf("%06d", r), "0")
	return q.String() + "." + frac
}

// AppendBinary appends a as a u128: 16 bytes, big-endian, as the block
// preimage writes amounts.
func (a Amount) AppendBinary(dst []byte) []byte { return appendAmount(dst, a) }
