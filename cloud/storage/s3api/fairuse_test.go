package s3api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/storage/s3api"
	"github.com/latticenet/lattice/cloud/storage/sigv4"
)

// signedAs is e.signed with another key.
func (e *env) signedAs(t *testing.T, id, secret, method, path string, body io.Reader, size int64) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		r.ContentLength = size
	}
	sigv4.Sign(r, id, secret, "us-east-1", sigv4.UnsignedPayload, time.Now())
	return r
}

func TestRequestRatePerAccount(t *testing.T) {
	// Next to no refill: the burst is what an account has.
	e := startEnv(t, false, s3api.Options{Limits: s3api.Limits{RequestsPerSecond: 0.001, RequestBurst: 3}})
	bobID, bobSecret := e.key(t, "bob", "readwrite", "*")
	for i := range 3 {
		if code, s3e := do(t, e.signed(t, "GET", "/", nil, "", nil)); code != 200 {
			t.Fatalf("alice's ListBuckets %d of 3: got %d %s, want 200", i+1, code, s3e.Code)
		}
	}
	code, s3e := do(t, e.signed(t, "GET", "/", nil, "", nil))
	if code != http.StatusServiceUnavailable || s3e.Code != "SlowDown" {
		t.Errorf("alice's 4th request: got %d %s, want 503 SlowDown", code, s3e.Code)
	}
	if code, s3e := do(t, e.signedAs(t, bobID, bobSecret, "GET", "/", nil, 0)); code != 200 {
		t.Errorf("bob's request during alice's flood: got %d %s, want 200", code, s3e.Code)
	}
}

// openUpload starts a PutObject of 10 bytes whose body stops after 5:
// the returned function sends the rest, and the channel gives the
// answer's status (-1 for a failed request). The pipe is closed at the
// test's end, before the server (cleanups run last in, first out), so
// that a failure cannot leave the server waiting on it.
func openUpload(t *testing.T, e *env, path string) (finish func(), status <-chan int) {
	t.Helper()
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.CloseWithError(io.ErrUnexpectedEOF) })
	ch := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(e.signedAs(t, e.id, e.secret, "PUT", path, pr, 10))
		if err != nil {
			ch <- -1
			return
		}
		resp.Body.Close()
		ch <- resp.StatusCode
	}()
	pw.Write([]byte("hello"))
	return func() { pw.Write([]byte("world")); pw.Close() }, ch
}

func TestTransfersPerAccount(t *testing.T) {
	e := startEnv(t, false, s3api.Options{Limits: s3api.Limits{Transfers: 1}})
	if code, s3e := do(t, e.signed(t, "PUT", "/tbucket", nil, "", nil)); code != 200 {
		t.Fatalf("CreateBucket: %d %s", code, s3e.Code)
	}
	// The first upload's body stays open: it holds alice's one slot once
	// the server has it. Until then a second upload may take the slot
	// first, and the first is refused: it is started again.
	finish, first := openUpload(t, e, "/tbucket/slow")
	deadline := time.Now().Add(30 * time.Second) // under -race on a loaded machine the first may take a while
	for {
		code, s3e := do(t, e.signed(t, "PUT", "/tbucket/second", strings.NewReader("x"), sha("x"), nil))
		if code == http.StatusServiceUnavailable && s3e.Code == "SlowDown" {
			break // the first holds the slot
		}
		select {
		case c := <-first:
			if c != http.StatusServiceUnavailable {
				t.Fatalf("the first upload ended before its body did: %d", c)
			}
			finish, first = openUpload(t, e, "/tbucket/slow") // it lost the race
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("a second upload while the first is open: got %d %s, want 503 SlowDown", code, s3e.Code)
		}
		time.Sleep(20 * time.Millisecond) // the first may not have started yet
	}
	// A refused upload is answered at once, although its body has not
	// all come: the server does not wait for a body it will not use.
	_, refused := openUpload(t, e, "/tbucket/refused")
	select {
	case c := <-refused:
		if c != http.StatusServiceUnavailable && c != -1 { // -1: the connection closed before the answer was read
			t.Errorf("an upload past the limit, its body open: got %d, want 503", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an upload past the limit, its body open, had no answer in 10 s: the server waits for its body")
	}
	// Listing carries no body: it takes no slot.
	if code, s3e := do(t, e.signed(t, "GET", "/tbucket?list-type=2", nil, "", nil)); code != 200 {
		t.Errorf("ListObjectsV2 while a transfer runs: got %d %s, want 200", code, s3e.Code)
	}
	finish()
	if code := <-first; code != 200 {
		t.Fatalf("the first upload: got %d, want 200", code)
	}
	if code, s3e := do(t, e.signed(t, "PUT", "/tbucket/third", strings.NewReader("x"), sha("x"), nil)); code != 200 {
		t.Errorf("an upload once the slot is free: got %d %s, want 200", code, s3e.Code)
	}
}

func TestTrickledBodyCutOff(t *testing.T) {
	// A window of a second: the steady upload below keeps well above the
	// rate through scheduling pauses of a loaded CI machine (a 300 ms window
	// once cut it off under -race beside another test run).
	e := startEnv(t, false, s3api.Options{Limits: s3api.Limits{MinTransferRate: 1000, TransferWindow: time.Second}})
	if code, s3e := do(t, e.signed(t, "PUT", "/trbucket", nil, "", nil)); code != 200 {
		t.Fatalf("CreateBucket: %d %s", code, s3e.Code)
	}
	pr, pw := io.Pipe()
	go func() {
		for range 50 { // a byte every 100 ms: 10 B/s against 1000 wanted
			if _, err := pw.Write([]byte("x")); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		pw.Close()
	}()
	defer pw.Close()
	start := time.Now()
	resp, err := http.DefaultClient.Do(e.signedAs(t, e.id, e.secret, "PUT", "/trbucket/trickle", pr, 50))
	took := time.Since(start)
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "RequestTimeout") {
			t.Errorf("a trickled upload: got %d %s, want 400 RequestTimeout", resp.StatusCode, body)
		}
	} // else the server closed the connection before the client read its answer: cut off all the same
	if took > 3*time.Second {
		t.Errorf("a trickled upload was cut off after %v, want about the 1 s window", took)
	}
	if code, _ := do(t, e.signed(t, "HEAD", "/trbucket/trickle", nil, "", nil)); code != http.StatusNotFound {
		t.Errorf("HEAD of the cut-off upload: got %d, want 404", code)
	}
	// A body that arrives fast enough passes, however long it takes in all.
	pr2, pw2 := io.Pipe()
	go func() {
		for range 30 {
			pw2.Write([]byte(strings.Repeat("y", 200))) // 200 B per 50 ms: 4000 B/s
			time.Sleep(50 * time.Millisecond)
		}
		pw2.Close()
	}()
	resp, err = http.DefaultClient.Do(e.signedAs(t, e.id, e.secret, "PUT", "/trbucket/steady", pr2, 6000))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("a steady upload over several windows: got %d, want 200", resp.StatusCode)
	}
}

func TestFailedAuthenticationLimited(t *testing.T) {
	e := startEnv(t, false, s3api.Options{Limits: s3api.Limits{AuthFailures: 3}})
	for i := range 3 {
		code, s3e := do(t, e.signedAs(t, e.id, "not-the-secret", "GET", "/", nil, 0))
		if code != http.StatusForbidden {
			t.Fatalf("bad signature %d of 3: got %d %s, want 403", i+1, code, s3e.Code)
		}
	}
	// The address has spent its failures: even a good request waits.
	code, s3e := do(t, e.signed(t, "GET", "/", nil, "", nil))
	if code != http.StatusServiceUnavailable || s3e.Code != "SlowDown" {
		t.Errorf("a request after 3 failed authentications: got %d %s, want 503 SlowDown", code, s3e.Code)
	}
}
