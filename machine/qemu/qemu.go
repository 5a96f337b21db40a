// Package qemu runs virtual machines with QEMU: a microvm (PVH boot of
// Debian's kernel, virtio-mmio devices), KVM where /dev/kvm works and TCG
// otherwise, each VM a child process the driver owns, with a guest agent
// (package agent) over a virtio-serial port for exec and port dialling.
//
// docs/machines.md describes the machines, the images and how another
// hypervisor (Firecracker, Cloud Hypervisor) would fit the same calls.
package qemu

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/latticenet/lattice/internal/run/durablefile"
	"github.com/latticenet/lattice/machine/agent"
)

// Accelerators.
const (
	KVM = "kvm"
	TCG = "tcg"
)

// Limits of a VM this driver starts.
const (
	MinMemoryMB = 128
	MaxVCPUs    = 64
)

// ErrSpec is a VM specification the driver refuses.
var ErrSpec = errors.New("qemu: bad machine spec")

// Spec is what a VM is made of.
type Spec struct {
	VCPUs    int
	MemoryMB int
	// DiskGB is the size of the VM's disk, a sparse file formatted ext4
	// on first start and mounted at /data in the guest; 0 for none.
	DiskGB int
	// Image names the image ("minimal").
	Image string
}

func (s Spec) check() error {
	switch {
	case s.VCPUs < 1 || s.VCPUs > MaxVCPUs:
		return fmt.Errorf("%w: vcpus %d, want 1 to %d", ErrSpec, s.VCPUs, MaxVCPUs)
	case s.MemoryMB < MinMemoryMB:
		return fmt.Errorf("%w: memory_mb %d, want at least %d", ErrSpec, s.MemoryMB, MinMemoryMB)
	case s.DiskGB < 0:
		return fmt.Errorf("%w: disk_gb %d", ErrSpec, s.DiskGB)
	case s.Image != "minimal":
		return fmt.Errorf("%w: image %q: this version has minimal", ErrSpec, s.Image)
	}
	return nil
}

// Config configures a driver.
type Config struct {
	// Dir holds the images and each VM's files (disk, sockets, console).
	Dir string
	// Agent is the lattice binary the guests run as their agent; default
	// this process's own executable.
	Agent string
	// Accel forces an accelerator ("kvm" or "tcg"); default: KVM when it
	// works on this host, else TCG.
	Accel  string
	Logger *slog.Logger
}

// Driver starts VMs.
type Driver struct {
	cfg   Config
	qemu  string
	accel string
	log   *slog.Logger

	mu  sync.Mutex
	img *image
}

// New finds QEMU and decides the accelerator.
func New(cfg Config) (*Driver, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Agent == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cfg.Agent = exe
	}
	bin, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		return nil, fmt.Errorf("%w: qemu-system-x86_64: install the Debian package qemu-system-x86", ErrHostPackage)
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, err
	}
	d := &Driver{cfg: cfg, qemu: bin, log: cfg.Logger}
	img, err := d.image()
	if err != nil {
		return nil, err
	}
	switch cfg.Accel {
	case KVM, TCG:
		d.accel = cfg.Accel
	case "":
		d.accel = TCG
		if probedKVM(cfg.Dir, bin, img.Kernel) {
			d.accel = KVM
		}
	default:
		return nil, fmt.Errorf("qemu: accelerator %q: want kvm or tcg", cfg.Accel)
	}
	d.log.Info("machine driver ready", "qemu", bin, "accel", d.accel)
	return d, nil
}

// Accel is the accelerator the driver's VMs use: "kvm" or "tcg".
func (d *Driver) Accel() string { return d.accel }

// probedKVM is kvmWorks, remembered in dir for as long as the host, QEMU
// and the kernel stay the same (the key holds the host's boot id and the
// two files' sizes and times): a host whose /dev/kvm stalls guests costs
// the probe's timeout once per boot, not at every start.
func probedKVM(dir, bin, kernel string) bool {
	key := "v1"
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		key += " " + strings.TrimSpace(string(b))
	}
	for _, p := range []string{bin, kernel, "/dev/kvm"} {
		if st, err := os.Stat(p); err == nil {
			key += fmt.Sprintf(" %s:%d:%d", p, st.Size(), st.ModTime().UnixNano())
		} else {
			key += " " + p + ":none"
		}
	}
	path := filepath.Join(dir, "kvm-probe")
	if b, err := os.ReadFile(path); err == nil {
		if k, v, ok := strings.Cut(string(b), "\n"); ok && k == key {
			return strings.TrimSpace(v) == KVM
		}
	}
	works := kvmWorks(bin, kernel)
	result := TCG
	if works {
		result = KVM
	}
	_ = durablefile.Write(path, []byte(key+"\n"+result+"\n"), 0o600) // a cache: losing it costs one probe
	return works
}

// kvmProbeTimeout bounds the KVM probe: a kernel under KVM reaches its
// panic in well under a second.
const kvmProbeTimeout = 5 * time.Second

// kvmWorks reports whether QEMU can run a guest with KVM here. /dev/kvm
// may exist and still not work (a nested, software KVM stalls the guest
// in its first instructions), so the guest kernel is booted with no root
// file system: it panics, and with panic=-1 and -no-reboot QEMU exits.
func kvmWorks(bin, kernel string) bool {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), kvmProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-machine", "microvm,accel=kvm", "-cpu", "max", "-m", "128",
		"-nodefaults", "-no-user-config", "-nographic", "-no-reboot", "-serial", "none",
		"-kernel", kernel, "-append", "panic=-1 quiet")
	return cmd.Run() == nil && ctx.Err() == nil
}

// image returns the built image, building it on first use.
func (d *Driver) image() (image, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.img != nil {
		return *d.img, nil
	}
	img, err := buildMinimal(d.cfg.Dir, d.cfg.Agent)
	if err != nil {
		return image{}, err
	}
	d.img = &img
	return img, nil
}

// VM is a running virtual machine, a QEMU child process of the driver.
type VM struct {
	ID    string
	Spec  Spec
	dir   string
	cmd   *exec.Cmd
	agent *agent.Client
	conn  net.Conn

	exited chan struct{}
	err    error // how QEMU exited, once exited is closed
}

// Start boots VM id (a name of letters, digits and dashes) and returns it
// once its agent answers, or an error with the console's last lines.
func (d *Driver) Start(ctx context.Context, id string, spec Spec) (*VM, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, fmt.Errorf("%w: id %q", ErrSpec, id)
	}
	img, err := d.image()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(d.cfg.Dir, "vms", id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "agent.sock")
	os.Remove(sock)
	args := []string{
		"-machine", "microvm,accel=" + d.accel,
		"-cpu", "max",
		"-smp", strconv.Itoa(spec.VCPUs), "-m", strconv.Itoa(spec.MemoryMB),
		"-nodefaults", "-no-user-config", "-nographic", "-no-reboot",
		"-kernel", img.Kernel, "-initrd", img.Initrd,
		"-append", kernelArgs(d.accel),
		"-serial", "file:" + filepath.Join(dir, "console.log"),
		"-device", "virtio-serial-device",
		"-chardev", "socket,id=agent,path=" + sock + ",server=on,wait=off",
		"-device", "virtserialport,chardev=agent,name=" + agent.PortName,
	}
	if spec.DiskGB > 0 {
		disk, err := prepareDisk(dir, spec.DiskGB)
		if err != nil {
			return nil, err
		}
		args = append(args, "-drive", "id=disk,file="+disk+",format=raw,if=none,cache=none,aio=threads",
			"-device", "virtio-blk-device,drive=disk")
	}
	cmd := exec.Command(d.qemu, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the server
	stderr, err := os.Create(filepath.Join(dir, "qemu.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		stderr.Close()
		return nil, err
	}
	stderr.Close()
	vm := &VM{ID: id, Spec: spec, dir: dir, cmd: cmd, exited: make(chan struct{})}
	go func() { vm.err = cmd.Wait(); close(vm.exited) }()
	if err := vm.connect(ctx, sock); err != nil {
		vm.kill()
		return nil, fmt.Errorf("qemu: VM %s did not come up: %w%s", id, err, vm.tail())
	}
	d.log.Info("vm started", "vm", id, "accel", d.accel, "vcpus", spec.VCPUs, "memory_mb", spec.MemoryMB, "disk_gb", spec.DiskGB)
	return vm, nil
}

// connect attaches to the agent's socket and waits until the agent
// answers. Each attempt is a new connection and session: bytes the host
// sent before the guest opened its port may be lost or cut, which breaks
// a session, and the agent starts a new one whenever its session breaks.
func (vm *VM) connect(ctx context.Context, sock string) error {
	for {
		select {
		case <-vm.exited:
			return fmt.Errorf("qemu exited: %v", vm.err)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		c, err := net.Dial("unix", sock)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		cl, err := agent.NewClient(c)
		if err != nil {
			c.Close()
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err = cl.Ping(pctx)
		cancel()
		if err == nil {
			vm.conn, vm.agent = c, cl
			return nil
		}
		cl.Close()
		c.Close()
	}
}

// Exec runs a command in the guest (see agent.Client.Exec).
func (vm *VM) Exec(ctx context.Context, argv []string, stdin []byte, timeout time.Duration) (agent.ExecResult, error) {
	return vm.agent.Exec(ctx, argv, stdin, timeout)
}

// Dial connects to a TCP port on the guest's loopback, through the agent.
func (vm *VM) Dial(ctx context.Context, port int) (net.Conn, error) {
	return vm.agent.Dial(ctx, port)
}

// Console returns the guest's console output so far.
func (vm *VM) Console() ([]byte, error) {
	return os.ReadFile(filepath.Join(vm.dir, "console.log"))
}

// Done is closed when QEMU has exited.
func (vm *VM) Done() <-chan struct{} { return vm.exited }

// Stop shuts the guest down cleanly (the agent runs poweroff, which
// unmounts its disk) and waits until QEMU exits, or kills it once ctx
// ends.
func (vm *VM) Stop(ctx context.Context) error {
	select {
	case <-vm.exited:
		return nil
	default:
	}
	ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
	vm.agent.Exec(ectx, []string{"/bin/poweroff"}, nil, 5*time.Second)
	cancel()
	select {
	case <-vm.exited:
		vm.agent.Close()
		return nil
	case <-ctx.Done():
		vm.kill()
		return fmt.Errorf("qemu: VM %s did not power off in time; killed", vm.ID)
	}
}

// kill ends QEMU at once and waits for it.
func (vm *VM) kill() {
	vm.cmd.Process.Kill()
	<-vm.exited
	if vm.agent != nil {
		vm.agent.Close()
	}
}

// tail is the end of the VM's console and QEMU's log, for an error.
func (vm *VM) tail() string {
	var out string
	for _, f := range []string{"console.log", "qemu.log"} {
		b, _ := os.ReadFile(filepath.Join(vm.dir, f))
		if len(b) > 2000 {
			b = b[len(b)-2000:]
		}
		if len(b) > 0 {
			out += "\n" + f + ":\n" + string(b)
		}
	}
	return out
}

// prepareDisk creates the VM's disk on first start: a sparse file of
// sizeGB, formatted ext4.
func prepareDisk(dir string, sizeGB int) (string, error) {
	disk := filepath.Join(dir, "disk.raw")
	if _, err := os.Stat(disk); err == nil {
		return disk, nil
	}
	mkfs, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		return "", fmt.Errorf("%w: mkfs.ext4: install the Debian package e2fsprogs", ErrHostPackage)
	}
	tmp := disk + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return "", err
	}
	err = f.Truncate(int64(sizeGB) << 30)
	f.Close()
	if err == nil {
		if out, ferr := exec.Command(mkfs, "-F", "-q", "-E", "lazy_itable_init=1,lazy_journal_init=1", tmp).CombinedOutput(); ferr != nil {
			err = fmt.Errorf("qemu: formatting the disk: %v %s", ferr, out)
		}
	}
	if err == nil {
		err = os.Rename(tmp, disk)
	}
	if err != nil {
		os.Remove(tmp) // a half-made disk is never taken for the VM's
		return "", err
	}
	return disk, nil
}

func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// kernelArgs is the guest kernel's command line. Under TCG the guest's TSC
// is the host's, and the kernel's own calibration of it against the PIT,
// timed by emulation, fails on a busy host and leaves the boot waiting for
// a clock forever: the host's TSC frequency is given instead.
func kernelArgs(accel string) string {
	args := "console=ttyS0 quiet panic=-1 reboot=t"
	if accel == TCG {
		if khz := hostTSCkHz(); khz > 0 {
			args += " tsc_early_khz=" + strconv.Itoa(khz)
		}
	}
	return args
}

// hostTSCkHz is the host CPU's clock in kHz as /proc/cpuinfo gives it (0
// when it does not).
func hostTSCkHz() int {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "cpu MHz" {
			mhz, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0
			}
			return int(mhz * 1000)
		}
	}
	return 0
}

// FloorCommand is the argv of a bare QEMU booting the same kernel and
// initramfs as the driver's VMs, with the same accelerator, memory and
// console, but no devices, no modules and no agent: busybox is the init,
// exits at once, the kernel panics and QEMU exits. Its run time is the
// floor a VM's start is compared with (lattice bench compute).
func (d *Driver) FloorCommand(memoryMB int) ([]string, error) {
	img, err := d.image()
	if err != nil {
		return nil, err
	}
	return []string{d.qemu,
		"-machine", "microvm,accel=" + d.accel, "-cpu", "max", "-smp", "1", "-m", strconv.Itoa(memoryMB),
		"-nodefaults", "-no-user-config", "-nographic", "-no-reboot", "-serial", "none",
		"-kernel", img.Kernel, "-initrd", img.Initrd,
		"-append", kernelArgs(d.accel) + " rdinit=/bin/busybox",
	}, nil
}
