package computerules

import (
	"errors"
	"strings"
	"testing"
)

func TestPower(t *testing.T) {
	tests := []struct {
		status, action string
		want           string
		err            error
	}{
		{Running, Off, Stopping, nil},
		{Running, Reboot, Rebooting, nil},
		{Running, On, "", ErrState},
		{Stopped, On, Starting, nil},
		{Stopped, Off, "", ErrState},
		{Stopped, Reboot, "", ErrState},
		{Error, On, Starting, nil},
		{Error, Off, Stopped, nil},
		{Error, Reboot, "", ErrState},
		{Provisioning, On, "", ErrBusy},
		{Provisioning, Off, "", ErrBusy},
		{Starting, Off, "", ErrBusy},
		{Stopping, On, "", ErrBusy},
		{Rebooting, Reboot, "", ErrBusy},
		{Deleting, On, "", ErrBusy},
		{Running, "restart", "", ErrInvalid},
		{Running, "", "", ErrInvalid},
	}
	for _, tt := range tests {
		got, err := Power(tt.status, tt.action)
		if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("Power(%s, %q) = %q, %v; want %q, %v", tt.status, tt.action, got, err, tt.want, tt.err)
		}
	}
}

func TestDeleteAndRestart(t *testing.T) {
	for _, s := range Statuses {
		got, err := Delete(s)
		if Transitional(s) {
			if !errors.Is(err, ErrBusy) {
				t.Errorf("Delete(%s) = %q, %v; want ErrBusy", s, got, err)
			}
		} else if got != Deleting || err != nil {
			t.Errorf("Delete(%s) = %q, %v; want deleting", s, got, err)
		}
		if r := Restarted(s); Transitional(r) && r != Starting && r != Deleting {
			t.Errorf("Restarted(%s) = %s: a restart leaves no change half made but a start or a delete", s, r)
		}
	}
	for s, want := range map[string]string{Running: Starting, Provisioning: Starting, Rebooting: Starting, Starting: Starting,
		Stopping: Stopped, Stopped: Stopped, Error: Error, Deleting: Deleting} {
		if got := Restarted(s); got != want {
			t.Errorf("Restarted(%s) = %s, want %s", s, got, want)
		}
	}
}

var images = []Image{{Name: "minimal", MinDiskGB: 0}, {Name: "debian-12", MinDiskGB: 2, MinMemoryMB: 256, SSH: true}}

const edKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"

func TestSpecCheck(t *testing.T) {
	tests := []struct {
		name string
		in   Spec
		want string // "" for valid, else a piece of the error
	}{
		{"defaults", Spec{Name: "web-1", Image: "debian-12"}, ""},
		{"minimal without disk", Spec{Name: "a", Image: "minimal"}, ""},
		{"key", Spec{Name: "a", Image: "debian-12", SSHKeys: []string{"  " + edKey + "  me@host "}}, ""},
		{"no name", Spec{Image: "minimal"}, "name is required"},
		{"upper case", Spec{Name: "Web", Image: "minimal"}, "lower-case"},
		{"hyphen", Spec{Name: "-web", Image: "minimal"}, "hyphen"},
		{"long", Spec{Name: strings.Repeat("a", 64), Image: "minimal"}, "longer"},
		{"image", Spec{Name: "a", Image: "ubuntu"}, "want one of minimal, debian-12"},
		{"vcpus", Spec{Name: "a", Image: "minimal", VCPUs: 65}, "vcpus 65"},
		{"negative vcpus", Spec{Name: "a", Image: "minimal", VCPUs: -1}, "vcpus -1"},
		{"memory", Spec{Name: "a", Image: "minimal", MemoryMB: 64}, "memory_mb 64"},
		{"memory for the image", Spec{Name: "a", Image: "debian-12", MemoryMB: 200}, "wants at least 256"},
		{"disk too small", Spec{Name: "a", Image: "debian-12", DiskGB: 1}, "disk_gb 1"},
		{"disk negative", Spec{Name: "a", Image: "minimal", DiskGB: -1}, "disk_gb -1"},
		{"user data", Spec{Name: "a", Image: "minimal", UserData: strings.Repeat("x", MaxUserDataSize+1)}, "user_data"},
		{"user data NUL", Spec{Name: "a", Image: "minimal", UserData: "a\x00"}, "NUL"},
		{"keys on minimal", Spec{Name: "a", Image: "minimal", SSHKeys: []string{edKey}}, "no SSH server"},
		{"bad key", Spec{Name: "a", Image: "debian-12", SSHKeys: []string{"ssh-ed25519 notbase64"}}, "ssh_keys[0]"},
		{"two lines", Spec{Name: "a", Image: "debian-12", SSHKeys: []string{edKey + "\n" + edKey}}, "one line"},
		{"options", Spec{Name: "a", Image: "debian-12", SSHKeys: []string{`command="x" ` + edKey}}, "options"},
		{"too many keys", Spec{Name: "a", Image: "debian-12", SSHKeys: make([]string, MaxSSHKeys+1)}, "ssh_keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.in
			err := s.Check(images)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				if s.VCPUs < 1 || s.MemoryMB < MinMemoryMB {
					t.Errorf("defaults not filled: %+v", s)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check: %v, want ErrInvalid saying %q", err, tt.want)
			}
		})
	}
	s := Spec{Name: "a", Image: "debian-12", SSHKeys: []string{"  " + edKey + "  me@host "}}
	if err := s.Check(images); err != nil || s.SSHKeys[0] != edKey+" me@host" || s.DiskGB != 2 || s.MemoryMB != DefaultMemoryMB {
		t.Errorf("normalised: %+v, %v", s, err)
	}
}

func TestResourcesOver(t *testing.T) {
	limit := Resources{VMs: 2, VCPUs: 4, MemoryMB: 1024, DiskGB: 10}
	for _, tt := range []struct {
		r    Resources
		want string
	}{
		{Resources{2, 4, 1024, 10}, ""},
		{Resources{3, 1, 1, 1}, "3 VMs"},
		{Resources{1, 5, 1, 1}, "5 vCPUs"},
		{Resources{1, 1, 1025, 1}, "1025 MB"},
		{Resources{1, 1, 1, 11}, "11 GB"},
	} {
		if got := tt.r.Over(limit); (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%+v.Over = %q, want %q", tt.r, got, tt.want)
		}
	}
	if got := (Resources{100, 100, 100, 100}).Over(Resources{}); got != "" {
		t.Errorf("a zero limit limits nothing: %q", got)
	}
}
