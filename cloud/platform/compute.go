package platform

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/compute/computeapi"
	"github.com/latticenet/lattice/cloud/compute/computerules"
	"github.com/latticenet/lattice/cloud/compute/computestore"
	"github.com/latticenet/lattice/cloud/compute/leasedriver"
	"github.com/latticenet/lattice/cloud/compute/vmhost"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/machine/qemu"
)

// ComputeConfig configures the Compute service.
type ComputeConfig struct {
	// Accel forces the accelerator ("kvm" or "tcg"); default KVM where
	// /dev/kvm works, else TCG.
	Accel string
	// Quota is every account's quota (a zero figure is no limit); nil:
	// computerules.DefaultQuota.
	Quota *computerules.Resources
	// Capacity is what the host gives all VMs; a zero figure takes its
	// default: 4 vCPUs per host core, 80% of the host's memory, 90% of
	// the size of the data directory's file system.
	Capacity computerules.Resources
	// ImageDir holds the built images; default DATA/machines/images.
	ImageDir string
	// Outbound lets guests connect out through the host: to the
	// internet, and to the host's loopback services. Off, a guest is
	// isolated but for its SSH forward: the default of a platform whose
	// VMs are tenants'.
	Outbound bool
	// Lease, when set, runs VMs on leases bought on the ledger network
	// instead of on this host (package leasedriver).
	Lease *LeaseBackend
}

// LeaseBackend configures Compute on leases.
type LeaseBackend struct {
	// Market reaches the network for the platform's ledger account.
	Market leasedriver.Market
	// Duration is each lease's length; default leasedriver.DefaultDuration.
	Duration time.Duration
	// Image is the image the network's providers run; default debian-12.
	Image string
}

// Compute is the Compute service: VM records (DATA/compute), their REST
// routes, and the host that runs them as QEMU machines (DATA/machines:
// each VM's disk and console, and the images).
type Compute struct {
	cfg   ComputeConfig
	log   *slog.Logger
	store *computestore.Store
	drv   *vmhost.QEMU // nil on leases
	host  *vmhost.Host
}

// NewCompute returns the Compute service.
func NewCompute(cfg ComputeConfig) *Compute { return &Compute{cfg: cfg} }

func (c *Compute) Name() string  { return "compute" }
func (c *Compute) Listen() error { return nil }

func (c *Compute) Provision(p *Platform) error {
	c.log = p.Logger().With("service", "compute")
	capacity := hostCapacity(p.Dir(), c.cfg.Capacity)
	if c.cfg.Lease != nil {
		capacity = computerules.Resources{} // the providers' own
	}
	quota := computerules.DefaultQuota
	if c.cfg.Quota != nil {
		quota = *c.cfg.Quota
	}
	st, err := computestore.Open(filepath.Join(p.Dir(), "compute"), computestore.Options{Quota: quota, Capacity: capacity, Logger: c.log})
	if err != nil {
		return err
	}
	c.store = st
	if lb := c.cfg.Lease; lb != nil {
		return c.provisionLeases(p, st, lb)
	}
	dir := filepath.Join(p.Dir(), "machines")
	imageDir := c.cfg.ImageDir
	if imageDir == "" {
		imageDir = filepath.Join(dir, "images")
	}
	c.drv = vmhost.NewQEMU(qemu.Config{Dir: dir, ImageDir: imageDir, Accel: c.cfg.Accel, Logger: c.log})
	c.host = vmhost.New(st, c.drv, c.log)
	c.host.Outbound = c.cfg.Outbound
	// VMs do not outlive the platform: those that were up are starting
	// again before the API answers.
	return c.host.Recover()
}

// provisionLeases makes the host of VMs on leases: no capacity of this
// host's limits them (the network's providers have their own), and their
// leases are kept in DATA/compute-leases.
func (c *Compute) provisionLeases(p *Platform, st *computestore.Store, lb *LeaseBackend) error {
	name := cmp.Or(lb.Image, "debian-12")
	img := computerules.Image{Name: name}
	for _, i := range qemu.Images() {
		if i.Name == name {
			img = computerules.Image{Name: i.Name, Description: i.Description + ", run by the lease's provider", MinDiskGB: i.MinDiskGB, MinMemoryMB: i.MinMemoryMB, SSH: i.SSH}
		}
	}
	// A lease's own minimums (docs/protocol.md) are the image's too.
	img.MinDiskGB, img.MinMemoryMB = max(img.MinDiskGB, ledger.MinDiskGB), max(img.MinMemoryMB, ledger.MinMemoryMB)
	drv, err := leasedriver.New(leasedriver.Config{Market: lb.Market, Dir: filepath.Join(p.Dir(), "compute-leases"), Duration: lb.Duration, Image: img, Logger: c.log})
	if err != nil {
		return err
	}
	c.host = vmhost.New(st, drv, c.log)
	return c.host.Recover()
}

func (c *Compute) Validate() error {
	switch c.cfg.Accel {
	case "", qemu.KVM, qemu.TCG:
		return nil
	}
	return fmt.Errorf("accelerator %q: want kvm or tcg", c.cfg.Accel)
}

func (c *Compute) Routes(api *cloudapi.Server) {
	computeapi.Register(api, c.store, c.host)
	if c.drv != nil {
		api.Report("compute", c.drv.State)
	}
}

// Serve runs the host until ctx ends, which stops every VM. The driver
// is made when a VM first needs it (a create, or a VM to boot again at
// start): finding QEMU and probing KVM boots a probe VM for up to
// seconds, which a platform that runs no VM need not pay.
func (c *Compute) Serve(ctx context.Context) error {
	err := c.host.Serve(ctx)
	if c.drv != nil {
		c.drv.Drain()
	}
	return err
}

func (c *Compute) Addrs() map[string]string { return nil }

func (c *Compute) Close() error {
	if c.store != nil {
		return c.store.Close()
	}
	return nil
}

// Store is the VM records; valid from Provision on.
func (c *Compute) Store() *computestore.Store { return c.store }

// hostCapacity fills set's zero figures with the host's: 4 vCPUs per
// core, 80% of its memory, 90% of the size of dir's file system.
func hostCapacity(dir string, set computerules.Resources) computerules.Resources {
	c := set
	if c.VCPUs == 0 {
		c.VCPUs = 4 * runtime.NumCPU()
	}
	if c.MemoryMB == 0 {
		c.MemoryMB = memTotalMB() * 8 / 10
	}
	if c.DiskGB == 0 {
		var st syscall.Statfs_t
		if syscall.Statfs(dir, &st) == nil {
			c.DiskGB = int(uint64(st.Blocks) * uint64(st.Bsize) / (1 << 30) * 9 / 10)
		}
	}
	return c
}

// memTotalMB is the host's memory from /proc/meminfo; 0 when unknown
// (no limit).
func memTotalMB() int {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.Atoi(f[1])
			return kb / 1024
		}
	}
	return 0
}
