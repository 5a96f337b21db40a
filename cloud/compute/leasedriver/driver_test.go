package leasedriver_test

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/latticenet/lattice/cloud/compute/leasedriver"
)

// TestCommand runs each command line through a real /bin/sh: the
// arguments and stdin reach the program exactly, whatever they hold.
func TestCommand(t *testing.T) {
	for _, tt := range []struct {
		name  string
		argv  []string
		stdin []byte
		want  string
	}{
		{"plain", []string{"echo", "hi"}, nil, "hi\n"},
		{"quotes and dollars", []string{"printf", "%s|%s", "it's $HOME", "`id` \"x\""}, nil, "it's $HOME|`id` \"x\""},
		{"the name as $0", []string{"/bin/sh", "-c", `echo "$0"`, "web; rm -rf /"}, nil, "web; rm -rf /\n"},
		{"stdin", []string{"cat"}, []byte("line 1\nit's 100%\n\\n\n"), "line 1\nit's 100%\n\\n\n"},
		{"empty stdin", []string{"wc", "-c"}, []byte{}, "0\n"},
		{"no stdin reads nothing", []string{"cat"}, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := exec.Command("/bin/sh", "-c", leasedriver.Command(tt.argv, tt.stdin)).Output()
			if err != nil {
				t.Fatalf("%q: %v", leasedriver.Command(tt.argv, tt.stdin), err)
			}
			if got := string(out); got != tt.want {
				t.Errorf("%q printed %q, want %q", leasedriver.Command(tt.argv, tt.stdin), got, tt.want)
			}
		})
	}
}

// TestCommandFitsTheNode: the largest user data, whatever its bytes,
// makes a command line the node takes (nodewire.MaxCommandBytes, 64 KiB).
func TestCommandFitsTheNode(t *testing.T) {
	worst := bytes.Repeat([]byte("'"), 16<<10)
	if n := len(leasedriver.Command([]string{"/bin/sh", "-c", "cat > /var/lib/lattice/user-data"}, worst)); n > 64<<10 {
		t.Fatalf("16 KiB of user data make a %d-byte command", n)
	}
}
