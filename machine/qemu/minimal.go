package qemu

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/latticenet/lattice/internal/hostprog"
	"github.com/latticenet/lattice/machine/agent"
)

// minimalRecipe changes whenever what the minimal image holds changes in
// a way its inputs do not show: images of an older recipe are rebuilt.
const minimalRecipe = "minimal-2"

// guestModules are the kernel modules the initramfs loads, with their
// dependencies, in the order modules.dep gives (ext4 asks the crypto API
// for crc32c at mount, which modules.dep does not show). Every image
// boots this initramfs, and a root file system's own init cannot load
// modules of the host's kernel, which it lacks: all the devices the
// driver gives a VM have theirs here.
var guestModules = []string{"virtio_mmio", "virtio_console", "virtio_blk", "crc32c_generic", "ext4"}

// rootModules are loaded too when the VM boots a root file system: its
// network device (minimal has none) and the automounter systemd asks
// for.
var rootModules = []string{"virtio_net", "autofs4"}

// image is the built minimal image: the kernel QEMU boots (its vmlinux)
// and the initramfs, without the agent.
type image struct {
	Kernel, Initrd string
}

// bootFiles are what every VM of a driver boots: the minimal image's
// kernel and initramfs, and the agent disk.
type bootFiles struct {
	Kernel, Initrd string
	// AgentDisk is a read-only ext4 image holding the agent, attached to
	// every VM as a virtio disk of serial agentSerial, which the
	// initramfs mounts at /lattice (see buildBoot).
	AgentDisk string
}

// hostKernel is the newest kernel installed on the host with its
// modules: /boot/vmlinuz-VERSION and /usr/lib/modules/VERSION.
func hostKernel() (vmlinuz, modules string, err error) {
	cands, _ := filepath.Glob("/boot/vmlinuz-*")
	sort.Strings(cands)
	for i := len(cands) - 1; i >= 0; i-- {
		v := strings.TrimPrefix(filepath.Base(cands[i]), "vmlinuz-")
		dir := filepath.Join("/usr/lib/modules", v)
		if _, err := os.Stat(filepath.Join(dir, "modules.dep")); err == nil {
			return cands[i], dir, nil
		}
	}
	return "", "", fmt.Errorf("%w: a guest kernel (/boot/vmlinuz-* with its modules): install the Debian package linux-image-amd64", ErrHostPackage)
}

// busybox is the host's static busybox.
func busybox() (string, error) {
	for _, p := range []string{"/bin/busybox", "/usr/bin/busybox"} {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		static := true
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				static = false
			}
		}
		f.Close()
		if static {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: a static busybox: install the Debian package busybox-static", ErrHostPackage)
}

// buildMinimal returns the "minimal" image in imageDir, building it the
// first time and whenever its recipe or inputs change: Debian's kernel
// (its vmlinux, which microvm boots directly) and an initramfs with
// busybox, the virtio and ext4 modules and the init script. The agent is
// not part of it (see buildBoot), so the image is shared by every driver
// whatever binary it runs.
func buildMinimal(ctx context.Context, imageDir string) (image, error) {
	vmlinuz, modDir, err := hostKernel()
	if err != nil {
		return image{}, err
	}
	bb, err := busybox()
	if err != nil {
		return image{}, err
	}
	mods, err := moduleOrder(modDir, guestModules)
	if err != nil {
		return image{}, err
	}
	more, err := moduleOrder(modDir, rootModules)
	if err != nil {
		return image{}, err
	}
	var rootMods []string
	for _, m := range more {
		if !slices.Contains(mods, m) {
			rootMods = append(rootMods, m)
		}
	}
	// The recipe's identity: its version and every input's content.
	h := sha256.New()
	script := initScript(mods, rootMods)
	fmt.Fprintf(h, "%s\n%s\n%s\n", minimalRecipe, script, inittab)
	for _, p := range slices.Concat([]string{vmlinuz, bb}, mods, rootMods) {
		if err := hashFile(h, p); err != nil {
			return image{}, err
		}
	}
	name := "minimal-" + hex.EncodeToString(h.Sum(nil))[:16]
	out, err := cached(ctx, imageDir, name, func(ctx context.Context, tmp string) error {
		if err := extractVmlinux(vmlinuz, filepath.Join(tmp, "vmlinux")); err != nil {
			return err
		}
		ir := newInitramfs()
		ir.copy("bin/busybox", bb, 0o755)
		for _, m := range slices.Concat(mods, rootMods) {
			ir.copy("lib/modules/"+filepath.Base(m), m, 0o644)
		}
		ir.write("init", []byte(script), 0o755)
		ir.write("etc/inittab", []byte(inittab), 0o644)
		return writeInitramfs(filepath.Join(tmp, "initrd.cpio"), ir)
	})
	if err != nil {
		return image{}, err
	}
	return image{Kernel: filepath.Join(out, "vmlinux"), Initrd: filepath.Join(out, "initrd.cpio")}, nil
}

// agentDir is where the guest finds the agent (the agent disk is
// mounted at agentDir/disk, its files linked into agentDir), and where an
// image with a root file system finds it after the switch (/run/lattice).
const agentDir = "lattice"

// Serials of the virtio disks the driver gives a VM, which the guest's
// init finds them by (in /sys/block/vdX/serial; at most 20 bytes).
const (
	agentSerial = "lattice-agent"
	diskSerial  = "lattice-disk"
)

// buildBoot returns what the driver's VMs boot, in dir: the minimal
// image's kernel and initramfs, and the agent disk, a read-only ext4
// image (made by mkfs.ext4 -d) holding, under its root, bin/lattice
// (agentBin, the lattice binary), the dynamic loader and libraries it was
// built against, and agent, a script that runs it with them, so that the
// agent runs on any guest userland, whatever its C library.
//
// The agent is a disk rather than part of the initramfs because the
// kernel holds an initramfs in memory twice while unpacking it (the
// archive and the files), and the lattice binary is 30 to 70 MB (a
// race-enabled build the most): a VM of 256 MB could not unpack it, and
// a guest missing its agent is a VM the host waits for in vain. From a
// disk the binary is paged in as it runs, as any program is.
func buildBoot(ctx context.Context, dir string, img image, agentBin string) (bootFiles, error) {
	mkfs, err := hostprog.Look("mkfs.ext4")
	if err != nil {
		return bootFiles{}, fmt.Errorf("%w: mkfs.ext4: install the Debian package e2fsprogs", ErrHostPackage)
	}
	libs, err := sharedLibraries(agentBin)
	if err != nil {
		return bootFiles{}, err
	}
	script := agentScript(libs)
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", agentDiskRecipe, strings.Join(agentMkfsArgs, " "), script)
	for _, p := range append([]string{agentBin}, libs...) {
		if err := hashFile(h, p); err != nil {
			return bootFiles{}, err
		}
	}
	name := "boot-" + hex.EncodeToString(h.Sum(nil))[:16]
	out, err := cached(ctx, dir, name, func(ctx context.Context, tmp string) error {
		tree := filepath.Join(tmp, "tree")
		files := map[string]string{"bin/lattice": agentBin}
		for _, l := range libs {
			files[strings.TrimPrefix(l, "/")] = l
		}
		var size int64
		for dst, src := range files {
			n, err := copyInto(filepath.Join(tree, dst), src, 0o755)
			if err != nil {
				return err
			}
			size += n
		}
		if err := os.WriteFile(filepath.Join(tree, "agent"), []byte(script), 0o755); err != nil {
			return err
		}
		// The files, a sixteenth more for ext4's own blocks, and 4 MiB
		// for its tables: rounded up to a MiB.
		size = (size + size/16 + 4<<20 + 1<<20 - 1) &^ (1<<20 - 1)
		raw := filepath.Join(tmp, "agent.img")
		f, err := os.Create(raw)
		if err != nil {
			return err
		}
		err = f.Truncate(size)
		f.Close()
		if err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, mkfs, append(slices.Clone(agentMkfsArgs), "-d", tree, raw)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("qemu: making the agent disk: mkfs.ext4: %v %s", err, out)
		}
		if err := syncFile(raw); err != nil {
			return err
		}
		return os.RemoveAll(tree)
	})
	if err != nil {
		return bootFiles{}, err
	}
	pruneBoot(dir, name)
	return bootFiles{Kernel: img.Kernel, Initrd: img.Initrd, AgentDisk: filepath.Join(out, "agent.img")}, nil
}

// agentDiskRecipe changes whenever the agent disk's making changes in a
// way its inputs do not show.
const agentDiskRecipe = "agent-disk-1"

// agentMkfsArgs make the agent disk: read-only in the guest, so no
// journal and no blocks reserved for root; owned by root whoever builds
// it; every table written now, not by the guest.
var agentMkfsArgs = []string{"-q", "-F", "-t", "ext4", "-b", "4096", "-L", agentSerial, "-m", "0", "-O", "^has_journal",
	"-E", "root_owner=0:0,lazy_itable_init=0"}

// copyInto copies the file src to dst, making dst's directories, and
// returns its size.
func copyInto(dst, src string, mode os.FileMode) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, err
	}
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

func syncFile(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// pruneBoot removes the initramfs directories in dir other than keep,
// those of earlier agents (each new lattice binary makes one), once they
// are ten minutes old: a running VM no longer needs its initramfs (QEMU
// read it at start), and the age spares one a concurrent start may be
// about to use.
func pruneBoot(dir, keep string) {
	old, _ := filepath.Glob(filepath.Join(dir, "boot-*"))
	for _, p := range old {
		name := strings.TrimSuffix(filepath.Base(p), ".lock")
		if name == keep || strings.Contains(name, ".tmp-") {
			continue
		}
		if st, err := os.Stat(p); err == nil && time.Since(st.ModTime()) > 10*time.Minute {
			os.RemoveAll(p)
		}
	}
}

// agentScript is /lattice/agent: the agent with its own loader and
// libraries (libs, host paths, the loader first) when it has any.
func agentScript(libs []string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# The guest agent: the host's lattice binary, with the loader and libraries it was built against.\nd=${0%/*}\n")
	if len(libs) == 0 {
		fmt.Fprintf(&b, "exec \"$d/bin/lattice\" %s\n", agent.Command)
		return b.String()
	}
	var dirs []string
	seen := map[string]bool{}
	for _, l := range libs[1:] {
		if d := path.Dir(l); !seen[d] {
			seen[d] = true
			dirs = append(dirs, "$d"+d)
		}
	}
	fmt.Fprintf(&b, "exec \"$d%s\" --library-path \"%s\" \"$d/bin/lattice\" %s\n", libs[0], strings.Join(dirs, ":"), agent.Command)
	return b.String()
}

// writeInitramfs writes ir to dst as an uncompressed cpio archive.
func writeInitramfs(dst string, ir *initramfs) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	err = ir.writeTo(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// initScript is the guest's /init. It mounts what the system needs and
// loads the modules. Then, for an image with a root file system (the
// kernel's command line has lattice.root=DEVICE), it mounts that, moves
// the agent disk to its /run/lattice/disk (on a tmpfs) and hands over to
// its init (init=, default /sbin/init), naming the machine
// lattice.hostname= while its /etc/hostname is the image's placeholder;
// otherwise (minimal) it mounts the
// VM's disk, if any, at /data and hands over to busybox's init, which
// keeps the agent running. Before either it mounts the agent disk at
// /lattice/disk, its files linked into /lattice; without it the guest
// powers off at once, and the host's wait for the agent ends with the
// console's last lines.
func initScript(mods, rootMods []string) string {
	var b strings.Builder
	b.WriteString(`#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp /data /run
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
`)
	for _, m := range mods {
		fmt.Fprintf(&b, "insmod /lib/modules/%s\n", filepath.Base(m))
	}
	b.WriteString(`# disk SERIAL: the virtio disk of that serial, as /dev/vdX.
disk() {
	for s in /sys/block/vd*/serial; do
		[ -f "$s" ] && [ "$(cat "$s")" = "$1" ] && { s=${s%/serial}; echo "/dev/${s##*/}"; return 0; }
	done
	return 1
}
# agentlinks DIR: DIR/disk is the agent disk, read-only; its files appear
# in DIR too, where the agent may write (its log, in the root image).
agentlinks() {
	for e in "$1"/disk/*; do
		[ "${e##*/}" = lost+found ] || ln -s "disk/${e##*/}" "$1/${e##*/}"
	done
}
mkdir -p /` + agentDir + `/disk
if ! a=$(disk ` + agentSerial + `) || ! mount -t ext4 -o ro "$a" /` + agentDir + `/disk; then
	echo "lattice: cannot mount the agent disk (serial ` + agentSerial + `); powering off"
	poweroff -f
fi
# The agent is paged in from the disk as it runs: in large reads, not
# a page fault's 128 KiB each.
echo 4096 >/sys/block/${a#/dev/}/queue/read_ahead_kb
agentlinks /` + agentDir + `
root= init=/sbin/init name=
for a in $(cat /proc/cmdline); do
	case "$a" in
	lattice.root=*) root=${a#lattice.root=} ;;
	lattice.hostname=*) name=${a#lattice.hostname=} ;;
	init=*) init=${a#init=} ;;
	esac
done
if [ -n "$root" ]; then
`)
	for _, m := range rootMods {
		fmt.Fprintf(&b, "\tinsmod /lib/modules/%s\n", filepath.Base(m))
	}
	b.WriteString(`	mkdir -p /newroot
	if ! mount -t ext4 "$root" /newroot; then
		echo "lattice: cannot mount the root file system $root"
		poweroff -f
	fi
	# The machine's name until it has one of its own: a name set in the
	# guest (or by the platform) outlives its reboots.
	h=$(cat /newroot/etc/hostname 2>/dev/null)
	if [ -n "$name" ] && { [ -z "$h" ] || [ "$h" = lattice-vm ]; }; then
		echo "$name" >/newroot/etc/hostname
	fi
	mount -t tmpfs -o mode=0755,nosuid,nodev run /newroot/run
	mkdir -p /newroot/run/` + agentDir + `/disk
	mount --move /` + agentDir + `/disk /newroot/run/` + agentDir + `/disk
	agentlinks /newroot/run/` + agentDir + `
	mount --move /dev /newroot/dev
	mount --move /sys /newroot/sys
	mount --move /proc /newroot/proc
	echo "lattice: root file system $root mounted in $(cut -d' ' -f1 /newroot/proc/uptime) s; starting $init"
	exec switch_root /newroot "$init"
fi
mount -t tmpfs tmp /tmp
ip link set lo up
d=$(disk ` + diskSerial + `) && mount -t ext4 "$d" /data
hostname lattice-vm
echo "lattice: guest up in $(cut -d' ' -f1 /proc/uptime) s"
exec /bin/busybox init
`)
	return b.String()
}

// inittab keeps the agent running and powers off on the signal init gets
// from `poweroff` (which the host asks the agent to run to stop the VM).
const inittab = `::respawn:/` + agentDir + `/agent
::shutdown:/bin/umount -a -r
`

// they depend on, dependencies first, from modDir/modules.dep.
func moduleOrder(modDir string, names []string) ([]string, error) {
	f, err := os.Open(filepath.Join(modDir, "modules.dep"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v: install the Debian package linux-image-amd64", ErrHostPackage, err)
	}
	defer f.Close()
	deps := map[string][]string{} // module file (relative) -> its dependencies
	byName := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		mod, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		deps[mod] = strings.Fields(rest)
		base := filepath.Base(mod)
		base = strings.SplitN(base, ".ko", 2)[0]
		byName[strings.ReplaceAll(base, "-", "_")] = mod
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var order []string
	seen := map[string]bool{}
	var visit func(mod string)
	visit = func(mod string) {
		if seen[mod] {
			return
		}
		seen[mod] = true
		for _, d := range deps[mod] {
			visit(d)
		}
		order = append(order, filepath.Join(modDir, mod))
	}
	for _, n := range names {
		mod, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("qemu: the kernel in %s has no module %s", modDir, n)
		}
		visit(mod)
	}
	for _, m := range order {
		if !strings.HasSuffix(m, ".ko") {
			return nil, fmt.Errorf("qemu: module %s is compressed; this version loads only uncompressed modules", m)
		}
	}
	return order, nil
}

// sharedLibraries returns the dynamic loader and the libraries bin loads,
// with theirs, as host paths; none for a static binary.
func sharedLibraries(bin string) ([]string, error) {
	dirs := []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}
	var out []string
	seen := map[string]bool{}
	var visit func(p string) error
	visit = func(p string) error {
		f, err := elf.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		for _, prog := range f.Progs {
			if prog.Type != elf.PT_INTERP {
				continue
			}
			b, err := io.ReadAll(prog.Open())
			if err != nil {
				return err
			}
			interp := string(bytes.TrimRight(b, "\x00"))
			if !seen[interp] {
				seen[interp] = true
				out = append(out, interp)
			}
		}
		libs, err := f.ImportedLibraries()
		if err != nil {
			return err
		}
		for _, l := range libs {
			found := ""
			for _, d := range dirs {
				if _, err := os.Stat(filepath.Join(d, l)); err == nil {
					found = filepath.Join(d, l)
					break
				}
			}
			if found == "" {
				return fmt.Errorf("qemu: %s needs %s, not found on this host", p, l)
			}
			if seen[found] {
				continue
			}
			seen[found] = true
			out = append(out, found)
			if err := visit(found); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(bin); err != nil {
		return nil, err
	}
	return out, nil
}

// extractVmlinux writes the uncompressed kernel inside a bzImage, which
// QEMU's microvm boots directly (PVH): the compressed stream after the
// setup code, found by its magic, decompressed with the host's tool.
func extractVmlinux(vmlinuz, dst string) error {
	data, err := os.ReadFile(vmlinuz)
	if err != nil {
		return err
	}
	for _, c := range []struct {
		magic     []byte
		tool, pkg string
	}{
		{[]byte{0xFD, '7', 'z', 'X', 'Z', 0x00}, "xz", "xz-utils"},
		{[]byte{0x28, 0xB5, 0x2F, 0xFD}, "zstd", "zstd"},
		{[]byte{0x1F, 0x8B, 0x08}, "gzip", "gzip"},
	} {
		i := bytes.Index(data, c.magic)
		if i < 0 {
			continue
		}
		path, err := hostprog.Look(c.tool)
		if err != nil {
			return fmt.Errorf("%w: %s, to unpack the kernel: install the Debian package %s", ErrHostPackage, c.tool, c.pkg)
		}
		cmd := exec.Command(path, "-dc")
		cmd.Stdin = bytes.NewReader(data[i:])
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = out, &stderr
		err = cmd.Run()
		out.Close()
		// The stream is followed by the rest of the image, which the tool
		// may call trailing garbage: what counts is an ELF kernel.
		if f, eerr := elf.Open(dst); eerr == nil {
			f.Close()
			return nil
		}
		return fmt.Errorf("qemu: unpacking %s with %s: %v %s", vmlinuz, c.tool, err, stderr.String())
	}
	return fmt.Errorf("qemu: %s: no compressed kernel found in it", vmlinuz)
}

func hashFile(h io.Writer, p string) error {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("qemu: %s is gone", p)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(h, "%s\n", p)
	_, err = io.Copy(h, f)
	return err
}
