package platform

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/cloudapi"
)

// newTest returns a platform of every service on loopback ports (DNS and
// the edge included; compute, which boots no VM unless asked) in a fresh
// data directory.
func newTest(t *testing.T, dir string) (*Platform, *CDN) {
	t.Helper()
	storage := NewStorage(StorageConfig{S3: "127.0.0.1:0", Website: "127.0.0.1:0"})
	dns := NewDNS(DNSConfig{Addr: "127.0.0.1:0"})
	cdn := NewCDN(CDNConfig{Addr: "127.0.0.1:0", PrivateOrigins: true}, storage, dns)
	p := New(Config{Dir: dir, API: "127.0.0.1:0"}, storage, dns, cdn, NewCompute(ComputeConfig{}))
	t.Cleanup(func() { p.Close() })
	return p, cdn
}

// TestLifeCycle runs the whole platform: every part serves once Serve
// reports ready, and all stop when the context ends.
func TestLifeCycle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cloud")
	p, _ := newTest(t, dir)
	var secret string
	p.cfg.AdminKey = func(_, s string) { secret = s }
	if err := p.Listen(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("Listen made the data directory (%v)", err)
	}
	if err := p.Provision(); err != nil {
		t.Fatal(err)
	}
	if secret == "" {
		t.Fatal("the first start made no admin key")
	}
	for _, sub := range []string{"meta", "accounts", "dns", "cdn", "compute", "admin-api-key"} {
		if _, err := os.Stat(filepath.Join(dir, sub)); err != nil {
			t.Errorf("after Provision: %v", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan map[string]string, 1)
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, func(a map[string]string) { ready <- a }, nil) }()
	addrs := <-ready
	for _, k := range []string{"API", "S3", "S3 website", "DNS", "CDN", "Metrics"} {
		if addrs[k] == "" {
			t.Errorf("no %s address in %v", k, addrs)
		}
	}
	get := func(url, key string) int {
		req, _ := http.NewRequest("GET", url, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		url, key string
		want     int
	}{
		{addrs["API"] + "/api/storage/buckets", secret, 200},
		{addrs["API"] + "/api/dns/zones", secret, 200},
		{addrs["API"] + "/api/cdn/deployments", secret, 200},
		{addrs["API"] + "/api/cdn/deployments", "", 401},
		{addrs["API"] + "/api/compute/vms", secret, 200},
		{addrs["Metrics"], "", 200},
		{addrs["S3"] + "/", "", 403},
		{addrs["CDN"] + "/", "", 404},
		{addrs["S3 website"] + "/", "", 404}, // no bucket is named 127.0.0.1
	} {
		if got := get(tc.url, tc.key); got != tc.want {
			t.Errorf("GET %s: %d, want %d", tc.url, got, tc.want)
		}
	}
	// The machine driver is made when a VM first needs it.
	if resp, err := http.Get(addrs["API"] + "/readyz"); err != nil {
		t.Error(err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), `"compute":"idle"`) {
			t.Errorf("/readyz: %s", b)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after the context ended: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after the context ended")
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	// A second start finds what the first made, and makes no admin key.
	p2, _ := newTest(t, dir)
	p2.cfg.AdminKey = func(string, string) { t.Error("the second start made an admin key") }
	if err := p2.Listen(); err != nil {
		t.Fatal(err)
	}
	if err := p2.Provision(); err != nil {
		t.Fatal(err)
	}
	if _, err := p2.Accounts().Authenticate(secret); err != nil {
		t.Errorf("the admin key after a restart: %v", err)
	}
}

// TestListenFailsBeforeState: a port in use fails Listen, naming the flag
// that moves it, before the data directory exists, and the listeners
// already bound are released.
func TestListenFailsBeforeState(t *testing.T) {
	taken, apiAddr := takenAndFree(t)
	dir := filepath.Join(t.TempDir(), "cloud")
	storage := NewStorage(StorageConfig{S3: "127.0.0.1:0"})
	dns := NewDNS(DNSConfig{})
	cdn := NewCDN(CDNConfig{Addr: taken.String()}, storage, dns)
	p := New(Config{Dir: dir, API: apiAddr}, storage, dns, cdn)
	err := p.Listen()
	if err == nil || !strings.Contains(err.Error(), "--cdn") {
		t.Fatalf("Listen with the edge's port taken: %v, want an error naming --cdn", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a failed Listen made the data directory (%v)", err)
	}
	p.Close()
	again, err := net.Listen("tcp", apiAddr)
	if err != nil {
		t.Errorf("the API's port is still held after the failed Listen: %v", err)
	} else {
		again.Close()
	}
}

// failing is a service whose Serve fails after a moment.
type failing struct{ closed bool }

var errBoom = errors.New("boom")

func (f *failing) Name() string                    { return "failing" }
func (f *failing) Listen() error                   { return nil }
func (f *failing) Provision(*Platform) error       { return nil }
func (f *failing) Validate() error                 { return nil }
func (f *failing) Routes(*cloudapi.Server)         {}
func (f *failing) Addrs() map[string]string        { return nil }
func (f *failing) Close() error                    { f.closed = true; return nil }
func (f *failing) Serve(ctx context.Context) error { time.Sleep(50 * time.Millisecond); return errBoom }

// TestServiceFailureStopsAll: when one service fails, the others stop and
// Serve returns its error, named; Close closes it.
func TestServiceFailureStopsAll(t *testing.T) {
	f := &failing{}
	p := New(Config{Dir: t.TempDir(), API: "127.0.0.1:0"}, NewStorage(StorageConfig{S3: "127.0.0.1:0"}), f)
	defer p.Close()
	if err := p.Listen(); err != nil {
		t.Fatal(err)
	}
	if err := p.Provision(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(context.Background(), func(map[string]string) {}, nil) }()
	select {
	case err := <-done:
		if !errors.Is(err, errBoom) || !strings.Contains(err.Error(), "failing") {
			t.Errorf("Serve = %v, want the failing service's error, named", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the other parts went on serving after a service failed")
	}
	p.Close()
	if !f.closed {
		t.Error("Close did not close the service")
	}
}

// TestProvisionFailureCloses: a service that cannot provision fails
// Provision, and Close releases what the services before it opened (a
// second platform can open the same directory).
func TestProvisionFailureCloses(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cdn"), []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, _ := newTest(t, dir)
	if err := p.Listen(); err != nil {
		t.Fatal(err)
	}
	if err := p.Provision(); err == nil || !strings.HasPrefix(err.Error(), "cdn: ") {
		t.Fatalf("Provision with DATA/cdn a file: %v, want the CDN's error", err)
	}
	p.Close()
	os.Remove(filepath.Join(dir, "cdn"))
	p2, _ := newTest(t, dir)
	if err := p2.Listen(); err != nil {
		t.Fatal(err)
	}
	if err := p2.Provision(); err != nil {
		t.Errorf("a second Provision after the failed one's Close: %v", err)
	}
}

// TestWebsitePortTaken: a taken website port fails Listen, naming
// --s3-website, and leaves the S3 endpoint's port free.
func TestWebsitePortTaken(t *testing.T) {
	taken, s3Addr := takenAndFree(t)
	storage := NewStorage(StorageConfig{S3: s3Addr, Website: taken.String()})
	if err := storage.Listen(); err == nil || !strings.Contains(err.Error(), "--s3-website") {
		t.Fatalf("Listen with the website's port taken: %v, want an error naming --s3-website", err)
	}
	storage.Close()
	again, err := net.Listen("tcp", s3Addr)
	if err != nil {
		t.Fatalf("the S3 port is still held after the failed Listen: %v", err)
	}
	again.Close()
}

// takenAndFree returns a loopback address held until the test ends, and
// one that was free a moment ago.
func takenAndFree(t *testing.T) (taken net.Addr, free string) {
	t.Helper()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free = l.Addr().String()
	l.Close()
	return held.Addr(), free
}
