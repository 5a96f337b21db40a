package nodeapi

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"

	"github.com/latticenet/lattice/internal/run/httpserve"
)

// TestInflight: a public address (an IPv6 /64) holds at most perSource;
// loopback, private and link-local ones, and public ones the operator
// spares, as many as the node's bound; the node at most total in all; a
// release makes room again, and a second release of one changes nothing.
func TestInflight(t *testing.T) {
	for _, tc := range []struct{ total, perSource int }{
		{MaxEventStreams, MaxEventStreamsPerSource},
		{MaxPoWWaiting, 1},
		{100, MaxOfferRequestsPerSource},
	} {
		t.Run(fmt.Sprintf("%d,%d", tc.total, tc.perSource), func(t *testing.T) {
			spare := httpserve.Spare{netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("2001:db8:77::/48")}
			l := newInflight(spare, tc.total, tc.perSource, "1", "", "")
			var releases []func()
			acquire := func(source string) error {
				t.Helper()
				release, err := l.acquire(source)
				if err == nil {
					releases = append(releases, release)
				}
				return err
			}
			for i := range tc.perSource {
				if err := acquire("192.0.2.7"); err != nil {
					t.Fatalf("request %d of an address: %v", i, err)
				}
			}
			if err := acquire("192.0.2.7"); !errors.Is(err, errSourceFull) {
				t.Fatalf("one past the address's bound: %v", err)
			}
			if err := acquire("2001:db8::7"); err != nil {
				t.Fatalf("another address meanwhile: %v", err)
			}
			releases[0]()
			releases[0]() // a second release is no second room
			if err := acquire("192.0.2.7"); err != nil {
				t.Fatalf("after a release: %v", err)
			}
			if err := acquire("192.0.2.7"); !errors.Is(err, errSourceFull) {
				t.Fatalf("a second release made room: %v", err)
			}
			// An IPv6 address counts by its /64: another in the same
			// /64 shares the first's bound.
			for i := 1; i < tc.perSource; i++ {
				if err := acquire("2001:db8::99"); err != nil {
					t.Fatalf("request %d of the /64: %v", i, err)
				}
			}
			if err := acquire("2001:db8::1:2"); !errors.Is(err, errSourceFull) {
				t.Fatalf("one past the /64's bound: %v", err)
			}
			if err := acquire("2001:db8:0:1::7"); err != nil {
				t.Fatalf("another /64: %v", err)
			}
			for _, lo := range []string{"127.0.0.1", "::1", "127.0.0.2", "10.9.9.9", "192.168.0.1", "fd00::1", "fe80::1",
				"203.0.113.9", "::ffff:203.0.113.10", "2001:db8:77:1::1"} {
				for i := range 2 * tc.perSource {
					if err := acquire(lo); err != nil {
						t.Fatalf("request %d from %s: %v", i, lo, err)
					}
				}
			}
			for i := 0; ; i++ {
				if all, _ := l.held(); all == tc.total {
					break
				}
				if err := acquire(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)); err != nil {
					t.Fatalf("request %d of the node's: %v", i, err)
				}
			}
			if err := acquire("127.0.0.1"); !errors.Is(err, errNodeFull) {
				t.Fatalf("one past the node's bound, from loopback: %v", err)
			}
			if err := acquire("198.51.100.1"); !errors.Is(err, errNodeFull) {
				t.Fatalf("one past the node's bound, from a new address: %v", err)
			}
			for _, release := range releases {
				release()
			}
			if all, sources := l.held(); all != 0 || sources != 0 {
				t.Fatalf("after every release: %d of %d addresses", all, sources)
			}
		})
	}
}
