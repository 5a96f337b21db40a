package cloudapi

import "testing"

func TestZipName(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"a.txt", true}, {"dir/sub/b.png", true}, {"folder/", true}, {"console.log", true},
		{"COM0", true}, {"com10", true}, {"nul2", true}, {"auxiliary/x", true},
		{"CON", false}, {"con.txt", false}, {"dir/Nul", false}, {"LPT9.log", false}, {"aux /x", false},
		{"C:/x", false}, {"C:x", false}, {`a\b`, false}, {"../x", false}, {"/abs", false}, {"a//b", false},
	} {
		if err := zipName(tc.key); (err == nil) != tc.ok {
			t.Errorf("zipName(%q) = %v, want ok %v", tc.key, err, tc.ok)
		}
	}
}
