package strictjson_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/latticenet/lattice/internal/strictjson"
)

type explained struct {
	Count  int32    `json:"count"`
	Size   uint8    `json:"size"`
	Name   string   `json:"name"`
	On     bool     `json:"on"`
	List   []string `json:"list"`
	Nested struct {
		Port uint16 `json:"port"`
	} `json:"nested"`
}

func TestExplain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{``, "empty body: want a JSON object"},
		{`{"count":`, "truncated JSON"},
		{`{"count" 1}`, "malformed JSON at byte"},
		{`[1]`, "want a JSON object, got an array"},
		{`"x"`, "want a JSON object, got a string"},
		{`{"count":"1"}`, "count: want a number, got a string"},
		{`{"count":1.5}`, "count: want an integer from -2147483648 to 2147483647, got 1.5"},
		{`{"size":-1}`, "size: want an integer from 0 to 255, got -1"},
		{`{"name":5}`, "name: want a string, got a number"},
		{`{"on":"yes"}`, "on: want true or false, got a string"},
		{`{"list":{}}`, "list: want an array, got an object"},
		{`{"nested":{"port":true}}`, "nested.port: want a number, got true or false"},
	} {
		var v explained
		err := strictjson.Explain(strictjson.Unmarshal([]byte(tc.in), &v))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Explain(Unmarshal(%s)) = %v, want it to say %q", tc.in, err, tc.want)
		}
		for _, goish := range []string{"Go ", "struct", "of type", "int32", "uint"} {
			if err != nil && strings.Contains(err.Error(), goish) {
				t.Errorf("Explain(Unmarshal(%s)) = %q names a Go type", tc.in, err)
			}
		}
	}
	// Other errors pass as they are.
	other := errors.New("a field's own parser's words")
	if got := strictjson.Explain(other); got != other {
		t.Errorf("Explain(other) = %v", got)
	}
	if strictjson.Explain(nil) != nil {
		t.Error("Explain(nil) is not nil")
	}
}
