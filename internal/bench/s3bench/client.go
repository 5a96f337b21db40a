package s3bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/latticenet/lattice/cloud/storage/sigv4"
)

// opTimeout bounds one request, body included, so that a stalled server
// fails the run instead of hanging it.
const opTimeout = 5 * time.Minute

// client is a minimal HTTP/1.1 keep-alive S3 client on one connection.
// The load generator shares two cores with the server it measures, so it
// should cost as little CPU as a tool like wrk: no net/http transport, no
// payload hashing (bodies go as UNSIGNED-PAYLOAD), and bodies written from
// memory with one writev.
type client struct {
	t    *Target
	host string // host:port
	c    net.Conn
	r    *bufio.Reader
	hdr  bytes.Buffer
	buf  []byte // for reading bodies

	// mu guards c against interrupt, which another goroutine calls. The
	// goroutine that uses the client reads c without it: it is the only
	// one that writes c.
	mu          sync.Mutex
	interrupted bool
}

var errInterrupted = errors.New("s3bench: interrupted")

func dial(t *Target) (*client, error) {
	u, err := url.Parse(t.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("s3bench: endpoint %q: %w", t.Endpoint, err)
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("s3bench: endpoint %q: only http:// is supported", t.Endpoint)
	}
	cl := &client{t: t, host: u.Host, buf: make([]byte, 64<<10)}
	if err := cl.redial(); err != nil {
		return nil, err
	}
	return cl, nil
}

func (cl *client) redial() error {
	c, err := net.Dial("tcp", cl.host)
	if err != nil {
		return fmt.Errorf("s3bench: %w", err)
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.interrupted {
		c.Close()
		return errInterrupted
	}
	cl.c = c
	cl.r = bufio.NewReaderSize(c, 64<<10)
	return nil
}

func (cl *client) close() {
	if cl.c != nil {
		cl.c.Close()
	}
}

// interrupt makes the request in progress, if any, and all later ones
// fail now. It may be called from any goroutine.
func (cl *client) interrupt() {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.interrupted = true
	cl.c.SetDeadline(time.Unix(1, 0))
}

// statusError is a response other than the one expected.
type statusError struct {
	method, path string
	status       int
	body         string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("s3bench: %s %s: status %d: %s", e.method, e.path, e.status, e.body)
}

// do sends a signed request whose body is the concatenation of body, and
// reads the response. A 2xx response body is handed to read with its
// length (-1 if chunked); read must consume it all. Any other status is a
// *statusError.
func (cl *client) do(method, path string, body [][]byte, read func(r io.Reader, n int64) error) error {
	return cl.send(&req{method: method, path: path, body: body, read: read})
}

// req is a request for send: do's arguments and the rarer parts, a query,
// extra headers (x-amz-* ones are signed) and the response's headers.
type req struct {
	method, path string
	query        url.Values // nil: none
	header       [][2]string
	body         [][]byte
	read         func(r io.Reader, n int64) error
	respHeader   http.Header // if not nil, receives the response's headers
}

// send is do with every part of req.
func (cl *client) send(rq *req) error {
	method, path := rq.method, rq.path
	var length int
	for _, b := range rq.body {
		length += len(b)
	}
	req := &http.Request{Method: method, URL: &url.URL{Scheme: "http", Host: cl.host, Path: path}, Host: cl.host, Header: http.Header{}}
	target := sigv4.EncodePath(path)
	if rq.query != nil {
		req.URL.RawQuery = rq.query.Encode()
		target += "?" + req.URL.RawQuery
	}
	for _, h := range rq.header {
		req.Header.Set(h[0], h[1])
	}
	sigv4.Sign(req, cl.t.AccessKey, cl.t.SecretKey, cl.t.Region, "UNSIGNED-PAYLOAD", time.Now())
	cl.hdr.Reset()
	fmt.Fprintf(&cl.hdr, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, target, cl.host)
	for _, k := range []string{"X-Amz-Date", "X-Amz-Content-Sha256", "Authorization"} {
		fmt.Fprintf(&cl.hdr, "%s: %s\r\n", k, req.Header.Get(k))
	}
	for _, h := range rq.header {
		fmt.Fprintf(&cl.hdr, "%s: %s\r\n", h[0], h[1])
	}
	if method == http.MethodPut || method == http.MethodPost || length > 0 {
		fmt.Fprintf(&cl.hdr, "Content-Length: %d\r\n", length)
	}
	cl.hdr.WriteString("\r\n")
	cl.c.SetDeadline(time.Now().Add(opTimeout))
	bufs := append(net.Buffers{cl.hdr.Bytes()}, rq.body...)
	if _, err := bufs.WriteTo(cl.c); err != nil {
		// A server may answer before it has read the body, a refusal
		// say, and close the connection: its answer is the error.
		if rerr := cl.response(method, path, nil, nil); errors.As(rerr, new(*statusError)) {
			err = rerr
		} else {
			err = fmt.Errorf("s3bench: %s %s: %w", method, path, err)
		}
		cl.c.Close()
		return errors.Join(err, cl.redial())
	}
	err := cl.response(method, path, rq.read, rq.respHeader)
	if err != nil && !errors.As(err, new(*statusError)) {
		err = fmt.Errorf("s3bench: %s %s: %w", method, path, err)
	}
	return err
}

// response reads one response; see do.
func (cl *client) response(method, path string, read func(r io.Reader, n int64) error, respHeader http.Header) error {
	line, err := cl.r.ReadString('\n')
	if err != nil {
		return err
	}
	parts := strings.SplitN(strings.TrimRight(line, "\r\n"), " ", 3)
	if len(parts) < 2 || !strings.HasPrefix(parts[0], "HTTP/1.") {
		return fmt.Errorf("malformed status line %q", line)
	}
	status, err := strconv.Atoi(parts[1])
	if err != nil {
		return fmt.Errorf("malformed status line %q", line)
	}
	length := int64(-1)
	chunked, closing := false, false
	for {
		h, err := cl.r.ReadString('\n')
		if err != nil {
			return err
		}
		if h == "\r\n" || h == "\n" {
			break
		}
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			return fmt.Errorf("malformed header line %q", h)
		}
		v = strings.TrimSpace(v)
		if respHeader != nil {
			respHeader.Add(k, v)
		}
		switch {
		case strings.EqualFold(k, "Content-Length"):
			if length, err = strconv.ParseInt(v, 10, 64); err != nil || length < 0 {
				return fmt.Errorf("bad Content-Length %q", v)
			}
		case strings.EqualFold(k, "Transfer-Encoding"):
			chunked = strings.EqualFold(v, "chunked")
		case strings.EqualFold(k, "Connection"):
			closing = strings.EqualFold(v, "close")
		}
	}
	var body io.Reader
	switch {
	case method == http.MethodHead || status == http.StatusNoContent || status == http.StatusNotModified:
		body, length = eofReader{}, 0
	case chunked:
		body, length = httputil.NewChunkedReader(cl.r), -1
	case length >= 0:
		body = io.LimitReader(cl.r, length)
	default:
		return errors.New("response without Content-Length or chunked encoding")
	}
	var serr error
	if status/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(body, 4<<10))
		_, err = io.Copy(io.Discard, body)
		serr = &statusError{method: method, path: path, status: status, body: string(msg)}
	} else if read != nil {
		err = read(body, length)
		if err == nil {
			// read must have consumed everything.
			if n, _ := io.Copy(io.Discard, body); n > 0 {
				err = fmt.Errorf("%d bytes of body left unread", n)
			}
		}
	} else {
		_, err = io.Copy(io.Discard, body)
	}
	if err == nil && chunked {
		err = cl.skipTrailers()
	}
	if err != nil {
		// The connection is in an unknown state: start afresh.
		cl.c.Close()
		if rerr := cl.redial(); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	if closing {
		cl.c.Close()
		if err := cl.redial(); err != nil {
			return err
		}
	}
	return serr
}

// skipTrailers reads the trailer section that ends a chunked body.
func (cl *client) skipTrailers() error {
	for {
		line, err := cl.r.ReadString('\n')
		if err != nil {
			return err
		}
		if line == "\r\n" || line == "\n" {
			return nil
		}
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
