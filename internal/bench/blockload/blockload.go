// Package blockload drives streams of blocks into a node, from many
// workers at once, and times them: the load generator the ledger and
// network benchmarks share. Over HTTP it posts each block alone, as a
// wallet would, on keep-alive connections opened before the clock starts,
// from the benchmark's own process or from a process of its own (see
// Driver). The place moves the figures: on two cores a second process
// costs the machine a switch between processes at every request
// (docs/benchmarks.md, "Where the load generator runs").
package blockload

import (
	"context"
	"encoding/json"
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

// Drive runs streams with conc workers: each worker takes whole streams,
// one after another, and submits their items (blocks, or the requests
// that post them) in order, one at a time; submit returns once one is
// accepted. Streams must be independent of each other. The first error,
// or ctx's end, stops every worker before its next item; the error is
// returned once all have stopped.
func Drive[T any](ctx context.Context, streams [][]T, conc int, submit func(worker int, item T) error) (Phase, error) {
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

// Request is the POST that submits one block: its path and JSON body,
// encoded before the clock starts, as a wallet has a block at hand.
type Request struct {
	Path string
	Body []byte
}

// Requests encodes the requests that post streams' blocks, stream by
// stream, each block in its JSON form.
func Requests(streams [][]*ledger.Block) ([][]Request, error) {
	out := make([][]Request, len(streams))
	for i, st := range streams {
		out[i] = make([]Request, len(st))
		for j, b := range st {
			body, err := json.Marshal(b)
			if err != nil {
				return nil, fmt.Errorf("blockload: encode block %s: %w", b.Hash, err)
			}
			out[i][j] = Request{Path: "/blocks/" + b.Type.String(), Body: body}
		}
	}
	return out, nil
}

// HTTP posts requests to a node's API at addr (host:port), one
// connection per worker.
type HTTP struct {
	conns []*conn
}

// DialHTTP opens conc connections to addr.
func DialHTTP(addr string, conc int) (*HTTP, error) {
	h := &HTTP{}
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

// Post sends r on the worker's connection and returns once the node has
// answered 200.
func (h *HTTP) Post(worker int, r Request) error {
	status, resp, err := h.conns[worker].post(r.Path, r.Body)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("POST %s: %d %s", r.Path, status, resp)
	}
	return nil
}

// Close closes every connection.
func (h *HTTP) Close() {
	for _, c := range h.conns {
		c.close()
	}
}
