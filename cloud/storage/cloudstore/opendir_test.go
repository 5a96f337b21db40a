package cloudstore

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenDir: OpenDir lays a data directory out as docs/operations.md
// says (meta, secret.key, objects), and on the next start finds in it
// everything acknowledged, S3 secrets included, with what an interrupted
// upload left in objects/tmp removed.
func TestOpenDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s, err := OpenDir(dir, nil)
	if err != nil {
		t.Fatalf("OpenDir on a fresh directory: %v", err)
	}
	for _, p := range []string{"meta", "secret.key", "objects", filepath.Join("objects", "tmp")} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s after OpenDir: got %v, want it there", p, err)
		}
	}
	if _, err := s.CreateBucket("acme", "pics", "", t0); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("b", InlineMax+1)
	if _, err := s.Put(context.Background(), "acme", "pics", "k", strings.NewReader(body), PutOptions{ContentType: "", Max: 1 << 20, Now: t0}); err != nil {
		t.Fatal(err)
	}
	key, secret, err := s.CreateS3Key("acme", "k", PermReadWrite, "*", t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(dir, "objects", "tmp", "up-interrupted")
	if err := os.WriteFile(leftover, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}

	s, err = OpenDir(dir, nil)
	if err != nil {
		t.Fatalf("OpenDir on the same directory: %v", err)
	}
	defer s.Close()
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("objects/tmp/up-interrupted after a restart: got %v, want it removed", err)
	}
	_, rc, err := s.OpenObject(t.Context(), "acme", "pics", "k")
	if err != nil {
		t.Fatalf("OpenObject after a restart: %v", err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(data) != body {
		t.Errorf("body after a restart: got %d bytes, %v; want the %d written", len(data), err, len(body))
	}
	if _, got, err := s.S3Secret(key.AccessKeyID); err != nil || got != secret {
		t.Errorf("S3 secret after a restart: got %q, %v; want the one created", got, err)
	}
}
