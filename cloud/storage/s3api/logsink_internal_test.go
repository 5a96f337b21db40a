package s3api

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3log"
)

// TestLogSink: the sink's limits, without a server: a destination's
// records past logFlushBytes go at once, one account's past logMaxOwner
// are dropped (and said so) without costing another account's, close
// delivers what waits and drops what comes after, and a delivery to a
// target that is no longer the owner's delivers nothing there.
func TestLogSink(t *testing.T) {
	st, err := cloudstore.OpenDir(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	for _, b := range []struct{ account, name string }{{"alice", "logs"}, {"mallory", "mlogs"}, {"bob", "taken"}} {
		if _, err := st.CreateBucket(b.account, b.name, "", now); err != nil {
			t.Fatal(err)
		}
	}
	var logged bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logged.Write(p)
	}), nil))
	k := newLogSink(st, Options{Region: "us-east-1", AccessLogInterval: time.Hour, Now: time.Now, Logger: log})
	objects := func(account, bucket string) []cloudstore.Object {
		t.Helper()
		l, err := st.ListObjects(account, bucket, "", "", "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		return l.Objects
	}
	alice := logDest{owner: "alice", source: "src", cfg: s3log.Config{TargetBucket: "logs", TargetPrefix: "a/"}}
	mallory := logDest{owner: "mallory", source: "msrc", cfg: s3log.Config{TargetBucket: "mlogs"}}
	stolen := logDest{owner: "alice", source: "src", cfg: s3log.Config{TargetBucket: "taken"}} // bob's now

	line := []byte(strings.Repeat("x", 64<<10) + "\n")
	for range logFlushBytes/len(line) + 1 {
		k.add(alice, now, line)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(objects("alice", "logs")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("a full batch was not delivered at once")
		}
		time.Sleep(20 * time.Millisecond)
	}
	k.add(alice, now, []byte("at close\n"))
	k.add(stolen, now, []byte("alice's record\n"))
	k.close()
	k.add(alice, now, []byte("after close\n"))
	k.close() // twice: no harm

	got := objects("alice", "logs")
	if len(got) != 2 {
		t.Fatalf("alice's log objects: %d, want 2 (the full batch, then the rest at close)", len(got))
	}
	found := false
	for _, o := range got {
		_, body, err := st.OpenObject(t.Context(), "alice", "logs", o.Key)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(body)
		body.Close()
		found = found || string(data) == "at close\n"
	}
	if !found {
		t.Errorf("the record added before close was not delivered alone at close")
	}
	if n := len(objects("bob", "taken")); n != 0 {
		t.Errorf("bob's bucket got %d of alice's log objects", n)
	}

	// One account's flood, with nothing delivering meanwhile (this sink's
	// deliveries are the test's): past logMaxOwner its records are
	// dropped, and another account's still go.
	k2 := newLogSink(st, Options{Region: "us-east-1", AccessLogInterval: time.Hour, Now: time.Now, Logger: log})
	k2.running = true // no goroutine: deliver below is the only delivery
	for range 2 * logMaxOwner / len(line) {
		k2.add(mallory, now, line)
	}
	k2.add(alice, now, []byte("after mallory's flood\n"))
	if k2.dropped == 0 || k2.byOwner["mallory"] > logMaxOwner || k2.byOwner["alice"] == 0 {
		t.Fatalf("after the flood: %d dropped, %d bytes of mallory's held, %d of alice's", k2.dropped, k2.byOwner["mallory"], k2.byOwner["alice"])
	}
	k2.deliver(t.Context(), 0)
	if len(objects("alice", "logs")) != 3 || len(objects("mallory", "mlogs")) != 1 || k2.held != 0 || len(k2.byOwner) != 0 {
		t.Errorf("after delivery: alice %d objects, mallory %d, %d bytes held", len(objects("alice", "logs")), len(objects("mallory", "mlogs")), k2.held)
	}
	mu.Lock()
	out := logged.String()
	mu.Unlock()
	for _, want := range []string{"access log records dropped", "access log delivery failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("nothing logged of %q: %s", want, out)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
