package nodeapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestStreamDropsStalledReader: a client that stops reading a streamed
// list is cut off once the stream has waited streamWait for it, and the
// handler returns (letting go of what it held), long before the server's
// 10-minute write limit.
func TestStreamDropsStalledReader(t *testing.T) {
	defer func(w time.Duration) { streamWait = w }(streamWait)
	streamWait = 300 * time.Millisecond
	returned := make(chan int, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := &stream{log: slog.New(slog.DiscardHandler), w: w, rc: http.NewResponseController(w), close: ']'}
		w.WriteHeader(http.StatusOK)
		st.enc = json.NewEncoder(w)
		n := 0
		defer func() { returned <- n }()
		for ; n < 1_000_000; n++ { // gigabytes: far more than any socket buffer
			if err := st.elem(strings.Repeat("x", 1000)); err != nil {
				return
			}
		}
	}))
	srv.Config.WriteTimeout = 10 * time.Minute
	srv.Start()
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := http.ReadResponse(bufio.NewReader(io.LimitReader(c, 4096)), nil); err != nil {
		t.Fatal(err)
	}
	// ...and reads no more.
	select {
	case n := <-returned:
		t.Logf("the stream gave up after %d elements", n)
	case <-time.After(10 * time.Second):
		t.Fatal("the stream still writes to a client that stopped reading 10 s ago")
	}
}
