package cdnedge

import (
	"net/netip"
	"testing"
)

// TestPublic: the addresses an origin may not reach, in every spelling
// that reaches them, and some that are public.
func TestPublic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr   string
		public bool
	}{
		{"93.184.215.14", true},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", true},
		{"127.0.0.1", false}, {"10.1.2.3", false}, {"169.254.169.254", false}, {"100.64.0.1", false}, {"0.0.0.0", false},
		{"::1", false}, {"fe80::1", false}, {"fd00::1", false},
		{"::ffff:169.254.169.254", false}, {"::ffff:127.0.0.1", false},
		// NAT64: the IPv4 address it ends with decides.
		{"64:ff9b::a9fe:a9fe", false}, {"64:ff9b::a00:1", false}, {"64:ff9b::7f00:1", false},
		{"64:ff9b::5db8:d70e", true},
		{"64:ff9b:1::a00:1", false}, // local-use NAT64 (RFC 8215)
	} {
		if got := public(netip.MustParseAddr(tc.addr)); got != tc.public {
			t.Errorf("public(%s) = %v, want %v", tc.addr, got, tc.public)
		}
	}
}
