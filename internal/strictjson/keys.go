package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

var (
	// ErrDuplicateKey: one object names a key twice. encoding/json keeps
	// the last, so a proxy or schema validator that reads the first sees
	// another request than the server acts on.
	ErrDuplicateKey = errors.New("a key given twice in one object")
	// ErrKeyCase: a key names a field only when case is ignored.
	// encoding/json takes "IS_PUBLIC" for "is_public"; the APIs' field
	// names are exact.
	ErrKeyCase = errors.New("field names are case-sensitive")
)

// Keys checks what encoding/json lets through in data, a JSON value
// meant for v: a key given twice in one object, at any depth, and a key
// that names a field of a struct only when case is ignored (an error
// that names the field as written and as it is spelt). Keys that name
// no field at all are left to DisallowUnknownFields. Values whose type
// decodes itself (json.Unmarshaler, encoding.TextUnmarshaler) or that
// v does not describe (v nil, an interface) are checked for duplicate
// keys alone. Its time is linear in len(data), whatever the nesting.
func Keys(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	w := walker{dec: dec}
	return w.walk(reflect.TypeOf(v))
}

// walker walks one JSON value. path holds the keys (string) and indexes
// (int) down to the value being read, formatted only for an error: a
// path built for every value would cost the square of the nesting.
type walker struct {
	dec  *json.Decoder
	path []any
}

func (w *walker) where() string {
	if len(w.path) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(" in ")
	for i, p := range w.path {
		switch p := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", p)
		case string:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		}
	}
	return b.String()
}

var (
	unmarshaler     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// target follows t through pointers; nil when t decodes itself or is
// nil (the value is then checked for duplicate keys alone).
func target(t reflect.Type) reflect.Type {
	for t != nil {
		if t.Implements(unmarshaler) || reflect.PointerTo(t).Implements(unmarshaler) ||
			t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
			return nil
		}
		if t.Kind() != reflect.Pointer {
			return t
		}
		t = t.Elem()
	}
	return nil
}

// walk reads one value, checking its objects' keys against t.
func (w *walker) walk(t reflect.Type) error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	t = target(t)
	switch tok {
	case json.Delim('{'):
		var fields map[string]reflect.Type
		var elem reflect.Type
		if t != nil {
			switch t.Kind() {
			case reflect.Struct:
				fields = fieldsOf(t)
			case reflect.Map:
				elem = t.Elem()
			}
		}
		seen := make(map[string]bool)
		for w.dec.More() {
			tok, err := w.dec.Token()
			if err != nil {
				return err
			}
			key, _ := tok.(string)
			if seen[key] {
				return fmt.Errorf("%w: %q%s", ErrDuplicateKey, key, w.where())
			}
			seen[key] = true
			next := elem
			if fields != nil {
				ft, ok := fields[key]
				if !ok {
					for name := range fields {
						if strings.EqualFold(name, key) {
							return fmt.Errorf("%w: unknown field %q%s, did you mean %q?", ErrKeyCase, key, w.where(), name)
						}
					}
				}
				next = ft
			}
			w.path = append(w.path, key)
			if err := w.walk(next); err != nil {
				return err
			}
			w.path = w.path[:len(w.path)-1]
		}
		_, err := w.dec.Token() // '}'
		return err
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; w.dec.More(); i++ {
			w.path = append(w.path, i)
			if err := w.walk(elem); err != nil {
				return err
			}
			w.path = w.path[:len(w.path)-1]
		}
		_, err := w.dec.Token() // ']'
		return err
	}
	return nil
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// fieldsOf maps the JSON names of struct t's fields to their types, as
// encoding/json names and picks them: tags, the fields of embedded
// structs promoted, and of the fields that share a name the shallowest,
// or the tagged one among several as shallow; a name that stays
// ambiguous names no field.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	type field struct {
		typ    reflect.Type
		depth  int
		tagged bool
	}
	byName := map[string][]field{}
	visited := map[reflect.Type]bool{}
	level := []reflect.Type{t}
	for depth := 0; len(level) > 0; depth++ {
		var next []reflect.Type
		for _, st := range level {
			if visited[st] {
				continue
			}
			visited[st] = true
			for f := range st.Fields() {
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				ft := f.Type
				if f.Anonymous && name == "" {
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if ft.Kind() == reflect.Struct {
						next = append(next, ft)
						continue
					}
				}
				if !f.IsExported() {
					continue
				}
				tagged := name != ""
				if !tagged {
					name = f.Name
				}
				byName[name] = append(byName[name], field{f.Type, depth, tagged})
			}
		}
		level = next
	}
	m := make(map[string]reflect.Type, len(byName))
	for name, fs := range byName {
		var top []field
		for _, f := range fs {
			switch {
			case len(top) == 0 || f.depth < top[0].depth:
				top = []field{f}
			case f.depth == top[0].depth:
				top = append(top, f)
			}
		}
		var tagged []field
		for _, f := range top {
			if f.tagged {
				tagged = append(tagged, f)
			}
		}
		switch {
		case len(top) == 1:
			m[name] = top[0].typ
		case len(tagged) == 1:
			m[name] = tagged[0].typ
		}
	}
	fieldCache.Store(t, m)
	return m
}
