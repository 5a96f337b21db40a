package node

import (
	"context"
	"runtime"
	"sync"

	"github.com/latticenet/lattice/ledger"
)

// maxVerifyBatch bounds how many blocks one verifier checks at once. A batch
// of 64 signatures costs about half of 64 single verifications; larger
// batches save little more and make their first block wait longer.
const maxVerifyBatch = 64

// minSplitBatch is the smallest batch a verifier splits between two cores
// when the writer is waiting for it: halves of 8 still cost about half of
// single verifications each.
const minSplitBatch = 16

// verifiers runs the stateless checks of Submit's blocks and passes the
// blocks that pass on to the writer, in the order checked; a block that
// fails is answered at once. Each verifier takes every block that is
// waiting (up to maxVerifyBatch) and checks them together with
// ledger.Params.CheckAll, whose batch verification of signatures is about
// twice as fast per block as checking blocks one by one. A block that
// arrives alone is checked alone, so batching adds no wait: batches form
// only when blocks queue up behind a busy verifier, which is when the
// saving matters. Handing a checked batch to the writer directly, rather
// than back to each caller to queue, lets the writer take the batch into
// one commit group.
//
// There is one verifier per two cores, not one per core: a verifier that
// finds a queue halves its cost per block, so half the cores verifying in
// batches keep up with all of them verifying one by one, and leave the
// other half to the writer and the HTTP server. With one per core the
// verifiers are never behind, batches never form, and a 2-core node took in
// a third fewer blocks (bench ledger, in-process: 0.57 of the verify rate
// against 0.84).
//
// A verifier that is alone (on two or three cores) splits its batch
// between two goroutines when nothing is queued for the writer: the writer
// has probably taken everything before this batch into a group, and the
// callers of this batch, and those waiting behind it, wait for its checks.
// The halves run on both cores, and the first is handed on as soon as it
// is checked. Callers that keep a fixed number of blocks in flight, as HTTP
// clients do, move in step through verification, the writer and the fsync,
// and with one core verifying the other was idle for a fifth of the time
// (bench ledger, HTTP, 64 in flight, medians of two runs: 0.39 and 0.40 of
// the verify rate unsplit, 0.42 and 0.43 split). When blocks are queued for
// the writer, the cores are busy anyway and the batch is checked whole, at
// its lower cost per block. With more cores there are several verifiers,
// whose batches already run side by side; splitting there is not measured,
// so it is not done.
func (e *Engine) verifiers() {
	procs := runtime.GOMAXPROCS(0)
	n := max(procs/2, 1)
	split := n == 1 && procs >= 2
	for range n {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			batch := make([]*request, 0, maxVerifyBatch)
			blocks := make([]*ledger.Block, 0, maxVerifyBatch)
			for {
				batch, blocks = batch[:0], blocks[:0]
				select {
				case r := <-e.verify:
					batch = append(batch, r)
				case <-e.quit:
					return
				}
				// Yield once before verifying, and again as long as
				// yielding brought more: blocks whose HTTP requests are
				// being read on this core join the batch instead of
				// waiting for the next one. When nothing else is runnable,
				// Gosched returns at once, so a lone block is not delayed.
				for yielded := false; ; {
					n := len(batch)
				drain:
					for len(batch) < maxVerifyBatch {
						select {
						case r := <-e.verify:
							batch = append(batch, r)
						default:
							break drain
						}
					}
					if len(batch) == maxVerifyBatch || (yielded && len(batch) == n) {
						break
					}
					yielded = true
					runtime.Gosched()
				}
				for _, r := range batch {
					blocks = append(blocks, r.b)
				}
				e.check(batch, blocks, split && len(batch) >= minSplitBatch && len(e.in) == 0)
			}
		}()
	}
}

// check runs the stateless checks of blocks, the blocks of batch, and
// passes the batch on. With split, it checks the two halves on two
// goroutines and passes the first on as soon as it is checked.
func (e *Engine) check(batch []*request, blocks []*ledger.Block, split bool) {
	params, err := e.Params()
	if err != nil {
		errs := make([]error, len(blocks))
		for i := range errs {
			errs[i] = err
		}
		e.pass(batch, errs)
		return
	}
	if !split {
		e.pass(batch, params.CheckAll(blocks))
		return
	}
	half := len(batch) / 2
	var second []error
	done := make(chan struct{})
	go func() {
		second = params.CheckAll(blocks[half:])
		close(done)
	}()
	e.pass(batch[:half], params.CheckAll(blocks[:half]))
	<-done
	e.pass(batch[half:], second)
}

// pass answers the requests of batch whose blocks failed their checks
// (errs holds each block's) and hands the others to the writer, in order.
func (e *Engine) pass(batch []*request, errs []error) {
	for i, err := range errs {
		r := batch[i]
		if err != nil {
			r.err = err
			e.metrics.block(r.b, Result{}, false, err)
			close(r.done)
			continue
		}
		select {
		case e.in <- r:
		case <-e.quit:
			r.err = ErrClosed
			close(r.done)
		}
	}
}

// checkThenDo hands r, a submission, to the verifiers, which pass it on
// to the writer if its block passes the stateless checks, and waits for
// its answer. e.verify is unbuffered, so a request is either taken by a
// verifier, which always passes it on or answers it, or never sent.
func (e *Engine) checkThenDo(ctx context.Context, r *request) (Result, error) {
	r.done = make(chan struct{})
	select {
	case e.verify <- r:
	case <-e.quit:
		return Result{}, ErrClosed
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	return e.wait(ctx, r)
}

// checkAll runs the stateless checks of blocks on every core, in batches,
// and returns each block's error. It is SubmitAll's: the blocks are all at
// hand, so it splits them evenly between the cores rather than queueing
// them for the verifiers.
func (e *Engine) checkAll(blocks []*ledger.Block) []error {
	errs := make([]error, len(blocks))
	params, err := e.Params()
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	procs := runtime.GOMAXPROCS(0)
	size := min(max((len(blocks)+procs-1)/procs, 1), maxVerifyBatch)
	var wg sync.WaitGroup
	sem := make(chan struct{}, procs)
	for lo := 0; lo < len(blocks); lo += size {
		hi := min(lo+size, len(blocks))
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(errs[lo:hi], params.CheckAll(blocks[lo:hi]))
			<-sem
		}()
	}
	wg.Wait()
	return errs
}
