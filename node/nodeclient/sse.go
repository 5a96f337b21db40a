package nodeclient

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

var bom = []byte("\uFEFF")

// Limits of one event: a chat message's data is under 30 KiB; these leave
// room and bound what a misbehaving server can make a client hold.
const (
	maxSSELine = 1 << 20 // bytes in one line
	maxSSEData = 1 << 20 // bytes of data in one event
)

// sseEvent is one dispatched Server-Sent Event.
type sseEvent struct {
	id   string // the last event ID, as of this event
	typ  string // the event type; "message" when the event named none
	data []byte // the data lines joined by "\n"
}

// sseParser reads Server-Sent Events as the WHATWG HTML standard's
// "Interpreting an event stream" says: lines end with CRLF, LF or CR; a
// leading byte order mark is dropped; a line starting with ':' is a
// comment; a field's value follows its first ':' without one leading
// space; data lines are joined with "\n"; a blank line dispatches the
// event, unless it has no data; an id with a NUL is ignored, and the last
// event ID carries over to later events; retry and unknown fields are
// ignored; an event cut off by the end of the stream is dropped.
type sseParser struct {
	r       *bufio.Reader
	line    []byte
	skipLF  bool // the last line ended with CR: a LF next is part of it
	started bool // the byte order mark was checked

	lastID  string
	typ     string
	data    []byte
	hasData bool
}

func newSSEParser(r io.Reader) *sseParser {
	return &sseParser{r: bufio.NewReaderSize(r, 32<<10)}
}

// next returns the next event. At the end of the stream it returns io.EOF
// (io.ErrUnexpectedEOF when it cut an event or a line short), and the
// reader's error when reading fails.
func (p *sseParser) next() (sseEvent, error) {
	for {
		line, err := p.readLine()
		if err != nil {
			if err == io.EOF && (len(p.line) > 0 || p.hasData || p.typ != "") {
				err = io.ErrUnexpectedEOF
			}
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if ev, ok := p.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue // a comment, such as a heartbeat
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			p.typ = utf8String(value)
		case "data":
			if len(p.data)+len(value)+1 > maxSSEData {
				return sseEvent{}, fmt.Errorf("nodeclient: event stream: an event's data exceeds %d bytes", maxSSEData)
			}
			if p.hasData {
				p.data = append(p.data, '\n')
			}
			p.data = append(p.data, value...)
			p.hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				p.lastID = utf8String(value)
			}
		}
		// retry and unknown fields are ignored.
	}
}

// dispatch ends the event the lines so far made; ok is false when it has
// no data, which the standard does not dispatch.
func (p *sseParser) dispatch() (sseEvent, bool) {
	ev := sseEvent{id: p.lastID, typ: p.typ, data: p.data}
	ok := p.hasData
	p.typ, p.data, p.hasData = "", nil, false
	if ev.typ == "" {
		ev.typ = "message"
	}
	return ev, ok
}

// readLine returns the next line without its end. The slice is valid
// until the next call. A line the stream ends in before its end is left
// in p.line and io.EOF returned.
func (p *sseParser) readLine() ([]byte, error) {
	p.line = p.line[:0]
	for {
		if p.r.Buffered() == 0 {
			if _, err := p.r.Peek(1); err != nil {
				return nil, err
			}
		}
		chunk, _ := p.r.Peek(p.r.Buffered())
		if !p.started {
			// A byte order mark may open the stream. Waiting for three
			// bytes delays no event: one with data is longer.
			p.started = true
			if b, err := p.r.Peek(3); bytes.Equal(b, bom) {
				p.r.Discard(3)
				continue
			} else if err != nil && err != io.EOF {
				return nil, err
			}
			continue
		}
		if p.skipLF {
			p.skipLF = false
			if chunk[0] == '\n' {
				p.r.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(chunk, "\r\n")
		if i < 0 {
			if len(p.line)+len(chunk) > maxSSELine {
				return nil, fmt.Errorf("nodeclient: event stream: a line exceeds %d bytes", maxSSELine)
			}
			p.line = append(p.line, chunk...)
			p.r.Discard(len(chunk))
			continue
		}
		if len(p.line)+i > maxSSELine {
			return nil, fmt.Errorf("nodeclient: event stream: a line exceeds %d bytes", maxSSELine)
		}
		p.line = append(p.line, chunk[:i]...)
		p.skipLF = chunk[i] == '\r'
		p.r.Discard(i + 1)
		return p.line, nil
	}
}

// utf8String decodes b as the standard does, replacing invalid UTF-8 with
// U+FFFD.
func utf8String(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }
