package hostprog

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fakeProgram writes an executable script named name in dir.
func fakeProgram(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLook(t *testing.T) {
	onPath, admin, empty := t.TempDir(), t.TempDir(), t.TempDir()
	fakeProgram(t, onPath, "both")
	fakeProgram(t, admin, "both")
	fakeProgram(t, admin, "adminonly")
	if err := os.WriteFile(filepath.Join(admin, "notexec"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", onPath+string(filepath.ListSeparator)+empty)
	saved := AdminDirs
	AdminDirs = []string{empty, admin}
	t.Cleanup(func() { AdminDirs = saved })

	for _, tc := range []struct {
		name, want string
		notFound   bool
	}{
		{name: "both", want: filepath.Join(onPath, "both")}, // PATH first
		{name: "adminonly", want: filepath.Join(admin, "adminonly")},
		{name: "notexec", notFound: true},
		{name: "nowhere", notFound: true},
		{name: filepath.Join(admin, "adminonly"), want: filepath.Join(admin, "adminonly")},
	} {
		got, err := Look(tc.name)
		if tc.notFound {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("Look(%q) = %q, %v; want ErrNotFound", tc.name, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Look(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestEnv(t *testing.T) {
	saved := AdminDirs
	AdminDirs = []string{"/usr/sbin", "/sbin"}
	t.Cleanup(func() { AdminDirs = saved })
	for _, tc := range []struct {
		in   []string
		want []string
	}{
		{[]string{"HOME=/h", "PATH=/usr/bin:/bin"}, []string{"HOME=/h", "PATH=/usr/bin:/bin:/usr/sbin:/sbin"}},
		{[]string{"PATH=/sbin:/usr/bin", "A=b"}, []string{"A=b", "PATH=/sbin:/usr/bin:/usr/sbin"}},
		{[]string{"PATH=/usr/sbin/:/sbin"}, []string{"PATH=/usr/sbin/:/sbin"}},
		{[]string{"PATH="}, []string{"PATH=/usr/sbin:/sbin"}},
	} {
		if got := Env(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Env(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
