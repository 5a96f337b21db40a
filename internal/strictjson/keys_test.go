package strictjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
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

// FuzzDecode: on any bytes, Keys and Unmarshal end without a panic, and
// what Unmarshal takes, encoding/json takes into the same value: the key
// checks only ever refuse.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"is_public":true,"Name":"a","zone":"z","in":{"port":1},"list":[{"port":2}],"ptr":{"port":3},"tags":{"A":"1","a":"2"},"when":"2026-12-07T00:00:00Z","any":[1,{"x":null}]}`,
		`{"a":1,"a":2}`, `{"IS_PUBLIC":true}`, `{"in":{"Port":1}}`, `{"list":[{"port":1},{"port":1,"port":2}]}`,
		`[]`, `null`, `{"tags":{"k":1,"k":2}}`, `{"any":{"k":[{"k":1,"k":2}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = strictjson.Keys(data, &outer{})
		var strict outer
		if strictjson.Unmarshal(data, &strict) != nil {
			return
		}
		var loose outer
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&loose); err != nil {
			t.Fatalf("strictjson took %q, encoding/json refuses it: %v", data, err)
		}
		if !reflect.DeepEqual(strict, loose) {
			t.Fatalf("%q: strictjson decoded %+v, encoding/json %+v", data, strict, loose)
		}
	})
}

type deep struct {
	X int `json:"x"`
}

type mid struct {
	deep
	X inner `json:"x"` // shallower than deep's x: it is the one
	Y int   `json:"y"`
}

type Tie1 struct {
	Z int
}

type Tie2 struct {
	Z string
}

type shadowed struct {
	mid
	Tie1
	Tie2 // Z is ambiguous: encoding/json drops it
}

// Keys picks a field as encoding/json does: the shallowest, the tagged
// one among several as shallow, none when that stays ambiguous.
func TestKeysFollowsShadowing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want error
	}{
		{in: `{"x":{"port":1},"y":2}`},
		{in: `{"x":{"Port":1}}`, want: strictjson.ErrKeyCase}, // x is mid's inner, not deep's int
		{in: `{"Z":1}`}, // no field: DisallowUnknownFields refuses it
	} {
		var v shadowed
		if err := strictjson.Keys([]byte(tc.in), &v); !errors.Is(err, tc.want) {
			t.Errorf("Keys(%s) = %v, want %v", tc.in, err, tc.want)
		}
	}
	var v shadowed
	if err := strictjson.Unmarshal([]byte(`{"Z":1}`), &v); err == nil {
		t.Errorf(`Unmarshal({"Z":1}) took an ambiguous field`)
	}
}

// The path to a value is formatted only for an error: a body nested as
// deep as encoding/json allows costs memory in proportion to its size,
// not to the square of its depth (a path built for every value made a
// 520 KB body cost seconds of CPU).
func TestKeysLinearInDepth(t *testing.T) {
	const depth = 9_990 // encoding/json refuses 10 000
	data := []byte(`{"any":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := strictjson.Keys(data, &outer{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// Quadratic paths took about 150 MB here; linear work takes well
	// under 10 MB.
	if n := after.TotalAlloc - before.TotalAlloc; n > 10<<20 {
		t.Errorf("Keys of a %d-deep nest allocated %d bytes", depth, n)
	}
	// The path still names where a refusal is.
	bad := []byte(`{"list":[{"port":1},` + `{"port":1,"port":2}]}`)
	if err := strictjson.Keys(bad, &outer{}); err == nil || !strings.Contains(err.Error(), `"port" in list[1]`) {
		t.Errorf("Keys(%s) = %v, want it to name list[1]", bad, err)
	}
}
