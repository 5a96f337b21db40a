// Package market holds the pure rules of the compute marketplace before
// a lease exists: what a consumer asks for (Request), what a lease costs
// and what its provider stakes at the network's parameters (Quote), a
// provider's signed capacity record, and a provider's signed offer. The
// lease blocks themselves are ledger rules.
//
// The package does no I/O and never reads the clock.
package market

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/signature"
	"github.com/latticenet/lattice/statechain"
)

// ErrInvalid is wrapped by every error that says a request, record or
// offer is malformed or badly signed.
var ErrInvalid = errors.New("invalid")

// Reason is what err says beyond ErrInvalid's word, for a message that
// names what is invalid itself ("invalid resource request: memory_mb 100:
// ...").
func Reason(err error) string {
	return strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": ")
}

// Upper bounds beyond the API's minimums, so that a cost never overflows
// and a record stays small.
const (
	MaxVCPUs    = 1 << 16
	MaxMemoryMB = 1 << 30
	MaxDiskGB   = 1 << 24
	// MaxPeerBytes bounds a node_peer (a libp2p peer ID's text form).
	MaxPeerBytes = 128
)

// Resources are what a machine has or a lease takes.
type Resources struct {
	VCPUs    int64 `json:"vcpus"`
	MemoryMB int64 `json:"memory_mb"`
	DiskGB   int64 `json:"disk_gb"`
}

// Fits reports whether r fits within in.
func (r Resources) Fits(in Resources) bool {
	return r.VCPUs <= in.VCPUs && r.MemoryMB <= in.MemoryMB && r.DiskGB <= in.DiskGB
}

// Sub returns r minus o, never below zero.
func (r Resources) Sub(o Resources) Resources {
	return Resources{max(r.VCPUs-o.VCPUs, 0), max(r.MemoryMB-o.MemoryMB, 0), max(r.DiskGB-o.DiskGB, 0)}
}

func (r Resources) String() string {
	return fmt.Sprintf("%d vCPU, %d MB memory, %d GB disk", r.VCPUs, r.MemoryMB, r.DiskGB)
}

// checkTotal checks a capacity: each part at least zero and at most the
// bounds.
func (r Resources) checkTotal() error {
	switch {
	case r.VCPUs < 0 || r.VCPUs > MaxVCPUs:
		return fmt.Errorf("%w: vcpus %d: want 0 to %d", ErrInvalid, r.VCPUs, MaxVCPUs)
	case r.MemoryMB < 0 || r.MemoryMB > MaxMemoryMB:
		return fmt.Errorf("%w: memory_mb %d: want 0 to %d", ErrInvalid, r.MemoryMB, MaxMemoryMB)
	case r.DiskGB < 0 || r.DiskGB > MaxDiskGB:
		return fmt.Errorf("%w: disk_gb %d: want 0 to %d", ErrInvalid, r.DiskGB, MaxDiskGB)
	}
	return nil
}

// Request is a ResourceRequest: the resources a consumer wants and for
// how long, in seconds.
type Request struct {
	VCPUs    int64 `json:"vcpus"`
	MemoryMB int64 `json:"memory_mb"`
	DiskGB   int64 `json:"disk_gb"`
	Duration int64 `json:"duration"`
}

// Resources returns what r takes.
func (r Request) Resources() Resources { return Resources{r.VCPUs, r.MemoryMB, r.DiskGB} }

// Check applies the API's limits (vcpus ≥ 1, memory_mb ≥ 512, disk_gb ≥ 5,
// duration 60 to 31536000) and the upper bounds.
func (r Request) Check() error {
	switch {
	case r.VCPUs < ledger.MinVCPUs || r.VCPUs > MaxVCPUs:
		return fmt.Errorf("%w: vcpus %d: want %d to %d", ErrInvalid, r.VCPUs, ledger.MinVCPUs, MaxVCPUs)
	case r.MemoryMB < ledger.MinMemoryMB || r.MemoryMB > MaxMemoryMB:
		return fmt.Errorf("%w: memory_mb %d: want %d to %d", ErrInvalid, r.MemoryMB, ledger.MinMemoryMB, MaxMemoryMB)
	case r.DiskGB < ledger.MinDiskGB || r.DiskGB > MaxDiskGB:
		return fmt.Errorf("%w: disk_gb %d: want %d to %d", ErrInvalid, r.DiskGB, ledger.MinDiskGB, MaxDiskGB)
	case r.Duration < ledger.MinDuration || r.Duration > ledger.MaxDuration:
		return fmt.Errorf("%w: duration %d s: want %d to %d", ErrInvalid, r.Duration, ledger.MinDuration, ledger.MaxDuration)
	}
	return nil
}

// Quote returns what a lease of r costs at the parameters p, in base
// units of native, and the stake its provider locks:
//
//	cost  = duration × (vcpus × prices.vcpu + memory_mb × prices.memory_mb + disk_gb × prices.disk_gb)
//	stake = ⌈cost × stake_ratio⌉
//
// r must have passed Check.
func Quote(p statechain.Params, r Request) (cost, stake ledger.Amount, err error) {
	perSecond := ledger.Amount{}
	for _, part := range []struct {
		price ledger.Amount
		n     int64
	}{{p.Prices.VCPU, r.VCPUs}, {p.Prices.MemoryMB, r.MemoryMB}, {p.Prices.DiskGB, r.DiskGB}} {
		v, err := part.price.MulDivCeil(uint64(part.n), 1)
		if err != nil {
			return cost, stake, fmt.Errorf("%w: the price overflows", ErrInvalid)
		}
		if perSecond, err = perSecond.Add(v); err != nil {
			return cost, stake, fmt.Errorf("%w: the price overflows", ErrInvalid)
		}
	}
	if cost, err = perSecond.MulDivCeil(uint64(r.Duration), 1); err != nil {
		return cost, stake, fmt.Errorf("%w: the cost overflows", ErrInvalid)
	}
	if stake, err = cost.MulDivCeil(uint64(p.StakeRatio), statechain.RatioScale); err != nil {
		return cost, stake, fmt.Errorf("%w: the stake overflows", ErrInvalid)
	}
	return cost, stake, nil
}

// base58 is the alphabet of peer IDs' text form.
const base58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

func checkPeer(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: node_peer is required", ErrInvalid)
	case len(p) > MaxPeerBytes:
		return fmt.Errorf("%w: node_peer is %d bytes, more than %d", ErrInvalid, len(p), MaxPeerBytes)
	case strings.Trim(p, base58) != "":
		return fmt.Errorf("%w: node_peer %q is not a peer ID (base58)", ErrInvalid, p)
	}
	return nil
}

// Capacity is a provider's signed statement of what its machines have in
// all, and at which node it takes requests. The newest record of a
// provider wins (Newer). What is free is never taken from the record: the
// node computes it from the leases on the ledger.
type Capacity struct {
	Provider  ledger.Address   `json:"provider"`
	NodePeer  string           `json:"node_peer"`
	Total     Resources        `json:"total"`
	Timestamp int64            `json:"timestamp"`
	Signature ledger.Signature `json:"signature"`
}

const capacityTag = "LATTICE-CAPACITY-V1"

// Digest is SHA-256 of the record's preimage: the tag
// "LATTICE-CAPACITY-V1", the network (32), the provider (32), vcpus,
// memory_mb and disk_gb (u64 each), the timestamp (i64), node_peer's
// length (u8) and node_peer.
func (c *Capacity) Digest(network ledger.Hash) ledger.Hash {
	b := make([]byte, 0, len(capacityTag)+32+32+24+8+1+len(c.NodePeer))
	b = append(b, capacityTag...)
	b = append(b, network[:]...)
	b = append(b, c.Provider[:]...)
	b = appendResources(b, c.Total)
	b = binary.BigEndian.AppendUint64(b, uint64(c.Timestamp))
	b = append(b, byte(len(c.NodePeer)))
	b = append(b, c.NodePeer...)
	return sha256.Sum256(b)
}

func appendResources(b []byte, r Resources) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(r.VCPUs))
	b = binary.BigEndian.AppendUint64(b, uint64(r.MemoryMB))
	return binary.BigEndian.AppendUint64(b, uint64(r.DiskGB))
}

// Sign sets c.Provider to priv's public key and signs the record.
func (c *Capacity) Sign(priv ed25519.PrivateKey, network ledger.Hash) {
	copy(c.Provider[:], priv.Public().(ed25519.PublicKey))
	d := c.Digest(network)
	copy(c.Signature[:], ed25519.Sign(priv, d[:]))
}

// Check reports whether c is well formed and signed by its provider.
func (c *Capacity) Check(network ledger.Hash) error {
	if c.Provider.IsZero() {
		return fmt.Errorf("%w: provider is required", ErrInvalid)
	}
	if err := checkPeer(c.NodePeer); err != nil {
		return err
	}
	if err := c.Total.checkTotal(); err != nil {
		return err
	}
	if c.Timestamp <= 0 {
		return fmt.Errorf("%w: timestamp %d is not a positive Unix time in milliseconds", ErrInvalid, c.Timestamp)
	}
	d := c.Digest(network)
	if !signature.Verify(c.Provider.PublicKey(), d[:], c.Signature[:]) {
		return fmt.Errorf("%w: the signature is not the provider's over this record", ErrInvalid)
	}
	return nil
}

// Newer reports whether c replaces old, a record of the same provider: the
// later timestamp wins, and of two with one timestamp the greater digest,
// so that every node keeps the same one.
func (c *Capacity) Newer(old *Capacity, network ledger.Hash) bool {
	if c.Timestamp != old.Timestamp {
		return c.Timestamp > old.Timestamp
	}
	a, b := c.Digest(network), old.Digest(network)
	return string(a[:]) > string(b[:])
}

// Offer is a provider's signed quote for a request: the lease it would
// accept, at what cost and stake (Quote at the state-chain index it
// names), until when.
type Offer struct {
	Provider   ledger.Address   `json:"provider"`
	NodePeer   string           `json:"node_peer"`
	Request    Request          `json:"request"`
	Cost       ledger.Amount    `json:"cost"`
	Stake      ledger.Amount    `json:"stake"`
	StateIndex uint64           `json:"statechain_index"`
	Expiry     int64            `json:"expiry"`
	Signature  ledger.Signature `json:"signature"`
}

const offerTag = "LATTICE-OFFER-V1"

// Digest is SHA-256 of the offer's preimage: the tag "LATTICE-OFFER-V1",
// the network (32), the provider (32), vcpus, memory_mb, disk_gb and
// duration (u64 each), cost and stake (u128 each), the state-chain index
// (u64), the expiry (i64), node_peer's length (u8) and node_peer.
func (o *Offer) Digest(network ledger.Hash) ledger.Hash {
	b := make([]byte, 0, len(offerTag)+32+32+32+32+8+8+1+len(o.NodePeer))
	b = append(b, offerTag...)
	b = append(b, network[:]...)
	b = append(b, o.Provider[:]...)
	b = appendResources(b, o.Request.Resources())
	b = binary.BigEndian.AppendUint64(b, uint64(o.Request.Duration))
	b = append(b, o.Cost.AppendBinary(nil)...)
	b = append(b, o.Stake.AppendBinary(nil)...)
	b = binary.BigEndian.AppendUint64(b, o.StateIndex)
	b = binary.BigEndian.AppendUint64(b, uint64(o.Expiry))
	b = append(b, byte(len(o.NodePeer)))
	b = append(b, o.NodePeer...)
	return sha256.Sum256(b)
}

// Sign sets o.Provider to priv's public key and signs the offer.
func (o *Offer) Sign(priv ed25519.PrivateKey, network ledger.Hash) {
	copy(o.Provider[:], priv.Public().(ed25519.PublicKey))
	d := o.Digest(network)
	copy(o.Signature[:], ed25519.Sign(priv, d[:]))
}

// Check reports whether o is a well-formed offer for a valid request,
// signed by its provider. Whether its cost is right is judged against
// the parameters at its state-chain index (Quote).
func (o *Offer) Check(network ledger.Hash) error {
	if o.Provider.IsZero() {
		return fmt.Errorf("%w: provider is required", ErrInvalid)
	}
	if err := checkPeer(o.NodePeer); err != nil {
		return err
	}
	if err := o.Request.Check(); err != nil {
		return err
	}
	if o.Expiry <= 0 {
		return fmt.Errorf("%w: expiry %d is not a positive Unix time in milliseconds", ErrInvalid, o.Expiry)
	}
	d := o.Digest(network)
	if !signature.Verify(o.Provider.PublicKey(), d[:], o.Signature[:]) {
		return fmt.Errorf("%w: the signature is not the provider's over this offer", ErrInvalid)
	}
	return nil
}

// Provider is one provider as GET /providers shows it.
type Provider struct {
	Account      ledger.Address `json:"account"`
	Total        Resources      `json:"total"`
	Free         Resources      `json:"free"`
	ActiveLeases int            `json:"active_leases"`
	// NodePeer and UpdatedAt go beyond the contract: where the provider
	// takes requests, and when its record was signed (Unix ms).
	NodePeer  string `json:"node_peer"`
	UpdatedAt int64  `json:"updated_at"`
}

// Offers is the answer to a request for offers.
type Offers struct {
	// Offers are the valid offers received, cheapest first (then by
	// provider).
	Offers []Offer `json:"offers"`
	// Asked is how many providers were asked; Refused says why the
	// others made no offer.
	Asked   int       `json:"asked"`
	Refused []Refusal `json:"refused"`
}

// Refusal is a provider's answer without an offer, or why none came.
type Refusal struct {
	Provider ledger.Address `json:"provider"`
	Reason   string         `json:"reason"`
}
