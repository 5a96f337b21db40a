package strictjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
)

// Explain rewrites encoding/json's errors, which name Go types
// ("cannot unmarshal string into Go struct field Request.vcpus of type
// int64"), in the body's own terms: the JSON field, the JSON value it
// wants and the one it got ("vcpus: want a number, got a string"), for
// the people who wrote the body. Other errors (strictjson's, a
// field's own parser's) already speak JSON and are returned as they are.
func Explain(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF):
		return errors.New("empty body: want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("truncated JSON: the body ends inside a value")
	case errors.As(err, &syn):
		return fmt.Errorf("malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		msg := fmt.Sprintf("want %s, got %s", want(typ.Type, typ.Value), got(typ.Value))
		if typ.Field == "" {
			return errors.New(msg)
		}
		return fmt.Errorf("%s: %s", typ.Field, msg)
	}
	return err
}

// want says what JSON value decodes into t, when got (an
// UnmarshalTypeError's Value: "string", "number", "number 1.5", ...) did
// not.
func want(t reflect.Type, got string) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "another JSON value"
	}
	if t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return "a string" // hashes, addresses, signatures, amounts
	}
	// A number that does not fit (1.5 or 1e30 for an integer, -1 for an
	// unsigned one) is told the range it must be in.
	number := strings.HasPrefix(got, "number")
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if number {
			bits := t.Bits()
			return fmt.Sprintf("an integer from %d to %d", int64(-1)<<(bits-1), ^(int64(-1) << (bits - 1)))
		}
		return "a number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if number {
			return fmt.Sprintf("an integer from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
		}
		return "a number"
	case reflect.Float32, reflect.Float64:
		if number {
			return "a number in range"
		}
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "a JSON object"
	}
	return "another JSON value"
}

// got says what an UnmarshalTypeError's Value was: "a string",
// "an array", or a number as written ("1.5").
func got(value string) string {
	if n, ok := strings.CutPrefix(value, "number "); ok {
		return n
	}
	switch value {
	case "array", "object":
		return "an " + value
	case "bool":
		return "true or false"
	}
	return "a " + value
}
