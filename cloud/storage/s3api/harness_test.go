package s3api_test

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/kms"
	"github.com/latticenet/lattice/cloud/storage/s3api"
)

// env is a store served by the S3 endpoint on loopback, with an account
// "alice" holding an unscoped read-write S3 key.
type env struct {
	st     *cloudstore.Store
	dir    string // the data directory
	srv    *httptest.Server
	api    *s3api.Server
	kms    *kms.Local // the store's key service
	id     string
	secret string

	mu       sync.Mutex
	payloads []string // the x-amz-content-sha256 of every request
}

// payloadModes are the distinct payload modes seen (hashes as "sha256").
func (e *env) payloadModes() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, p := range e.payloads {
		if len(p) == 64 {
			p = "sha256"
		}
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func newEnv(t *testing.T) *env { return startEnv(t, false, s3api.Options{}) }

// newTLSEnv serves the endpoint over TLS, as behind a terminating proxy:
// over HTTPS, SDKs send aws-chunked bodies with trailing checksums.
func newTLSEnv(t *testing.T) *env { return startEnv(t, true, s3api.Options{}) }

func startEnv(t *testing.T, tls bool, opts s3api.Options) *env {
	t.Helper()
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := cloudstore.OpenDir(dir, log)
	if err != nil {
		t.Fatal(err)
	}
	// The built-in key service, as the platform opens it, for SSE-KMS.
	master := make([]byte, 32)
	rand.Read(master)
	km, err := st.OpenKMS(master, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = log
	api := s3api.New(st, opts)
	e := &env{st: st, dir: dir, api: api, kms: km}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.payloads = append(e.payloads, r.Header.Get("X-Amz-Content-Sha256"))
		e.mu.Unlock()
		api.ServeHTTP(w, r)
	}))
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	e.srv = srv
	t.Cleanup(func() {
		srv.Close()
		api.Wait()
		st.Close()
	})
	e.id, e.secret = e.key(t, "alice", cloudstore.PermReadWrite, "*")
	return e
}

// key makes an S3 key for account.
func (e *env) key(t *testing.T, account, perms, scope string) (id, secret string) {
	t.Helper()
	k, secret, err := e.st.CreateS3Key(account, "test", perms, scope, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return k.AccessKeyID, secret
}

// addr is the endpoint's host:port.
func (e *env) addr() string { return e.srv.Listener.Addr().String() }

// scheme is http or https.
func (e *env) scheme() string { return e.srv.URL[:strings.Index(e.srv.URL, ":")] }

// loopbackClient dials the test server whatever host a request names,
// so that virtual-hosted-style names (bucket.localhost) reach it.
func (e *env) loopbackClient() *http.Client {
	tr := e.srv.Client().Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, e.addr())
	}
	return &http.Client{Transport: tr, Timeout: time.Minute}
}
