package cli

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// untar unpacks a .tar.gz of testdata into dir.
func untar(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o700); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestCloudUpgradeMovesAccounts starts lattice cloud on a data directory
// written by the version before the accounts store (testdata: the admin
// key, an account's key, a revoked key and a bucket, made with that
// version's binary and CLI). Every key works as it did, no new admin key
// is made, the old rows leave the object store, and a second start finds
// everything where the first left it.
func TestCloudUpgradeMovesAccounts(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LATTICE_API", "")
	dir := t.TempDir()
	untar(t, filepath.Join("testdata", "cloud-data-before-accounts.tar.gz"), dir)
	secret := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	admin, acme, revoked := secret("admin-api-key"), secret("acme-api-key"), secret("revoked-api-key")
	for start := 1; start <= 2; start++ {
		s := startServer(t, cloudReady, "cloud", "--data", dir, "--api", "127.0.0.1:0", "--s3", "127.0.0.1:0", "--dns", "", "--cdn", "")
		if strings.Contains(s.stdout.String(), "created the admin API key") {
			t.Errorf("start %d made a new admin key:\n%s", start, s.stdout.String())
		}
		url := cloudReady.FindStringSubmatch(s.stdout.String())[1]
		for _, tc := range []struct {
			who    string
			secret string
			want   int
		}{{"the admin key", admin, 200}, {"acme's key", acme, 200}, {"the revoked key", revoked, 401}} {
			if got := status(t, url, tc.secret); got != tc.want {
				t.Errorf("start %d: %s answers %d, want %d", start, tc.who, got, tc.want)
			}
		}
		t.Setenv("LATTICE_API_URL", url)
		t.Setenv("LATTICE_API_KEY", acme)
		if r := mustRun(t, "s3", "ls"); !strings.Contains(r.stdout, "photos") {
			t.Errorf("start %d: acme's buckets: %q, want photos", start, r.stdout)
		}
		if code := s.stop(); code != 0 {
			t.Fatalf("start %d: lattice cloud exited with %d\n%s", start, code, s.stderr.String())
		}
		st, err := cloudstore.Open(filepath.Join(dir, "meta"), nil)
		if err != nil {
			t.Fatal(err)
		}
		old, err := st.Legacy()
		st.Close()
		if err != nil || len(old.Keys)+len(old.Accounts) != 0 || old.AdminKeyID != "" {
			t.Errorf("start %d: the object store still holds %d keys, %d accounts, admin %q (%v)",
				start, len(old.Keys), len(old.Accounts), old.AdminKeyID, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "accounts")); err != nil {
		t.Errorf("no accounts store in the data directory: %v", err)
	}
}
