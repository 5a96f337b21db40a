package vmnet

import (
	"io"
	"sync"
)

// Splice copies a to b and b to a until both directions end, then closes
// both. A direction ends at EOF, which is passed on as a half-close
// (CloseWrite) so the other direction goes on; an error in either
// direction closes both at once. Copies are of 32 KiB at a time, so a
// slow reader holds the writer back (no unbounded buffering). It returns
// the bytes copied each way.
func Splice(a, b Stream) (aToB, bToA int64) {
	var wg sync.WaitGroup
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			a.Close()
			b.Close()
		})
	}
	one := func(dst, src Stream, n *int64) {
		var err error
		*n, err = io.Copy(dst, src)
		if err != nil {
			closeBoth()
			return
		}
		if dst.CloseWrite() != nil {
			closeBoth()
		}
	}
	wg.Go(func() { one(b, a, &aToB) })
	wg.Go(func() { one(a, b, &bToA) })
	wg.Wait()
	closeBoth()
	return aToB, bToA
}
