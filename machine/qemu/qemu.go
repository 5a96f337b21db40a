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

	"github.com/latticenet/lattice/internal/hostprog"
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
	// DiskGB is the size of the VM's disk, which outlives its stops and
	// starts. For minimal: a sparse file formatted ext4 on first start and
	// mounted at /data in the guest; 0 for none. For debian-12: the root
	// file system, at least the image's MinDiskGB; a larger disk than
	// before grows it, a smaller one is refused.
	DiskGB int
	// Image names the image: one of Images() ("minimal", "debian-12").
	Image string
	// ForwardSSH gives the VM a network interface on QEMU's user-mode
	// network (DHCP gives the guest 10.0.2.15) and forwards a free port on
	// the host's loopback to the guest's port 22, which VM.SSHAddr
	// returns. Only for an image with an SSH server (ImageInfo.SSH).
	ForwardSSH bool
	// Outbound lets the guest open connections out through the host:
	// to the internet, and (as 10.0.2.2) to every service on the host's
	// loopback. Without it the guest is isolated (QEMU's restrict=on):
	// nothing goes out, and only the SSH forward comes in. Only for a
	// host whose VMs are all its own user's (lattice dev).
	Outbound bool
}

func (s Spec) check() error {
	img, ok := imageNamed(s.Image)
	switch {
	case s.VCPUs < 1 || s.VCPUs > MaxVCPUs:
		return fmt.Errorf("%w: vcpus %d, want 1 to %d", ErrSpec, s.VCPUs, MaxVCPUs)
	case s.MemoryMB < MinMemoryMB:
		return fmt.Errorf("%w: memory_mb %d, want at least %d", ErrSpec, s.MemoryMB, MinMemoryMB)
	case s.DiskGB < 0:
		return fmt.Errorf("%w: disk_gb %d", ErrSpec, s.DiskGB)
	case !ok:
		return fmt.Errorf("%w: image %q: this version has %s", ErrSpec, s.Image, strings.Join(imageNames(), ", "))
	case s.MemoryMB < img.MinMemoryMB:
		return fmt.Errorf("%w: image %s needs memory_mb of at least %d, got %d", ErrSpec, img.Name, img.MinMemoryMB, s.MemoryMB)
	case s.DiskGB < img.MinDiskGB:
		return fmt.Errorf("%w: image %s needs disk_gb of at least %d (its root file system), got %d", ErrSpec, img.Name, img.MinDiskGB, s.DiskGB)
	case s.ForwardSSH && !img.SSH:
		return fmt.Errorf("%w: image %s has no SSH server to forward to", ErrSpec, img.Name)
	}
	return nil
}

// Config configures a driver.
type Config struct {
	// Dir holds each VM's files (disk, sockets, console) and the
	// initramfs the VMs boot, which carries the agent.
	Dir string
	// ImageDir holds the built images, which do not depend on the agent
	// and may be shared by every driver of the host's user (the tests
	// point theirs at one cache); default Dir/images. Concurrent builds,
	// in one process or several, build an image once.
	ImageDir string
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
	boot  bootFiles // the kernel and initramfs every VM boots

	building chan struct{} // held while a root image is made: one build at a time
	mu       sync.Mutex
	roots    map[string]string     // image name -> its built root disk
	builds   map[string]*rootBuild // image name -> its build under way
}

// rootBuild is a root image being built for whoever waits for it.
type rootBuild struct {
	done    chan struct{} // closed when root and err are set
	root    string
	err     error
	waiters int                // callers waiting; guarded by Driver.mu
	cancel  context.CancelFunc // ends the build; called when no one waits
}

// New finds QEMU, builds the minimal image and the initramfs with the
// agent (the KVM probe boots that kernel), and decides the accelerator.
// Images with a root file system (debian-12) are built on first use.
func New(cfg Config) (*Driver, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ImageDir == "" {
		cfg.ImageDir = filepath.Join(cfg.Dir, "images")
	}
	if cfg.Agent == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cfg.Agent = exe
	}
	bin, err := hostprog.Look("qemu-system-x86_64")
	if err != nil {
		return nil, fmt.Errorf("%w: qemu-system-x86_64: install the Debian package qemu-system-x86", ErrHostPackage)
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, err
	}
	d := &Driver{cfg: cfg, qemu: bin, log: cfg.Logger, building: make(chan struct{}, 1), roots: map[string]string{},
		builds: map[string]*rootBuild{}}
	ctx := context.Background() // the minimal image takes a second or two, from local files
	img, err := buildMinimal(ctx, cfg.ImageDir)
	if err != nil {
		return nil, err
	}
	if d.boot, err = buildBoot(ctx, cfg.Dir, img, cfg.Agent); err != nil {
		return nil, err
	}
	switch cfg.Accel {
	case KVM, TCG:
		d.accel = cfg.Accel
	case "":
		d.accel = TCG
		if probedKVM(cfg.Dir, bin, d.boot.Kernel) {
			d.accel = KVM
		}
	default:
		return nil, fmt.Errorf("qemu: accelerator %q: want kvm or tcg", cfg.Accel)
	}
	d.log.Info("machine driver ready", "qemu", bin, "accel", d.accel, "images", cfg.ImageDir)
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

// childAttr is how QEMU runs: never outliving the server (SIGKILL when it
// dies), and in a process group of its own, so that a terminal's Ctrl-C
// reaches the server alone, which stops its VMs as it means to, rather
// than QEMU too, which would quit at once (and the VM be recorded as
// ended unasked).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

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
	cmd.SysProcAttr = childAttr()
	return cmd.Run() == nil && ctx.Err() == nil
}

// Prepare builds the named image's files if they are not built yet, so
// that a first Start need not: building debian-12 downloads Debian's
// packages and takes a minute or more. Start calls it too; concurrent
// calls build once.
func (d *Driver) Prepare(ctx context.Context, image string) error {
	img, ok := imageNamed(image)
	if !ok {
		return fmt.Errorf("%w: image %q: this version has %s", ErrSpec, image, strings.Join(imageNames(), ", "))
	}
	if img.buildRoot == nil {
		return nil // its files are the boot files, built by New
	}
	_, err := d.rootImage(ctx, img)
	return err
}

// rootImage returns the built root disk of img, building it the first time.
//
// The build belongs to everyone waiting for it, not to the caller that
// began it: a caller whose context ends stops waiting, and the build goes
// on as long as another caller waits (a lease that ends while the
// debian-12 image is being built for it leaves the build to the next
// lease's VM). When the last one stops waiting, the build is abandoned;
// the next caller begins it again.
func (d *Driver) rootImage(ctx context.Context, img imageInfo) (string, error) {
	d.mu.Lock()
	if root, ok := d.roots[img.Name]; ok {
		d.mu.Unlock()
		return root, nil
	}
	b := d.builds[img.Name]
	if b == nil {
		// Values (the trace, the logger) pass on; the end does not.
		bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		b = &rootBuild{done: make(chan struct{}), cancel: cancel}
		d.builds[img.Name] = b
		go d.buildRoot(bctx, img, b)
	}
	b.waiters++
	d.mu.Unlock()
	select {
	case <-b.done:
		return b.root, b.err
	case <-ctx.Done():
		d.mu.Lock()
		if b.waiters--; b.waiters == 0 {
			b.cancel()
			if d.builds[img.Name] == b {
				delete(d.builds, img.Name) // the next caller begins again
			}
		}
		d.mu.Unlock()
		return "", ctx.Err()
	}
}

// buildRoot builds img's root image for b, one build at a time.
func (d *Driver) buildRoot(ctx context.Context, img imageInfo, b *rootBuild) {
	defer b.cancel()
	root, err := func() (string, error) {
		select {
		case d.building <- struct{}{}:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		defer func() { <-d.building }()
		d.log.Info("image: checking, building if needed", "image", img.Name, "dir", d.cfg.ImageDir)
		start := time.Now()
		root, err := img.buildRoot(ctx, d.cfg.ImageDir, d.log)
		if err == nil {
			d.log.Info("image ready", "image", img.Name, "path", root, "took", time.Since(start).Round(time.Millisecond).String())
		}
		return root, err
	}()
	d.mu.Lock()
	if err == nil {
		d.roots[img.Name] = root
	}
	if d.builds[img.Name] == b {
		delete(d.builds, img.Name) // a failed build is begun again by the next caller
	}
	b.root, b.err = root, err
	d.mu.Unlock()
	close(b.done)
}

// Start boots VM id (a name of letters, digits and dashes) and returns it
// once its agent answers, or an error with the console's last lines. An
// image not built yet is built first (see Prepare), within ctx.
func (d *Driver) Start(ctx context.Context, id string, spec Spec) (*VM, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, fmt.Errorf("%w: id %q", ErrSpec, id)
	}
	img, _ := imageNamed(spec.Image)
	dir := filepath.Join(d.cfg.Dir, "vms", id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cmdline := kernelArgs(d.accel)
	var drive []string
	switch {
	case img.buildRoot != nil:
		base, err := d.rootImage(ctx, img)
		if err != nil {
			return nil, err
		}
		disk, err := prepareRoot(ctx, dir, base, spec.DiskGB)
		if err != nil {
			return nil, err
		}
		drive = diskArgs(disk, "qcow2")
		cmdline += " lattice.root=/dev/vda lattice.hostname=" + id
	case spec.DiskGB > 0:
		disk, err := prepareDisk(dir, spec.DiskGB)
		if err != nil {
			return nil, err
		}
		drive = diskArgs(disk, "raw")
	}
	// A free port found here may be taken before QEMU binds it, which
	// QEMU reports as it exits: another port is tried.
	for attempt := 1; ; attempt++ {
		port := 0
		if spec.ForwardSSH {
			var err error
			if port, err = freePort(); err != nil {
				return nil, err
			}
		}
		vm, err := d.launch(ctx, id, spec, img, dir, cmdline, drive, port)
		if errors.Is(err, errHostForward) && attempt < 3 {
			continue
		}
		return vm, err
	}
}

// errHostForward is QEMU failing to bind the SSH forward's host port.
var errHostForward = errors.New("qemu: the SSH forward's port is taken")

// launch starts QEMU for one VM and waits for its agent.
func (d *Driver) launch(ctx context.Context, id string, spec Spec, img imageInfo, dir, cmdline string, drive []string, sshPort int) (*VM, error) {
	sock := filepath.Join(dir, "agent.sock")
	os.Remove(sock)
	args := []string{
		"-machine", "microvm,accel=" + d.accel,
		"-cpu", "max",
		"-smp", strconv.Itoa(spec.VCPUs), "-m", strconv.Itoa(spec.MemoryMB),
		"-nodefaults", "-no-user-config", "-nographic", "-no-reboot",
		"-kernel", d.boot.Kernel, "-initrd", d.boot.Initrd,
		"-append", cmdline,
		"-serial", "stdio", // into a consoleLog: bounded on disk
		"-device", "virtio-serial-device",
		"-chardev", "socket,id=agent,path=" + sock + ",server=on,wait=off",
		"-device", "virtserialport,chardev=agent,name=" + agent.PortName,
	}
	args = append(args, drive...)
	args = append(args, agentDiskArgs(d.boot.AgentDisk)...) // after the root disk, which is /dev/vda
	sshAddr := ""
	if sshPort != 0 {
		sshAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(sshPort))
		args = append(args,
			"-netdev", fmt.Sprintf("user,id=net,restrict=%s,hostfwd=tcp:127.0.0.1:%d-:22", onOff(!spec.Outbound), sshPort),
			"-device", "virtio-net-device,netdev=net")
	}
	cmd := exec.Command(d.qemu, args...)
	cmd.SysProcAttr = childAttr()
	stderr, err := os.Create(filepath.Join(dir, "qemu.log"))
	if err != nil {
		return nil, err
	}
	console, err := newConsoleLog(dir)
	if err != nil {
		stderr.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = console, stderr
	if err := cmd.Start(); err != nil {
		stderr.Close()
		console.Close()
		return nil, err
	}
	stderr.Close()
	vm := &VM{ID: id, Spec: spec, dir: dir, cmd: cmd, console: console, sshAddr: sshAddr, poweroff: img.poweroff, exited: make(chan struct{})}
	go vm.wait()
	if err := vm.connect(ctx, sock); err != nil {
		vm.kill("it did not come up")
		if log, _ := os.ReadFile(filepath.Join(dir, "qemu.log")); sshPort != 0 && strings.Contains(string(log), "host forwarding") {
			return nil, fmt.Errorf("%w: %s", errHostForward, strings.TrimSpace(string(log)))
		}
		return nil, fmt.Errorf("qemu: VM %s did not come up: %w%s", id, err, vm.tail())
	}
	d.log.Info("vm started", "vm", id, "image", spec.Image, "accel", d.accel, "vcpus", spec.VCPUs, "memory_mb", spec.MemoryMB,
		"disk_gb", spec.DiskGB, "ssh", sshAddr)
	return vm, nil
}

// diskArgs attach a disk image as the VM's virtio-blk disk: /dev/vda,
// given before any other (the guest numbers virtio disks in the order of
// QEMU's arguments).
func diskArgs(path, format string) []string {
	return []string{"-drive", "id=disk,file=" + path + ",format=" + format + ",if=none,cache=none,aio=threads",
		"-device", "virtio-blk-device,drive=disk,serial=" + diskSerial}
}

// agentDiskArgs attach the agent disk, read-only: every VM of the driver
// shares the one file.
func agentDiskArgs(path string) []string {
	return []string{"-drive", "id=agent,file=" + path + ",format=raw,if=none,readonly=on",
		"-device", "virtio-blk-device,drive=agent,serial=" + agentSerial}
}

// freePort is a TCP port on the loopback that nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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

// FloorCommand is the argv of a bare QEMU booting what the driver's VMs of
// image boot, with the same accelerator, memory and console, to the first
// process and no further: that process exits at once, the kernel panics
// and QEMU exits. Its run time is the floor a VM's start is compared with
// (lattice bench compute). For minimal: the kernel and initramfs, with no
// devices, no modules and no agent, busybox as the init. For debian-12:
// the initramfs loads its modules, mounts the agent disk and the root disk (a throwaway
// snapshot of the image), then runs Debian's /usr/bin/true instead of
// systemd. The image is built first if it is not (within ctx).
func (d *Driver) FloorCommand(ctx context.Context, image string, memoryMB int) ([]string, error) {
	img, ok := imageNamed(image)
	if !ok {
		return nil, fmt.Errorf("%w: image %q", ErrSpec, image)
	}
	argv := []string{d.qemu,
		"-machine", "microvm,accel=" + d.accel, "-cpu", "max", "-smp", "1", "-m", strconv.Itoa(memoryMB),
		"-nodefaults", "-no-user-config", "-nographic", "-no-reboot", "-serial", "none",
		"-kernel", d.boot.Kernel, "-initrd", d.boot.Initrd,
	}
	if img.buildRoot == nil {
		return append(argv, "-append", kernelArgs(d.accel)+" rdinit=/bin/busybox"), nil
	}
	base, err := d.rootImage(ctx, img)
	if err != nil {
		return nil, err
	}
	argv = append(argv, "-append", kernelArgs(d.accel)+" lattice.root=/dev/vda init=/usr/bin/true",
		"-drive", "id=disk,file="+base+",format=raw,if=none,snapshot=on",
		"-device", "virtio-blk-device,drive=disk")
	return append(argv, agentDiskArgs(d.boot.AgentDisk)...), nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
