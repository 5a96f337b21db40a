package cli

import (
	"io"
	"text/tabwriter"
)

// table aligns columns for a person to read. Its lines carry no trailing
// blanks: tabwriter pads every cell a tab ends, the last one included, and
// padding at the end of a line is noise in a terminal and a trap for a
// script that splits on it.
func table(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(&trimEnds{w: w}, 0, 4, 2, ' ', 0)
}

// tableRight is table with numbers' columns aligned to the right.
func tableRight(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(&trimEnds{w: w}, 0, 4, 2, ' ', tabwriter.AlignRight)
}

// trimEnds drops the blanks that end a line. It holds a run of blanks back
// until it sees what follows: a newline drops them, anything else writes
// them first.
type trimEnds struct {
	w       io.Writer
	pending int
	buf     []byte
}

func (t *trimEnds) Write(p []byte) (int, error) {
	t.buf = t.buf[:0]
	for _, c := range p {
		switch c {
		case ' ':
			t.pending++
			continue
		case '\n':
			t.pending = 0
		default:
			for ; t.pending > 0; t.pending-- {
				t.buf = append(t.buf, ' ')
			}
		}
		t.buf = append(t.buf, c)
	}
	if _, err := t.w.Write(t.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}
