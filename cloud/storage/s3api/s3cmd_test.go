package s3api_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// s3cmdConfig writes an s3cmd configuration for e, path style, signing
// with Version 2 when v2.
func (e *env) s3cmdConfig(t *testing.T, v2 bool) string {
	t.Helper()
	host := e.addr()
	cfg := fmt.Sprintf("[default]\naccess_key = %s\nsecret_key = %s\nhost_base = %s\nhost_bucket = %s\nuse_https = %v\nbucket_location = us-east-1\nsignature_v2 = %v\n",
		e.id, e.secret, host, host, e.scheme() == "https", v2)
	path := filepath.Join(t.TempDir(), "s3cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestS3cmd runs s3cmd as a user would, with each signature version:
// buckets, uploads (multipart included), downloads, sync, copies and
// moves, signed URLs, and the bucket settings s3cmd manages (ACL,
// policy, CORS, expiry, payer, website).
func TestS3cmd(t *testing.T) {
	s3cmd := tooltest.Need(t, "s3cmd", "--version")
	e := newEnv(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := randomBytes(11<<20+3, 7)
	bigPath := write("big.bin", big)
	write("tree/a b.txt", []byte("a"))
	write("tree/sub/ü.txt", []byte("u"))
	policy := write("policy.json", []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::%s/pub/*"}]}`))
	cors := write("cors.xml", []byte(`<CORSConfiguration><CORSRule><AllowedOrigin>https://example.com</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>`))
	for _, v2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "v4", true: "v2"}[v2], func(t *testing.T) {
			cfg := e.s3cmdConfig(t, v2)
			run := func(args ...string) string {
				t.Helper()
				return e.output(t, s3cmd, append([]string{"-c", cfg, "--no-progress"}, args...)...)
			}
			b := map[bool]string{false: "s3cmd-v4", true: "s3cmd-v2"}[v2]
			run("mb", "s3://"+b)
			run("mb", "s3://"+b+"-to")
			run("put", "--multipart-chunk-size-mb=5", bigPath, "s3://"+b+"/big.bin")
			got := filepath.Join(t.TempDir(), "got")
			run("get", "s3://"+b+"/big.bin", got)
			if data, _ := os.ReadFile(got); !bytes.Equal(data, big) {
				t.Fatalf("s3cmd get of a multipart upload: %d bytes, want %d", len(data), len(big))
			}
			run("sync", filepath.Join(dir, "tree")+"/", "s3://"+b+"/tree/")
			run("cp", "s3://"+b+"/tree/sub/ü.txt", "s3://"+b+"-to/ü.txt")
			run("mv", "s3://"+b+"/tree/a b.txt", "s3://"+b+"-to/a b.txt")
			if ls := run("ls", "-r", "s3://"+b+"-to"); !strings.Contains(ls, "a b.txt") || !strings.Contains(ls, "ü.txt") {
				t.Errorf("s3cmd ls after cp and mv:\n%s", ls)
			}
			u := strings.TrimSpace(run("signurl", "s3://"+b+"-to/ü.txt", "+300"))
			resp, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(data) != "u" {
				t.Errorf("GET of s3cmd signurl %s: %d %q", u, resp.StatusCode, data)
			}
			run("setacl", "--acl-public", "s3://"+b)
			run("setacl", "--acl-private", "s3://"+b)
			write("policy-"+b+".json", []byte(strings.Replace(string(mustRead(t, policy)), "%s", b, 1)))
			run("setpolicy", filepath.Join(dir, "policy-"+b+".json"), "s3://"+b)
			run("setcors", cors, "s3://"+b)
			run("expire", "--expiry-days=3", "--expiry-prefix=tmp/", "s3://"+b)
			run("payer", "s3://"+b)
			run("ws-create", "--ws-index=index.html", "--ws-error=oops.html", "s3://"+b)
			if ws := run("ws-info", "s3://"+b); !strings.Contains(ws, "Index document:   index.html") || !strings.Contains(ws, "Error document:   oops.html") {
				t.Errorf("s3cmd ws-info:\n%s", ws)
			}
			run("ws-delete", "s3://"+b)
			info := run("info", "s3://"+b)
			for _, want := range []string{"Payer:     BucketOwner", "expire in '3' day", "s3:GetObject", "https://example.com"} {
				if !strings.Contains(info, want) {
					t.Errorf("s3cmd info lacks %q:\n%s", want, info)
				}
			}
			run("delpolicy", "s3://"+b)
			run("delcors", "s3://"+b)
			run("dellifecycle", "s3://"+b)
			run("rb", "-r", "s3://"+b)
			run("rb", "-r", "s3://"+b+"-to")
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
