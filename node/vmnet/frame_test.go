package vmnet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// withLength is data behind a claimed length.
func withLength(claim uint32, data []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, claim), data...)
}

// TestReadFrame: a frame is read whole, or not at all when it claims more
// than the bound, and one cut short is an error.
func TestReadFrame(t *testing.T) {
	const max = 16
	for _, tc := range []struct {
		name    string
		in      []byte
		want    []byte
		wantErr error // errors.Is; nil for none
		anyErr  bool  // an error, whichever
		left    int   // bytes of in left unread
	}{
		{name: "whole", in: withLength(3, []byte("abcde")), want: []byte("abc"), left: 2},
		{name: "empty", in: withLength(0, nil), want: []byte{}},
		{name: "at the bound", in: withLength(max, bytes.Repeat([]byte("x"), max)), want: bytes.Repeat([]byte("x"), max)},
		{name: "over the bound: nothing read past the length", in: withLength(max+1, bytes.Repeat([]byte("x"), max+1)), anyErr: true, left: max + 1},
		{name: "cut short", in: withLength(10, []byte("abc")), wantErr: io.ErrUnexpectedEOF},
		{name: "no length", in: nil, wantErr: io.EOF},
		{name: "half a length", in: []byte{0, 0}, wantErr: io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bytes.NewReader(tc.in)
			got, err := readFrame(r, max)
			switch {
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			case tc.anyErr && err == nil:
				t.Fatal("no error, want one")
			case tc.wantErr == nil && !tc.anyErr && (err != nil || !bytes.Equal(got, tc.want)):
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			if r.Len() != tc.left {
				t.Errorf("%d bytes left unread, want %d", r.Len(), tc.left)
			}
		})
	}
}

// claimer is a stream that sends the length of the largest request frame
// and then nothing: it says so on waiting when it is read past the length,
// and ends (EOF) once release is closed.
type claimer struct {
	length  []byte
	waiting chan<- struct{}
	release <-chan struct{}
	said    bool
}

func (c *claimer) Read(p []byte) (int, error) {
	if len(c.length) > 0 {
		n := copy(p, c.length)
		c.length = c.length[n:]
		return n, nil
	}
	if !c.said {
		c.said = true
		c.waiting <- struct{}{}
	}
	<-c.release
	return 0, io.EOF
}

// heapMiB is the live heap after a collection, in MiB.
func heapMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// TestRequestFrameHeldAsItArrives: a request whose length claims the
// largest frame and whose bytes never come costs the node what arrived,
// not what was claimed. Each of 64 such streams held 700 KiB before.
func TestRequestFrameHeldAsItArrives(t *testing.T) {
	const streams = 64
	waiting, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(release)
		wg.Wait()
	}()
	base := heapMiB()
	for range streams {
		c := &claimer{length: binary.BigEndian.AppendUint32(nil, maxRequestFrame), waiting: waiting, release: release}
		wg.Go(func() {
			if _, err := decodeRequest(c); err == nil {
				t.Error("a request that never came decoded")
			}
		})
	}
	deadline := time.After(10 * time.Second)
	for range streams {
		select {
		case <-waiting:
		case <-deadline:
			t.Fatal("the streams were not all read past their length in 10 s")
		}
	}
	grew := heapMiB() - base
	claimed := float64(streams*maxRequestFrame) / (1 << 20)
	t.Logf("%d streams claiming %.1f MiB in all, none sending more: the heap grew %.2f MiB", streams, claimed, grew)
	if grew > claimed/10 {
		t.Errorf("the heap grew %.1f MiB for %d streams that sent 4 bytes each (%.1f MiB claimed): a frame is allocated before its bytes arrive", grew, streams, claimed)
	}
}

// TestRequestFrameBoundDocumented: docs/protocol.md section 25.2 states
// the bound of a request frame that the code keeps.
func TestRequestFrameBoundDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`The request, at most ([0-9,]+) bytes`).FindSubmatch(doc)
	if m == nil {
		t.Fatal(`docs/protocol.md states no "The request, at most N bytes"`)
	}
	if n, err := strconv.Atoi(strings.ReplaceAll(string(m[1]), ",", "")); err != nil || n != maxRequestFrame {
		t.Errorf("docs/protocol.md: a request of at most %s bytes; the code's bound is %d", m[1], maxRequestFrame)
	}
}
