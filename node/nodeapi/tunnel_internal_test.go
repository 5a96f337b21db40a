package nodeapi

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
)

// TestBufferedTCPKeepsEarlyBytes: bytes a tunnel's client sent right
// after its request sit in the server's reader; io.Copy from the hijacked
// connection reads them first.
func TestBufferedTCPKeepsEarlyBytes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return
		}
		io.WriteString(c, "POST /tunnel HTTP/1.1\r\n\r\nearly bytes, ")
		io.WriteString(c, "then the rest")
		c.Close()
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			break
		}
	}
	var got strings.Builder
	io.Copy(&got, &bufferedTCP{c: c.(*net.TCPConn), r: br})
	if got.String() != "early bytes, then the rest" {
		t.Fatalf("got %q", got.String())
	}
}
