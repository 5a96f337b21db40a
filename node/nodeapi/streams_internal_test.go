package nodeapi

import (
	"fmt"
	"strings"
	"testing"
)

// TestOpenStream: an address other than loopback holds at most
// MaxEventStreamsPerSource event streams, loopback as many as the node's
// bound, the node at most MaxEventStreams in all; a closed stream makes
// room again.
func TestOpenStream(t *testing.T) {
	s := &Server{streams: map[string]int{}}
	var closers []func()
	open := func(source string) string {
		t.Helper()
		c, why := s.openStream(source)
		if c != nil {
			closers = append(closers, c)
		}
		return why
	}
	for i := range MaxEventStreamsPerSource {
		if why := open("192.0.2.7"); why != "" {
			t.Fatalf("stream %d of an address: %s", i, why)
		}
	}
	if why := open("192.0.2.7"); !strings.Contains(why, "the most one address may have") {
		t.Fatalf("one stream past the address's bound: %q", why)
	}
	if why := open("2001:db8::7"); why != "" {
		t.Fatalf("another address meanwhile: %s", why)
	}
	closers[0]()
	if why := open("192.0.2.7"); why != "" {
		t.Fatalf("after a close: %s", why)
	}
	for _, lo := range []string{"127.0.0.1", "::1"} {
		for i := range 2 * MaxEventStreamsPerSource {
			if why := open(lo); why != "" {
				t.Fatalf("stream %d from %s: %s", i, lo, why)
			}
		}
	}
	for i := 0; s.streamsAll < MaxEventStreams; i++ {
		if why := open(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)); why != "" {
			t.Fatalf("stream %d of the node's: %s", s.streamsAll, why)
		}
	}
	if why := open("127.0.0.1"); !strings.Contains(why, "the most it serves") {
		t.Fatalf("one stream past the node's bound: %q", why)
	}
	for _, c := range closers {
		c()
	}
	if s.streamsAll != 0 || len(s.streams) != 0 {
		t.Fatalf("after every close: %d streams of %d addresses", s.streamsAll, len(s.streams))
	}
}
