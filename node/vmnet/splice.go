package vmnet

import (
	"io"
	"sync"
)

// Splice copies a to b and b to a until both directions end, then closes
// both. A direction ends at EOF, which is passed on as a half-close
// (CloseWrite) so the other direction goes on. An error in either
// direction aborts both ends (Abort): the far ends see a reset, not an
// end of stream, so a tunnel cut short never passes for a complete one.
// Copies are of 32 KiB at a time, so a slow reader holds the writer back
// (no unbounded buffering). It returns the bytes copied each way.
func Splice(a, b Stream) (aToB, bToA int64) {
	var wg sync.WaitGroup
	var once sync.Once
	end := func(failed bool) {
		once.Do(func() {
			if failed {
				Abort(a)
				Abort(b)
				return
			}
			a.Close()
			b.Close()
		})
	}
	one := func(dst, src Stream, n *int64) {
		var err error
		*n, err = io.Copy(dst, src)
		if err != nil || dst.CloseWrite() != nil {
			end(true)
		}
	}
	wg.Go(func() { one(b, a, &aToB) })
	wg.Go(func() { one(a, b, &bToA) })
	wg.Wait()
	end(false)
	return aToB, bToA
}

// Abort ends s at once, both ways, so that its far end sees a reset: a
// libp2p or yamux stream's Reset, a TCP connection closed with no linger
// (RST); any other stream is closed.
func Abort(s io.Closer) error {
	switch c := s.(type) {
	case interface{ Reset() error }:
		return c.Reset()
	case interface{ SetLinger(int) error }: // a *net.TCPConn, or a server's wrapper of one
		c.SetLinger(0)
	}
	return s.Close()
}
