package qemu

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestConsoleLogBounded: however much a guest writes on its console, the
// host keeps at most ConsoleLimit of it, and reads its end back.
func TestConsoleLogBounded(t *testing.T) {
	dir := t.TempDir()
	c, err := newConsoleLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	line := bytes.Repeat([]byte("x"), 4095)
	line = append(line, '\n')
	for i := 0; i < 5*ConsoleLimit/len(line); i++ {
		if _, err := c.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	c.Write([]byte("the end\n"))
	c.Close()
	var total int64
	for _, f := range []string{"console.log", "console.log.1"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
	}
	if total > ConsoleLimit {
		t.Errorf("the console takes %d bytes on disk, more than %d", total, ConsoleLimit)
	}
	got, err := readConsole(dir, 1<<20)
	if err != nil || len(got) != 1<<20 || !bytes.HasSuffix(got, []byte("x\nthe end\n")) {
		t.Errorf("read back %d bytes ending %q, %v", len(got), got[max(0, len(got)-20):], err)
	}
	// A new start begins a new console.
	c, _ = newConsoleLog(dir)
	c.Write([]byte("boot 2\n"))
	c.Close()
	if got, _ := readConsole(dir, 1<<20); string(got) != "boot 2\n" {
		t.Errorf("after a new start: %q", got)
	}
}
