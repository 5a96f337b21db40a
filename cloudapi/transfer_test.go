package cloudapi_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloudapi"
	"github.com/latticenet/lattice/cloudstore"
)

// TestTransferOutlivesReadTimeout: an upload slower than the server's
// ReadTimeout (sized for ordinary requests) still completes, because the
// transfer endpoints extend their own deadlines.
func TestTransferOutlivesReadTimeout(t *testing.T) {
	dir := t.TempDir()
	st, err := cloudstore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.OpenBlobs(filepath.Join(dir, "objects")); err != nil {
		t.Fatal(err)
	}
	_, key, _ := st.CreateKey("acme", "", false, time.Now())
	st.CreateBucket("acme", "slow", "", time.Now())
	srv := httptest.NewUnstartedServer(cloudapi.New(st, cloudapi.Options{RatePerSecond: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()

	body := bytes.Repeat([]byte("s"), 100_000)
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/storage/buckets/slow/upload?key=k HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", key, len(body))
	// Send the body in pieces over ~0.8 s, past the 300 ms ReadTimeout.
	for i := 0; i < len(body); i += len(body) / 8 {
		conn.Write(body[i:min(i+len(body)/8, len(body))])
		time.Sleep(100 * time.Millisecond)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufioReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("slow upload: %d %s", resp.StatusCode, got)
	}
	if o, err := st.Object("acme", "slow", "k"); err != nil || o.Size != int64(len(body)) {
		t.Errorf("stored object: %+v, %v", o, err)
	}
}

func bufioReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }
