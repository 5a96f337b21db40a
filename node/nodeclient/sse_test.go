package nodeclient

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// parseAll reads every event of in, and the error that ended the stream.
func parseAll(r io.Reader) ([]sseEvent, error) {
	p := newSSEParser(r)
	var out []sseEvent
	for {
		ev, err := p.next()
		if err != nil {
			return out, err
		}
		ev.data = bytes.Clone(ev.data)
		out = append(out, ev)
	}
}

// sameEvents compares events, data by its bytes (nil and empty are the
// same).
func sameEvents(a, b []sseEvent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].id != b[i].id || a[i].typ != b[i].typ || !bytes.Equal(a[i].data, b[i].data) {
			return false
		}
	}
	return true
}

func ev(id, typ, data string) sseEvent { return sseEvent{id: id, typ: typ, data: []byte(data)} }

func TestSSEParser(t *testing.T) {
	msg := `{"from":"aa","message":"hi: there"}`
	tests := []struct {
		name string
		in   string
		want []sseEvent
		end  error // what ends the stream: io.EOF, or io.ErrUnexpectedEOF within an event
	}{
		{"what the node sends", "retry: 1000\n\nid: 7\nevent: message\ndata: " + msg + "\n\n",
			[]sseEvent{ev("7", "message", msg)}, io.EOF},
		{"heartbeats and retry only", ": keep-alive\n\nretry: 1000\n\n: keep-alive\n\n", nil, io.EOF},
		{"empty stream", "", nil, io.EOF},
		{"data lines joined with LF", "data: a\ndata: b\ndata:\ndata: c\n\n", []sseEvent{ev("", "message", "a\nb\n\nc")}, io.EOF},
		{"CRLF", "id: 1\r\nevent: message\r\ndata: x\r\n\r\n", []sseEvent{ev("1", "message", "x")}, io.EOF},
		{"CR", "id: 1\revent: message\rdata: x\r\r", []sseEvent{ev("1", "message", "x")}, io.EOF},
		{"mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n", []sseEvent{ev("", "message", "a\nb\nc")}, io.EOF},
		{"CR CR is a blank line", "data: a\r\r\ndata: b\n\n", []sseEvent{ev("", "message", "a"), ev("", "message", "b")}, io.EOF},
		{"no space after the colon", "data:x\n\n", []sseEvent{ev("", "message", "x")}, io.EOF},
		{"only one space is dropped", "data:  x \n\n", []sseEvent{ev("", "message", " x ")}, io.EOF},
		{"colons in the value stay", "data: a:b: c\n\n", []sseEvent{ev("", "message", "a:b: c")}, io.EOF},
		{"a field without colon has an empty value", "data\n\n", []sseEvent{ev("", "message", "")}, io.EOF},
		{"an event without data is not dispatched", "id: 3\nevent: message\n\ndata: y\n\n", []sseEvent{ev("3", "message", "y")}, io.EOF},
		{"the event type resets after each event", "event: other\ndata: 1\n\ndata: 2\n\n",
			[]sseEvent{ev("", "other", "1"), ev("", "message", "2")}, io.EOF},
		{"the event type resets after an event without data", "event: other\n\ndata: 2\n\n", []sseEvent{ev("", "message", "2")}, io.EOF},
		{"the last event ID carries over", "id: 5\ndata: a\n\ndata: b\n\nid: 6\ndata: c\n\n",
			[]sseEvent{ev("5", "message", "a"), ev("5", "message", "b"), ev("6", "message", "c")}, io.EOF},
		{"an empty id clears it", "id: 5\ndata: a\n\nid\ndata: b\n\n", []sseEvent{ev("5", "message", "a"), ev("", "message", "b")}, io.EOF},
		{"an id with NUL is ignored", "id: 5\ndata: a\n\nid: 6\x007\ndata: b\n\n",
			[]sseEvent{ev("5", "message", "a"), ev("5", "message", "b")}, io.EOF},
		{"comments and unknown fields are ignored", ": hi\ndata: a\n: there\nfoo: bar\nretry: x\nDATA: no\ndata: b\n\n",
			[]sseEvent{ev("", "message", "a\nb")}, io.EOF},
		{"a field named with a space is unknown", "data : x\n\n", nil, io.EOF},
		{"a leading BOM is dropped", "\uFEFFdata: x\n\n", []sseEvent{ev("", "message", "x")}, io.EOF},
		{"a second BOM is not", "\uFEFF\uFEFFdata: x\n\ndata: y\n\n", []sseEvent{ev("", "message", "y")}, io.EOF},
		{"an event cut by the end is dropped", "data: a\n\ndata: b\n", []sseEvent{ev("", "message", "a")}, io.ErrUnexpectedEOF},
		{"a line cut by the end is dropped", "data: a\n\ndata: b", []sseEvent{ev("", "message", "a")}, io.ErrUnexpectedEOF},
		{"invalid UTF-8 in id and event", "id: \xff1\nevent: m\xffx\ndata: \xff\n\n", []sseEvent{ev("\uFFFD1", "m\uFFFDx", "\xff")}, io.EOF},
	}
	readers := map[string]func(string) io.Reader{
		"whole":       func(s string) io.Reader { return strings.NewReader(s) },
		"byte a read": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half a read": func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	}
	for _, tt := range tests {
		for rname, mk := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				got, err := parseAll(mk(tt.in))
				if !sameEvents(got, tt.want) {
					t.Errorf("events of %q:\n got %q\nwant %q", tt.in, got, tt.want)
				}
				if err != tt.end {
					t.Errorf("the stream %q ended with %v, want %v", tt.in, err, tt.end)
				}
			})
		}
	}
}

func TestSSEParserLimits(t *testing.T) {
	long := "data: " + strings.Repeat("x", maxSSELine) + "\n\n"
	if _, err := parseAll(strings.NewReader(long)); err == nil || !strings.Contains(err.Error(), "line exceeds") {
		t.Errorf("a line over %d bytes: %v, want an error", maxSSELine, err)
	}
	many := strings.Repeat("data: "+strings.Repeat("x", 1000)+"\n", maxSSEData/1000+1) + "\n"
	if _, err := parseAll(strings.NewReader(many)); err == nil || !strings.Contains(err.Error(), "data exceeds") {
		t.Errorf("an event's data over %d bytes: %v, want an error", maxSSEData, err)
	}
	// Just under: fine.
	ok := "data: " + strings.Repeat("x", maxSSELine-len("data: ")) + "\n\n"
	if evs, err := parseAll(strings.NewReader(ok)); err != io.EOF || len(evs) != 1 {
		t.Errorf("a line of %d bytes: %d events, %v; want one", maxSSELine, len(evs), err)
	}
}

func TestSSEParserReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom))
	evs, err := parseAll(r)
	if len(evs) != 1 || !errors.Is(err, boom) {
		t.Errorf("a failing reader: %q, %v; want one event, then its error", evs, err)
	}
}

// refParse is a second, plain reading of the standard over a whole
// stream, to check the parser against.
func refParse(in []byte) ([]sseEvent, error) {
	s := strings.TrimPrefix(string(in), "\uFEFF")
	var lines []string
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			break
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && strings.HasPrefix(s[i+1:], "\n") {
			i++
		}
		s = s[i+1:]
	}
	var out []sseEvent
	var id, typ, data string
	pending := false
	for _, l := range lines {
		if l == "" {
			if pending {
				t := typ
				if t == "" {
					t = "message"
				}
				out = append(out, sseEvent{id: id, typ: t, data: []byte(strings.TrimSuffix(data, "\n"))})
			}
			typ, data, pending = "", "", false
			continue
		}
		if l[0] == ':' {
			continue
		}
		field, value, found := strings.Cut(l, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "event":
			typ = strings.ToValidUTF8(value, "\uFFFD")
		case "data":
			data += value + "\n"
			pending = true
		case "id":
			if !strings.Contains(value, "\x00") {
				id = strings.ToValidUTF8(value, "\uFFFD")
			}
		}
	}
	end := io.EOF
	if s != "" || pending || typ != "" {
		end = io.ErrUnexpectedEOF
	}
	return out, end
}

func FuzzSSEParser(f *testing.F) {
	for _, s := range []string{
		"retry: 1000\n\nid: 1\nevent: message\ndata: {}\n\n: keep-alive\n\n",
		"data: a\r\ndata: b\r\rid: 2\ndata\n\n",
		"\uFEFFdata:x\n\nid: 1\x00\nevent\n\n",
		"data: a\r",
		"\xef\xbb",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want, wantEnd := refParse(in)
		for _, r := range []io.Reader{bytes.NewReader(in), iotest.OneByteReader(bytes.NewReader(in))} {
			got, end := parseAll(r)
			if !sameEvents(got, want) {
				t.Fatalf("events of %q:\n got %q\nwant %q", in, got, want)
			}
			if end != wantEnd {
				t.Fatalf("the stream %q ended with %v, want %v", in, end, wantEnd)
			}
		}
		// The client's reader of chat events never panics either, whatever
		// the data.
		s := &EventStream{ctx: t.Context(), body: io.NopCloser(nil), p: newSSEParser(bytes.NewReader(in))}
		for range len(in) + 1 {
			if _, err := s.Next(); err != nil && !errors.Is(err, ErrBadEvent) {
				break
			}
		}
	})
}
