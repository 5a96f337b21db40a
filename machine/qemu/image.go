package qemu

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/latticenet/lattice/internal/run/durablefile"
)

// ErrHostPackage is a host tool or file an image needs that is missing;
// the error names the Debian package that provides it.
var ErrHostPackage = errors.New("qemu: missing on this host")

// ImageInfo describes an image a VM can be made of.
type ImageInfo struct {
	Name        string
	Description string
	// MinDiskGB is the smallest Spec.DiskGB a VM of the image may have:
	// the size of its root file system (0: the image needs no disk).
	MinDiskGB int
	// MinMemoryMB is the smallest Spec.MemoryMB it boots with.
	MinMemoryMB int
	// SSH says the image runs an SSH server, so Spec.ForwardSSH may be
	// set.
	SSH bool
	// Default marks the image to take when a caller names none.
	Default bool
}

// imageInfo is an image with what the driver does with it.
type imageInfo struct {
	ImageInfo
	// poweroff is the guest command that powers it off cleanly.
	poweroff []string
	// buildRoot returns the image's raw root file system in imageDir,
	// building it if needed; nil for an image that boots from its
	// initramfs alone.
	buildRoot func(ctx context.Context, imageDir string, log *slog.Logger) (string, error)
}

var images = []imageInfo{
	{
		ImageInfo: ImageInfo{
			Name: "minimal",
			Description: "Debian's kernel and an initramfs of busybox, the guest agent on its own disk, no network; " +
				"the disk, if any, mounted at /data",
			// The agent (the lattice binary) is paged in from its own
			// disk. 128 MB runs it, but a race-enabled build's agent
			// then dies answering a megabyte of output: 256 MB leaves
			// room for the agent and the guest's commands.
			MinMemoryMB: 256,
		},
		poweroff: []string{"/bin/poweroff"},
	},
	{
		ImageInfo: ImageInfo{
			Name: "debian-12",
			Description: "Debian 12 (bookworm), minbase with systemd, OpenSSH (root login by key) and " +
				"systemd-networkd (DHCP); the disk is its root file system",
			MinDiskGB:   debianDiskGB,
			MinMemoryMB: 256,
			SSH:         true,
			Default:     true,
		},
		poweroff:  []string{"/sbin/poweroff"},
		buildRoot: buildDebian,
	},
}

// Images lists the images this version builds, the default one marked.
func Images() []ImageInfo {
	out := make([]ImageInfo, len(images))
	for i, img := range images {
		out[i] = img.ImageInfo
	}
	return out
}

func imageNamed(name string) (imageInfo, bool) {
	for _, img := range images {
		if img.Name == name {
			return img, true
		}
	}
	return imageInfo{}, false
}

func imageNames() []string {
	var out []string
	for _, img := range images {
		out = append(out, img.Name)
	}
	return out
}

// cached returns parent/name, a directory of built files, building it
// with build the first time: build fills a new temporary directory beside
// it, which is renamed into place once complete, so a half-built image is
// never taken for one. A lock file (parent/name.lock, flock) makes
// concurrent builders, in this process or in others, wait for the first
// and take what it built.
func cached(ctx context.Context, parent, name string, build func(ctx context.Context, tmp string) error) (string, error) {
	out := filepath.Join(parent, name)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(ctx, out+".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(out); err == nil {
		return out, nil // built while this one waited
	}
	// Temporary directories left by a builder that died: none is in use,
	// since their builder would hold the lock.
	stale, _ := filepath.Glob(out + ".tmp-*")
	for _, s := range stale {
		removeTree(s)
	}
	tmp, err := os.MkdirTemp(parent, name+".tmp-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if err := build(ctx, tmp); err != nil {
		removeTree(tmp)
		return "", err
	}
	if err := durablefile.SyncDir(tmp); err != nil {
		removeTree(tmp)
		return "", err
	}
	if err := os.Rename(tmp, out); err != nil {
		removeTree(tmp)
		return "", err
	}
	return out, durablefile.SyncDir(parent)
}

// lockFile takes an exclusive flock on path, waiting for it until ctx
// ends; unlock releases it.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing the file releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("qemu: locking %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("qemu: waiting for another build of %s: %w", filepath.Base(path), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// removeTree removes a directory tree, making its directories writable
// first (an unpacked root file system has some that are not, such as
// /proc, which an ordinary user could not empty).
func removeTree(dir string) {
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	os.RemoveAll(dir)
}
