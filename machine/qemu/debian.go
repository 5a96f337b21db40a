package qemu

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/latticenet/lattice/internal/hostprog"
)

// debianRecipe changes whenever the debian-12 image changes in a way
// debianArgs and the mkfs step do not show: images of an older recipe
// are rebuilt.
const debianRecipe = "debian-12-4"

// debianDiskGB is the size of the debian-12 image's root file system, the
// smallest disk a VM of it may have.
const debianDiskGB = 1

// debianPackages are installed on top of Debian's minbase variant (the
// essential packages and apt): systemd as init, udev for its devices,
// OpenSSH's server, e2fsprogs for resize2fs, and the basic network tools.
var debianPackages = []string{"systemd-sysv", "udev", "openssh-server", "e2fsprogs", "iproute2", "netbase", "procps"}

// debianArgs are mmdebstrap's arguments: Debian bookworm from Debian's
// mirror and its security archive (mmdebstrap's default for a suite named
// without a mirror), as a tar stream on stdout; --mode=auto is root's
// chroot as root and a user namespace (unshare) for an ordinary user.
// Documentation, manuals and translations are left out.
func debianArgs() []string {
	args := []string{"--mode=auto", "--variant=minbase", "--include=" + strings.Join(debianPackages, ","),
		`--aptopt=Acquire::Retries "3"`}
	for _, p := range []string{"/usr/share/man/*", "/usr/share/info/*", "/usr/share/locale/*", "/usr/share/doc/*"} {
		args = append(args, "--dpkgopt=path-exclude="+p)
	}
	return append(args, "--dpkgopt=path-include=/usr/share/doc/*/copyright",
		"--customize-hook="+debianCustomize, "bookworm", "-")
}

// debianCustomize runs with the finished tree as $1 (in mmdebstrap's
// namespace): host keys are removed (each VM makes its own on first
// boot); the host's name, hosts and resolver are replaced; the agent,
// host-key and grow-the-disk units are added and enabled with
// systemd-networkd. Units that have nothing to do in a microvm, and cost
// seconds of CPU under TCG, are masked: waiting for the network at boot,
// e2scrub_reap (LVM snapshots), getty-static (gettys on virtual
// terminals) and modprobe@ (the root file system has no modules for the
// kernel: the initramfs loaded those the VM needs). Its output goes to
// stderr: stdout is the tar stream.
const debianCustomize = `set -eu
exec >&2
r=$1
rm -f "$r"/etc/ssh/ssh_host_*
echo lattice-vm >"$r/etc/hostname"
printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$r/etc/hosts"
echo 'nameserver 10.0.2.3' >"$r/etc/resolv.conf"
echo '# The root file system is mounted by the initramfs (lattice.root= on the kernel command line).' >"$r/etc/fstab"
mkdir -p "$r/etc/ssh/sshd_config.d" "$r/etc/systemd/network" "$r/etc/systemd/system" "$r/etc/systemd/system.conf.d"
cat >"$r/etc/systemd/system.conf.d/lattice.conf" <<'EOF'
# Lattice VMs: the host stops a VM within its own deadline; a unit that
# ignores SIGTERM (systemd-networkd does while it starts) must not hold
# the shutdown for systemd's default 90 s.
[Manager]
DefaultTimeoutStopSec=10s
EOF
cat >"$r/etc/ssh/sshd_config.d/lattice.conf" <<'EOF'
# Lattice VMs: one host key, made on the VM's first boot; keys only.
HostKey /etc/ssh/ssh_host_ed25519_key
PasswordAuthentication no
KbdInteractiveAuthentication no
EOF
cat >"$r/etc/systemd/network/10-lattice.network" <<'EOF'
[Match]
Type=ether

[Network]
DHCP=ipv4
LinkLocalAddressing=no
IPv6AcceptRA=no
EOF
cat >"$r/etc/systemd/system/lattice-agent.service" <<'EOF'
[Unit]
Description=Lattice guest agent (exec and port dialling for the host, over virtio-serial)
DefaultDependencies=no
ConditionPathExists=/run/lattice/agent
StartLimitIntervalSec=0

[Service]
Environment=HOME=/root
ExecStart=/run/lattice/agent
Restart=always
RestartSec=200ms
KillMode=process
StandardOutput=append:/run/lattice/agent.log
StartupCPUWeight=1000

[Install]
WantedBy=sysinit.target
EOF
cat >"$r/etc/systemd/system/lattice-ssh-hostkey.service" <<'EOF'
[Unit]
Description=SSH host key of this VM, made on its first boot
Before=ssh.service
ConditionPathExists=!/etc/ssh/ssh_host_ed25519_key

[Service]
Type=oneshot
ExecStart=/usr/bin/ssh-keygen -q -t ed25519 -N "" -f /etc/ssh/ssh_host_ed25519_key

[Install]
WantedBy=ssh.service
EOF
cat >"$r/etc/systemd/system/lattice-growfs.service" <<'EOF'
[Unit]
Description=Grow the root file system to its disk

[Service]
Type=oneshot
ExecStart=/usr/sbin/resize2fs /dev/vda

[Install]
WantedBy=multi-user.target
EOF
chroot "$r" systemctl enable lattice-agent.service lattice-ssh-hostkey.service lattice-growfs.service systemd-networkd.service
chroot "$r" systemctl mask systemd-networkd-wait-online.service e2scrub_reap.service getty-static.service modprobe@.service
mkdir -p "$r/etc/systemd/system-generators"
for g in cryptsetup gpt-auto hibernate-resume integritysetup veritysetup system-update; do
	ln -s /dev/null "$r/etc/systemd/system-generators/systemd-$g-generator"
done
`

// buildDebian returns the debian-12 image's root file system in imageDir
// (debian-12-HASH/root.raw, a sparse raw ext4 file of debianDiskGB),
// building it the first time and whenever its recipe changes: mmdebstrap
// writes the tree as a tar stream, unpacked here, and mkfs.ext4 -d makes
// the file system of it. As an ordinary user, mkfs runs in a user
// namespace where the user is root, so that the unpacked files, all the
// user's, are root's in the file system; the few owned by others are
// given theirs with debugfs.
func buildDebian(ctx context.Context, imageDir string, log *slog.Logger) (string, error) {
	args := debianArgs()
	mkfsArgs := []string{"-q", "-F", "-L", "debian-12", "-E", "lazy_itable_init=0,lazy_journal_init=0"}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%d\n", debianRecipe, strings.Join(args, "\n"), strings.Join(mkfsArgs, " "), debianDiskGB)
	name := "debian-12-" + hex.EncodeToString(h.Sum(nil))[:16]
	if _, err := os.Stat(filepath.Join(imageDir, name)); err == nil {
		return filepath.Join(imageDir, name, "root.raw"), nil
	}
	tools := map[string]string{}
	for _, t := range []struct{ name, pkg string }{
		{"mmdebstrap", "mmdebstrap"}, {"mkfs.ext4", "e2fsprogs"}, {"debugfs", "e2fsprogs"},
	} {
		p, err := hostprog.Look(t.name)
		if err != nil {
			return "", fmt.Errorf("%w: %s, to build the debian-12 image: install the Debian package %s", ErrHostPackage, t.name, t.pkg)
		}
		tools[t.name] = p
	}
	if os.Geteuid() != 0 {
		if _, err := hostprog.Look("newuidmap"); err != nil {
			return "", fmt.Errorf("%w: newuidmap, for mmdebstrap as an ordinary user: install the Debian package uidmap", ErrHostPackage)
		}
	}
	out, err := cached(ctx, imageDir, name, func(ctx context.Context, tmp string) error {
		log.Info("image: building debian-12 with mmdebstrap (downloads Debian's packages)", "dir", tmp)
		start := time.Now()
		tree := filepath.Join(tmp, "tree")
		owners, err := mmdebstrap(ctx, tools["mmdebstrap"], args, tree, filepath.Join(tmp, "build.log"))
		if err != nil {
			return err
		}
		raw := filepath.Join(tmp, "root.raw")
		if err := mkfs(ctx, tools["mkfs.ext4"], mkfsArgs, tree, raw); err != nil {
			return err
		}
		if err := setOwners(ctx, tools["debugfs"], raw, owners); err != nil {
			return err
		}
		removeTree(tree)
		recipe := fmt.Sprintf("%s\nmmdebstrap %q\nmkfs.ext4 %s -d TREE root.raw %dG\n", debianRecipe, args, strings.Join(mkfsArgs, " "), debianDiskGB)
		if err := os.WriteFile(filepath.Join(tmp, "recipe"), []byte(recipe), 0o644); err != nil {
			return err
		}
		log.Info("image: debian-12 built", "took", time.Since(start).Round(time.Second).String())
		return nil
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(out, "root.raw"), nil
}

// owner is a file's owner in the image, other than root.
type owner struct {
	path     string
	uid, gid int
}

// mmdebstrap runs mmdebstrap and unpacks its tar stream into tree, its
// messages kept in logPath. It returns the files owned by others than
// root.
func mmdebstrap(ctx context.Context, bin string, args []string, tree, logPath string) ([]owner, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = hostprog.Env(os.Environ()) // dpkg, run by mmdebstrap, wants ldconfig from /sbin
	cmd.Stderr = logf
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) } // mmdebstrap cleans up on SIGTERM
	cmd.WaitDelay = 30 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	owners, uerr := untar(stdout, tree)
	io.Copy(io.Discard, stdout) // what is left after an unpacking error, so mmdebstrap can exit
	werr := cmd.Wait()
	if werr != nil || uerr != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("qemu: building debian-12: %w", ctx.Err())
		}
		return nil, fmt.Errorf("qemu: building debian-12: mmdebstrap: %v, unpacking: %v; its log ends:\n%s", werr, uerr, fileTail(logPath, 3000))
	}
	return owners, nil
}

// untar unpacks a root file system's tar stream into dir, a new
// directory, with every file the current user's: modes and times as the
// archive has them (directories' modes set last, so that they can be
// filled first). Device nodes are left out (the guest's /dev is a
// devtmpfs) and so are extended attributes (none in the image matters:
// systemd-tmpfiles sets the journal's ACLs at boot). It returns the
// entries owned by others than root.
func untar(r io.Reader, dir string) ([]owner, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	type dirMode struct {
		name  string
		mode  os.FileMode
		mtime time.Time
	}
	var dirs []dirMode
	var owners []owner
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "/"))
		if name == ".." || strings.HasPrefix(name, "../") {
			return nil, fmt.Errorf("qemu: tar entry %q outside the tree", hdr.Name)
		}
		mode := hdr.FileInfo().Mode()
		switch hdr.Typeflag {
		case tar.TypeDir:
			if name != "." {
				if err := root.Mkdir(name, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
					return nil, err
				}
			}
			dirs = append(dirs, dirMode{name, mode, hdr.ModTime})
		case tar.TypeReg:
			f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return nil, err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = root.Chmod(name, mode)
			}
			if err == nil {
				err = root.Chtimes(name, hdr.ModTime, hdr.ModTime)
			}
			if err != nil {
				return nil, err
			}
		case tar.TypeSymlink:
			if err := root.Symlink(hdr.Linkname, name); err != nil {
				return nil, err
			}
		case tar.TypeLink:
			if err := root.Link(path.Clean(strings.TrimPrefix(hdr.Linkname, "/")), name); err != nil {
				return nil, err
			}
		default:
			continue // device nodes and fifos
		}
		if hdr.Uid != 0 || hdr.Gid != 0 {
			owners = append(owners, owner{"/" + strings.TrimPrefix(name, "."), hdr.Uid, hdr.Gid})
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := root.Chmod(dirs[i].name, dirs[i].mode); err != nil {
			return nil, err
		}
		if err := root.Chtimes(dirs[i].name, dirs[i].mtime, dirs[i].mtime); err != nil {
			return nil, err
		}
	}
	return owners, nil
}

// mkfs makes raw, a sparse ext4 file system of debianDiskGB holding tree.
// As an ordinary user it runs in a new user namespace whose root is the
// user, so that the tree's files, the user's, are root's in the image.
func mkfs(ctx context.Context, bin string, args []string, tree, raw string) error {
	cmd := exec.CommandContext(ctx, bin, append(args, "-d", tree, raw, strconv.Itoa(debianDiskGB)+"G")...)
	if uid, gid := os.Getuid(), os.Getgid(); os.Geteuid() != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("qemu: building debian-12: mkfs.ext4: %v %s", err, out)
	}
	return nil
}

// setOwners gives the files in owners their owners in the file system
// raw, with debugfs.
func setOwners(ctx context.Context, bin, raw string, owners []owner) error {
	var cmds bytes.Buffer
	for _, o := range owners {
		if strings.ContainsAny(o.path, " \t\n\"'\\") {
			return fmt.Errorf("qemu: building debian-12: cannot give %q its owner with debugfs", o.path)
		}
		fmt.Fprintf(&cmds, "sif %s uid %d\nsif %s gid %d\n", o.path, o.uid, o.path, o.gid)
	}
	cmd := exec.CommandContext(ctx, bin, "-w", "-f", "-", raw)
	cmd.Stdin = &cmds
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	// debugfs exits 0 whatever its commands did: any message but its
	// banner is a failure.
	var msgs []string
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if l != "" && !strings.HasPrefix(l, "debugfs ") {
			msgs = append(msgs, l)
		}
	}
	if err != nil || len(msgs) > 0 {
		return fmt.Errorf("qemu: building debian-12: debugfs: %v %s", err, strings.Join(msgs, "; "))
	}
	return nil
}
