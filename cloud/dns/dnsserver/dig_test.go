package dnsserver_test

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/dns/dnsserver"
)

// TestDig asks the server with dig (package dnsutils / bind9-dnsutils),
// the tool an operator reaches for.
func TestDig(t *testing.T) {
	digPath := needTool(t, "dig")
	t.Parallel()
	ts := startServer(t, serverConfig{opts: dnsserver.Options{TransferFrom: loopbackOnly}})
	serial := ts.soa(t).Serial

	dig := func(t *testing.T, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		args = append([]string{"@127.0.0.1", "-p", strconv.Itoa(ts.port), "+time=2", "+tries=1"}, args...)
		out, err := exec.CommandContext(ctx, digPath, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("dig %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	t.Run("short", func(t *testing.T) {
		if out := dig(t, "www.example.com", "A", "+short"); strings.TrimSpace(out) != "192.0.2.1" {
			t.Errorf("dig +short: %q, want 192.0.2.1", out)
		}
	})
	t.Run("tcp", func(t *testing.T) {
		if out := dig(t, "www.example.com", "A", "+short", "+tcp"); strings.TrimSpace(out) != "192.0.2.1" {
			t.Errorf("dig +tcp +short: %q, want 192.0.2.1", out)
		}
	})
	t.Run("SOA", func(t *testing.T) {
		out := dig(t, "+norec", "example.com", "SOA")
		for _, want := range []string{"status: NOERROR", "flags: qr aa;", "EDNS: version: 0, flags:; udp: 1232"} {
			if !strings.Contains(out, want) {
				t.Errorf("dig +norec example.com SOA lacks %q:\n%s", want, out)
			}
		}
		re := regexp.MustCompile(`(?m)^example\.com\.\s+\d+\s+IN\s+SOA\s+ns1\.example\.com\. hostmaster\.example\.com\. (\d+) 3600 600 1209600 300$`)
		m := re.FindStringSubmatch(out)
		if m == nil || m[1] != strconv.FormatUint(uint64(serial), 10) {
			t.Errorf("no SOA of serial %d in:\n%s", serial, out)
		}
	})
	t.Run("NXDOMAIN", func(t *testing.T) {
		out := dig(t, "+norec", "nope.example.com", "A")
		if !strings.Contains(out, "status: NXDOMAIN") || !strings.Contains(out, "AUTHORITY: 1") {
			t.Errorf("dig nope.example.com:\n%s", out)
		}
	})
	t.Run("REFUSED", func(t *testing.T) {
		if out := dig(t, "+norec", "example.org", "A"); !strings.Contains(out, "status: REFUSED") {
			t.Errorf("dig example.org:\n%s", out)
		}
	})
	t.Run("truncated then TCP", func(t *testing.T) {
		// dig retries over TCP on TC by itself; +ignore keeps the UDP answer.
		out := dig(t, "+norec", "+noedns", "+ignore", "big.example.com", "TXT")
		if !strings.Contains(out, " tc") || !strings.Contains(out, "MSG SIZE  rcvd: ") {
			t.Errorf("dig +noedns +ignore big TXT: no TC flag\n%s", out)
		}
		out = dig(t, "+norec", "+short", "big.example.com", "TXT")
		if n := len(strings.Split(strings.TrimSpace(out), "\n")); n != 40 {
			t.Errorf("dig big TXT (UDP, then TCP on TC): %d records, want 40\n%s", n, out)
		}
	})
	t.Run("AXFR", func(t *testing.T) {
		out := dig(t, "example.com", "AXFR")
		if n := strings.Count(out, "\tSOA\t"); n != 2 {
			t.Errorf("dig AXFR: %d SOA records, want 2\n%s", n, out)
		}
		for _, want := range []string{"www.example.com.", "mail.example.com.", "sub.example.com.", "XFR size: "} {
			if !strings.Contains(out, want) {
				t.Errorf("dig AXFR lacks %q:\n%s", want, out)
			}
		}
		t.Logf("dig AXFR: %s", lastLine(out, "XFR size"))
	})
	t.Logf("dig +norec example.com SOA:\n%s", dig(t, "+norec", "example.com", "SOA"))
}

func lastLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, prefix) {
			return l
		}
	}
	return ""
}
