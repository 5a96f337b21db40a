package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

var cloudDNSReady = regexp.MustCompile(`lattice cloud: DNS (\S+) \(UDP and TCP\)`)

// TestDNSCommands drives `lattice dns` against a real `lattice cloud` and
// asks its DNS server, over UDP and TCP, what the commands made.
func TestDNSCommands(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LATTICE_API", "")
	dir := filepath.Join(t.TempDir(), "cloud")
	s := startServer(t, cloudDNSReady, "cloud", "--data", dir, "--api", "127.0.0.1:0", "--dns", "127.0.0.1:0",
		"--dns-ns", "ns1.example.net,ns2.example.net")
	dnsAddr := cloudDNSReady.FindStringSubmatch(s.stdout.String())[1]
	apiURL := cloudReady.FindStringSubmatch(s.stdout.String())[1]
	key, err := os.ReadFile(filepath.Join(dir, "admin-api-key"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LATTICE_API_URL", apiURL)
	t.Setenv("LATTICE_API_KEY", strings.TrimSpace(string(key)))

	r := mustRun(t, "dns", "zone", "create", "Example.com")
	if !strings.Contains(r.stdout, "zone example.com created") || !strings.Contains(r.stdout, "ns1.example.net, ns2.example.net") {
		t.Errorf("zone create: %q", r.stdout)
	}
	wantFail(t, run(t, "dns", "zone", "create", "example.com"), 1, "taken")
	wantFail(t, run(t, "dns", "zone", "create", "com"), 1, "one label")
	wwwID := strings.TrimSpace(mustRun(t, "dns", "record", "add", "example.com", "A", "www", "192.0.2.10", "--ttl", "300").stdout)
	mustRun(t, "dns", "record", "add", "example.com", "MX", "@", "mail.example.com", "--priority", "5")
	mustRun(t, "dns", "record", "add", "example.com", "A", "mail", "192.0.2.25")
	mustRun(t, "dns", "record", "add", "example.com", "TXT", "@", "v=spf1 mx -all")
	mustRun(t, "dns", "record", "add", "example.com", "CAA", "@", `0 issue "letsencrypt.org"`)
	mustRun(t, "dns", "record", "add", "example.com", "SRV", "_sip._tcp", "sip.example.com", "--port", "5060")
	wantFail(t, run(t, "dns", "record", "add", "example.com", "CNAME", "www", "elsewhere.org"), 1, "CNAME cannot stand beside")
	wantFail(t, run(t, "dns", "record", "add", "example.com", "A", "www", "not-an-ip"), 1, "not an IPv4 address")
	wantFail(t, run(t, "dns", "record", "add", "example.com", "A", "www", "192.0.2.1", "--ttl", "soon"), 2, "--ttl")
	wantFail(t, run(t, "dns", "record", "add", "nosuch.org", "A", "www", "192.0.2.1"), 1, "no zone nosuch.org")
	wantFail(t, run(t, "dns", "record", "add", "example.com", "A"), 2, "ZONE TYPE NAME VALUE")

	ls := mustRun(t, "dns", "record", "ls", "example.com").stdout
	for _, want := range []string{`www\.example\.com +A +300 +192\.0\.2\.10`, `example\.com +MX +3600 +5 mail\.example\.com`,
		`example\.com +TXT +3600 +"v=spf1 mx -all"`, `_sip\._tcp\.example\.com +SRV +3600 +10 0 5060 sip\.example\.com`} {
		if !regexp.MustCompile(want).MatchString(ls) {
			t.Errorf("record ls lacks %s:\n%s", want, ls)
		}
	}
	if !strings.HasPrefix(strings.SplitN(ls, "\n", 3)[1], strings.Fields(strings.SplitN(ls, "\n", 3)[1])[0]+"  example.com ") {
		t.Errorf("record ls does not begin with the apex:\n%s", ls)
	}
	var recs []dnszone.Record
	if err := json.Unmarshal([]byte(mustRun(t, "dns", "record", "ls", "example.com", "--type", "A", "--json").stdout), &recs); err != nil || len(recs) != 2 {
		t.Errorf("record ls --type A --json: %v, %d records, want 2", err, len(recs))
	}

	ask := func(net, name string, qtype uint16) *dns.Msg {
		t.Helper()
		m := new(dns.Msg)
		m.SetQuestion(name, qtype)
		c := &dns.Client{Net: net, Timeout: 5 * time.Second}
		in, _, err := c.Exchange(m, dnsAddr)
		if err != nil {
			t.Fatalf("%s %s over %s: %v", name, dns.TypeToString[qtype], net, err)
		}
		return in
	}
	for _, net := range []string{"udp", "tcp"} {
		in := ask(net, "www.example.com.", dns.TypeA)
		if len(in.Answer) != 1 || !in.Authoritative || in.Answer[0].(*dns.A).A.String() != "192.0.2.10" || in.Answer[0].Header().Ttl != 300 {
			t.Errorf("www A over %s: %v", net, in)
		}
	}
	if in := ask("udp", "example.com.", dns.TypeMX); len(in.Answer) != 1 || len(in.Extra) != 1 {
		t.Errorf("MX with the exchange's address: %v", in)
	}
	if in := ask("udp", "example.com.", dns.TypeNS); len(in.Answer) != 2 {
		t.Errorf("apex NS from --dns-ns: %v", in)
	}

	// A change answers at once; the serial moves.
	serial := func() uint32 { return ask("udp", "example.com.", dns.TypeSOA).Answer[0].(*dns.SOA).Serial }
	before := serial()
	mustRun(t, "dns", "record", "set", "example.com", wwwID, "A", "www", "192.0.2.99")
	if in := ask("udp", "www.example.com.", dns.TypeA); len(in.Answer) != 1 || in.Answer[0].(*dns.A).A.String() != "192.0.2.99" || in.Answer[0].Header().Ttl != 300 {
		t.Errorf("www A after record set (the TTL of 300 kept): %v", in)
	}
	mustRun(t, "dns", "record", "set", "example.com", wwwID, "A", "www", "192.0.2.99", "--ttl", "60")
	if in := ask("udp", "www.example.com.", dns.TypeA); len(in.Answer) != 1 || in.Answer[0].Header().Ttl != 60 {
		t.Errorf("www A after record set --ttl 60: %v", in)
	}
	wantFail(t, run(t, "dns", "record", "add", "example.com", "TXT", "@", "v=spf1", "-all"), 2, "goes in quotes")
	wantFail(t, run(t, "dns", "record", "add", "example.com", "MX", "@", "10 mail.example.com"), 1, "priority")
	if after := serial(); after != before+2 {
		t.Errorf("serial %d after two changes from %d", after, before)
	}
	mustRun(t, "dns", "record", "rm", "example.com", wwwID)
	if in := ask("udp", "www.example.com.", dns.TypeA); in.Rcode != dns.RcodeNameError {
		t.Errorf("www after record rm: %s, want NXDOMAIN", dns.RcodeToString[in.Rcode])
	}
	wantFail(t, run(t, "dns", "record", "rm", "example.com", wwwID), 1, "no such record")

	zls := mustRun(t, "dns", "zone", "ls").stdout
	if !strings.Contains(zls, "example.com") {
		t.Errorf("zone ls: %q", zls)
	}
	mustRun(t, "dns", "zone", "rm", "example.com")
	if in := ask("udp", "example.com.", dns.TypeSOA); in.Rcode != dns.RcodeRefused {
		t.Errorf("a deleted zone: %s, want REFUSED", dns.RcodeToString[in.Rcode])
	}
	wantFail(t, run(t, "dns", "zone", "rm", "example.com"), 1, "no zone example.com")
}
