package qemu

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
)

// initramfs is the content of an initramfs, by path inside it: files
// copied from the host (with their mode) and files written from bytes.
type initramfs struct {
	files map[string]ramFile
}

type ramFile struct {
	host string // a host file to copy, or
	data []byte // the content
	mode os.FileMode
}

func newInitramfs() *initramfs { return &initramfs{files: map[string]ramFile{}} }

func (r *initramfs) copy(dst, host string, mode os.FileMode) {
	r.files[dst] = ramFile{host: host, mode: mode}
}

func (r *initramfs) write(dst string, data []byte, mode os.FileMode) {
	r.files[dst] = ramFile{data: data, mode: mode}
}

// writeTo writes the initramfs as an uncompressed cpio archive in the
// "newc" format the kernel unpacks, every directory before what it holds.
func (r *initramfs) writeTo(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	dirs := map[string]bool{}
	var names []string
	for name := range r.files {
		names = append(names, name)
		for d := path.Dir(name); d != "." && d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var dirNames []string
	for d := range dirs {
		dirNames = append(dirNames, d)
	}
	sort.Strings(dirNames) // a parent sorts before its children
	sort.Strings(names)
	ino := 1
	for _, d := range dirNames {
		if err := cpioEntry(bw, ino, d, 0o40755, nil, 0); err != nil {
			return err
		}
		ino++
	}
	for _, name := range names {
		f := r.files[name]
		mode := 0o100000 | uint32(f.mode.Perm())
		if f.host == "" {
			if err := cpioEntry(bw, ino, name, mode, nil, int64(len(f.data))); err != nil {
				return err
			}
			if _, err := bw.Write(f.data); err != nil {
				return err
			}
			if err := pad4(bw, int64(len(f.data))); err != nil {
				return err
			}
		} else {
			src, err := os.Open(f.host)
			if err != nil {
				return err
			}
			st, err := src.Stat()
			if err != nil {
				src.Close()
				return err
			}
			if err := cpioEntry(bw, ino, name, mode, nil, st.Size()); err != nil {
				src.Close()
				return err
			}
			n, err := io.Copy(bw, src)
			src.Close()
			if err != nil {
				return err
			}
			if n != st.Size() {
				return fmt.Errorf("qemu: %s changed while it was copied", f.host)
			}
			if err := pad4(bw, n); err != nil {
				return err
			}
		}
		ino++
	}
	if err := cpioEntry(bw, 0, "TRAILER!!!", 0, nil, 0); err != nil {
		return err
	}
	return bw.Flush()
}

// cpioEntry writes one newc header and the name, padded.
func cpioEntry(w io.Writer, ino int, name string, mode uint32, _ []byte, size int64) error {
	nameSize := len(name) + 1
	nlink := 1
	if mode&0o40000 != 0 {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, nameSize, 0)
	if _, err := io.WriteString(w, hdr+name+"\x00"); err != nil {
		return err
	}
	return pad4(w, int64(len(hdr)+nameSize))
}

func pad4(w io.Writer, n int64) error {
	if r := n % 4; r != 0 {
		_, err := w.Write(make([]byte, 4-r))
		return err
	}
	return nil
}
