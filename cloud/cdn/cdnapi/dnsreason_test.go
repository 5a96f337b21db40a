package cdnapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
)

// TestDNSReasonNamesNoAddress: what a tenant is told of a failed lookup
// never names an address: not the resolver's (DNSError.Server), not a
// socket's (a DNSError.Err made of a socket error).
func TestDNSReasonNamesNoAddress(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&net.DNSError{Err: "no such host", Name: "a.example", Server: "10.255.255.53:53", IsNotFound: true}, "no such name"},
		{&net.DNSError{Err: "i/o timeout", Name: "a.example", Server: "10.255.255.53:53", IsTimeout: true}, "timed out"},
		{fmt.Errorf("lookup: %w", context.DeadlineExceeded), "timed out"},
		{&net.DNSError{Err: "read udp 127.0.0.1:42501->127.0.0.1:53: read: connection refused", Server: "127.0.0.1:53", IsTemporary: true}, "the name server failed"},
		{&net.DNSError{Err: "dial udp 10.9.8.7:53: connect: network is unreachable", Server: "10.9.8.7:53"}, "lookup failed"},
		{errors.New("something else at 192.0.2.1:53"), "lookup failed"},
	} {
		got := dnsReason(tc.err)
		if !strings.Contains(got, tc.want) || strings.Contains(got, ":53") || strings.Contains(got, "127.0.0.1") || strings.Contains(got, "10.") {
			t.Errorf("dnsReason(%v) = %q, want %q and no address", tc.err, got, tc.want)
		}
	}
}
