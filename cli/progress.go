package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// humanBytes renders n bytes with binary units: "512 B", "1.5 KiB",
// "20.0 MiB".
func humanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, unit := float64(n), 0
	for v >= 1024 && unit < 6 {
		v /= 1024
		unit++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[unit-1])
}

// shortDuration renders d for people, to the second: "3s", "1m05s",
// "2h03m".
func shortDuration(d time.Duration) string {
	s := int64((d + time.Second/2) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
}

// tookDuration renders how long a transfer took: "85ms", "2.4s", "1m05s".
func tookDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "<1ms"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return shortDuration(d)
}

// rate is the average speed of n bytes over elapsed, in bytes per second;
// 0 when no time has passed.
func rate(n int64, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(n) / elapsed.Seconds()
}

// progressLine renders a transfer's progress in at most width columns:
//
//	beach.jpg [=========>          ]  45%  4.5 MiB/10.0 MiB  2.1 MiB/s  ETA 3s
//
// total < 0 means the size is unknown: the line then shows only the bytes
// so far and the rate. The name is shortened from the left (keeping the
// file's own name, the end of a path, visible), then the bar and then the
// name are dropped when width is too small for them.
func progressLine(name string, done, total int64, elapsed time.Duration, width int) string {
	r := rate(done, elapsed)
	speed := "--/s"
	if r > 0 {
		speed = humanBytes(int64(r)) + "/s"
	}
	var stats string
	frac := -1.0
	if total >= 0 {
		frac = 1
		if total > 0 {
			frac = min(float64(done)/float64(total), 1)
		}
		eta := "--"
		switch {
		case done >= total:
			eta = "0s"
		case r > 0:
			eta = shortDuration(time.Duration(float64(total-done) / r * float64(time.Second)))
		}
		// Fixed widths keep the bar from jumping as the figures grow.
		stats = fmt.Sprintf("%3d%%  %9s/%s  %12s  ETA %-6s", int(frac*100), humanBytes(done), humanBytes(total), speed, eta)
	} else {
		stats = fmt.Sprintf("%9s  %12s", humanBytes(done), speed)
	}
	const minBar, maxBar, minName = 10, 40, 8
	avail := width - utf8.RuneCountInString(stats) - 1 // for the name and the bar, each with a space after it
	if avail < minName {
		return strings.TrimRight(truncateRunes(stats, width), " ")
	}
	nameW := min(utf8.RuneCountInString(name), avail)
	bar := ""
	if frac >= 0 {
		// The bar takes what the name leaves, and may shorten a long name
		// to keep minBar cells.
		const frame = 3 // "[", "]" and a space
		if avail-nameW-frame < minBar && avail-frame-minBar >= minName {
			nameW = avail - frame - minBar
		}
		if n := avail - nameW - frame; n >= minBar {
			bar = drawBar(frac, min(n, maxBar)) + " "
		}
	}
	return shortenLeft(name, nameW) + " " + bar + stats
}

// drawBar draws a bar of n cells (plus its brackets) filled to frac.
func drawBar(frac float64, n int) string {
	full := int(frac * float64(n))
	if full >= n {
		return "[" + strings.Repeat("=", n) + "]"
	}
	return "[" + strings.Repeat("=", full) + ">" + strings.Repeat(" ", n-full-1) + "]"
}

// shortenLeft fits s in n runes, replacing its beginning with "…".
func shortenLeft(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return "…" + string(rs[len(rs)-n+1:])
}

func truncateRunes(s string, n int) string {
	rs := []rune(s)
	if n < 0 {
		n = 0
	}
	if len(rs) <= n {
		return s
	}
	return string(rs[:n])
}

// isTerminal reports whether w is a terminal, where a progress bar
// redrawn in place makes sense: a character device that answers terminal
// ioctls (so not /dev/null).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0 && isTTY(f)
}

// terminalWidth is $COLUMNS, or 80: reading the real width would need a
// system call per platform, and a bar a little narrower than the window
// does no harm.
func terminalWidth() int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 20 {
		return n
	}
	return 80
}

// meter counts the bytes of one transfer (as an io.Writer fed a copy of
// them) and, if draw is set, redraws a progress line on w at most every
// redrawEvery. The copy may run on another goroutine (net/http reads an
// upload's body on its own), hence the mutex.
type meter struct {
	w     io.Writer
	name  string
	total int64
	draw  bool
	width int
	now   func() time.Time
	start time.Time

	mu    sync.Mutex
	done  int64
	drawn time.Time // when the line was last drawn; zero before the first
}

const redrawEvery = 100 * time.Millisecond

func newMeter(w io.Writer, name string, total int64, draw bool, now func() time.Time) *meter {
	m := &meter{w: w, name: name, total: total, draw: draw, width: terminalWidth() - 1, now: now, start: now()}
	if draw {
		m.redrawLocked(m.start)
	}
	return m
}

// Write counts p.
func (m *meter) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done += int64(len(p))
	if m.draw {
		if now := m.now(); now.Sub(m.drawn) >= redrawEvery {
			m.redrawLocked(now)
		}
	}
	return len(p), nil
}

func (m *meter) redrawLocked(now time.Time) {
	m.drawn = now
	line := progressLine(m.name, m.done, m.total, now.Sub(m.start), m.width)
	fmt.Fprintf(m.w, "\r%-*s", m.width, line)
}

// finish draws the final state, clears the line for what comes next, and
// returns the bytes counted and the time taken.
func (m *meter) finish() (int64, time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if m.draw {
		m.redrawLocked(now)
		fmt.Fprintf(m.w, "\r%*s\r", m.width, "")
	}
	return m.done, now.Sub(m.start)
}
