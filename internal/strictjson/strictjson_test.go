package strictjson_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/latticenet/lattice/internal/strictjson"
)

type target struct {
	A int `json:"a"`
}

func TestDecode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    error // nil: taken; errAny: some decoding error
		object  error // Object's answer, where it differs
		differs bool
	}{
		{in: `{"a":1}`},
		{in: " \n{\"a\":1}\t\n"},
		{in: `{"a":1}}`, want: strictjson.ErrTrailing},
		{in: `{"a":1}]`, want: strictjson.ErrTrailing},
		{in: `{"a":1} garbage`, want: strictjson.ErrTrailing},
		{in: `{"a":1}{"a":2}`, want: strictjson.ErrTrailing},
		{in: `{"a":1,"b":2}`, want: errAny},
		{in: `{"a":`, want: errAny},
		{in: ``, want: io.EOF},
		{in: `null`, object: strictjson.ErrNotObject, differs: true},
		{in: ` [1]`, want: errAny, object: strictjson.ErrNotObject, differs: true},
		{in: `7`, want: errAny, object: strictjson.ErrNotObject, differs: true},
	} {
		var v target
		check := func(name string, got, want error) {
			t.Helper()
			switch {
			case want == nil && got != nil, want != nil && got == nil,
				want != errAny && want != nil && !errors.Is(got, want):
				t.Errorf("%s(%q) = %v, want %v", name, tc.in, got, want)
			}
		}
		check("Unmarshal", strictjson.Unmarshal([]byte(tc.in), &v), tc.want)
		objWant := tc.want
		if tc.differs {
			objWant = tc.object
		}
		check("Object", strictjson.Object(strings.NewReader(tc.in), &v), objWant)
	}
}

var errAny = errors.New("any decoding error")
