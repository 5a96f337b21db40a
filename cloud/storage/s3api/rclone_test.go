package s3api_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// rclone runs rclone against e with a remote "lat" made of environment
// variables (no config file of the user's is read) and returns its
// standard output.
func (e *env) rclone(t *testing.T, path string, args ...string) string {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "rclone.conf")
	if err := os.WriteFile(conf, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(e.clientEnv(t),
		"RCLONE_CONFIG="+conf,
		"RCLONE_CONFIG_LAT_TYPE=s3", "RCLONE_CONFIG_LAT_PROVIDER=Other",
		"RCLONE_CONFIG_LAT_ENDPOINT="+e.srv.URL, "RCLONE_CONFIG_LAT_REGION=us-east-1",
		"RCLONE_CONFIG_LAT_ACCESS_KEY_ID="+e.id, "RCLONE_CONFIG_LAT_SECRET_ACCESS_KEY="+e.secret)
	return e.outputEnv(t, env, path, args...)
}

// TestRcloneSignatureV2: rclone's Version 2 signer (--s3-v2-auth) dates
// its requests "Mon, 02 Jan 2006 15:04:05 UTC" (Go's time.RFC1123), not
// "GMT": uploads, listings, server-side copies, reads and deletes work.
func TestRcloneSignatureV2(t *testing.T) {
	rclone := tooltest.Need(t, "rclone", "version")
	e := newEnv(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "a b.txt")
	if err := os.WriteFile(src, []byte("rclone v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	v2 := "--s3-v2-auth"
	e.rclone(t, rclone, v2, "mkdir", "lat:rclone-v2")
	e.rclone(t, rclone, v2, "copy", src, "lat:rclone-v2/dir")
	e.rclone(t, rclone, v2, "copyto", "lat:rclone-v2/dir/a b.txt", "lat:rclone-v2/copy.txt")
	if got := e.rclone(t, rclone, v2, "cat", "lat:rclone-v2/copy.txt"); got != "rclone v2" {
		t.Errorf("rclone cat = %q, want %q", got, "rclone v2")
	}
	e.rclone(t, rclone, v2, "delete", "lat:rclone-v2/dir")
	if got := strings.TrimSpace(e.rclone(t, rclone, v2, "lsf", "-R", "lat:rclone-v2")); got != "copy.txt" {
		t.Errorf("rclone lsf after delete = %q, want copy.txt", got)
	}
}
