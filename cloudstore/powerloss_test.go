package cloudstore

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestPowerLossKeepsAcknowledgedObjects writes small (inline) objects from
// many goroutines, which share fsyncs, and takes a crash image of the
// disk (unsynced data dropped) while they run: every object acknowledged
// before the image was taken must be in it, intact. It fails if a write
// is answered before its fsync.
func TestPowerLossKeepsAcknowledgedObjects(t *testing.T) {
	for round := range 3 {
		fs := vfs.NewCrashableMem()
		s, err := open("db", nil, fs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateBucket("acme", "pics", "", t0); err != nil {
			t.Fatal(err)
		}
		var (
			mu    sync.Mutex
			acked = map[string][]byte{}
			stop  atomic.Bool
			wg    sync.WaitGroup
		)
		for w := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; !stop.Load(); i++ {
					key := fmt.Sprintf("w%02d/%05d", w, i)
					body := bytes.Repeat([]byte{byte(w), byte(i)}, 100+i%500)
					if _, err := s.PutObject(context.Background(), "acme", "pics", key, "x", bytes.NewReader(body), InlineMax, t0); err != nil {
						t.Errorf("put %s: %v", key, err)
						return
					}
					mu.Lock()
					acked[key] = body
					mu.Unlock()
				}
			}()
		}
		// Take the image once some hundreds of writes are acknowledged
		// (more each round), however fast the machine (or -race) is.
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			mu.Lock()
			n := len(acked)
			mu.Unlock()
			if n >= 200*(round+1) {
				break
			}
		}
		mu.Lock()
		before := make(map[string][]byte, len(acked))
		for k, v := range acked {
			before[k] = v
		}
		mu.Unlock()
		crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
		stop.Store(true)
		wg.Wait()
		s.Close()
		if len(before) < 50 {
			t.Fatalf("round %d: only %d objects acknowledged before the crash image", round, len(before))
		}
		after, err := open("db", nil, crashed)
		if err != nil {
			t.Fatal(err)
		}
		for k, want := range before {
			_, body, err := after.OpenObject("acme", "pics", k)
			if err != nil {
				t.Fatalf("round %d: acknowledged object %s lost in the crash: %v", round, k, err)
			}
			var got bytes.Buffer
			got.ReadFrom(body)
			body.Close()
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("round %d: %s differs after the crash", round, k)
			}
		}
		bk, err := after.Bucket("acme", "pics")
		if err != nil {
			t.Fatal(err)
		}
		l, err := after.ListObjects("acme", "pics", "", "", "", 1<<20)
		if err != nil || int64(len(l.Objects)) != bk.Objects {
			t.Fatalf("round %d: the bucket counts %d objects and lists %d (%v)", round, bk.Objects, len(l.Objects), err)
		}
		t.Logf("round %d: %d acknowledged before the image, %d objects after the crash", round, len(before), len(l.Objects))
		after.Close()
	}
}
