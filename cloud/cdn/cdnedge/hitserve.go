package cdnedge

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/latticenet/lattice/cloud/cdn/cdnpolicy"
	"github.com/latticenet/lattice/cloud/cdn/cdnrules"
)

// The fast path. Most of an edge's requests are fresh cache hits, and for
// those net/http's general machinery (a header map per request and per
// response, a goroutine reading ahead, a context, chunked-encoding
// bookkeeping) costs more than the answer itself. So the edge accepts its
// connections itself and answers the requests parseHit accepts whose
// stored response is fresh and a 200 with pre-rendered headers: the
// request is parsed in place, the answer written from bytes prepared when
// the response was stored. At the first request that is anything else
// (a miss, a Range, a validator, an odd request) the connection, with
// what it has buffered, goes to net/http for the rest of its life, so
// every rule of HTTP stays net/http's and ServeHTTP's.

// Timeouts of the fast path's connections, those of the http.Server the
// edge runs under (see serve).
const (
	idleTimeout   = 2 * time.Minute
	headerTimeout = 10 * time.Second
	writeTimeout  = 10 * time.Minute
)

// wireHeader is a stored 200's header as the fast path sends it.
type wireHeader struct {
	block   []byte // "Name: value\r\n" lines, without Content-Length, Age, X-Cache and Cache-Status
	sniffed string // the Content-Type net/http would sniff for a GET, "" when none
	date    bool   // the stored header has no Date: send the current one, as net/http does
}

// renderWire prepares a stored response's header for the fast path, or
// returns nil when the fast path cannot answer it (another status than
// 200, or a Content-Type to sniff from a body not in memory).
func renderWire(status int, h http.Header, body []byte) *wireHeader {
	if status != http.StatusOK {
		return nil
	}
	w := &wireHeader{}
	if _, ok := h["Content-Type"]; !ok && h.Get("Content-Encoding") == "" {
		switch {
		case body == nil:
			return nil
		case len(body) > 0:
			w.sniffed = http.DetectContentType(body)
		}
	}
	_, hasDate := h["Date"]
	w.date = !hasDate
	keys := make([]string, 0, len(h))
	for k := range h {
		switch k {
		case "Content-Length", "Age", "X-Cache", "Cache-Status":
			continue
		}
		if validName([]byte(k)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b []byte
	for _, k := range keys {
		for _, v := range h[k] {
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, newlineToSpace.Replace(textproto.TrimString(v))...)
			b = append(b, "\r\n"...)
		}
	}
	w.block = b
	return w
}

var newlineToSpace = strings.NewReplacer("\n", " ", "\r", " ")

// Listener returns the listener net/http serves the edge's handler on:
// the edge accepts ln's connections itself, answers the fresh cache hits
// they carry, and hands each connection to net/http, through the returned
// listener, at its first request that needs more. Closing the returned
// listener closes ln and ends the fast path's connections once their
// current answer is written.
func (e *Edge) Listener(ln net.Listener) net.Listener {
	return e.listen(ln, idleTimeout, headerTimeout, writeTimeout)
}

// listen is Listener with the timeouts given (tests shorten them).
func (e *Edge) listen(ln net.Listener, idle, header, write time.Duration) *hitListener {
	l := &hitListener{e: e, ln: ln, handoff: make(chan net.Conn), done: make(chan struct{}), conns: map[net.Conn]struct{}{},
		idle: idle, header: header, write: write}
	go l.acceptLoop()
	return l
}

type hitListener struct {
	e       *Edge
	ln      net.Listener
	handoff chan net.Conn
	done    chan struct{}
	once    sync.Once
	err     error // why accepting stopped; set before done closes

	idle, header, write time.Duration // the timeouts (see serve)

	mu    sync.Mutex
	conns map[net.Conn]struct{} // on the fast path
	wg    sync.WaitGroup        // one per connection on the fast path
}

// Wait waits, after Close, for the connections on the fast path to end
// (each once its answer in progress is written); when ctx ends first it
// closes them and returns ctx's error. A server's shutdown calls it after
// http.Server.Shutdown, which does not know these connections.
func (l *hitListener) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		for c := range l.conns {
			c.Close()
		}
		l.mu.Unlock()
		<-done
		return ctx.Err()
	}
}

func (l *hitListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.handoff:
		return c, nil
	case <-l.done:
		return nil, l.err
	}
}

func (l *hitListener) Addr() net.Addr { return l.ln.Addr() }

func (l *hitListener) Close() error {
	err := l.ln.Close()
	l.stop(net.ErrClosed)
	return err
}

// stop ends accepting with err and wakes the fast path's idle
// connections, which then close.
func (l *hitListener) stop(err error) {
	l.once.Do(func() {
		l.err = err
		close(l.done)
		l.ln.Close()
		l.mu.Lock()
		for c := range l.conns {
			c.SetReadDeadline(time.Unix(1, 0))
		}
		l.mu.Unlock()
	})
}

func (l *hitListener) closed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

func (l *hitListener) acceptLoop() {
	var backoff time.Duration
	for {
		c, err := l.ln.Accept()
		if err != nil {
			var ne net.Error
			if !l.closed() && (errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.As(err, &ne) && ne.Timeout()) {
				// Out of file descriptors: wait, as net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			l.stop(err)
			return
		}
		backoff = 0
		l.mu.Lock()
		if l.closed() {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.conns[c] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		go l.serve(c)
	}
}

func (l *hitListener) forget(c net.Conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// serve answers c's requests while they are fresh hits, then hands c to
// net/http or closes it. Deadlines follow net/http's: a request's header
// must arrive within headerTimeout (of the connection's start for the
// first, of the wait's start for a later one that arrives in pieces), a
// connection may idle idleTimeout between requests, and an answer has
// writeTimeout. Setting a deadline is a timer update, so the idle and
// write deadlines are pushed back at most once a second.
func (l *hitListener) serve(c net.Conn) {
	defer l.wg.Done()
	br := bufio.NewReaderSize(c, 4096)
	bw := bufio.NewWriterSize(c, 8192)
	var idleSet, writeSet time.Time // when the idle and write deadlines were last pushed back
	first := true
	for {
		if br.Buffered() == 0 {
			if bw.Flush() != nil {
				break
			}
			now := time.Now()
			if first {
				c.SetReadDeadline(now.Add(l.header))
			} else if now.Sub(idleSet) > time.Second {
				c.SetReadDeadline(now.Add(l.idle))
				idleSet = now
			}
			if l.closed() { // after the deadline change: Close's own wins
				break
			}
			if _, err := br.Peek(1); err != nil {
				break
			}
		}
		first = false
		buf, _ := br.Peek(br.Buffered())
		req, n, outcome := parseHit(buf)
		if outcome == parseMore {
			// The rest of a header: answers to the requests before it go
			// out first, and the whole header has headerTimeout.
			if bw.Flush() != nil {
				break
			}
			c.SetReadDeadline(time.Now().Add(l.header))
			idleSet = time.Time{}
			for outcome == parseMore {
				if l.closed() {
					outcome = -1
				} else if br.Buffered() == br.Size() {
					outcome = parseSlow // a header this long is net/http's
				} else if _, err := br.Peek(br.Buffered() + 1); err != nil {
					outcome = -1
				} else {
					buf, _ = br.Peek(br.Buffered())
					req, n, outcome = parseHit(buf)
				}
			}
		}
		if outcome == -1 {
			bw.Flush()
			break
		}
		served, closing := false, false
		if outcome == parseOK {
			if now := time.Now(); now.Sub(writeSet) > time.Second {
				c.SetWriteDeadline(now.Add(l.write))
				writeSet = now
			}
			closing = req.close || l.closed()
			var err error
			if served, err = l.e.serveHit(bw, c, &req, closing); err != nil {
				break
			}
		}
		if !served {
			if bw.Flush() != nil || l.closed() {
				break
			}
			l.forget(c)
			c.SetDeadline(time.Time{}) // net/http sets its own
			select {
			case l.handoff <- &bufferedConn{Conn: c, r: br}:
			case <-l.done:
				// Shutting down: a request net/http would answer is not
				// answered; clients retry a GET on a closed connection.
				c.Close()
			}
			return
		}
		br.Discard(n)
		if closing {
			l.forget(c)
			finish(c, bw)
			return
		}
	}
	l.forget(c)
	c.Close()
}

// finish ends a connection after its last answer as net/http does: the
// answer flushed, the write side shut, then a short wait for the client
// to close, so that bytes it sent meanwhile do not turn the close into a
// reset that discards the answer.
func finish(c net.Conn, bw *bufio.Writer) {
	if bw.Flush() == nil {
		if cw, ok := c.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
			c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			io.Copy(io.Discard, c)
		}
	}
	c.Close()
}

// bufferedConn is a connection handed to net/http with the bytes the fast
// path had read and not answered. It keeps the TCP connection's ReadFrom
// (sendfile) and CloseWrite, which net/http uses when it finds them.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (c *bufferedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// serveHit answers req from the cache when its stored response is fresh
// and prepared for the fast path (with Connection: close when closing);
// it reports false, having written nothing, when net/http must answer,
// and an error when the connection broke.
func (e *Edge) serveHit(bw *bufio.Writer, c net.Conn, req *hitRequest, closing bool) (bool, error) {
	d, ok := e.opts.Store.Route(req.host)
	if !ok {
		return false, nil
	}
	if strings.HasPrefix(d.Origin, "s3://") {
		// A bucket the deployment may no longer read is answered (404)
		// by ServeHTTP, from which nothing cached is served.
		if o, err := cdnrules.ParseOrigin(d.Origin); err != nil || e.bucketGone(d, o) {
			return false, nil
		}
	}
	v, found := e.cache.lookup(d.ID, req.key, req.header)
	if !found {
		return false, nil
	}
	defer v.close()
	now := e.opts.Now()
	if v.wire == nil || v.fresh.State(now) != cdnpolicy.Fresh {
		return false, nil
	}
	cnt := e.counters(d.ID)
	cnt.requests.Add(1)
	cnt.hits.Add(1)
	e.fastHits.Add(1)
	bw.WriteString("HTTP/1.1 200 OK\r\n")
	bw.Write(v.wire.block)
	if v.wire.date {
		bw.WriteString("Date: ")
		bw.WriteString(httpDate(time.Now()))
		bw.WriteString("\r\n")
	}
	if v.wire.sniffed != "" && !req.head {
		bw.WriteString("Content-Type: ")
		bw.WriteString(v.wire.sniffed)
		bw.WriteString("\r\n")
	}
	var num [20]byte
	bw.WriteString("Age: ")
	bw.Write(strconv.AppendInt(num[:0], int64(v.fresh.Age(now)/time.Second), 10))
	bw.WriteString("\r\nX-Cache: HIT\r\nCache-Status: lattice; hit\r\nContent-Length: ")
	bw.Write(strconv.AppendInt(num[:0], v.size, 10))
	if closing {
		bw.WriteString("\r\nConnection: close")
	}
	_, err := bw.WriteString("\r\n\r\n")
	if err != nil || req.head {
		return true, err
	}
	if v.body != nil {
		_, err = bw.Write(v.body)
		cnt.bytesServed.Add(int64(len(v.body)))
		return true, err
	}
	// A body on disk: the header, then the file by sendfile.
	if err := bw.Flush(); err != nil {
		return true, err
	}
	if _, err := v.f.Seek(0, io.SeekStart); err != nil {
		return true, err
	}
	n, err := io.Copy(c, v.f)
	cnt.bytesServed.Add(n)
	if err == nil && n != v.size {
		err = io.ErrUnexpectedEOF
	}
	return true, err
}

// httpDate formats t as an HTTP date, once a second.
func httpDate(t time.Time) string {
	sec := t.Unix()
	if d := lastDate.Load(); d != nil && d.sec == sec {
		return d.s
	}
	d := &dateString{sec, t.UTC().Format(http.TimeFormat)}
	lastDate.Store(d)
	return d.s
}

type dateString struct {
	sec int64
	s   string
}

var lastDate atomic.Pointer[dateString]
