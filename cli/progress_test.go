package cli

import (
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestHumanBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1, "1 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{10 << 20, "10.0 MiB"}, {5 << 30, "5.0 GiB"}, {3 << 40, "3.0 TiB"}, {1 << 62, "4.0 EiB"},
	}
	for _, tt := range tests {
		if got := humanBytes(tt.n); got != tt.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestDurations(t *testing.T) {
	tests := []struct {
		d           time.Duration
		short, took string
	}{
		{0, "0s", "<1ms"},
		{time.Millisecond, "0s", "1ms"},
		{85 * time.Millisecond, "0s", "85ms"},
		{2400 * time.Millisecond, "2s", "2.4s"},
		{65 * time.Second, "1m05s", "1m05s"},
		{2*time.Hour + 3*time.Minute + 30*time.Second, "2h03m", "2h03m"},
	}
	for _, tt := range tests {
		if got := shortDuration(tt.d); got != tt.short {
			t.Errorf("shortDuration(%v) = %q, want %q", tt.d, got, tt.short)
		}
		if got := tookDuration(tt.d); got != tt.took {
			t.Errorf("tookDuration(%v) = %q, want %q", tt.d, got, tt.took)
		}
	}
}

func TestProgressLine(t *testing.T) {
	const name = "photos/2026/beach.jpg"
	tests := []struct {
		name        string
		done, total int64
		elapsed     time.Duration
		width       int
		want        string
	}{
		{name, 0, 10 << 20, 0, 100,
			"photos/2026/beach.jpg [>                        ]   0%        0 B/10.0 MiB          --/s  ETA --    "},
		{name, 5 << 20, 10 << 20, 2 * time.Second, 100,
			"photos/2026/beach.jpg [============>            ]  50%    5.0 MiB/10.0 MiB     2.5 MiB/s  ETA 2s    "},
		{name, 10 << 20, 10 << 20, 4 * time.Second, 100,
			"photos/2026/beach.jpg [=========================] 100%   10.0 MiB/10.0 MiB     2.5 MiB/s  ETA 0s    "},
		// A long wait: minutes and hours.
		{name, 1 << 20, 100 << 20, 10 * time.Second, 100,
			"photos/2026/beach.jpg [>                       ]   1%    1.0 MiB/100.0 MiB   102.4 KiB/s  ETA 16m30s"},
		// Narrower: the bar shrinks to its least, then the name is
		// shortened from the left, then both go.
		{name, 5 << 20, 10 << 20, 2 * time.Second, 80,
			"…/2026/beach.jpg [=====>    ]  50%    5.0 MiB/10.0 MiB     2.5 MiB/s  ETA 2s    "},
		{name, 5 << 20, 10 << 20, 2 * time.Second, 66,
			"…2026/beach.jpg  50%    5.0 MiB/10.0 MiB     2.5 MiB/s  ETA 2s    "},
		{name, 5 << 20, 10 << 20, 2 * time.Second, 40,
			" 50%    5.0 MiB/10.0 MiB     2.5 MiB/s"},
		// The bar never overflows, even if more came than announced.
		{"a", 20, 10, time.Second, 70,
			"a [===================] 100%       20 B/10 B        20 B/s  ETA 0s    "},
		{"empty", 0, 0, 0, 70,
			"empty [================] 100%        0 B/0 B          --/s  ETA 0s    "},
		// Unknown size: no bar, percent or ETA.
		{"stdin", 3 << 20, -1, time.Second, 80, "stdin   3.0 MiB     3.0 MiB/s"},
	}
	for _, tt := range tests {
		got := progressLine(tt.name, tt.done, tt.total, tt.elapsed, tt.width)
		if got != tt.want {
			t.Errorf("progressLine(%q, %d, %d, %v, %d) =\n%q, want\n%q", tt.name, tt.done, tt.total, tt.elapsed, tt.width, got, tt.want)
		}
		if n := utf8.RuneCountInString(got); n > tt.width {
			t.Errorf("progressLine(..., %d) is %d wide", tt.width, n)
		}
	}
}

func TestMeter(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	var out strings.Builder
	t.Setenv("COLUMNS", "81")
	m := newMeter(&out, "f", 1000, true, clock)
	if !strings.HasPrefix(out.String(), "\rf [>") || !strings.Contains(out.String(), "  0%") {
		t.Errorf("a new meter draws %q, want the empty bar", out.String())
	}
	out.Reset()
	m.Write(make([]byte, 100))
	if out.Len() != 0 {
		t.Errorf("a write right away redrew: %q", out.String())
	}
	now = now.Add(redrawEvery)
	m.Write(make([]byte, 400))
	if !strings.Contains(out.String(), " 50%") {
		t.Errorf("a write after %v drew %q, want 50%%", redrawEvery, out.String())
	}
	out.Reset()
	now = now.Add(time.Second)
	m.Write(make([]byte, 500))
	n, elapsed := m.finish()
	if n != 1000 || elapsed != time.Second+redrawEvery {
		t.Errorf("finish = %d, %v; want 1000, %v", n, elapsed, time.Second+redrawEvery)
	}
	if !strings.Contains(out.String(), "100%") || !strings.HasSuffix(out.String(), "\r"+strings.Repeat(" ", 80)+"\r") {
		t.Errorf("finish drew %q, want 100%% then a cleared line", out.String())
	}

	// A meter that does not draw only counts.
	out.Reset()
	m = newMeter(&out, "f", 10, false, clock)
	m.Write(make([]byte, 10))
	if n, _ := m.finish(); n != 10 || out.Len() != 0 {
		t.Errorf("a silent meter counted %d and drew %q", n, out.String())
	}
}

func TestDevNullIsNoTerminal(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Fatal("/dev/null taken for a terminal")
	}
}
