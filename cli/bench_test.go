package cli

import "testing"

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"4096", 4096, true},
		{"4KiB", 4096, true},
		{"4k", 4096, true},
		{"64MiB", 64 << 20, true},
		{"64MB", 64 << 20, true},
		{"1GiB", 1 << 30, true},
		{"10B", 10, true},
		{"", 0, false},
		{"KiB", 0, false},
		{"-1", 0, false},
		{"4TiB", 0, false},
		{"4 KiB", 4096, true},
		{"3GiB", 0, false}, // more than an int32 of bytes
	} {
		got, err := parseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
