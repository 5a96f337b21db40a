package nodeclient

import (
	"context"
	"net/url"
	"strconv"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodewire"
)

// LeaseFilter selects and pages GET /leases: by consumer or by provider
// (not both), after a lease hash, at most Limit (0: the node's default).
type LeaseFilter struct {
	Consumer, Provider *ledger.Address
	After              *ledger.Hash
	Limit              int
}

// Leases lists leases, in order of lease hash.
func (c *Client) Leases(ctx context.Context, f LeaseFilter) ([]nodewire.Lease, error) {
	q := url.Values{}
	if f.Consumer != nil {
		q.Set("consumer", f.Consumer.String())
	}
	if f.Provider != nil {
		q.Set("provider", f.Provider.String())
	}
	if f.After != nil {
		q.Set("after", f.After.String())
	}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	path := "/leases"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var v []nodewire.Lease
	return v, c.do(ctx, "GET", path, nil, &v)
}

// Lease returns one lease.
func (c *Client) Lease(ctx context.Context, h ledger.Hash) (nodewire.Lease, error) {
	var v nodewire.Lease
	return v, c.do(ctx, "GET", "/leases/"+h.String(), nil, &v)
}

// SettleLease asks the node to build and submit the block the lease's
// course needs now (start, refund, end or stake return).
func (c *Client) SettleLease(ctx context.Context, h ledger.Hash) (nodewire.SettleResponse, error) {
	var v nodewire.SettleResponse
	return v, c.do(ctx, "POST", "/leases/"+h.String()+"/settle", struct{}{}, &v)
}

// RequestAttestation asks a timekeeper node for its attestation of the
// lease (purpose "" for the one due).
func (c *Client) RequestAttestation(ctx context.Context, h ledger.Hash, purpose string) (ledger.Attestation, error) {
	var v ledger.Attestation
	return v, c.do(ctx, "POST", "/attestation/request", nodewire.AttestRequest{LeaseHash: h, Purpose: purpose}, &v)
}

// Timekeepers returns the committee and the timekeepers the node heard of.
func (c *Client) Timekeepers(ctx context.Context) (nodewire.Timekeepers, error) {
	var v nodewire.Timekeepers
	return v, c.do(ctx, "GET", "/timekeepers", nil, &v)
}

// TimekeeperEvidence returns the timekeepers' equivocations the node
// recorded.
func (c *Client) TimekeeperEvidence(ctx context.Context) ([]nodewire.Evidence, error) {
	var v []nodewire.Evidence
	return v, c.do(ctx, "GET", "/timekeepers/evidence", nil, &v)
}
