package qemu

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/latticenet/lattice/internal/run/durablefile"
	"github.com/latticenet/lattice/machine/agent"
)

// ErrHostPackage is a host tool or file an image needs that is missing;
// the error names the Debian package that provides it.
var ErrHostPackage = errors.New("qemu: missing on this host")

// recipeVersion changes whenever what an image holds changes in a way its
// inputs do not show: images of an older recipe are rebuilt.
const recipeVersion = "minimal-1"

// guestModules are the kernel modules the minimal image loads, with their
// dependencies, in the order modules.dep gives (ext4 asks the crypto API
// for crc32c at mount, which modules.dep does not show).
var guestModules = []string{"virtio_mmio", "virtio_console", "virtio_blk", "crc32c_generic", "ext4"}

// image is a built image: the kernel QEMU boots and its initramfs.
type image struct {
	Kernel, Initrd string
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

// buildMinimal returns the "minimal" image in dir/images, building it the
// first time and whenever its recipe or inputs change: Debian's kernel
// (its vmlinux, which microvm boots directly), an initramfs with busybox,
// the virtio and ext4 modules and the guest agent (agentBin, the lattice
// binary, with the libraries it loads).
func buildMinimal(dir, agentBin string) (image, error) {
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
	libs, err := sharedLibraries(agentBin)
	if err != nil {
		return image{}, err
	}
	// The recipe's identity: its version and every input's content.
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", recipeVersion, initScript(mods))
	for _, p := range append([]string{vmlinuz, bb, agentBin}, append(mods, libs...)...) {
		if err := hashFile(h, p); err != nil {
			return image{}, err
		}
	}
	id := hex.EncodeToString(h.Sum(nil))[:16]
	out := filepath.Join(dir, "images", "minimal-"+id)
	img := image{Kernel: filepath.Join(out, "vmlinux"), Initrd: filepath.Join(out, "initrd.cpio")}
	if _, err := os.Stat(img.Initrd); err == nil {
		return img, nil
	}
	tmp := out + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return image{}, err
	}
	defer os.RemoveAll(tmp)
	if err := extractVmlinux(vmlinuz, filepath.Join(tmp, "vmlinux")); err != nil {
		return image{}, err
	}
	ir := newInitramfs()
	ir.copy("bin/busybox", bb, 0o755)
	ir.copy("bin/lattice", agentBin, 0o755)
	for _, l := range libs {
		ir.copy(strings.TrimPrefix(l, "/"), l, 0o755)
	}
	for _, m := range mods {
		ir.copy("lib/modules/"+filepath.Base(m), m, 0o644)
	}
	ir.write("init", []byte(initScript(mods)), 0o755)
	ir.write("etc/inittab", []byte(inittab), 0o644)
	f, err := os.Create(filepath.Join(tmp, "initrd.cpio"))
	if err != nil {
		return image{}, err
	}
	err = ir.writeTo(f)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		return image{}, err
	}
	if err := f.Close(); err != nil {
		return image{}, err
	}
	if err := durablefile.SyncDir(tmp); err != nil {
		return image{}, err
	}
	if err := os.Rename(tmp, out); err != nil {
		return image{}, err
	}
	return img, nil
}

// initScript is the guest's /init: it mounts what the system needs, loads
// the modules, mounts the VM's disk at /data (formatted by the host) and
// hands over to busybox init, which keeps the agent running.
func initScript(mods []string) string {
	var b strings.Builder
	b.WriteString(`#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp /data /run
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
`)
	for _, m := range mods {
		fmt.Fprintf(&b, "insmod /lib/modules/%s\n", filepath.Base(m))
	}
	b.WriteString(`ip link set lo up
[ -b /dev/vda ] && mount -t ext4 /dev/vda /data
hostname lattice-vm
echo "lattice: guest up in $(cut -d' ' -f1 /proc/uptime) s"
exec /bin/busybox init
`)
	return b.String()
}

// inittab keeps the agent running and powers off on the signal init gets
// from `poweroff` (which the host asks the agent to run to stop the VM).
const inittab = `::respawn:/bin/lattice ` + agent.Command + `
::shutdown:/bin/umount -a -r
`

// moduleOrder returns the files of the named modules and of everything
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
		path, err := exec.LookPath(c.tool)
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
