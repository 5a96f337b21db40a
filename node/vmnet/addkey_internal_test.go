package vmnet

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAddKeyScript runs the script that authorizes a lease's access key
// with the host's /bin/sh (dash on Debian, as in the debian-12 guest): it
// adds the key once and keeps every other key, so that a machine booted
// again keeps the keys its consumer added.
func TestAddKeyScript(t *testing.T) {
	const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAccessKeyOfTheLease0000000000000000000000"
	const other = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAUsersOwnKey000000000000000000000000000 me@laptop"
	cases := []struct {
		name   string
		before *string // nil: no .ssh directory at all
		want   string
	}{
		{"no directory", nil, key + "\n"},
		{"empty file", ptr(""), key + "\n"},
		{"another key", ptr(other + "\n"), other + "\n" + key + "\n"},
		{"another key, no newline at its end", ptr(other), other + "\n" + key + "\n"},
		{"already there", ptr(other + "\n" + key + "\n"), other + "\n" + key + "\n"},
		{"a longer key that contains it is another", ptr(key + " comment\n"), key + " comment\n" + key + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), ".ssh")
			file := filepath.Join(dir, "authorized_keys")
			if c.before != nil {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(*c.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 { // a second boot changes nothing
				cmd := exec.Command("/bin/sh", "-c", addKeyScript, dir)
				cmd.Stdin = strings.NewReader(key + "\n")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("script: %v: %s", err, out)
				}
				got, err := os.ReadFile(file)
				if err != nil || string(got) != c.want {
					t.Fatalf("authorized_keys = %q (%v), want %q", got, err, c.want)
				}
			}
			if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("authorized_keys mode: %v (%v)", fi.Mode(), err)
			}
			if fi, err := os.Stat(dir); c.before == nil && (err != nil || fi.Mode().Perm() != 0o700) {
				t.Fatalf(".ssh mode: %v (%v)", fi.Mode(), err)
			}
			if _, err := os.Stat(file + ".new"); !os.IsNotExist(err) {
				t.Fatalf("the new file was left behind: %v", err)
			}
		})
	}
}

func ptr(s string) *string { return &s }

// TestRecentExits: the stops RestartLimit counts are those less than
// RestartWindow before now.
func TestRecentExits(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	cases := []struct {
		exits []time.Time
		want  int
	}{
		{nil, 0},
		{[]time.Time{now}, 1},
		{[]time.Time{ago(RestartWindow), now}, 1},
		{[]time.Time{ago(RestartWindow - time.Millisecond), now}, 2},
		{[]time.Time{ago(2 * RestartWindow), ago(RestartWindow / 2), ago(time.Second), now}, 3},
	}
	for i, c := range cases {
		if got := recent(c.exits, now); len(got) != c.want || c.want > 0 && !got[len(got)-1].Equal(now) {
			t.Errorf("%d: recent = %v, want %d ending now", i, got, c.want)
		}
	}
}
