// Package providerbench measures a provider's VMs over the network
// (lattice bench provider), on a loopback network of three real nodes
// (package nettest: libp2p, Pebble on disk, fsync'd) whose node 2
// provides, its leases' VMs real QEMU microvms of the minimal image, and
// whose node 0 relays:
//
//   - a lease to exec-ready: from posting the lease block at node 1 until
//     a command runs in its VM, asked of the provider's own node;
//   - an exec's round trip through node 1, which is not the provider;
//   - tunnel throughput into and out of the guest, each way: through the
//     provider's own node (a TCP port-forward on the provider's host,
//     through the driver: the floor), through node 1 over a direct
//     connection to the provider's node, and through node 1 with that
//     connection refused, so that the bytes go through the relay.
package providerbench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/latticenet/lattice/internal/bench/benchstat"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/machine/qemu"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/node/vmnet"
	"github.com/latticenet/lattice/wallet"
)

// Config sizes a run. Zero values take the defaults.
type Config struct {
	Leases int // leases timed to exec-ready per round (default 3)
	Execs  int // exec round trips through node 1 per round (default 50)
	MiB    int // bytes each way of each tunnel, in MiB (default 32)
	Rounds int // rounds, each on a new network; the report gives medians (default 3)
	// ImageDir holds the VM images (qemu.Config.ImageDir); default
	// lattice/images in the user's cache directory.
	ImageDir string
	Progress io.Writer
}

func (c *Config) setDefaults() {
	if c.Leases <= 0 {
		c.Leases = 3
	}
	if c.Execs <= 0 {
		c.Execs = 50
	}
	if c.MiB <= 0 {
		c.MiB = 32
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.ImageDir == "" {
		// Built once and kept, as lattice bench compute keeps them: a
		// first lease must not time the image's build.
		if cache, err := os.UserCacheDir(); err == nil {
			c.ImageDir = filepath.Join(cache, "lattice", "images")
		}
	}
}

// Path is one tunnel path's throughput, in MB/s (10^6 bytes).
type Path struct {
	UpMBs   float64 `json:"up_mb_s"`
	DownMBs float64 `json:"down_mb_s"`
}

// Round is one round's figures.
type Round struct {
	// ReadyP50s and ReadyMaxS: from a lease block posted at node 1 to a
	// command run in its VM through the provider's node.
	ReadyP50s float64 `json:"lease_to_exec_ready_p50_s"`
	ReadyMaxS float64 `json:"lease_to_exec_ready_max_s"`
	// ExecP50ms and ExecP99ms: an exec of `true` through node 1.
	ExecP50ms float64 `json:"exec_via_other_node_p50_ms"`
	ExecP99ms float64 `json:"exec_via_other_node_p99_ms"`
	Local     Path    `json:"local"`   // through the provider's own node: the floor
	Direct    Path    `json:"direct"`  // through node 1, directly connected
	Relayed   Path    `json:"relayed"` // through node 1, by the relay
	// DirectRatio and RelayedRatio are the path's slower direction over
	// the local path's same direction (target for direct: >= 0.5).
	DirectRatio  float64 `json:"direct_over_local"`
	RelayedRatio float64 `json:"relayed_over_local"`
}

// Report is a run's rounds and their medians.
type Report struct {
	Leases int     `json:"leases"`
	Execs  int     `json:"execs"`
	MiB    int     `json:"mib_each_way"`
	Rounds []Round `json:"rounds"`
	Median Round   `json:"median"`
}

// Run measures cfg.Rounds rounds.
func Run(ctx context.Context, cfg Config) (Report, error) {
	cfg.setDefaults()
	rep := Report{Leases: cfg.Leases, Execs: cfg.Execs, MiB: cfg.MiB}
	say := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}
	for i := range cfg.Rounds {
		var rd Round
		if err := nettest.Run("bench-provider", func(t nettest.T) error { return round(ctx, t, cfg, &rd, say) }); err != nil {
			return rep, err
		}
		say("round %d: exec-ready p50 %.2f s, exec via node 1 p50 %.1f ms; MB/s up/down: local %.1f/%.1f, direct %.1f/%.1f (%.2f), relayed %.1f/%.1f (%.2f)",
			i+1, rd.ReadyP50s, rd.ExecP50ms, rd.Local.UpMBs, rd.Local.DownMBs, rd.Direct.UpMBs, rd.Direct.DownMBs, rd.DirectRatio,
			rd.Relayed.UpMBs, rd.Relayed.DownMBs, rd.RelayedRatio)
		rep.Rounds = append(rep.Rounds, rd)
	}
	med := func(f func(Round) float64) float64 { return benchstat.MedianOf(rep.Rounds, f) }
	rep.Median = Round{
		ReadyP50s:    med(func(r Round) float64 { return r.ReadyP50s }),
		ReadyMaxS:    med(func(r Round) float64 { return r.ReadyMaxS }),
		ExecP50ms:    med(func(r Round) float64 { return r.ExecP50ms }),
		ExecP99ms:    med(func(r Round) float64 { return r.ExecP99ms }),
		Local:        Path{med(func(r Round) float64 { return r.Local.UpMBs }), med(func(r Round) float64 { return r.Local.DownMBs })},
		Direct:       Path{med(func(r Round) float64 { return r.Direct.UpMBs }), med(func(r Round) float64 { return r.Direct.DownMBs })},
		Relayed:      Path{med(func(r Round) float64 { return r.Relayed.UpMBs }), med(func(r Round) float64 { return r.Relayed.DownMBs })},
		DirectRatio:  med(func(r Round) float64 { return r.DirectRatio }),
		RelayedRatio: med(func(r Round) float64 { return r.RelayedRatio }),
	}
	return rep, nil
}

const (
	relay, other, provider = 0, 1, 2
	leaseSeconds           = 3600
)

func round(ctx context.Context, t nettest.T, cfg Config, rd *Round, say func(string, ...any)) error {
	n := int64(cfg.Leases)
	c := nettest.Start(t, nettest.Options{Nodes: 3, OnDisk: true, Timekeepers: 3,
		Providers: map[int]market.Resources{provider: {VCPUs: n, MemoryMB: 512 * n, DiskGB: 5 * n}},
		Machines:  &qemu.Config{ImageDir: cfg.ImageDir},
		Relays:    []int{relay}, Private: []int{provider}})
	c.SetCommittee()
	prov, consumer := *c.Nodes[provider].ProviderKey, wallet.NewKey()
	c.Open(prov, 1_000_000_000)
	c.Open(consumer, 1_000_000_000)
	clients := make([]*nodeclient.Client, 3)
	for i, nd := range c.Nodes {
		clients[i] = nodeclient.New(nd.API.URL, nd.API.Client())
	}
	access := nodeclient.Access{Key: consumer.Private(), Network: c.Network.Genesis.Hash}
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

	// Leases to exec-ready, one at a time.
	say("  %d leases to exec-ready", cfg.Leases)
	var ready []float64
	var first ledger.Hash
	for range cfg.Leases {
		b := c.Lease(consumer, prov.Address(), consumer.Address(), market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: leaseSeconds})
		body, _ := json.Marshal(b)
		start := time.Now()
		resp, err := c.Nodes[other].API.Client().Post(c.Nodes[other].API.URL+"/blocks/lease", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("POST /blocks/lease: HTTP %d: %s", resp.StatusCode, msg)
		}
		// Ready is the first exec that answers. The VM's state is asked
		// (unsigned) until it runs, and only then an exec: each exec
		// spends one of the consumer key's nonces, of which a node takes
		// only so many in its window. A VM that failed to boot is named
		// at once rather than after three minutes of asking.
		for {
			vm, verr := clients[provider].VM(ctx, b.Hash)
			if verr == nil && vm.Status == nodewire.VMError {
				return fmt.Errorf("lease %s: the provider's VM failed: %s", b.Hash, vm.Error)
			}
			var res nodewire.ExecResult
			err := verr
			if verr == nil && vm.Status == nodewire.VMRunning {
				if res, err = clients[provider].Exec(ctx, b.Hash, access, "true"); err == nil && res.ExitCode == 0 {
					break
				}
			}
			if time.Since(start) > 3*time.Minute {
				return fmt.Errorf("lease %s: no exec after 3 minutes: VM %q, %+v %v", b.Hash, vm.Status, res, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		ready = append(ready, time.Since(start).Seconds())
		if first.IsZero() {
			first = b.Hash
		}
	}
	slices.Sort(ready)
	rd.ReadyP50s, rd.ReadyMaxS = benchstat.Median(ready), ready[len(ready)-1]

	// Execs through the node that is not the provider.
	say("  %d execs through node 1", cfg.Execs)
	var ms []float64
	for range cfg.Execs {
		start := time.Now()
		res, err := clients[other].Exec(ctx, first, access, "true")
		if err != nil || res.ExitCode != 0 {
			return fmt.Errorf("exec through node 1: %+v %v", res, err)
		}
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	slices.Sort(ms)
	rd.ExecP50ms, rd.ExecP99ms = benchstat.Median(ms), ms[min(len(ms)-1, (len(ms)*99+99)/100-1)]

	// Tunnels: the same guest, the same bytes, three paths.
	size := cfg.MiB << 20
	if res, err := clients[provider].Exec(ctx, first, access, fmt.Sprintf("head -c %d /dev/urandom >/data/down", size)); err != nil || res.ExitCode != 0 {
		return fmt.Errorf("making the guest's file: %+v %v", res, err)
	}
	data := make([]byte, size)
	rand.Read(data)
	port := 7000
	measure := func(name string, at *nodeclient.Client, wantPath string) (Path, error) {
		say("  %d MiB each way through the %s path", cfg.MiB, name)
		var p Path
		port++
		if res, err := at.Exec(ctx, first, access, fmt.Sprintf("nc -l -p %d </dev/null >/dev/null 2>&1 & sleep 0.2", port)); err != nil || res.ExitCode != 0 {
			return p, fmt.Errorf("a sink in the guest: %+v %v", res, err)
		}
		conn, err := tunnel(ctx, at, first, access, port)
		if err != nil {
			return p, err
		}
		if conn.Path() != wantPath {
			conn.Close()
			return p, fmt.Errorf("the %s tunnel went %s", name, conn.Path())
		}
		start := time.Now()
		if _, err := conn.Write(data); err != nil {
			conn.Close()
			return p, err
		}
		conn.CloseWrite()
		io.Copy(io.Discard, conn) // the guest's nc closes once it has read it all
		conn.Close()
		p.UpMBs = float64(size) / time.Since(start).Seconds() / 1e6
		port++
		if res, err := at.Exec(ctx, first, access, fmt.Sprintf("nc -l -p %d </data/down >/dev/null 2>&1 & sleep 0.2", port)); err != nil || res.ExitCode != 0 {
			return p, fmt.Errorf("a source in the guest: %+v %v", res, err)
		}
		if conn, err = tunnel(ctx, at, first, access, port); err != nil {
			return p, err
		}
		start = time.Now()
		got, err := io.Copy(io.Discard, conn)
		conn.Close()
		if err != nil || got != int64(size) {
			return p, fmt.Errorf("the %s path down: %d of %d bytes, %v", name, got, size, err)
		}
		p.DownMBs = float64(size) / time.Since(start).Seconds() / 1e6
		return p, nil
	}
	var err error
	if rd.Local, err = measure("local", clients[provider], vmnet.PathLocal); err != nil {
		return err
	}
	if rd.Direct, err = measure("direct", clients[other], vmnet.PathDirect); err != nil {
		return err
	}
	// Node 1 and the provider's node refuse to connect but through a
	// relay: the provider's node is private (as behind NAT) and holds a
	// reservation at node 0.
	c.Nodes[other].Host.RelayOnly(c.Nodes[provider].Host.ID())
	c.Nodes[provider].Host.RelayOnly(c.Nodes[other].Host.ID())
	// AutoRelay announces relayed addresses on public relays only: on
	// loopback node 1 is told the way, once the provider's node holds its
	// reservation.
	circuit := c.Nodes[relay].Host.Addrs()[0] + "/p2p-circuit/p2p/" + c.Nodes[provider].Host.ID().String()
	deadline := time.Now().Add(time.Minute)
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.Nodes[other].Host.Connect(cctx, circuit)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no relayed connection from node 1 to the provider's node: %w", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if rd.Relayed, err = measure("relayed", clients[other], vmnet.PathRelayed); err != nil {
		return err
	}
	ratio := func(p Path) float64 { return min(p.UpMBs/rd.Local.UpMBs, p.DownMBs/rd.Local.DownMBs) }
	rd.DirectRatio, rd.RelayedRatio = ratio(rd.Direct), ratio(rd.Relayed)
	return nil
}

// tunnel opens a tunnel to port, trying again for a few seconds: the
// guest's nc, started in the background, may not listen yet.
func tunnel(ctx context.Context, at *nodeclient.Client, h ledger.Hash, a nodeclient.Access, port int) (*nodeclient.TunnelConn, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := at.Tunnel(ctx, h, a, port)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return conn, err
		}
		time.Sleep(250 * time.Millisecond)
	}
}
