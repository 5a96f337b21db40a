package statechain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/latticenet/lattice/internal/strictjson"
	"github.com/latticenet/lattice/ledger"
)

// The network's parameters are keys of the state chain with JSON values.
// A key that is not set has its documented default. Keys that belong
// together (the timekeeper committee, the three prices) are one key with
// an object value, so that they change together or not at all.
const (
	KeyTimekeepers   = "timekeepers"
	KeyLeasePrices   = "lease.prices"
	KeyStakeRatio    = "lease.stake_ratio"
	KeyAcceptTimeout = "lease.accept_timeout_ms"
	// UserPrefix opens keys of the operators' own: any JSON value, which
	// the node keeps and ignores.
	UserPrefix = "x."
)

// MaxTimekeepers bounds the timekeeper committee: a block carries at most
// ledger.MaxAttestations attestations.
const MaxTimekeepers = ledger.MaxAttestations

// Timekeepers is the committee whose attestations give leases their time.
type Timekeepers struct {
	// Keys are the committee's public keys, distinct.
	Keys []ledger.Address `json:"keys"`
	// Threshold is how many attestations a block needs; 0 in a value
	// means the default, 2f+1 of 3f+1 keys (f = (len(Keys)-1)/3).
	Threshold int `json:"threshold,omitempty"`
	// PrecisionMS is how far apart, at most, the attested timestamps of
	// one block may be; 0 in a value means the default, 5000.
	PrecisionMS int64 `json:"precision_ms,omitempty"`
}

// Prices are what a lease costs, in base units of native per second, for
// each vCPU, each MB of memory and each GB of disk.
type Prices struct {
	VCPU     ledger.Amount `json:"vcpu"`
	MemoryMB ledger.Amount `json:"memory_mb"`
	DiskGB   ledger.Amount `json:"disk_gb"`
}

// Ratio is a non-negative decimal with at most four decimal places, kept
// exactly as parts per 10,000 (0.5 is 5000).
type Ratio uint64

// RatioScale is the number of parts of 1 in a Ratio.
const RatioScale = 10000

// String returns the ratio as a decimal ("0.5").
func (r Ratio) String() string {
	s := strconv.FormatUint(uint64(r)/RatioScale, 10)
	if f := uint64(r) % RatioScale; f != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%04d", f), "0")
	}
	return s
}

// Params are the network's parameters at one index of the state chain.
type Params struct {
	Timekeepers Timekeepers
	Prices      Prices
	// StakeRatio is the provider's stake as a ratio of a lease's cost.
	StakeRatio Ratio
	// AcceptTimeoutMS is how long after its lease block's timestamp a
	// lease may be accepted; past it the consumer may take the escrow back.
	AcceptTimeoutMS int64
}

// Param documents one parameter key.
type Param struct {
	Key     string
	Default string // the value in force while the key is not set
	Doc     string
	// parse reads a value into p and returns its canonical form.
	parse func(v string, p *Params) (string, error)
}

// Parameters lists the parameter keys, as docs/protocol.md does.
var Parameters = []Param{
	{KeyTimekeepers, `{"keys":[]}`,
		"the timekeeper committee: keys (0 to 16 distinct addresses; none: no committee), threshold (attestations a block needs, " +
			"more than half of the keys; absent: 2f+1 of 3f+1), precision_ms (how far apart attested times may be, 1 to 600000; absent: 5000). " +
			"No committee by default: leases cannot be accepted until governance names one",
		parseTimekeepers},
	{KeyLeasePrices, `{"vcpu":"100","memory_mb":"1","disk_gb":"1"}`,
		"lease prices in base units of native per second: per vCPU, per MB of memory, per GB of disk (BalanceStrings)",
		parsePrices},
	{KeyStakeRatio, `0.5`,
		"the provider's stake as a ratio of the lease's cost: a JSON number from 0 to 100 with at most 4 decimal places",
		parseStakeRatio},
	{KeyAcceptTimeout, `600000`,
		"how long a lease may wait for its provider's accept, in milliseconds from the lease block's timestamp: 1000 to 604800000",
		parseAcceptTimeout},
}

func param(key string) (Param, bool) {
	for _, p := range Parameters {
		if p.Key == key {
			return p, true
		}
	}
	return Param{}, false
}

// CanonicalValue returns the one form in which value may be set at key,
// or why it cannot be set there: a parameter's value must parse and be
// in range, and its canonical form is what the node writes back (fields in
// the documented order, no spaces, numbers without leading zeros); a key
// under UserPrefix takes any JSON value, compacted; any other key is
// refused, so that a mistyped parameter is never set and silently ignored.
// Every value must be valid UTF-8 and JSON.
func CanonicalValue(key, value string) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	// Every value is JSON, whatever its key: GET /statechain/kv serves it
	// as JSON, and a parser's leniency ("+1", "01") must not reach the chain.
	if !utf8.ValidString(value) || !json.Valid([]byte(value)) {
		return "", fmt.Errorf("%w: %s: the value must be JSON (in UTF-8)", ErrInvalidValue, key)
	}
	if strings.HasPrefix(key, UserPrefix) {
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(value)); err != nil {
			return "", fmt.Errorf("%w: %s: %v", ErrInvalidValue, key, err)
		}
		return b.String(), nil
	}
	p, ok := param(key)
	if !ok {
		return "", fmt.Errorf("%w: %q is not a parameter (%s); keys of your own start with %q", ErrInvalidValue, key, paramKeys(), UserPrefix)
	}
	var scratch Params
	c, err := p.parse(value, &scratch)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrInvalidValue, key, err)
	}
	return c, nil
}

// CheckValue reports whether value may be set at key: it must be its
// canonical form (CanonicalValue), so that every implementation reads
// one value one way (a JSON object with a key twice, or a key in other
// case, would read differently in different parsers) and what keyholders
// read is what the node applies.
func CheckValue(key, value string) error {
	c, err := CanonicalValue(key, value)
	if err != nil {
		return err
	}
	if c != value {
		return fmt.Errorf("%w: %s: not in canonical form; write it as %s", ErrInvalidValue, key, c)
	}
	return nil
}

func paramKeys() string {
	var ks []string
	for _, p := range Parameters {
		ks = append(ks, p.Key)
	}
	return strings.Join(ks, ", ")
}

// Defaults returns the parameters of a state chain that sets none.
func Defaults() Params {
	var p Params
	for _, d := range Parameters {
		if c, err := d.parse(d.Default, &p); err != nil || c != d.Default {
			panic(fmt.Sprintf("statechain: default of %s is not canonical (%q): %v", d.Key, c, err))
		}
	}
	return p
}

// Params returns the parameters in force after the tip: each key's value
// if set, its default otherwise.
func (s *State) Params() (Params, error) {
	p := Defaults()
	for _, d := range Parameters {
		if e, ok := s.kv[d.Key]; ok {
			if err := CheckValue(d.Key, e.Value); err != nil {
				return p, err
			}
			if _, err := d.parse(e.Value, &p); err != nil {
				return p, fmt.Errorf("%w: %s: %v", ErrInvalidValue, d.Key, err)
			}
		}
	}
	return p, nil
}

func parseTimekeepers(v string, p *Params) (string, error) {
	var t Timekeepers
	if err := strictjson.Unmarshal([]byte(v), &t); err != nil {
		return "", err
	}
	if t.Keys == nil {
		return "", fmt.Errorf("keys is required ([] names no committee)")
	}
	canonical, err := json.Marshal(t)
	if err != nil {
		return "", err
	}
	n := len(t.Keys)
	if n > MaxTimekeepers {
		return "", fmt.Errorf("%d keys, more than %d", n, MaxTimekeepers)
	}
	seen := map[ledger.Address]bool{}
	for i, k := range t.Keys {
		if k.IsZero() || seen[k] {
			return "", fmt.Errorf("key %d is zero or named twice", i)
		}
		seen[k] = true
	}
	if t.Threshold == 0 && n > 0 {
		t.Threshold = n - (n-1)/3 // 2f+1 of 3f+1; more than two thirds of n in general
	}
	if t.PrecisionMS == 0 {
		t.PrecisionMS = 5000
	}
	switch {
	case n == 0 && t.Threshold != 0:
		return "", fmt.Errorf("a threshold needs keys")
	case n > 0 && (t.Threshold <= n/2 || t.Threshold > n):
		return "", fmt.Errorf("threshold %d: must be more than half of the %d keys and at most all of them", t.Threshold, n)
	case t.Threshold < 0:
		return "", fmt.Errorf("threshold %d is negative", t.Threshold)
	case t.PrecisionMS < 1 || t.PrecisionMS > 600000:
		return "", fmt.Errorf("precision_ms %d: must be 1 to 600000", t.PrecisionMS)
	}
	p.Timekeepers = t
	return string(canonical), nil
}

func parsePrices(v string, p *Params) (string, error) {
	// Every field is required: a missing price must not read as free.
	var raw struct {
		VCPU     *ledger.Amount `json:"vcpu"`
		MemoryMB *ledger.Amount `json:"memory_mb"`
		DiskGB   *ledger.Amount `json:"disk_gb"`
	}
	if err := strictjson.Unmarshal([]byte(v), &raw); err != nil {
		return "", err
	}
	if raw.VCPU == nil || raw.MemoryMB == nil || raw.DiskGB == nil {
		return "", fmt.Errorf("vcpu, memory_mb and disk_gb are all required")
	}
	p.Prices = Prices{VCPU: *raw.VCPU, MemoryMB: *raw.MemoryMB, DiskGB: *raw.DiskGB}
	canonical, err := json.Marshal(p.Prices)
	return string(canonical), err
}

func parseStakeRatio(v string, p *Params) (string, error) {
	r, err := ParseRatio(v)
	if err != nil {
		return "", err
	}
	if r > 100*RatioScale {
		return "", fmt.Errorf("%s: at most 100", r)
	}
	p.StakeRatio = r
	return r.String(), nil
}

// ParseRatio parses a decimal with at most four decimal places ("0.5",
// "2", "0.0125") exactly, without floating point.
func ParseRatio(s string) (Ratio, error) {
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || len(whole) > 6 || dot && (frac == "" || len(frac) > 4) ||
		strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" ||
		len(whole) > 1 && whole[0] == '0' {
		return 0, fmt.Errorf("%q: a decimal such as 0.5, with at most 4 decimal places", s)
	}
	w, _ := strconv.ParseUint(whole, 10, 64)
	f, _ := strconv.ParseUint((frac + "0000")[:4], 10, 64)
	return Ratio(w*RatioScale + f), nil
}

func parseAcceptTimeout(v string, p *Params) (string, error) {
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms < 1000 || ms > 604800000 {
		return "", fmt.Errorf("%q: an integer number of milliseconds from 1000 to 604800000", v)
	}
	p.AcceptTimeoutMS = ms
	return strconv.FormatInt(ms, 10), nil
}

// TimekeepersValue returns the canonical value of the timekeepers key for
// a committee of keys with the default threshold and precision.
func TimekeepersValue(keys []ledger.Address) string {
	v, _ := json.Marshal(Timekeepers{Keys: keys})
	return string(v)
}
