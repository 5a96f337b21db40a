package strictjson_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/strictjson"
)

type inner struct {
	Port int `json:"port"`
}

type Embedded struct {
	Zone string `json:"zone"`
}

type outer struct {
	Embedded
	IsPublic bool              `json:"is_public"`
	Name     string            // no tag: the Go name, exactly
	In       inner             `json:"in"`
	List     []inner           `json:"list"`
	Ptr      *inner            `json:"ptr"`
	Tags     map[string]string `json:"tags"`
	When     time.Time         `json:"when"` // decodes itself
	Any      any               `json:"any"`
	Skip     int               `json:"-"`
}

func TestKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want error
		says string // part of the error's text
	}{
		{in: `{"is_public":true,"Name":"a","zone":"z","in":{"port":1},"list":[{"port":2}],"ptr":{"port":3},"tags":{"A":"1","a":"2"},"when":"2026-12-07T00:00:00Z","any":{"X":1,"x":2}}`},
		{in: `{"IS_PUBLIC":true}`, want: strictjson.ErrKeyCase, says: `unknown field "IS_PUBLIC", did you mean "is_public"?`},
		{in: `{"name":"a"}`, want: strictjson.ErrKeyCase, says: `did you mean "Name"?`},
		{in: `{"Zone":"z"}`, want: strictjson.ErrKeyCase, says: `"Zone"`},
		{in: `{"in":{"Port":1}}`, want: strictjson.ErrKeyCase, says: `"Port" in in`},
		{in: `{"list":[{"port":1},{"PORT":1}]}`, want: strictjson.ErrKeyCase, says: `in list[1]`},
		{in: `{"ptr":{"Port":1}}`, want: strictjson.ErrKeyCase},
		{in: `{"is_public":false,"is_public":true}`, want: strictjson.ErrDuplicateKey, says: `"is_public"`},
		{in: `{"tags":{"a":"1","a":"2"}}`, want: strictjson.ErrDuplicateKey, says: `"a" in tags`},
		{in: `{"any":[{"k":1,"k":2}]}`, want: strictjson.ErrDuplicateKey, says: `in any[0]`},
		// Keys naming no field are DisallowUnknownFields' to refuse.
		{in: `{"other":1}`},
		{in: `{"Skip":1}`},
	} {
		var v outer
		err := strictjson.Keys([]byte(tc.in), &v)
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("Keys(%s) = %v, want nil", tc.in, err)
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("Keys(%s) = %v, want %v", tc.in, err, tc.want)
		case err != nil && !strings.Contains(err.Error(), tc.says):
			t.Errorf("Keys(%s) = %q, want it to say %q", tc.in, err, tc.says)
		}
	}
}

// Decode refuses what Keys refuses before anything is set.
func TestDecodeRefusesCaseAndDuplicates(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"A":1}`, `{"a":1,"a":2}`, `{"b":1,"a":2,"a":3}`} {
		v := target{A: 7}
		if err := strictjson.Unmarshal([]byte(in), &v); err == nil || v.A != 7 {
			t.Errorf("Unmarshal(%s) = %v, value %d; want an error and the value untouched", in, err, v.A)
		}
	}
}

// A body within its limit but for white space past it is over the
// limit, not "data after the value": the read error comes through.
func TestEndPassesReadErrors(t *testing.T) {
	t.Parallel()
	body := `{"a":1}` + strings.Repeat(" ", 64)
	rec := httptest.NewRecorder()
	r := http.MaxBytesReader(rec, io.NopCloser(strings.NewReader(body)), 16)
	var v target
	err := strictjson.Decode(r, &v)
	var mbe *http.MaxBytesError
	if !errors.As(err, &mbe) {
		t.Fatalf("Decode = %v, want an http.MaxBytesError", err)
	}
	for _, in := range []string{`{"a":1} "open`, `{"a":1} {`} {
		if err := strictjson.Unmarshal([]byte(in), &v); !errors.Is(err, strictjson.ErrTrailing) {
			t.Errorf("Unmarshal(%s) = %v, want ErrTrailing", in, err)
		}
	}
}
