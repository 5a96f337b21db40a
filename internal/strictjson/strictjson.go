// Package strictjson decodes JSON the way the project's APIs and wire
// formats take it: one value, no field its target lacks, and nothing
// after it but white space. encoding/json's Decoder alone takes the
// first value of a stream and ignores the rest, and its More lets a
// stray ']' or '}' through.
package strictjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

var (
	// ErrTrailing: something other than white space follows the value.
	ErrTrailing = errors.New("data after the JSON value")
	// ErrNotObject: Object's value is not a JSON object (null, say).
	ErrNotObject = errors.New("the JSON value is not an object")
)

// Decode reads one JSON value from r into v, refusing fields v does not
// have, keys that name a field only when case is ignored or that one
// object gives twice (Keys), and anything but white space after the
// value.
func Decode(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	if err := End(dec); err != nil {
		return err
	}
	if err := Keys(raw, v); err != nil {
		return err
	}
	dec = json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// Unmarshal is Decode of data.
func Unmarshal(data []byte, v any) error { return Decode(bytes.NewReader(data), v) }

// Object is Decode of a value that must be a JSON object: null, which
// Decode takes into a struct as a no-op, an array or a scalar is
// ErrNotObject.
func Object(r io.Reader, v any) error {
	br := bufio.NewReader(r)
	for {
		c, err := br.ReadByte()
		if err != nil {
			return err // io.EOF for an empty body
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		if c != '{' {
			return ErrNotObject
		}
		if err := br.UnreadByte(); err != nil {
			return err
		}
		return Decode(br, v)
	}
}

// End reports whether dec has nothing left but white space: ErrTrailing
// otherwise, or the error reading the rest (such as an
// http.MaxBytesError for white space past a body's limit).
func End(dec *json.Decoder) error {
	_, err := dec.Token()
	var syn *json.SyntaxError
	switch {
	case err == io.EOF:
		return nil
	case err == nil, errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF):
		return ErrTrailing
	}
	return err
}
