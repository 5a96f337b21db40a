package nodeclient

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
)

// TestTunnelKeepsEarlyBytes: a guest that speaks first (an SSH server's
// banner) may have its first bytes arrive with the node's 101 answer, in
// one segment; they are read first, whether through Read or io.Copy.
func TestTunnelKeepsEarlyBytes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := readHead(c); err != nil {
					return
				}
				io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nLattice-Tunnel-Path: relayed\r\n\r\nSSH-2.0-banner\r\n")
				time.Sleep(50 * time.Millisecond)
				io.WriteString(c, "then the rest")
			}()
		}
	}()
	c := New("http://"+ln.Addr().String(), nil)
	for _, how := range []string{"read", "copy"} {
		conn, err := c.Tunnel(context.Background(), ledger.Hash{1}, Access{Key: make([]byte, 64)}, 22)
		if err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		if how == "read" {
			data, _ := io.ReadAll(conn)
			got.Write(data)
		} else {
			io.Copy(&got, conn)
		}
		conn.Close()
		if conn.Path() != "relayed" {
			t.Errorf("%s: path %q, want the node's relayed", how, conn.Path())
		}
		if got.String() != "SSH-2.0-banner\r\nthen the rest" {
			t.Fatalf("%s: got %q", how, got.String())
		}
	}
}

// readHead reads one request head (the tunnel request has no
// body).
func readHead(c net.Conn) (string, error) {
	br := bufio.NewReader(c)
	var head strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		head.WriteString(line)
		if line == "\r\n" {
			return head.String(), nil
		}
	}
}
