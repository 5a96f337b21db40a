package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"text/tabwriter"
)

func TestTrimEnds(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"nothing", nil, ""},
		{"no blanks", []string{"a\nb\n"}, "a\nb\n"},
		{"trailing blanks", []string{"a  \nb \n"}, "a\nb\n"},
		{"inner blanks kept", []string{"a  b\n"}, "a  b\n"},
		{"leading blanks kept", []string{"  a\n"}, "  a\n"},
		{"blank line", []string{"   \n"}, "\n"},
		{"blanks across writes", []string{"a ", " ", "b", "  ", "\n"}, "a  b\n"},
		{"trailing across writes", []string{"a", "  ", " ", "\n", "c"}, "a\nc"},
		{"unfinished line", []string{"a   "}, "a"},
		{"tabs kept", []string{"a\t\n"}, "a\t\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w := &trimEnds{w: &out}
			for _, s := range tt.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if out.String() != tt.want {
				t.Errorf("got %q, want %q", out.String(), tt.want)
			}
		})
	}
}

func TestTableHasNoTrailingBlanks(t *testing.T) {
	for name, mk := range map[string]func(io.Writer) *tabwriter.Writer{"left": table, "right": tableRight} {
		var out bytes.Buffer
		tw := mk(&out)
		fmt.Fprintf(tw, "NAME\tSIZE\tNOTE\t\n")
		fmt.Fprintf(tw, "a\t1\tshort\t\n")
		fmt.Fprintf(tw, "longer name\t12345\ta much longer note\t\n")
		if err := tw.Flush(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("%s: %d lines, want 3:\n%s", name, len(lines), out.String())
		}
		for _, l := range lines {
			if strings.HasSuffix(l, " ") {
				t.Errorf("%s: line %q ends in a blank", name, l)
			}
		}
		// The columns still line up: the second column starts at one offset.
		if i, j := strings.Index(lines[1], "1"), strings.Index(lines[2], "12345"); name == "left" && i != j {
			t.Errorf("%s: columns do not line up:\n%s", name, out.String())
		}
	}
}
