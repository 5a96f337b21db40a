package netlab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns add` bind-mounts the namespaces it names.
const netnsDir = "/var/run/netns"

// netns is a named network namespace, held open by a file descriptor so
// that threads can enter it.
type netns struct {
	name string
	fd   int
}

// addNetns creates the namespace name with `ip netns add` and opens it.
func addNetns(ctx context.Context, name string) (*netns, error) {
	if err := ip(ctx, "netns", "add", name); err != nil {
		return nil, err
	}
	fd, err := unix.Open(filepath.Join(netnsDir, name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		ip(ctx, "netns", "del", name)
		return nil, fmt.Errorf("netlab: open namespace %s: %w", name, err)
	}
	return &netns{name: name, fd: fd}, nil
}

// del closes the namespace's descriptor and deletes its name. The
// namespace itself goes once no process and no descriptor holds it.
func (n *netns) del(ctx context.Context) error {
	var errs []error
	if n.fd >= 0 {
		if err := unix.Close(n.fd); err != nil {
			errs = append(errs, fmt.Errorf("netlab: close namespace %s: %w", n.name, err))
		}
		n.fd = -1
	}
	if err := ip(ctx, "netns", "del", n.name); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// run runs f on an OS thread that has entered the namespace, so that the
// sockets and devices f creates belong to it. See inNetns.
func (n *netns) run(f func() error) error { return inNetns(n.fd, f) }

// inNetns runs f on a fresh goroutine locked to its OS thread, after that
// thread entered the network namespace of fd, and returns f's error once
// the goroutine is done. The thread's own namespace is restored after f;
// a thread whose namespace cannot be restored is left locked, so that the
// runtime ends it with the goroutine instead of running other goroutines
// in the wrong namespace.
func inNetns(fd int, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		restored, err := enterRunRestore(fd, f)
		if restored {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// enterRunRestore does inNetns's work on the locked thread. restored is
// false only when the thread may be left in fd's namespace.
func enterRunRestore(fd int, f func() error) (restored bool, err error) {
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true, fmt.Errorf("netlab: open the thread's namespace: %w", err)
	}
	defer unix.Close(orig)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return true, fmt.Errorf("netlab: enter namespace: %w", err)
	}
	ferr := f()
	if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
		return false, errors.Join(ferr, fmt.Errorf("netlab: restore the thread's namespace: %w", err))
	}
	return true, ferr
}

// openTap creates the TAP device name in n and returns its file: each
// Read returns one Ethernet frame the namespace sent out of the device,
// each Write hands the namespace one frame. The file is non-blocking
// under Go's poller, so Close ends a Read that waits. The device goes
// when the file is closed.
func (n *netns) openTap(name string) (*os.File, error) {
	var f *os.File
	err := n.run(func() error {
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			return fmt.Errorf("netlab: open /dev/net/tun: %w", err)
		}
		ifr, err := unix.NewIfreq(name)
		if err != nil {
			unix.Close(fd)
			return fmt.Errorf("netlab: tap name %q: %w", name, err)
		}
		ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
		if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
			unix.Close(fd)
			return fmt.Errorf("netlab: create tap %s: %w", name, err)
		}
		f = os.NewFile(uintptr(fd), name)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("netlab: namespace %s: %w", n.name, err)
	}
	return f, nil
}

// disableIPv6 turns IPv6 off in n, for devices created after it and those
// there already, so that router solicitations and duplicate address
// detection do not add frames to the switch's counters. The sysctl files
// under /proc/sys/net are those of the opening thread's namespace.
func (n *netns) disableIPv6() error {
	return n.run(func() error {
		for _, f := range []string{"/proc/sys/net/ipv6/conf/all/disable_ipv6", "/proc/sys/net/ipv6/conf/default/disable_ipv6"} {
			if err := os.WriteFile(f, []byte("1\n"), 0o644); err != nil {
				return fmt.Errorf("netlab: %w", err)
			}
		}
		return nil
	})
}

// ip runs the ip command with args.
func ip(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("netlab: ip %q: %w: %s", args, err, bytes.TrimSpace(out))
	}
	return nil
}

// ipOutput runs the ip command with args and returns its standard output.
func ipOutput(ctx context.Context, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "ip", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("netlab: ip %q: %w: %s", args, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return string(out), nil
}
