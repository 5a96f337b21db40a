package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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
	c       *nodeclient.Client
	key     wallet.Key
	timeout time.Duration // each short call's bound (callTimeout)

	mu sync.Mutex // the account's blocks, one at a time: two at once would fork its chain

	infoMu sync.Mutex
	info   *nodewire.NodeInfo
}

// callTimeout bounds each call to the node that answers at once: all but
// exec and the tunnel, whose callers give them bounds of their own (the
// command's timeout; the connection's life). A node that takes the
// connection and never answers then fails the call, and the driver's loops
// ask again, instead of holding a cloud request or a VM's watch forever.
const callTimeout = 30 * time.Second

func newLeaseMarket(nodeURL string, key wallet.Key) *leaseMarket {
	return &leaseMarket{c: nodeclient.New(nodeURL, nil), key: key, timeout: callTimeout}
}

// short bounds one call that answers at once (callTimeout).
func (m *leaseMarket) short(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, m.timeout)
}

// node is the node's network (its genesis and work thresholds), asked
// until it answers once.
func (m *leaseMarket) node(ctx context.Context) (nodewire.NodeInfo, error) {
	m.infoMu.Lock()
	defer m.infoMu.Unlock()
	if m.info != nil {
		return *m.info, nil
	}
	cctx, cancel := m.short(ctx)
	defer cancel()
	info, err := m.c.Node(cctx)
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
	cctx, cancel := m.short(ctx)
	offers, err := m.c.RequestOffers(cctx, req)
	cancel()
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
	cctx, cancel = m.short(ctx)
	h, err := m.c.Head(cctx, m.key.Address())
	cancel()
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
	cctx, cancel = m.short(ctx)
	defer cancel()
	if _, err := m.c.Submit(cctx, b); err != nil {
		return leasedriver.Lease{}, err
	}
	return leasedriver.Lease{Hash: b.Hash.String(), Provider: offer.Provider.String()}, nil
}

func (m *leaseMarket) Lease(ctx context.Context, lease string) (leasedriver.LeaseState, error) {
	h, err := ledger.ParseHash(lease)
	if err != nil {
		return leasedriver.LeaseState{}, err
	}
	ctx, cancel := m.short(ctx)
	defer cancel()
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
	ctx, cancel := m.short(ctx)
	defer cancel()
	v, err := m.c.VM(ctx, h)
	if errors.Is(err, nodeclient.ErrNotFound) {
		return leasedriver.Machine{}, fmt.Errorf("%w: %v", leasedriver.ErrUnknown, err)
	}
	if err != nil {
		return leasedriver.Machine{}, err
	}
	out := leasedriver.Machine{Status: v.Status, Error: v.Error, Image: v.Image, Restarts: v.Restarts}
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
	if ae := (*nodeclient.APIError)(nil); errors.As(err, &ae) && ae.StatusCode == http.StatusConflict {
		return agent.ExecResult{}, fmt.Errorf("%w: %w", leasedriver.ErrNotRunning, err)
	}
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
	ctx, cancel := m.short(ctx)
	defer cancel()
	_, err = m.c.SettleLease(ctx, h)
	return err
}

// End sends the platform's notice to end lease early, unless it is not
// running (nothing to end: false) or a notice is in already.
func (m *leaseMarket) End(ctx context.Context, lease string) (bool, error) {
	h, err := ledger.ParseHash(lease)
	if err != nil {
		return false, err
	}
	info, err := m.node(ctx)
	if err != nil {
		return false, err
	}
	cctx, cancel := m.short(ctx)
	defer cancel()
	l, err := m.c.Lease(cctx, h)
	if err != nil {
		return false, err
	}
	switch {
	case l.Consumer != m.key.Address():
		return false, fmt.Errorf("lease %s was made by %s, not the platform's account %s", h, l.Consumer, m.key.Address())
	case l.Status != "active" || nowMS() >= l.EndsAt:
		return false, nil
	}
	// One block of the account at a time, the check for a notice sent
	// already included: two deletes at once send one notice.
	m.mu.Lock()
	defer m.mu.Unlock()
	if notice, err := pendingNotice(cctx, m.c, h, m.key.Address()); err != nil || !notice.IsZero() {
		return err == nil, err
	}
	head, err := m.c.Head(cctx, m.key.Address())
	if err != nil {
		return false, err
	}
	b, err := wallet.Send(head, ledger.LeaseAccount(h), noticeAmount, ledger.Native, nowMS())
	if err != nil {
		return false, err
	}
	b.Sign(m.key.Private())
	if b.PowNonce, err = pow.Solve(ctx, b.Hash, info.Work.For(b.Type)); err != nil {
		return false, fmt.Errorf("proof of work: %w", err)
	}
	if _, err = m.c.Submit(cctx, b); err != nil {
		return false, err
	}
	return true, nil
}

var _ leasedriver.Market = (*leaseMarket)(nil)
