package platform

import (
	"bytes"
	"encoding/base64"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/storage/kms"
)

// provisionStorage provisions a platform of storage alone on dir and
// returns its storage service, or Provision's error; close stops it.
func provisionStorage(t *testing.T, dir string, cfg StorageConfig) (st *Storage, close func(), err error) {
	t.Helper()
	cfg.S3 = "127.0.0.1:0"
	st = NewStorage(cfg)
	p := New(Config{Dir: dir, API: "127.0.0.1:0"}, st)
	if err := p.Listen(); err != nil {
		t.Fatal(err)
	}
	err = p.Provision()
	if err != nil {
		p.Close()
		return nil, nil, err
	}
	return st, func() { p.Close() }, nil
}

// TestKMSMasterKey: the key service's master key from the data directory
// (made on first start), from a file, from the environment, and rotated
// with the previous one; a wrong one stops the start with an error that
// says so, and no key is lost.
func TestKMSMasterKey(t *testing.T) {
	t.Setenv(masterKeyEnv, "")
	dir := t.TempDir()
	st, stop, err := provisionStorage(t, dir, StorageConfig{})
	if err != nil {
		t.Fatal(err)
	}
	made, err := kms.LoadMasterKey(filepath.Join(dir, "kms-master.key"), false)
	if err != nil {
		t.Fatalf("no master key made in the data directory: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "kms-master.key")); fi.Mode().Perm() != 0o600 {
		t.Errorf("the master key file's mode is %v", fi.Mode().Perm())
	}
	k, err := st.KMS().Create(t.Context(), "alice", "logs", "")
	if err != nil {
		t.Fatal(err)
	}
	stop()

	// A wrong master key: the start fails, naming the problem.
	wrong := filepath.Join(t.TempDir(), "wrong.key")
	os.WriteFile(wrong, bytes.Repeat([]byte{9}, 32), 0o600)
	if _, _, err := provisionStorage(t, dir, StorageConfig{KMSMasterKey: wrong}); !errors.Is(err, kms.ErrMasterKey) {
		t.Fatalf("a start with the wrong master key: %v", err)
	}

	// Rotation to a new key in a file, the old one as previous.
	newKey := filepath.Join(t.TempDir(), "new.key")
	os.WriteFile(newKey, []byte(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))+"\n"), 0o600)
	st, stop, err = provisionStorage(t, dir, StorageConfig{KMSMasterKey: newKey, KMSPreviousMasterKey: filepath.Join(dir, "kms-master.key")})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.KMS().Get(t.Context(), "alice", "logs"); err != nil || got.ID != k.ID {
		t.Fatalf("after rotating the master key: %+v %v", got, err)
	}
	stop()

	// The new key from the environment alone; the old one no longer opens.
	t.Setenv(masterKeyEnv, base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32)))
	if st, stop, err = provisionStorage(t, dir, StorageConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.KMS().Get(t.Context(), "alice", "logs"); err != nil {
		t.Fatal(err)
	}
	stop()
	t.Setenv(masterKeyEnv, base64.StdEncoding.EncodeToString(made))
	if _, _, err := provisionStorage(t, dir, StorageConfig{}); !errors.Is(err, kms.ErrMasterKey) {
		t.Fatalf("the rotated-out key still opens the keys: %v", err)
	}
	// The default key's file lost while keys are stored: the start fails
	// and makes no new file in its place.
	t.Setenv(masterKeyEnv, "")
	os.Remove(filepath.Join(dir, "kms-master.key"))
	if _, _, err := provisionStorage(t, dir, StorageConfig{}); err == nil || !strings.Contains(err.Error(), "put the master key back") {
		t.Fatalf("a start without the master key's file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "kms-master.key")); !os.IsNotExist(err) {
		t.Fatalf("a new master key was made in place of the lost one (%v)", err)
	}
	// A key where its file's name belongs is refused without echoing it.
	keyText := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))
	if _, _, err := provisionStorage(t, dir, StorageConfig{KMSMasterKey: keyText}); err == nil || strings.Contains(err.Error(), keyText) {
		t.Fatalf("a key given as the file's name: %v", err)
	}
	t.Setenv(masterKeyEnv, "not base64")
	if _, _, err := provisionStorage(t, dir, StorageConfig{}); err == nil {
		t.Fatal("a malformed master key in the environment was taken")
	}
}

// TestExposedSecretsWarned: a master key or secret key file that other
// users may read is named in a warning at start, and the start goes on; a
// file of mode 0600 is not.
func TestExposedSecretsWarned(t *testing.T) {
	t.Setenv(masterKeyEnv, "")
	start := func(dir string, cfg StorageConfig) string {
		t.Helper()
		var logs bytes.Buffer
		cfg.S3 = "127.0.0.1:0"
		p := New(Config{Dir: dir, API: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(&logs, nil))}, NewStorage(cfg))
		if err := p.Listen(); err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := p.Provision(); err != nil {
			t.Fatalf("an exposed key stopped the start: %v", err)
		}
		return logs.String()
	}
	dir := t.TempDir()
	if logs := start(dir, StorageConfig{}); strings.Contains(logs, "other users") {
		t.Fatalf("files the platform made are exposed:\n%s", logs)
	}

	master := filepath.Join(t.TempDir(), "master.key")
	os.WriteFile(master, []byte(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32))), 0o600)
	previous := filepath.Join(dir, "kms-master.key")
	for _, f := range []string{master, previous, filepath.Join(dir, "secret.key")} {
		if err := os.Chmod(f, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	logs := start(dir, StorageConfig{KMSMasterKey: master, KMSPreviousMasterKey: previous})
	for _, want := range []string{
		`level=WARN msg="the key service's master key can be read by other users of this host: chmod 600 it, or mount it with mode 0400" service=cloud path=` + master + " mode=0644",
		`msg="the key service's previous master key can be read by other users`,
		`msg="the store's secret key can be read by other users`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("no %q in the log:\n%s", want, logs)
		}
	}
}
