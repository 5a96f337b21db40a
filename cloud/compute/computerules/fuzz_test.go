package computerules

import (
	"strings"
	"testing"
)

// FuzzNormalizeSSHKey: any text given as an SSH key is refused or comes
// back as one line that normalises to itself.
func FuzzNormalizeSSHKey(f *testing.F) {
	for _, s := range []string{edKey, edKey + " me@host", "  " + edKey + "\n", "ssh-rsa AAAA", `command="x" ` + edKey, "", "\x00",
		"ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEmKSENjQEezOmxkZMy7opKgwFB9nkt5YRrYMjNuG5N87uRgg6CLrbo5wAdT/y6v0mKV0U2w0WZ2YB/++Tpockg="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NormalizeSSHKey(in)
		if err != nil {
			return
		}
		if strings.ContainsAny(out, "\r\n\x00") {
			t.Fatalf("%q normalised to %q, not one line", in, out)
		}
		if len(out) > MaxSSHKeyLen {
			t.Fatalf("a key of %d bytes passed, more than %d", len(out), MaxSSHKeyLen)
		}
		again, err := NormalizeSSHKey(out)
		if err != nil || again != out {
			t.Fatalf("%q → %q → %q, %v", in, out, again, err)
		}
	})
}

// TestSSHKeyBounded: a key's comment may not make its line longer than
// MaxSSHKeyLen: ten keys with 90 KB comments once made a leased VM's
// guest preparation a 1.2 MB command, past the node's 64 KiB bound.
func TestSSHKeyBounded(t *testing.T) {
	if _, err := NormalizeSSHKey(edKey + " " + strings.Repeat("c", MaxSSHKeyLen)); err == nil {
		t.Error("a key with a comment past the bound passed")
	}
	long := edKey + " " + strings.Repeat("c", MaxSSHKeyLen-len(edKey)-1)
	if out, err := NormalizeSSHKey(long); err != nil || out != long {
		t.Errorf("a key at the bound: %v", err)
	}
}
