package cloudapi_test

// End-to-end tests of the ZIP download: what the archive holds, and every
// refusal, which comes before any byte of an archive.

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func (a *objAPI) zip(apiKey, bucket, body string) response {
	a.t.Helper()
	return a.do("POST", "/api/storage/buckets/"+bucket+"/download-zip", apiKey, body)
}

func TestDownloadZip(t *testing.T) {
	a := newObjAPI(t)
	text := []byte(strings.Repeat("compressible text ", 1000))
	bin := randomBody(100 << 10) // a body file, not inline
	wantObjects(t, "text", a.uploadRaw(a.acme, "pics", "docs/a.txt", "text/plain; charset=utf-8", text))
	a.clock.Advance(time.Minute)
	a.put("img/b.bin", bin)
	wantObject(t, "folder", a.do("POST", "/api/storage/buckets/pics/folders", a.acme, `{"path":"empty"}`), http.StatusCreated)

	r := a.zip(a.acme, "pics", `{"keys":["img/b.bin","docs/a.txt","empty/"]}`)
	if r.status != http.StatusOK {
		t.Fatalf("zip: status %d (body %s)", r.status, r.body)
	}
	if got := r.header.Get("Content-Type"); got != "application/zip" {
		t.Errorf("Content-Type = %q, want application/zip", got)
	}
	if got, want := r.header.Get("Content-Disposition"), `attachment; filename="pics.zip"`; got != want {
		t.Errorf("Content-Disposition = %q, want %q", got, want)
	}
	zr, err := zip.NewReader(bytes.NewReader(r.body), int64(len(r.body)))
	if err != nil {
		t.Fatalf("not a ZIP archive: %v", err)
	}
	want := []struct {
		name   string
		method uint16
		body   []byte
		mod    time.Time
	}{
		{"img/b.bin", zip.Store, bin, t0.Add(time.Minute)},
		{"docs/a.txt", zip.Deflate, text, t0},
		{"empty/", zip.Store, nil, t0.Add(time.Minute)},
	}
	if len(zr.File) != len(want) {
		t.Fatalf("%d entries, want %d", len(zr.File), len(want))
	}
	for i, f := range zr.File {
		w := want[i]
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("open %s: %v", f.Name, err)
		}
		got, err := io.ReadAll(rc) // checks the CRC too
		rc.Close()
		if err != nil {
			t.Fatalf("read %s: %v", f.Name, err)
		}
		if f.Name != w.name || f.Method != w.method || !bytes.Equal(got, w.body) || !f.Modified.Equal(w.mod.Truncate(time.Second)) {
			t.Errorf("entry %d: %s method %d, %d bytes, modified %v; want %s method %d, %d bytes, modified %v",
				i, f.Name, f.Method, len(got), f.Modified, w.name, w.method, len(w.body), w.mod)
		}
	}
	if zr.File[1].CompressedSize64 >= uint64(len(text)/10) {
		t.Errorf("text compressed to %d of %d bytes", zr.File[1].CompressedSize64, len(text))
	}
}

func TestDownloadZipLimits(t *testing.T) {
	a := newObjAPI(t)
	var keys []string
	for i := range 101 {
		k := fmt.Sprintf("k%03d", i)
		a.put(k, []byte(k))
		keys = append(keys, `"`+k+`"`)
	}
	r := a.zip(a.acme, "pics", `{"keys":[`+strings.Join(keys[:100], ",")+`]}`)
	if r.status != http.StatusOK {
		t.Fatalf("100 keys: status %d (body %s)", r.status, r.body)
	}
	zr, err := zip.NewReader(bytes.NewReader(r.body), int64(len(r.body)))
	if err != nil || len(zr.File) != 100 {
		t.Fatalf("100 keys: %v, %d entries", err, len(zr.File))
	}
	wantError(t, "101 keys", a.zip(a.acme, "pics", `{"keys":[`+strings.Join(keys, ",")+`]}`), http.StatusBadRequest, "validation_error")
}

func TestDownloadZipErrors(t *testing.T) {
	a := newObjAPI(t)
	a.put("a", []byte("A"))
	a.put(`back\slash`, []byte("B"))
	other, _ := a.newKey("other")
	tests := []struct {
		name, key, bucket, body string
		status                  int
		code                    string
	}{
		{"no API key", "", "pics", `{"keys":["a"]}`, 401, "unauthorized"},
		{"another account's bucket", other, "pics", `{"keys":["a"]}`, 404, "not_found"},
		{"missing bucket", a.acme, "nope", `{"keys":["a"]}`, 404, "not_found"},
		{"missing key", a.acme, "pics", `{"keys":["a","nope"]}`, 404, "not_found"},
		{"no keys", a.acme, "pics", `{"keys":[]}`, 400, "validation_error"},
		{"keys absent", a.acme, "pics", `{}`, 400, "validation_error"},
		{"keys not an array", a.acme, "pics", `{"keys":"a"}`, 400, "validation_error"},
		{"a key twice", a.acme, "pics", `{"keys":["a","a"]}`, 400, "validation_error"},
		{"empty key", a.acme, "pics", `{"keys":[""]}`, 400, "validation_error"},
		{"key with ..", a.acme, "pics", `{"keys":["../a"]}`, 400, "validation_error"},
		{"key with a leading slash", a.acme, "pics", `{"keys":["/a"]}`, 400, "validation_error"},
		{"key with a backslash", a.acme, "pics", `{"keys":["back\\slash"]}`, 400, "validation_error"},
		{"drive letter", a.acme, "pics", `{"keys":["C:/Windows/evil.dll"]}`, 400, "validation_error"},
		{"drive-relative", a.acme, "pics", `{"keys":["C:evil.txt"]}`, 400, "validation_error"},
		{"device name", a.acme, "pics", `{"keys":["dir/con.txt"]}`, 400, "validation_error"},
		{"device name COM1", a.acme, "pics", `{"keys":["COM1"]}`, 400, "validation_error"},
		{"unknown field", a.acme, "pics", `{"keys":["a"],"name":"x"}`, 400, "validation_error"},
		{"not JSON", a.acme, "pics", `keys=a`, 400, "validation_error"},
	}
	for _, tt := range tests {
		wantError(t, tt.name, a.zip(tt.key, tt.bucket, tt.body), tt.status, tt.code)
	}
	if r := a.zip(a.acme, "pics", `{"keys":["a","nope"]}`); !strings.Contains(string(r.body), `object \"nope\" not found`) {
		t.Errorf("missing key: message %s does not name it", r.body)
	}
}
