package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/latticenet/lattice/cloud/compute/leasedriver"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/machine/agent"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/pow"
	"github.com/latticenet/lattice/wallet"
)

// leaseMarket is the network as the cloud's lease backend reaches it
// (leasedriver.Market): a node's HTTP API, acting for one ledger account,
// which pays for the leases and is their access key. The cloud's wing
// cannot link the node's client; the command line joins the two.
type leaseMarket struct {
	c   *nodeclient.Client
	key wallet.Key

	mu sync.Mutex // the account's blocks, one at a time: two at once would fork its chain

	infoMu sync.Mutex
	info   *nodewire.NodeInfo
}

func newLeaseMarket(nodeURL string, key wallet.Key) *leaseMarket {
	return &leaseMarket{c: nodeclient.New(nodeURL, nil), key: key}
}

// node is the node's network (its genesis and work thresholds), asked
// until it answers once.
func (m *leaseMarket) node(ctx context.Context) (nodewire.NodeInfo, error) {
	m.infoMu.Lock()
	defer m.infoMu.Unlock()
	if m.info != nil {
		return *m.info, nil
	}
	info, err := m.c.Node(ctx)
	if err != nil {
		return info, err
	}
	m.info = &info
	return info, nil
}

func (m *leaseMarket) access(ctx context.Context) (nodeclient.Access, error) {
	info, err := m.node(ctx)
	return nodeclient.Access{Key: m.key.Private(), Network: info.Genesis}, err
}

func (m *leaseMarket) Buy(ctx context.Context, r leasedriver.Resources, d time.Duration, exclude []string) (leasedriver.Lease, error) {
	req := market.Request{VCPUs: int64(r.VCPUs), MemoryMB: int64(r.MemoryMB), DiskGB: int64(r.DiskGB), Duration: int64(d / time.Second)}
	if err := req.Check(); err != nil {
		return leasedriver.Lease{}, err
	}
	info, err := m.node(ctx)
	if err != nil {
		return leasedriver.Lease{}, err
	}
	offers, err := m.c.RequestOffers(ctx, req)
	if err != nil {
		return leasedriver.Lease{}, err
	}
	offers.Offers = slices.DeleteFunc(offers.Offers, func(o market.Offer) bool { return slices.Contains(exclude, o.Provider.String()) })
	offer, err := pickOffer(offers, req, nil)
	if err != nil {
		return leasedriver.Lease{}, fmt.Errorf("%w: %v", leasedriver.ErrNoOffer, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	h, err := m.c.Head(ctx, m.key.Address())
	if err != nil {
		return leasedriver.Lease{}, err
	}
	b, err := wallet.Lease(h, offerLease(offer, req, m.key.Address()), nowMS())
	if err != nil {
		return leasedriver.Lease{}, err
	}
	b.Sign(m.key.Private())
	if b.PowNonce, err = pow.Solve(ctx, b.Hash, info.Work.For(b.Type)); err != nil {
		return leasedriver.Lease{}, fmt.Errorf("proof of work: %w", err)
	}
	if _, err := m.c.Submit(ctx, b); err != nil {
		return leasedriver.Lease{}, err
	}
	return leasedriver.Lease{Hash: b.Hash.String(), Provider: offer.Provider.String()}, nil
}

func (m *leaseMarket) Lease(ctx context.Context, lease string) (leasedriver.LeaseState, error) {
	h, err := ledger.ParseHash(lease)
	if err != nil {
		return leasedriver.LeaseState{}, err
	}
	l, err := m.c.Lease(ctx, h)
	if errors.Is(err, nodeclient.ErrNotFound) {
		return leasedriver.LeaseState{}, fmt.Errorf("%w: %v", leasedriver.ErrUnknown, err)
	}
	if err != nil {
		return leasedriver.LeaseState{}, err
	}
	out := leasedriver.LeaseState{Status: l.Status, AcceptDeadline: time.UnixMilli(l.AcceptDeadline)}
	if l.EndsAt != 0 {
		out.EndsAt = time.UnixMilli(l.EndsAt)
	}
	return out, nil
}

func (m *leaseMarket) Machine(ctx context.Context, lease string) (leasedriver.Machine, error) {
	h, err := ledger.ParseHash(lease)
	if err != nil {
		return leasedriver.Machine{}, err
	}
	v, err := m.c.VM(ctx, h)
	if errors.Is(err, nodeclient.ErrNotFound) {
		return leasedriver.Machine{}, fmt.Errorf("%w: %v", leasedriver.ErrUnknown, err)
	}
	if err != nil {
		return leasedriver.Machine{}, err
	}
	out := leasedriver.Machine{Status: v.Status, Error: v.Error, Image: v.Image}
	if v.EndsAt != 0 {
		out.EndsAt = time.UnixMilli(v.EndsAt)
	}
	return out, nil
}

func (m *leaseMarket) Exec(ctx context.Context, lease, command string) (agent.ExecResult, error) {
	h, err := ledger.ParseHash(lease)
	if err != nil {
		return agent.ExecResult{}, err
	}
	a, err := m.access(ctx)
	if err != nil {
		return agent.ExecResult{}, err
	}
	r, err := m.c.Exec(ctx, h, a, command)
	if err != nil {
		return agent.ExecResult{}, err
	}
	return agent.ExecResult{ExitCode: r.ExitCode, Stdout: []byte(r.Stdout), Stderr: []byte(r.Stderr),
		StdoutTruncated: r.Truncated, StderrTruncated: r.Truncated, TimedOut: r.TimedOut}, nil
}

func (m *leaseMarket) Dial(ctx context.Context, lease string, port int) (net.Conn, error) {
	h, err := ledger.ParseHash(lease)
	if err != nil {
		return nil, err
	}
	a, err := m.access(ctx)
	if err != nil {
		return nil, err
	}
	return m.c.Tunnel(ctx, h, a, port)
}

func (m *leaseMarket) Settle(ctx context.Context, lease string) error {
	h, err := ledger.ParseHash(lease)
	if err != nil {
		return err
	}
	_, err = m.c.SettleLease(ctx, h)
	return err
}

var _ leasedriver.Market = (*leaseMarket)(nil)
