// Package pow finds proof-of-work nonces for blocks, on every core.
//
// The work function itself belongs to the ledger (ledger.WorkValue); this
// package only searches for nonces that meet a threshold.
package pow

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/latticenet/lattice/ledger"
)

// Solve returns a nonce whose work value for h meets t, searching with one
// goroutine per CPU from a random start. It returns ctx's error if ctx ends
// first. Every goroutine has exited when Solve returns.
func Solve(ctx context.Context, h ledger.Hash, t ledger.Threshold) (int64, error) {
	return SolveN(ctx, h, t, runtime.GOMAXPROCS(0))
}

// SolveN is Solve with n searching goroutines.
func SolveN(ctx context.Context, h ledger.Hash, t ledger.Threshold, n int) (int64, error) {
	if n < 1 {
		n = 1
	}
	var (
		found atomic.Bool
		nonce atomic.Int64
		wg    sync.WaitGroup
	)
	// Each worker walks its own stride of the nonce space from a random
	// start; checking ctx and found every few thousand tries keeps the
	// overhead negligible. Starting below 2^52 keeps nonces exact in
	// JavaScript numbers (2^53), which many JSON clients decode into.
	start := int64(rand.Uint64() >> 12)
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := start + int64(w); ; i += int64(n) {
				if i&0xfff < int64(n) && (found.Load() || ctx.Err() != nil) {
					return
				}
				if t.Met(h, i) {
					if found.CompareAndSwap(false, true) {
						nonce.Store(i)
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	if found.Load() {
		return nonce.Load(), nil
	}
	return 0, fmt.Errorf("pow: %w", ctx.Err())
}
