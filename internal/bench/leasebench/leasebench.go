// Package leasebench measures leases on the ledger (lattice bench lease):
// lease blocks a second through one node as a ratio to send blocks a second
// through the same node in the same round, both posted over HTTP alike; and
// the time from a consumer's lease block to its provider's accept
// confirmed on all three nodes of a loopback network, whose nodes keep
// time and whose third provides. Every node is real (package nettest:
// libp2p on loopback, Pebble on disk in a temporary directory, fsync'd).
package leasebench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latticenet/lattice/internal/bench/benchstat"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/pow"
	"github.com/latticenet/lattice/wallet"
)

// Config sizes a run. Zero values take the defaults.
type Config struct {
	Blocks   int       // lease blocks, and as many sends, per round (default 2000)
	Leases   int       // leases timed to their confirmed accept per round (default 20)
	Rounds   int       // rounds; the report gives medians (default 3)
	Conc     int       // HTTP requests in flight in the throughput phase (default 32)
	Progress io.Writer // progress messages, or nil
}

func (c *Config) setDefaults() {
	if c.Blocks <= 0 {
		c.Blocks = 2000
	}
	if c.Leases <= 0 {
		c.Leases = 20
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.Conc <= 0 {
		c.Conc = 32
	}
}

// Round is one round's figures.
type Round struct {
	SendsPerSec  float64 `json:"sends_per_sec"`
	LeasesPerSec float64 `json:"leases_per_sec"`
	// Ratio is LeasesPerSec / SendsPerSec (target >= 0.5).
	Ratio float64 `json:"ratio"`
	// Accept is from posting a lease block to node 0 to its provider's
	// accept confirmed on all three nodes (target p50 < 1 s).
	AcceptP50ms float64 `json:"accept_p50_ms"`
	AcceptP99ms float64 `json:"accept_p99_ms"`
}

// Report is a run's rounds and their medians.
type Report struct {
	Blocks int     `json:"blocks"`
	Leases int     `json:"leases"`
	Conc   int     `json:"concurrency"`
	Rounds []Round `json:"rounds"`
	Median Round   `json:"median"`
}

// Run measures cfg.Rounds rounds.
func Run(ctx context.Context, cfg Config) (Report, error) {
	cfg.setDefaults()
	rep := Report{Blocks: cfg.Blocks, Leases: cfg.Leases, Conc: cfg.Conc}
	say := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}
	for i := range cfg.Rounds {
		var rd Round
		say("round %d: %d sends and %d lease blocks through one node", i+1, cfg.Blocks, cfg.Blocks)
		if err := nettest.Run("bench-lease-throughput", func(t nettest.T) error { return throughput(ctx, t, cfg, i, &rd) }); err != nil {
			return rep, err
		}
		say("round %d: %d leases to their confirmed accept on three nodes", i+1, cfg.Leases)
		if err := nettest.Run("bench-lease-accept", func(t nettest.T) error { return acceptLatency(ctx, t, cfg.Leases, &rd) }); err != nil {
			return rep, err
		}
		say("round %d: %.0f sends/s, %.0f leases/s (ratio %.2f), accept p50 %.0f ms, p99 %.0f ms",
			i+1, rd.SendsPerSec, rd.LeasesPerSec, rd.Ratio, rd.AcceptP50ms, rd.AcceptP99ms)
		rep.Rounds = append(rep.Rounds, rd)
	}
	med := func(f func(Round) float64) float64 {
		var v []float64
		for _, r := range rep.Rounds {
			v = append(v, f(r))
		}
		return benchstat.Median(v)
	}
	rep.Median = Round{
		SendsPerSec:  med(func(r Round) float64 { return r.SendsPerSec }),
		LeasesPerSec: med(func(r Round) float64 { return r.LeasesPerSec }),
		Ratio:        med(func(r Round) float64 { return r.Ratio }),
		AcceptP50ms:  med(func(r Round) float64 { return r.AcceptP50ms }),
		AcceptP99ms:  med(func(r Round) float64 { return r.AcceptP99ms }),
	}
	return rep, nil
}

// terms returns what a minimal lease costs at the tip of node i's state
// chain, and the tip.
func terms(c *nettest.Cluster, i int) (ledger.LeaseTerms, uint64, error) {
	gov := c.Nodes[i].Gov
	tip := gov.Tip().Index
	t, err := market.Terms{Network: c.Network.Genesis.Hash, StateAt: gov.StateAt}.LeaseTerms(tip, 1, 512, 5, 60)
	return t, tip, err
}

func finish(ctx context.Context, b *ledger.Block, k wallet.Key) error {
	b.Sign(k.Private())
	nonce, err := pow.Solve(ctx, b.Hash, ledger.DevWork.For(b.Type))
	b.PowNonce = nonce
	return err
}

// throughput posts n sends and n lease blocks, each from an account of
// its own (no block waits for another), to one node over HTTP, conc at a
// time, one kind after the other, and times each kind.
func throughput(ctx context.Context, t nettest.T, cfg Config, round int, rd *Round) error {
	c := nettest.Start(t, nettest.Options{Nodes: 1, OnDisk: true, Timekeepers: 1})
	c.SetCommittee()
	lt, tip, err := terms(c, 0)
	if err != nil {
		return err
	}
	provider := wallet.NewKey() // a provider no node runs: nothing accepts
	n := cfg.Blocks
	// Setup, unmeasured: 2n accounts funded from genesis.
	keys := make([]wallet.Key, 2*n)
	var setup []*ledger.Block
	for i := range keys {
		keys[i] = wallet.NewKey()
		c.Chains.Add(keys[i], nil)
		s, err := c.Chains.Send(c.Genesis, keys[i].Address(), 1_000_000)
		if err != nil {
			return err
		}
		r, err := c.Chains.Receive(keys[i], s, ledger.Address{})
		if err != nil {
			return err
		}
		setup = append(setup, s, r)
	}
	if _, errs := c.Nodes[0].N.Engine.SubmitAll(ctx, setup); firstErr(errs) != nil {
		return firstErr(errs)
	}
	c.WaitConfirmed(setup[len(setup)-1].Hash, 5*time.Minute)
	now := time.Now().UnixMilli()
	sends := make([][]byte, n)
	leases := make([][]byte, n)
	for i := range n {
		s, err := wallet.Send(c.Chains.Head(keys[i].Address()), provider.Address(), ledger.NewAmount(1), ledger.Native, now)
		if err != nil {
			return err
		}
		l, err := wallet.Lease(c.Chains.Head(keys[n+i].Address()), wallet.LeaseSpec{Provider: provider.Address(), VCPUs: 1, MemoryMB: 512,
			DiskGB: 5, Duration: 60, AccessKey: keys[n+i].Address(), Cost: lt.Cost, StateChainIndex: tip}, now)
		if err != nil {
			return err
		}
		for _, x := range []struct {
			b   *ledger.Block
			k   wallet.Key
			dst *[]byte
		}{{s, keys[i], &sends[i]}, {l, keys[n+i], &leases[i]}} {
			if err := finish(ctx, x.b, x.k); err != nil {
				return err
			}
			if *x.dst, err = json.Marshal(x.b); err != nil {
				return err
			}
		}
	}
	url := c.Nodes[0].API.URL
	// The two kinds alternate which goes first, round by round, so that
	// neither always meets a warmer node.
	phases := []struct {
		path   string
		bodies [][]byte
		rate   *float64
	}{{"/blocks/send", sends, &rd.SendsPerSec}, {"/blocks/lease", leases, &rd.LeasesPerSec}}
	if round%2 == 1 {
		phases[0], phases[1] = phases[1], phases[0]
	}
	for _, ph := range phases {
		took, err := post(ctx, url+ph.path, ph.bodies, cfg.Conc)
		if err != nil {
			return fmt.Errorf("%s: %w", ph.path, err)
		}
		*ph.rate = float64(n) / took.Seconds()
	}
	rd.Ratio = rd.LeasesPerSec / rd.SendsPerSec
	return nil
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// post posts every body to url, conc at a time, and returns how long it
// took; every answer must be 200.
func post(ctx context.Context, url string, bodies [][]byte, conc int) (time.Duration, error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}, Timeout: time.Minute}
	defer hc.CloseIdleConnections()
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(bodies) || ctx.Err() != nil {
					return
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(bodies[i]))
				req.Header.Set("Content-Type", "application/json")
				resp, err := hc.Do(req)
				if err == nil {
					msg, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, msg)
					}
				}
				if err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start), first
}

// acceptLatency times leases one after another, from posting the lease
// block to node 0 to its provider's accept confirmed on all three nodes.
func acceptLatency(ctx context.Context, t nettest.T, leases int, rd *Round) error {
	c := nettest.Start(t, nettest.Options{Nodes: 3, OnDisk: true, Timekeepers: 3,
		Providers: map[int]market.Resources{2: {VCPUs: int64(leases) + 1, MemoryMB: 512 * int64(leases+1), DiskGB: 5 * int64(leases+1)}}})
	c.SetCommittee()
	provider, consumer := *c.Nodes[2].ProviderKey, wallet.NewKey()
	c.Open(provider, 1_000_000_000)
	c.Open(consumer, 1_000_000_000)
	// Every node knows the committee's nodes and the provider first.
	c.WaitFor("the committee and the provider heard of", time.Minute, func(i int) bool {
		tk, err := c.Nodes[i].Leases.Timekeepers(c.Nodes[i].Gov.Tip().Index)
		if err != nil {
			return false
		}
		for _, k := range tk.Timekeepers {
			if !k.Heard {
				return false
			}
		}
		ps, _ := c.Nodes[i].Market.Providers()
		return len(ps) == 1
	})
	lt, tip, err := terms(c, 0)
	if err != nil {
		return err
	}
	hc := c.Nodes[0].API.Client()
	var ms []float64
	for range leases {
		b, err := wallet.Lease(c.Head(0, consumer.Address()), wallet.LeaseSpec{Provider: provider.Address(), VCPUs: 1, MemoryMB: 512, DiskGB: 5,
			Duration: 60, AccessKey: consumer.Address(), Cost: lt.Cost, StateChainIndex: tip}, time.Now().UnixMilli())
		if err != nil {
			return err
		}
		if err := finish(ctx, b, consumer); err != nil {
			return err
		}
		body, _ := json.Marshal(b)
		start := time.Now()
		resp, err := hc.Post(c.Nodes[0].API.URL+"/blocks/lease", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("POST /blocks/lease: HTTP %d: %s", resp.StatusCode, msg)
		}
		if err := acceptedEverywhere(ctx, c, b.Hash, time.Minute); err != nil {
			return err
		}
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
		// The lease's start and its confirmation follow; let them settle so
		// the next lease is timed alone.
		c.WaitFor("the lease's start confirmed", time.Minute, func(i int) bool {
			r, found, err := ledger.GetLease(c.Nodes[i].N.Store, b.Hash)
			if err != nil || !found || r.First.IsZero() {
				return false
			}
			e, found, err := c.Nodes[i].N.Store.Entry(r.First)
			if err != nil || !found {
				return false
			}
			ok, _ := c.Nodes[i].N.Store.IsConfirmed(e)
			return ok
		})
	}
	slices.Sort(ms)
	rd.AcceptP50ms = benchstat.Median(ms)
	rd.AcceptP99ms = ms[min(len(ms)-1, (len(ms)*99+99)/100-1)]
	return nil
}

// acceptedEverywhere waits until every node holds lease h's accept,
// confirmed, looking every millisecond.
func acceptedEverywhere(ctx context.Context, c *nettest.Cluster, h ledger.Hash, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		all := true
		for _, nd := range c.Nodes {
			r, found, err := ledger.GetLease(nd.N.Store, h)
			if err != nil {
				return err
			}
			if !found || !r.Accepted() {
				all = false
				break
			}
			e, found, err := nd.N.Store.Entry(r.Accept)
			if err != nil {
				return err
			}
			if !found {
				all = false
				break
			}
			if ok, err := nd.N.Store.IsConfirmed(e); err != nil || !ok {
				all = false
				break
			}
		}
		if all {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("lease %s not accepted and confirmed on every node within %s", h, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}
