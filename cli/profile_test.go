package cli

import (
	"path/filepath"
	"testing"
)

// TestDevProfileName: the first `lattice dev` and the default data
// directory write the profile "dev"; a second one on another directory (a
// walkthrough's throwaway network) writes its own and leaves "dev", and the
// current profile, to the network the user keeps running.
func TestDevProfileName(t *testing.T) {
	home := cleanEnv(t)
	def := filepath.Join(home, ".lattice", "dev")
	other := filepath.Join(t.TempDir(), "walk", "dev")
	if got := devProfileName(other); got != "dev" {
		t.Fatalf("no profiles yet: got %q, want dev", got)
	}
	if _, err := saveDevProfile("dev", def, "http://127.0.0.1:8080", "k.json", "http://127.0.0.1:8090", "none"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ data, want string }{
		{def, "dev"},
		{other, "dev-dev"},
		{filepath.Join(t.TempDir(), "my net"), "dev-my-net"},
	} {
		if got := devProfileName(tt.data); got != tt.want {
			t.Errorf("devProfileName(%q): got %q, want %q", tt.data, got, tt.want)
		}
	}
	if _, err := saveDevProfile("dev-dev", other, "http://127.0.0.1:18080", "k.json", "", "none"); err != nil {
		t.Fatal(err)
	}
	pf, _, err := loadProfiles()
	if err != nil {
		t.Fatal(err)
	}
	if pf.Current != "dev" || pf.Profiles["dev"].Node != "http://127.0.0.1:8080" {
		t.Errorf("after a second dev network: current %q, dev %+v; want dev, untouched", pf.Current, pf.Profiles["dev"])
	}
}
