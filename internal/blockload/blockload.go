// Package blockload drives streams of blocks into a node, from many
// workers at once, and times them: the load generator the ledger and
// network benchmarks share. Over HTTP it posts each block alone, as a
// wallet would, on keep-alive connections opened before the clock starts.
package blockload

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latticenet/lattice/ledger"
)

// Phase is the measurement of one run of Drive.
type Phase struct {
	Blocks    int     `json:"blocks"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"blocks_per_second"`
	P50ms     float64 `json:"p50_ms"`
	P99ms     float64 `json:"p99_ms"`
}

// Submit submits one block for a worker and returns once it is accepted.
type Submit func(worker int, b *ledger.Block) error

// Drive runs streams with conc workers: each worker takes whole streams,
// one after another, and submits their blocks in order, one at a time.
// Streams must be independent of each other. The first error, or ctx's
// end, stops every worker before its next block; the error is returned
// once all have stopped.
func Drive(ctx context.Context, streams [][]*ledger.Block, conc int, submit Submit) (Phase, error) {
	var next atomic.Int64
	var failed atomic.Bool
	lat := make([][]time.Duration, conc)
	errc := make(chan error, conc)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				s := int(next.Add(1) - 1)
				if s >= len(streams) {
					return
				}
				for _, b := range streams[s] {
					if failed.Load() {
						return
					}
					if err := ctx.Err(); err != nil {
						failed.Store(true)
						errc <- err
						return
					}
					t := time.Now()
					if err := submit(i, b); err != nil {
						failed.Store(true)
						errc <- err
						return
					}
					lat[i] = append(lat[i], time.Since(t))
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errc)
	if err := <-errc; err != nil {
		return Phase{}, err
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	ph := Phase{Blocks: len(all), Seconds: elapsed.Seconds(), PerSecond: float64(len(all)) / elapsed.Seconds()}
	if len(all) > 0 {
		ph.P50ms = ms(all[len(all)/2])
		ph.P99ms = ms(all[len(all)*99/100])
	}
	return ph, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// HTTP is a Submit that posts blocks to a node's API at addr
// (host:port), one connection per worker.
type HTTP struct {
	conns []*conn
	body  func(*ledger.Block) []byte
}

// DialHTTP opens conc connections to addr. body gives a block's JSON form
// (encode it before the clock starts, as a wallet has it at hand).
func DialHTTP(addr string, conc int, body func(*ledger.Block) []byte) (*HTTP, error) {
	h := &HTTP{body: body}
	for range conc {
		c, err := dial(addr)
		if err != nil {
			h.Close()
			return nil, err
		}
		h.conns = append(h.conns, c)
	}
	return h, nil
}

// Submit posts b to POST /blocks/{type} on the worker's connection.
func (h *HTTP) Submit(worker int, b *ledger.Block) error {
	status, resp, err := h.conns[worker].post("/blocks/"+b.Type.String(), h.body(b))
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("POST /blocks/%s: %d %s", b.Type, status, resp)
	}
	return nil
}

// Close closes every connection.
func (h *HTTP) Close() {
	for _, c := range h.conns {
		c.close()
	}
}
