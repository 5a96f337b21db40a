package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/ledgerstore"
)

// ErrClosed is returned by Submit after the engine has stopped.
var ErrClosed = errors.New("node: engine closed")

// ErrFailed is returned by Submit once a commit or an fsync has failed.
// The database may then hold changes that are not durable, so the engine
// accepts nothing more, not even resubmissions, until the process restarts
// and recovers what was synced.
var ErrFailed = errors.New("node: the ledger could not be written; restart the node")

// maxGroup bounds how many blocks share one commit. Larger groups amortise
// the fsync further but delay the first block of the group.
const maxGroup = 1024

// Result says what became of an operation.
type Result struct {
	Hash      ledger.Hash
	Duplicate bool // the block was already in the ledger; nothing changed
	// Confirmed lists the blocks Confirm newly confirmed, in order.
	Confirmed []ledger.Hash
	// RolledBack lists the blocks Resolve removed, latest first.
	RolledBack []*ledger.Block
}

// Engine owns the ledger's write path. Submit may be called from any number
// of goroutines: their blocks' stateless checks (signature, work, hash) run
// on one verifier per core, in batches of the blocks waiting, so the
// expensive signature verification is shared out and batched; one writer
// goroutine then decides blocks in arrival order against the ledger and
// commits them in groups with one fsync per group.
//
// The writer pipelines: it applies group N+1 to the database while group
// N's fsync is in flight, and a second goroutine answers group N's callers
// once its fsync has completed. A block is acknowledged only when it is
// durable. (Pebble makes a batch visible to reads before its WAL sync in
// every mode; the pipeline does not weaken that.)
type Engine struct {
	store  *ledgerstore.Store
	params ledger.ParamSource
	log    *slog.Logger
	now    func() time.Time

	in      chan *request
	verify  chan *request // unbuffered: see checkThenDo
	synced  chan *group
	quit    chan struct{}
	stopped chan struct{} // closed once both goroutines have exited
	failed  chan struct{} // closed by fail
	failure error         // set by fail before failed is closed
	failOne sync.Once
	wg      sync.WaitGroup
	once    sync.Once
	feed    feed
	metrics *Metrics // nil: none
	gov     atomic.Pointer[govBox]
}

type govBox struct{ g ledger.Governance }

// SetGovernance makes the engine judge lease blocks against g, the
// governance state chain; until it is called they are refused as
// unsupported. Call it before blocks arrive from the network.
func (e *Engine) SetGovernance(g ledger.Governance) { e.gov.Store(&govBox{g}) }

// Governance returns what SetGovernance set, or nil.
func (e *Engine) Governance() ledger.Governance {
	if b := e.gov.Load(); b != nil {
		return b.g
	}
	return nil
}

// view is the batch as the ledger's rules see it: with governance, when set.
func (e *Engine) view(batch *ledgerstore.Batch) ledger.View {
	if g := e.Governance(); g != nil {
		return ledger.WithGovernance(batch, g)
	}
	return batch
}

// opKind tells the writer what a request asks.
type opKind uint8

const (
	opSubmit  opKind = iota // append a block
	opConfirm               // confirm a block and what it depends on
	opResolve               // switch a fork to a contender
	opVotes                 // record votes of this node's representatives
)

type request struct {
	kind     opKind
	b        *ledger.Block            // opSubmit, opResolve
	confirms []Confirmation           // opConfirm
	votes    map[ledger.Hash][]byte   // opConfirm: votes to store, by digest
	signed   []ledgerstore.VoteRecord // opVotes: in, then what is granted
	results  []Result                 // opConfirm: one per confirmation
	errs     []error                  // opConfirm: one per confirmation
	res      Result
	err      error
	done     chan struct{}
	// What the request changed, for the feed.
	applied *ledger.Entry
	fork    *ledger.ForkError
	// contender is a valid block refused as a fork, recorded or not.
	contender *ledger.Block
}

type group struct {
	batch   *ledgerstore.Batch
	reqs    []*request
	err     error // apply failed before commit
	started time.Time
}

// NewEngine starts an engine writing to store. Close stops it.
func NewEngine(store *ledgerstore.Store, params ledger.ParamSource, log *slog.Logger, now func() time.Time) *Engine {
	return newEngine(store, params, log, now, nil)
}

// newEngine is NewEngine recording m (nil: nothing).
func newEngine(store *ledgerstore.Store, params ledger.ParamSource, log *slog.Logger, now func() time.Time, m *Metrics) *Engine {
	e := &Engine{
		store: store, params: params, log: log, now: now, metrics: m,
		in:      make(chan *request, maxGroup),
		verify:  make(chan *request),
		synced:  make(chan *group, 2),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
		failed:  make(chan struct{}),
	}
	e.wg.Add(2)
	go e.write()
	go e.acknowledge()
	e.verifiers()
	return e
}

// Close stops the engine after the blocks already taken are committed and
// answered, and ends every feed subscription. Calls that have not been taken
// fail with ErrClosed.
func (e *Engine) Close() {
	e.once.Do(func() {
		close(e.quit)
		e.wg.Wait()
		e.feed.close()
		close(e.stopped)
	})
	<-e.stopped
}

// Failed is closed when the engine stops accepting blocks after a storage
// failure; Err then says why. A server should stop and be restarted.
func (e *Engine) Failed() <-chan struct{} { return e.failed }

// Err returns the storage failure that stopped the engine, or nil.
func (e *Engine) Err() error {
	select {
	case <-e.failed:
		return e.failure
	default:
		return nil
	}
}

func (e *Engine) fail(err error) {
	e.failOne.Do(func() {
		e.log.Error("ledger write failed; accepting no more blocks", "err", err)
		e.failure = fmt.Errorf("%w: %v", ErrFailed, err)
		close(e.failed)
	})
}

// Params returns the network rules the engine enforces now: those its
// ParamSource gives at the ledger as the store holds it.
func (e *Engine) Params() (ledger.Params, error) { return e.params.ParamsAt(e.store) }

// Submit checks b and, if valid, appends it to the ledger durably. It
// returns a *ledger.RuleError or *ledger.ForkError for an invalid block
// (a fork is recorded as a conflict before Submit returns), ctx's error if
// ctx ends first (the block may still be applied), and other errors when the
// ledger cannot be written. Blocks from clients and from peers take the same
// path; deciding which to take is the caller's business.
func (e *Engine) Submit(ctx context.Context, b *ledger.Block) (Result, error) {
	if err := e.Err(); err != nil {
		return Result{}, err
	}
	return e.checkThenDo(ctx, &request{kind: opSubmit, b: b})
}

// SubmitChecked is Submit for a block that has passed e.Params().Check
// already, as a gossip validator runs it before a block is forwarded: the
// signature and work are not verified a second time.
func (e *Engine) SubmitChecked(ctx context.Context, b *ledger.Block) (Result, error) {
	if err := e.Err(); err != nil {
		return Result{}, err
	}
	return e.do(ctx, &request{kind: opSubmit, b: b})
}

// SubmitAll submits blocks in order, as sync delivers them: it checks them
// in parallel on every core, then hands them to the writer in the order
// given, so a block may depend on an earlier one of the same call, and
// waits until every one is decided and durable. errs[i] is blocks[i]'s
// error, as Submit would return it.
func (e *Engine) SubmitAll(ctx context.Context, blocks []*ledger.Block) ([]Result, []error) {
	return e.submitAll(ctx, blocks, true)
}

// SubmitAllChecked is SubmitAll for blocks that have all passed
// e.Params().Check already (see SubmitChecked).
func (e *Engine) SubmitAllChecked(ctx context.Context, blocks []*ledger.Block) ([]Result, []error) {
	return e.submitAll(ctx, blocks, false)
}

// QueueChecked hands blocks that have passed e.Params().Check to the
// writer, in order, and returns without waiting for them to be decided:
// wait does. A caller that queues batch after batch from one goroutine
// keeps their order, and lets the writer apply one batch while the last
// one's fsync runs.
func (e *Engine) QueueChecked(ctx context.Context, blocks []*ledger.Block) (wait func() ([]Result, []error)) {
	res := make([]Result, len(blocks))
	errs := make([]error, len(blocks))
	if err := e.Err(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return func() ([]Result, []error) { return res, errs }
	}
	reqs := e.queue(ctx, blocks, errs)
	return func() ([]Result, []error) {
		e.await(ctx, reqs, res, errs)
		return res, errs
	}
}

func (e *Engine) submitAll(ctx context.Context, blocks []*ledger.Block, check bool) ([]Result, []error) {
	res := make([]Result, len(blocks))
	errs := make([]error, len(blocks))
	if err := e.Err(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return res, errs
	}
	if check {
		errs = e.checkAll(blocks)
		for i, err := range errs {
			if err != nil {
				e.metrics.block(blocks[i], Result{}, false, err)
			}
		}
	}
	e.await(ctx, e.queue(ctx, blocks, errs), res, errs)
	return res, errs
}

// queue hands the blocks without an error yet to the writer, in order.
func (e *Engine) queue(ctx context.Context, blocks []*ledger.Block, errs []error) []*request {
	reqs := make([]*request, len(blocks))
	for i, b := range blocks {
		if errs[i] != nil {
			continue
		}
		r := &request{kind: opSubmit, b: b, done: make(chan struct{})}
		select {
		case e.in <- r:
			reqs[i] = r
		case <-e.quit:
			errs[i] = ErrClosed
		case <-ctx.Done():
			errs[i] = ctx.Err()
		}
	}
	return reqs
}

// await waits for the queued requests' answers.
func (e *Engine) await(ctx context.Context, reqs []*request, res []Result, errs []error) {
	for i, r := range reqs {
		if r == nil {
			continue
		}
		select {
		case <-r.done:
			res[i], errs[i] = r.res, r.err
		case <-e.stopped:
			select {
			case <-r.done:
				res[i], errs[i] = r.res, r.err
			default:
				errs[i] = ErrClosed
			}
		case <-ctx.Done():
			errs[i] = ctx.Err()
		}
	}
}

// Confirmation asks for a block to be confirmed, with the certificate
// (the encoded evidence that it won its election) to store beside it.
type Confirmation struct {
	Hash        ledger.Hash
	Certificate []byte // nil for none
}

// Confirm records that block h is confirmed, with cert (the evidence that
// confirmed it, or nil) stored beside it. Confirming a block confirms
// every block it depends on: the earlier blocks of its chain and, for a
// receive, the send it receives, recursively. Result.Confirmed lists what
// became newly confirmed; confirming again changes nothing. Confirm fails
// with ledger.ErrNotInLedger when h is not in the ledger.
func (e *Engine) Confirm(ctx context.Context, h ledger.Hash, cert []byte) (Result, error) {
	res, errs := e.ConfirmAll(ctx, []Confirmation{{Hash: h, Certificate: cert}}, nil)
	return res[0], errs[0]
}

// ConfirmAll confirms many blocks, as Confirm does each, in one atomic
// commit, and stores votes (the votes the certificates name, by digest)
// once each. A block not in the ledger gets ledger.ErrNotInLedger and changes
// nothing; any other error fails every confirmation of the call.
func (e *Engine) ConfirmAll(ctx context.Context, cs []Confirmation, votes map[ledger.Hash][]byte) ([]Result, []error) {
	res := make([]Result, len(cs))
	errs := make([]error, len(cs))
	fail := func(err error) ([]Result, []error) {
		for i := range errs {
			errs[i] = err
		}
		return res, errs
	}
	if err := e.Err(); err != nil {
		return fail(err)
	}
	r := &request{kind: opConfirm, confirms: cs, votes: votes, results: res, errs: errs}
	if _, err := e.do(ctx, r); err != nil {
		return fail(err)
	}
	return r.results, r.errs
}

// RecordVotes durably records votes of this node's representatives, in
// the next group commit with whatever else is being written (a vote that
// binds must be on disk before it is signed, and an fsync of its own per
// vote flush cost a third of a network's confirmations). It returns the
// votes granted once synced (ledgerstore.Batch.RecordVotes): the only ones
// the representatives may sign.
func (e *Engine) RecordVotes(ctx context.Context, recs []ledgerstore.VoteRecord) ([]ledgerstore.VoteRecord, error) {
	if err := e.Err(); err != nil {
		return nil, err
	}
	r := &request{kind: opVotes, signed: recs}
	if _, err := e.do(ctx, r); err != nil {
		return nil, err
	}
	return r.signed, nil
}

// Resolve settles a fork in favour of b: the block that holds b's place in
// its chain is rolled back with everything that depends on it (the later
// blocks of the chain and, recursively, the receives of its sends), b is
// applied and the conflict is ended, all in one atomic batch. It fails with
// ledger.ErrConfirmed, changing nothing, when the block in place is confirmed. When
// b's place is empty, Resolve is Submit.
func (e *Engine) Resolve(ctx context.Context, b *ledger.Block) (Result, error) {
	if err := e.Err(); err != nil {
		return Result{}, err
	}
	params, err := e.Params()
	if err != nil {
		return Result{}, err
	}
	if err := params.Check(b); err != nil {
		return Result{}, err
	}
	return e.do(ctx, &request{kind: opResolve, b: b})
}

// do hands r to the writer and waits for its answer.
func (e *Engine) do(ctx context.Context, r *request) (Result, error) {
	r.done = make(chan struct{})
	select {
	case e.in <- r:
	case <-e.quit:
		return Result{}, ErrClosed
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	return e.wait(ctx, r)
}

// wait waits for the answer to r, which the writer has been handed.
func (e *Engine) wait(ctx context.Context, r *request) (Result, error) {
	select {
	case <-r.done:
		return r.res, r.err
	case <-e.stopped:
		// Every request the writer took has been answered by now; one
		// still unanswered was queued too late and never will be.
		select {
		case <-r.done:
			return r.res, r.err
		default:
			return Result{}, ErrClosed
		}
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// write is the single writer: it takes a group of requests, decides each
// against the batch (which sees the earlier ones), and hands the batch to
// acknowledge for its fsync. Submissions and confirmations share groups: a
// confirmation fails before it writes anything except on a storage error,
// which stops the engine and drops the group. A fork resolution can be
// refused after it has written (its winner may not apply once the loser is
// rolled back), so it has a group of its own, dropped whole if it fails.
func (e *Engine) write() {
	defer e.wg.Done()
	defer close(e.synced)
	var next *request // taken from e.in but left for the next group
	for {
		first := next
		next = nil
		if first == nil {
			select {
			case first = <-e.in:
			case <-e.quit:
				return
			}
		}
		if err := e.Err(); err != nil {
			// Nothing more is decided after a failure: the database may
			// hold what was never synced.
			first.err = err
			close(first.done)
			continue
		}
		g := &group{batch: e.store.NewBatch(), reqs: []*request{first}}
		e.decide(g.batch, first)
		if first.kind == opResolve {
			if first.err != nil {
				g.batch.Close()
				g.batch = e.store.NewBatch()
			}
		} else {
		drain:
			for len(g.reqs) < maxGroup {
				select {
				case r := <-e.in:
					if r.kind == opResolve {
						next = r
						break drain
					}
					g.reqs = append(g.reqs, r)
					e.decide(g.batch, r)
				default:
					break drain
				}
			}
		}
		if e.Err() != nil {
			// A confirmation met a storage error part-way: nothing of
			// this group is committed.
			g.batch.Close()
			g.batch = e.store.NewBatch()
		} else if g.batch.Len() > 0 {
			g.started = time.Now()
			if g.err = g.batch.CommitNoSyncWait(); g.err != nil {
				e.fail(g.err)
			}
		}
		e.synced <- g
	}
}

// decide carries out one request against the batch and records the
// outcome on r.
func (e *Engine) decide(batch *ledgerstore.Batch, r *request) {
	switch r.kind {
	case opSubmit:
		e.append(batch, r, r.b)
	case opConfirm:
		if r.err = confirmAll(batch, r); r.err != nil {
			e.fail(r.err) // it may have written part of its changes
		}
	case opResolve:
		e.resolve(batch, r)
	case opVotes:
		if r.signed, r.err = batch.RecordVotes(r.signed); r.err != nil {
			e.fail(r.err)
		}
	}
}

// append applies one block to the batch.
func (e *Engine) append(batch *ledgerstore.Batch, r *request, b *ledger.Block) {
	r.res.Hash = b.Hash
	d, err := ledger.Apply(e.view(batch), b)
	var fe *ledger.ForkError
	switch {
	case err == nil:
		// A failed Apply wrote nothing (its reads come first): the block
		// is refused, the rest of the group goes on.
		if r.err = batch.Apply(d); r.err == nil {
			r.applied = d.Add
		}
	case errors.Is(err, ledger.ErrDuplicate):
		r.res.Duplicate = true
	case errors.As(err, &fe):
		r.err = fe
		r.contender = fe.Block
		// A contender of a confirmed block has lost already: it is
		// refused, and neither recorded nor put to election (an election
		// there could only undo what the network decided).
		if decided, derr := placeConfirmed(batch, fe); derr != nil {
			r.err = derr
			return
		} else if decided {
			return
		}
		if cerr := batch.AddConflict(fe, e.now().UnixMilli()); cerr != nil {
			r.err = cerr
		} else {
			r.fork = fe
			e.log.Warn("fork refused", "account", fe.Account, "previous", fe.Previous, "kept", fe.Existing, "refused", fe.Block.Hash)
		}
	default:
		r.err = err
	}
}

// acknowledge waits for each group's fsync, in commit order, and answers
// its callers.
func (e *Engine) acknowledge() {
	defer e.wg.Done()
	for g := range e.synced {
		if g.err == nil && g.batch.Len() > 0 {
			if err := g.batch.SyncWait(); err != nil {
				e.fail(err)
			} else {
				e.metrics.committed(g.started, len(g.reqs))
			}
		}
		g.batch.Close()
		// After a failure no answer of this group can be trusted, not even
		// a duplicate or a rule error: they were decided against state
		// that may not be durable (and a fork's conflict record may be
		// lost). Later groups were decided against it too.
		err := e.Err()
		if err == nil {
			e.feed.publish(changeOf(g.reqs))
		}
		for _, r := range g.reqs {
			if err != nil {
				r.res, r.err = Result{}, err
			}
			if r.kind == opSubmit {
				e.metrics.block(r.b, r.res, r.fork != nil, r.err)
			}
			close(r.done)
		}
	}
}
