package blockload

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// conn is a minimal HTTP/1.1 keep-alive client for one connection. The load
// generator shares the machine with the node, so it should take as little
// CPU as a tool like wrk would; net/http's client spends two goroutines and
// several allocations per request.
type conn struct {
	c    net.Conn
	r    *bufio.Reader
	host string
	buf  bytes.Buffer
}

// requestTimeout bounds one request and its answer.
const requestTimeout = time.Minute

func dial(addr string) (*conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, r: bufio.NewReaderSize(c, 4096), host: addr}, nil
}

// post sends body to path and returns the status code and response body.
func (c *conn) post(path string, body []byte) (int, []byte, error) {
	c.buf.Reset()
	fmt.Fprintf(&c.buf, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, c.host, len(body))
	c.buf.Write(body)
	// A node that stops answering fails the run rather than hanging it.
	if err := c.c.SetDeadline(time.Now().Add(requestTimeout)); err != nil {
		return 0, nil, err
	}
	if _, err := c.c.Write(c.buf.Bytes()); err != nil {
		return 0, nil, err
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		return 0, nil, err
	}
	parts := strings.SplitN(line, " ", 3)
	if len(parts) < 2 {
		return 0, nil, fmt.Errorf("malformed status line %q", line)
	}
	status, err := strconv.Atoi(parts[1])
	if err != nil {
		return 0, nil, fmt.Errorf("malformed status line %q", line)
	}
	length := -1
	for {
		h, err := c.r.ReadString('\n')
		if err != nil {
			return 0, nil, err
		}
		if h == "\r\n" {
			break
		}
		if k, v, ok := strings.Cut(h, ":"); ok && strings.EqualFold(k, "Content-Length") {
			if length, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return 0, nil, fmt.Errorf("bad Content-Length %q", v)
			}
		}
	}
	if length < 0 {
		return 0, nil, fmt.Errorf("response without Content-Length")
	}
	resp := make([]byte, length)
	_, err = io.ReadFull(c.r, resp)
	return status, resp, err
}

func (c *conn) close() { c.c.Close() }
