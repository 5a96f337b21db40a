package leasenet

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/internal/strictjson"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/pow"
	"github.com/latticenet/lattice/timekeeping"
	"github.com/latticenet/lattice/wallet"
)

// committee returns the timekeeper committee of the lease's terms.
func (s *Service) committee(r *ledger.LeaseRecord) (timekeeping.Committee, error) {
	st, ok := s.cfg.Terms.StateAt(r.StateChainIndex)
	if !ok {
		return timekeeping.Committee{}, fmt.Errorf("leasenet: state-chain index %d is not held", r.StateChainIndex)
	}
	p, err := st.Params()
	if err != nil {
		return timekeeping.Committee{}, err
	}
	return market.Committee(p), nil
}

// Gather asks the lease's committee for its attestations of purpose, each
// member at the node it announced (this node's own timekeeper directly),
// all at once within GatherTimeout, and picks a set the rules accept
// (timekeeping.Pick). The error says who answered what when too few did.
func (s *Service) Gather(ctx context.Context, r *ledger.LeaseRecord, purpose ledger.Purpose) ([]ledger.Attestation, error) {
	return s.gather(ctx, r, purpose, r.Hash)
}

// gather is Gather of attestations that name subject: the lease, or for
// an ending the consumer's notice.
func (s *Service) gather(ctx context.Context, r *ledger.LeaseRecord, purpose ledger.Purpose, subject ledger.Hash) ([]ledger.Attestation, error) {
	c, err := s.committee(r)
	if err != nil {
		return nil, err
	}
	if len(c.Keys) == 0 {
		return nil, errors.New("the network names no timekeeper committee (set the state chain's timekeepers)")
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.GatherTimeout)
	defer cancel()
	var (
		mu      sync.Mutex
		got     []ledger.Attestation
		refused []string
		wg      sync.WaitGroup
	)
	for _, k := range c.Keys {
		wg.Go(func() {
			a, err := s.ask(ctx, k, r.Hash, purpose, subject)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				refused = append(refused, fmt.Sprintf("%s: %v", k.String()[:12], err))
				return
			}
			got = append(got, a)
		})
	}
	wg.Wait()
	atts, err := timekeeping.Pick(s.cfg.Terms.Network, c, purpose, subject, got)
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", err, refused)
	}
	return atts, nil
}

// ask gets timekeeper k's attestation of lease for purpose, which names
// subject (the lease, or for an ending the notice).
func (s *Service) ask(ctx context.Context, k ledger.Address, lease ledger.Hash, purpose ledger.Purpose, subject ledger.Hash) (ledger.Attestation, error) {
	if s.cfg.Timekeeper != nil && s.cfg.Timekeeper.Address() == k {
		a, _, err := s.Attest(lease, purpose)
		return a, err
	}
	s.tk.mu.Lock()
	ann, ok := s.tk.records[k]
	s.tk.mu.Unlock()
	if !ok {
		return ledger.Attestation{}, errors.New("not heard of: its node is not running, or has not announced itself to this one yet")
	}
	id, err := peer.Decode(ann.NodePeer)
	if err != nil {
		return ledger.Attestation{}, fmt.Errorf("its announcement names no peer: %v", err)
	}
	st, err := s.h.Open(ctx, id, protocolAttest)
	if err != nil {
		return ledger.Attestation{}, fmt.Errorf("unreachable: %v", err)
	}
	defer st.Close()
	stop := context.AfterFunc(ctx, func() { st.Reset() })
	defer stop()
	req, _ := json.Marshal(AttestRequest{LeaseHash: lease, Purpose: purpose.String()})
	if _, err := st.Write(req); err != nil {
		return ledger.Attestation{}, fmt.Errorf("unreachable: %v", err)
	}
	st.CloseWrite()
	data, err := io.ReadAll(io.LimitReader(st, maxMessage+1))
	if err != nil || len(data) > maxMessage {
		return ledger.Attestation{}, fmt.Errorf("no answer: %v", err)
	}
	var ans attestAnswer
	if err := strictjson.Unmarshal(data, &ans); err != nil {
		return ledger.Attestation{}, fmt.Errorf("a malformed answer: %v", err)
	}
	if ans.Attestation == nil {
		return ledger.Attestation{}, errors.New(trim(ans.Error))
	}
	if ans.Attestation.PublicKey != k || !timekeeping.Verify(*ans.Attestation, s.cfg.Terms.Network, purpose, subject) {
		return ledger.Attestation{}, errors.New("an attestation that does not verify (for an ending: of another notice?)")
	}
	return *ans.Attestation, nil
}

func trim(s string) string {
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// errDeclined is a lease the provider will not accept.
var errDeclined = errors.New("declined")

// ErrNothingDue says a lease's course needs no block now.
var ErrNothingDue = errors.New("nothing is due")

// ErrBusy says Settle did not finish its block: this node is doing
// another settle's proof of work. The caller retries in a few seconds.
var ErrBusy = errors.New("busy")

// Settle builds and submits the lease account's block that is due, if
// any: the start of an accepted lease, its refund past the acceptance
// deadline, its end once its time is up or its early end at its
// consumer's notice, the remainder that pays the consumer back after an
// early end, the return of a refunded lease's stake, or the bounce of a
// send its course does not take in. It gathers the attestations the
// block needs. Anyone may do this; the block is unsigned. It returns the
// block and what it does.
//
// Anyone asks without a credential, and each block costs a proof-of-work
// search, so a node makes one lease's block at a time (a request for a
// lease whose block is being made, by Settle or by the provider's own
// loop, waits for it, then looks again at what is due) and one Settle's
// search at a time, on one core fewer than it has (ErrBusy while one
// runs): requests in parallel cannot split the cores until none finishes.
func (s *Service) Settle(ctx context.Context, lease ledger.Hash) (*ledger.Block, string, error) {
	r, found, err := s.lease(lease)
	if err != nil {
		return nil, "", err
	}
	if !found {
		return nil, "", fmt.Errorf("%w: %s", ErrUnknownLease, lease)
	}
	for {
		busy := s.startSettling(lease)
		if busy == nil {
			break
		}
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, "", ctx.Err()
		}
		if r, found, err = s.lease(lease); err != nil {
			return nil, "", err
		} else if !found { // rolled back meanwhile
			return nil, "", fmt.Errorf("%w: %s", ErrUnknownLease, lease)
		}
	}
	defer s.doneSettling(lease)
	b, what, err := s.settleBlock(ctx, r)
	if err != nil {
		return nil, "", err
	}
	select {
	case s.work <- struct{}{}:
		defer func() { <-s.work }()
	default:
		return nil, "", fmt.Errorf("%w: this node is making another lease block's proof of work", ErrBusy)
	}
	if err := s.submitN(ctx, b, max(1, runtime.GOMAXPROCS(0)-1)); err != nil {
		return nil, "", err
	}
	return b, what, nil
}

// startSettling marks lease's block as being made and answers nil, or,
// when it is being made already, answers a channel closed once it is not.
func (s *Service) startSettling(lease ledger.Hash) <-chan struct{} {
	s.settlingMu.Lock()
	defer s.settlingMu.Unlock()
	if busy := s.settling[lease]; busy != nil {
		return busy
	}
	s.settling[lease] = make(chan struct{})
	return nil
}

func (s *Service) doneSettling(lease ledger.Hash) {
	s.settlingMu.Lock()
	defer s.settlingMu.Unlock()
	close(s.settling[lease])
	delete(s.settling, lease)
}

// settleBlock builds the block of r's course due now.
func (s *Service) settleBlock(ctx context.Context, r *ledger.LeaseRecord) (*ledger.Block, string, error) {
	acct, _, err := s.n.Store.Account(ledger.LeaseAccount(r.Hash))
	if err != nil {
		return nil, "", err
	}
	head := wallet.HeadOf(acct)
	head.Account = ledger.LeaseAccount(r.Hash)
	now := s.now()
	switch {
	case r.Stage == ledger.StageOpen && r.Accepted() && now < r.Deadline():
		atts, err := s.Gather(ctx, r, timekeeping.Started)
		if err != nil {
			return nil, "", err
		}
		return wallet.LeaseStart(head, r, atts), "start", nil
	case r.Stage == ledger.StageOpen && now >= r.Deadline():
		atts, err := s.Gather(ctx, r, timekeeping.Expire)
		if err != nil {
			return nil, "", err
		}
		return wallet.LeaseRefund(head, r, atts), "refund", nil
	case r.Stage == ledger.StageActive:
		// Its consumer's notice first, even past the term (the early end
		// then pays the whole cost): the remainder gives the notice's
		// amount back, which an end would leave pending for good.
		n, found, err := s.notice(r)
		if err != nil {
			return nil, "", err
		}
		if !found && now < r.End() {
			return nil, "", fmt.Errorf("%w: lease %s runs until %s", ErrNothingDue, r.Hash, msTime(r.End()))
		}
		if !found {
			atts, err := s.Gather(ctx, r, timekeeping.End)
			if err != nil {
				return nil, "", err
			}
			b, err := wallet.LeaseEnd(head, r, atts)
			return b, "end", err
		}
		atts, err := s.gather(ctx, r, timekeeping.Ending, n.Send)
		if err != nil {
			return nil, "", err
		}
		b, err := wallet.LeaseEarlyEnd(head, r, n.Send, atts)
		return b, "early end", err
	case r.Stage == ledger.StageEnded && r.EndedEarly() && r.Third.IsZero():
		return wallet.LeaseRemainder(head, r), "remainder", nil
	case r.Stage == ledger.StageRefunded && r.Accepted() && !r.StakeReturned:
		return wallet.LeaseReturnStake(head, r), "stake return", nil
	case r.Settled():
		p, sent, found, err := s.stray(r)
		if errors.Is(err, errUnconfirmed) {
			return nil, "", fmt.Errorf("%w: lease %s is %s; the send pending at its account is bounced once it and the account's latest block are confirmed", ErrNothingDue, r.Hash, r.Status())
		}
		if err != nil {
			return nil, "", err
		}
		if found {
			return wallet.LeaseBounce(head, p, sent), "bounce", nil
		}
	case r.Stage == ledger.StageOpen:
		return nil, "", fmt.Errorf("%w: lease %s is open until its acceptance deadline %s", ErrNothingDue, r.Hash, msTime(r.Deadline()))
	}
	return nil, "", fmt.Errorf("%w: lease %s is %s", ErrNothingDue, r.Hash, r.Status())
}

// submit finishes b (proof of work, on every core) and hands it to the
// engine; the ledger network gossips what the engine applies.
func (s *Service) submit(ctx context.Context, b *ledger.Block) error {
	return s.submitN(ctx, b, runtime.GOMAXPROCS(0))
}

// submitN is submit with the search on cores goroutines.
func (s *Service) submitN(ctx context.Context, b *ledger.Block, cores int) error {
	p, err := s.n.Engine.Params()
	if err != nil {
		return err
	}
	nonce, err := pow.SolveN(ctx, b.Hash, p.Work.For(b.Type), cores)
	if err != nil {
		return err
	}
	b.PowNonce = nonce
	_, err = s.n.Engine.Submit(ctx, b)
	return err
}

// providerLoop runs the provider's leases: at every change of the ledger
// and every Tick, it looks over the leases that name the provider and
// does what is due (providerStep). Starting, it picks up what a restart
// interrupted, since everything it does follows from the ledger.
func (s *Service) providerLoop(ctx context.Context) {
	tick := time.NewTicker(s.cfg.Tick)
	defer tick.Stop()
	failing := map[ledger.Hash]backoff{} // leases whose step failed, and when to try again
	declined := map[ledger.Hash]bool{}   // leases declined for good, logged once
	// Every lease it ever had may have a send at its account that came
	// while the node was away: each is looked at once.
	me := s.cfg.Provider.Address()
	err := s.n.Store.States(ledger.LeaseByProvider, string(me[:]), "", func(key string, _ []byte) error {
		var h ledger.Hash
		copy(h[:], key[len(me):])
		s.strays.add(h, true)
		return nil
	})
	if err != nil {
		s.log.Warn("reading the provider's leases", "err", err)
	}
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	for {
		s.providerPass(ctx, failing, declined)
		if len(failing) > 0 {
			retry.Reset(100 * time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-retry.C:
		case <-s.kick:
		}
	}
}

// backoff is when a lease whose step failed is tried again: after 100 ms
// at first (a timekeeper whose ledger has not heard of a new lease yet
// answers in a moment), doubling to 5 s.
type backoff struct {
	until time.Time
	delay time.Duration
}

// providerPass does what is due for every lease of the provider.
func (s *Service) providerPass(ctx context.Context, failing map[ledger.Hash]backoff, declined map[ledger.Hash]bool) {
	me := s.cfg.Provider.Address()
	var leases []*ledger.LeaseRecord
	err := s.n.Store.States(ledger.LeaseByProvider, string(me[:]), "", func(key string, _ []byte) error {
		var h ledger.Hash
		copy(h[:], key[len(me):])
		r, found, err := s.lease(h)
		if err == nil && found && s.pending(r) {
			leases = append(leases, r)
		}
		return err
	})
	if err != nil {
		s.log.Warn("reading the provider's leases", "err", err)
		return
	}
	live := make(map[ledger.Hash]bool, len(leases))
	for _, r := range leases {
		live[r.Hash] = true
	}
	for h := range failing { // leases that need nothing any more
		if !live[h] {
			delete(failing, h)
		}
	}
	for h := range declined {
		if !live[h] {
			delete(declined, h)
		}
	}
	// Refunds and bounces last and one a pass: each searches a proof of
	// work (a refund asks the committee too), and the leases this
	// provider runs have deadlines that the refunds of leases it never
	// took (anyone may open them) and the bounces of sends to its leases'
	// accounts (anyone may send them) must not hold up.
	now := s.now()
	var steps, refunds []*ledger.LeaseRecord
	for _, r := range leases {
		if s.refundDue(r, now) || s.bounceDue(r) {
			refunds = append(refunds, r)
		} else {
			steps = append(steps, r)
		}
	}
	leases = append(steps, refunds...)
	refunding := false
	for _, r := range leases {
		if ctx.Err() != nil {
			return
		}
		b, failed := failing[r.Hash]
		if failed && time.Now().Before(b.until) {
			continue
		}
		refund := s.refundDue(r, now)
		tail := refund || s.bounceDue(r)
		if tail && refunding {
			continue
		}
		err := s.providerStep(ctx, r)
		// A bounce that waits for confirmations did nothing: it leaves
		// the pass's one slot to the next (a send whose confirmation is
		// held up must not hold the refunds up).
		refunding = refunding || tail && !errors.Is(err, errUnconfirmed)
		if errors.Is(err, errUnconfirmed) {
			err = nil
		}
		if errors.Is(err, errDeclined) {
			// For good: no retries; it is refunded after its deadline.
			// Said once, for the operator who wonders.
			if !declined[r.Hash] {
				declined[r.Hash] = true
				s.log.Warn("lease declined: its consumer may refund it after its acceptance deadline, and this node does a minute later", "lease", r.Hash, "consumer", r.Consumer,
					"deadline", time.UnixMilli(r.Deadline()).UTC().Format(time.RFC3339), "why", err)
			}
			err = nil
		}
		if err != nil {
			most := 5 * time.Second
			if refund {
				// A refund waits on no deadline, and one whose
				// committee is gone never succeeds: tried seldom.
				most = maxRefundRetry
			}
			b.delay = min(max(2*b.delay, 100*time.Millisecond), most)
			if ctx.Err() == nil && b.delay >= time.Second {
				s.log.Info("lease step postponed", "lease", r.Hash, "status", r.Status(), "err", err, "retry_in", b.delay)
			}
			b.until = time.Now().Add(b.delay)
			failing[r.Hash] = b
			continue
		}
		delete(failing, r.Hash)
	}
}

// maxRefundRetry is the longest wait before a failed refund is tried again.
const maxRefundRetry = 2 * time.Minute

// refundDue reports whether r is a lease that names the provider, that it
// never accepted, and whose refund is now the provider's to make: its
// acceptance deadline is RefundGrace past.
func (s *Service) refundDue(r *ledger.LeaseRecord, now int64) bool {
	return r.Stage == ledger.StageOpen && !r.Accepted() && now-r.Deadline() >= s.cfg.RefundGrace.Milliseconds()
}

// pending reports whether r may still need the provider: not settled, or
// settled with a payout or a stake to take in, or perhaps a send to
// bounce.
func (s *Service) pending(r *ledger.LeaseRecord) bool {
	switch r.Stage {
	case ledger.StageEnded:
		return s.hasPayout(r.Second) || r.EndedEarly() && r.Third.IsZero() || s.strays.marked(r.Hash)
	case ledger.StageRefunded:
		return r.Accepted() && (!r.StakeReturned || s.hasPayout(r.Second)) || s.strays.marked(r.Hash)
	}
	return true
}

// courseDue reports whether settled lease r's course still needs a block
// of its account: the remainder after an early end, or the stake return
// of a refunded lease its provider accepted.
func courseDue(r *ledger.LeaseRecord) bool {
	return r.EndedEarly() && r.Third.IsZero() || r.Stage == ledger.StageRefunded && r.Accepted() && !r.StakeReturned
}

// bounceDue reports whether all settled lease r may need is a bounce: its
// course is over, its payout taken, and a block touched its account since
// the provider last found no send there.
func (s *Service) bounceDue(r *ledger.LeaseRecord) bool {
	return r.Settled() && !courseDue(r) && !s.hasPayout(r.Second) && s.strays.marked(r.Hash)
}

func (s *Service) hasPayout(settle ledger.Hash) bool {
	if settle.IsZero() {
		return false
	}
	_, found, err := s.n.Store.Pending(s.cfg.Provider.Address(), settle)
	return err == nil && found
}

// providerStep does the one thing r needs from its provider now, if any.
func (s *Service) providerStep(ctx context.Context, r *ledger.LeaseRecord) error {
	now := s.now()
	switch {
	case r.Stage == ledger.StageOpen && !r.Accepted() && now < r.Deadline():
		return s.accept(ctx, r) // errDeclined: for good, refunded past the deadline
	case r.Stage == ledger.StageOpen && !r.Accepted() && !s.refundDue(r, now):
		// Too late to accept. The consumer's own refund goes first, so
		// that two nodes seldom make competing refunds; past the grace
		// the provider makes it (below), so a lease it declined or had
		// no room for pays its consumer back without anyone asking.
		return nil
	case r.Stage == ledger.StageEnded && !(r.EndedEarly() && r.Third.IsZero()) && s.hasPayout(r.Second),
		r.Stage == ledger.StageRefunded && r.StakeReturned && s.hasPayout(r.Second):
		return s.takePayout(ctx, r.Second)
	case r.Settled() && !courseDue(r):
		// A bounce, if a send is pending at its account. The mark goes
		// first, so that a send applied while this looks marks it anew.
		s.strays.clear(r.Hash)
		_, _, found, err := s.stray(r)
		if errors.Is(err, errUnconfirmed) || found {
			s.strays.add(r.Hash, true) // bounced below, or looked at again
		}
		if err != nil || !found {
			return err // errUnconfirmed: looked at again next pass
		}
	}
	// An early end's remainder, which pays the consumer back, is made
	// here too (anyone may), then the payout is taken in.
	if s.startSettling(r.Hash) != nil {
		return nil // someone's Settle is making it: the next step sees the outcome
	}
	defer s.doneSettling(r.Hash)
	b, _, err := s.settleBlock(ctx, r)
	if errors.Is(err, ErrNothingDue) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.submit(ctx, b)
}

// accept takes lease r if the provider has room for it: it gathers the
// start attestations and submits the provider's lease_accept.
func (s *Service) accept(ctx context.Context, r *ledger.LeaseRecord) error {
	used, _, err := liveLeases(s.n.Store, r.Provider)
	if err != nil {
		return err
	}
	want := market.Resources{VCPUs: int64(r.VCPUs), MemoryMB: int64(r.MemoryMB), DiskGB: int64(r.DiskGB)}
	if free := s.cfg.Capacity.Sub(used); !want.Fits(free) {
		return fmt.Errorf("no room: %s free, the lease asks %s", free, want)
	}
	// The provider takes the network's price now: a lease that names an
	// older index whose price for it differs (a block by the network
	// skips HTTP admission) is left to be refunded.
	if s.cfg.TipIndex != nil && r.StateChainIndex != s.cfg.TipIndex() {
		now, err := s.cfg.Terms.LeaseTerms(s.cfg.TipIndex(), r.VCPUs, r.MemoryMB, r.DiskGB, r.Duration)
		switch {
		case errors.Is(err, ledger.ErrGapState):
			return fmt.Errorf("pricing the lease at the tip: %w", err) // tried again
		case err != nil:
			return fmt.Errorf("%w: the network's parameters now refuse it: %v", errDeclined, err)
		case now.Cost != r.Cost || now.Stake != r.Stake:
			return fmt.Errorf("%w: priced at state-chain index %d (%s), not at the tip's price", errDeclined, r.StateChainIndex, r.Cost)
		}
	}
	atts, err := s.Gather(ctx, r, timekeeping.Start)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	head, err := s.head()
	if err != nil {
		return err
	}
	b, err := wallet.LeaseAccept(head, r, s.certificate(), atts, s.now())
	if err != nil {
		return err
	}
	b.Sign(s.cfg.Provider.Private())
	if err := s.submit(ctx, b); err != nil {
		return err
	}
	s.log.Info("lease accepted", "lease", r.Hash, "consumer", r.Consumer, "resources", want.String())
	return nil
}

// takePayout receives the pending entry settle paid the provider.
func (s *Service) takePayout(ctx context.Context, settle ledger.Hash) error {
	p, found, err := s.n.Store.Pending(s.cfg.Provider.Address(), settle)
	if err != nil || !found {
		return err
	}
	// Only once the settle is confirmed: a lease account's block may have
	// valid competitors (another set of the committee's attestations),
	// and a receive of a payout the votes undo would be undone with it,
	// and every block after it on the provider's chain.
	e, found, err := s.n.Store.Entry(settle)
	if err != nil || !found {
		return err
	}
	if ok, err := s.n.Store.IsConfirmed(e); err != nil || !ok {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	head, err := s.head()
	if err != nil {
		return err
	}
	b, err := wallet.Receive(head, p, s.now())
	if err != nil {
		return err
	}
	b.Sign(s.cfg.Provider.Private())
	return s.submit(ctx, b)
}

// head is the provider's chain as the ledger has it.
func (s *Service) head() (wallet.Head, error) {
	a := s.cfg.Provider.Address()
	acct, found, err := s.n.Store.Account(a)
	if err != nil {
		return wallet.Head{}, err
	}
	if !found {
		return wallet.Head{Account: a}, nil
	}
	return wallet.HeadOf(acct), nil
}

// certificate is what the provider's accepts name as certificate_hash:
// SHA-256 of the provider node's peer ID, the identity its node proves
// on every peer-to-peer connection, so a consumer knows which node runs
// its machine.
func (s *Service) certificate() ledger.Hash {
	return ledger.Hash(sha256.Sum256([]byte(s.h.ID())))
}

// liveLeases sums what provider's live leases take.
func liveLeases(store ledger.Snapshot, provider ledger.Address) (market.Resources, int, error) {
	var used market.Resources
	n := 0
	err := store.States(ledger.LeaseLive, string(provider[:]), "", func(key string, _ []byte) error {
		var h ledger.Hash
		copy(h[:], key[len(provider):])
		r, found, err := ledger.GetLease(store, h)
		if err != nil || !found {
			return fmt.Errorf("live lease %s: found %v, %v", h, found, err)
		}
		used.VCPUs += int64(r.VCPUs)
		used.MemoryMB += int64(r.MemoryMB)
		used.DiskGB += int64(r.DiskGB)
		n++
		return nil
	})
	return used, n, err
}

// LiveLeases sums what provider's live leases (accepted, not settled)
// take, from the ledger: a provider's free capacity is never taken on its
// word.
func LiveLeases(store ledger.Snapshot, provider ledger.Address) (market.Resources, int, error) {
	return liveLeases(store, provider)
}

// msTime is a Unix millisecond time as people read it: RFC 3339 in UTC,
// with its milliseconds.
func msTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
