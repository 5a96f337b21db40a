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
		again, err := NormalizeSSHKey(out)
		if err != nil || again != out {
			t.Fatalf("%q → %q → %q, %v", in, out, again, err)
		}
	})
}
