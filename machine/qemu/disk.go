package qemu

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/latticenet/lattice/internal/hostprog"
)

// prepareDisk creates the VM's disk on first start: a sparse file of
// sizeGB, formatted ext4.
func prepareDisk(dir string, sizeGB int) (string, error) {
	disk := filepath.Join(dir, "disk.raw")
	if _, err := os.Stat(disk); err == nil {
		return disk, nil
	}
	mkfs, err := hostprog.Look("mkfs.ext4")
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

// prepareRoot returns the VM's root disk, made on first start: a qcow2
// file of sizeGB whose unwritten blocks are read from base, the image's
// raw root file system, which it never changes (the guest grows its file
// system to the disk at boot). A larger sizeGB than the disk's grows it;
// a smaller one is refused.
func prepareRoot(ctx context.Context, dir, base string, sizeGB int) (string, error) {
	img, err := hostprog.Look("qemu-img")
	if err != nil {
		return "", fmt.Errorf("%w: qemu-img: install the Debian package qemu-utils", ErrHostPackage)
	}
	disk := filepath.Join(dir, "root.qcow2")
	want := int64(sizeGB) << 30
	if have, err := qcow2Size(disk); err == nil {
		switch {
		case have > want:
			return "", fmt.Errorf("%w: disk_gb %d is smaller than the VM's disk (%d GiB): a disk only grows", ErrSpec, sizeGB, have>>30)
		case have < want:
			if out, err := exec.CommandContext(ctx, img, "resize", "-q", "-f", "qcow2", disk, strconv.FormatInt(want, 10)).CombinedOutput(); err != nil {
				return "", fmt.Errorf("qemu: growing %s: %v %s", disk, err, out)
			}
		}
		return disk, nil
	} else if !os.IsNotExist(err) {
		return "", err
	}
	base, err = filepath.Abs(base)
	if err != nil {
		return "", err
	}
	tmp := disk + ".tmp"
	os.Remove(tmp)
	out, err := exec.CommandContext(ctx, img, "create", "-q", "-f", "qcow2", "-b", base, "-F", "raw", tmp, strconv.FormatInt(want, 10)).CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("qemu: making the root disk: %v %s", err, out)
	}
	if err := os.Rename(tmp, disk); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return disk, nil
}

// qcow2Size is the virtual size of a qcow2 file, from its header (a
// big-endian uint64 at offset 24, after the magic "QFI\xfb").
func qcow2Size(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var hdr [32]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return 0, fmt.Errorf("qemu: %s: %w", path, err)
	}
	if string(hdr[:4]) != "QFI\xfb" {
		return 0, fmt.Errorf("qemu: %s is not a qcow2 file", path)
	}
	return int64(binary.BigEndian.Uint64(hdr[24:])), nil
}
