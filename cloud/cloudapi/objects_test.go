package cloudapi_test

// End-to-end tests of the object endpoints over real HTTP: uploads (raw and
// multipart), downloads with ranges and conditional requests, listings
// with delimiters, pages and markers, deletes, copies, folders, and how
// objects show in buckets and usage.

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/cloudwire"
)

// objAPI is the API with acme's key and bucket "pics", and the blob
// directory the store writes bodies to.
type objAPI struct {
	*testAPI
	acme  string
	blobs string
}

func newObjAPI(t *testing.T, opts ...cloudapi.Options) *objAPI {
	t.Helper()
	var o cloudapi.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	a := newAPI(t, o)
	// newAPI does not say where its blob directory is: point the store at
	// one this test can see, before any object exists.
	blobs := filepath.Join(t.TempDir(), "objects")
	if err := a.st.OpenBlobs(blobs); err != nil {
		t.Fatal(err)
	}
	acme, _ := a.newKey("acme")
	if r := a.do("POST", "/api/storage/buckets", acme, `{"name":"pics"}`); r.status != http.StatusCreated {
		t.Fatalf("create bucket: %d %s", r.status, r.body)
	}
	return &objAPI{testAPI: a, acme: acme, blobs: blobs}
}

func md5hex(b []byte) string {
	h := md5.Sum(b)
	return hex.EncodeToString(h[:])
}

func randomBody(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), uint64(time.Now().UnixNano())))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// keyPath escapes an object key for a URL path, segment by segment.
func keyPath(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// uploadRaw sends body as key with Content-Type ctype (none if "").
func (a *objAPI) uploadRaw(apiKey, bucket, key, ctype string, body []byte) response {
	a.t.Helper()
	return a.do("POST", "/api/storage/buckets/"+bucket+"/upload?key="+url.QueryEscape(key), apiKey, string(body), "Content-Type", ctype)
}

// put uploads body as key into pics and checks it was stored.
func (a *objAPI) put(key string, body []byte) cloudwire.ObjectInfo {
	a.t.Helper()
	objs := wantObjects(a.t, "upload "+key, a.uploadRaw(a.acme, "pics", key, "application/octet-stream", body))
	if len(objs) != 1 {
		a.t.Fatalf("upload %s: %d objects", key, len(objs))
	}
	return objs[0]
}

func (a *objAPI) download(apiKey, bucket, key string, hdr ...string) response {
	a.t.Helper()
	return a.do("GET", "/api/storage/buckets/"+bucket+"/download/"+keyPath(key), apiKey, "", hdr...)
}

// wantBody downloads key from pics and checks its body.
func (a *objAPI) wantBody(key string, want []byte) {
	a.t.Helper()
	r := a.download(a.acme, "pics", key)
	if r.status != http.StatusOK || !bytes.Equal(r.body, want) {
		a.t.Errorf("download %q: %d, %d bytes (md5 %s); want 200 and %d bytes (md5 %s)", key, r.status, len(r.body), md5hex(r.body), len(want), md5hex(want))
	}
}

// bucketCounts returns the bucket's object_count and size_bytes.
func (a *objAPI) bucketCounts(bucket string) (int64, int64) {
	a.t.Helper()
	b := wantBucket(a.t, "get "+bucket, a.do("GET", "/api/storage/buckets/"+bucket, a.acme, ""), http.StatusOK)
	return b.ObjectCount, b.SizeBytes
}

// blobFiles counts body files (not tmp) and tmp files.
func (a *objAPI) blobFiles() (files, tmp int) {
	a.t.Helper()
	shards, err := os.ReadDir(a.blobs)
	if err != nil {
		a.t.Fatal(err)
	}
	for _, sh := range shards {
		es, err := os.ReadDir(filepath.Join(a.blobs, sh.Name()))
		if err != nil {
			a.t.Fatal(err)
		}
		if sh.Name() == "tmp" {
			tmp = len(es)
		} else {
			files += len(es)
		}
	}
	return files, tmp
}

// wantObjects checks r is 201 {"objects":[...]} with exactly the object
// resource's fields, and returns the objects.
func wantObjects(t *testing.T, what string, r response) []cloudwire.ObjectInfo {
	t.Helper()
	if r.status != http.StatusCreated {
		t.Fatalf("%s: status %d, want 201 (body %s)", what, r.status, r.body)
	}
	wantJSON(t, r)
	if got := strings.Join(keysOf(t, r.body), ","); got != "objects" {
		t.Errorf("%s: keys %s, want objects", what, got)
	}
	var raw struct {
		Objects []json.RawMessage `json:"objects"`
	}
	if err := json.Unmarshal(r.body, &raw); err != nil {
		t.Fatalf("%s: %s: %v", what, r.body, err)
	}
	var out []cloudwire.ObjectInfo
	for _, o := range raw.Objects {
		out = append(out, wantObjectFields(t, what, o))
	}
	return out
}

// wantObjectFields checks one object resource's fields and decodes it.
func wantObjectFields(t *testing.T, what string, data []byte) cloudwire.ObjectInfo {
	t.Helper()
	if got, want := strings.Join(keysOf(t, data), ","), "content_type,etag,key,last_modified,size"; got != want {
		t.Errorf("%s: object fields %s, want %s", what, got, want)
	}
	var o cloudwire.ObjectInfo
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		t.Fatalf("%s: %s: %v", what, data, err)
	}
	rfc3339(t, o.LastModified)
	return o
}

// wantObject checks a single object answer (copy, folders).
func wantObject(t *testing.T, what string, r response, status int) cloudwire.ObjectInfo {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d (body %s)", what, r.status, status, r.body)
	}
	wantJSON(t, r)
	return wantObjectFields(t, what, r.body)
}

// wantObjectList checks r is a 200 object listing and returns it.
func wantObjectList(t *testing.T, what string, r response) cloudwire.ObjectList {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("%s: status %d, want 200 (body %s)", what, r.status, r.body)
	}
	wantJSON(t, r)
	keys := strings.Join(keysOf(t, r.body), ",")
	if keys != "data,meta,prefixes" && keys != "data,meta,next_marker,prefixes" {
		t.Errorf("%s: keys %s, want data,meta,prefixes and maybe next_marker", what, keys)
	}
	var raw struct {
		Data     []json.RawMessage `json:"data"`
		Prefixes json.RawMessage   `json:"prefixes"`
	}
	json.Unmarshal(r.body, &raw)
	if !bytes.HasPrefix(raw.Prefixes, []byte("[")) {
		t.Errorf("%s: prefixes = %s, want an array", what, raw.Prefixes)
	}
	for _, o := range raw.Data {
		wantObjectFields(t, what, o)
	}
	var l cloudwire.ObjectList
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		t.Fatalf("%s: %s: %v", what, r.body, err)
	}
	return l
}

// listed renders a listing as "key key P:prefix/ | next_marker total".
func listed(l cloudwire.ObjectList) string {
	var parts []string
	for _, o := range l.Data {
		parts = append(parts, o.Key)
	}
	for _, p := range l.Prefixes {
		parts = append(parts, "P:"+p)
	}
	return fmt.Sprintf("%s | %s %d", strings.Join(parts, " "), l.NextMarker, l.Meta.Total)
}

// filePart is one part of a multipart form.
type filePart struct {
	field, filename, ctype string
	data                   []byte
}

// form builds a multipart body from parts in order; a part with no
// filename is a plain field.
func form(t *testing.T, parts ...filePart) (body, ctype string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.filename != "" {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, p.field, p.filename))
		} else {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, p.field))
		}
		if p.ctype != "" {
			h.Set("Content-Type", p.ctype)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write(p.data)
	}
	w.Close()
	return buf.String(), w.FormDataContentType()
}

func (a *objAPI) uploadForm(apiKey, bucket string, parts ...filePart) response {
	a.t.Helper()
	body, ctype := form(a.t, parts...)
	return a.do("POST", "/api/storage/buckets/"+bucket+"/upload", apiKey, body, "Content-Type", ctype)
}

func TestUploadRaw(t *testing.T) {
	a := newObjAPI(t)
	body := []byte("hello, objects\n")
	objs := wantObjects(t, "raw upload", a.uploadRaw(a.acme, "pics", "docs/read me.txt", "text/plain; charset=utf-8", body))
	if len(objs) != 1 {
		t.Fatalf("raw upload answered %d objects, want 1", len(objs))
	}
	want := cloudwire.ObjectInfo{Key: "docs/read me.txt", Size: int64(len(body)), ETag: md5hex(body),
		ContentType: "text/plain; charset=utf-8", LastModified: t0.Format(time.RFC3339Nano)}
	if objs[0] != want {
		t.Errorf("raw upload = %+v, want %+v", objs[0], want)
	}
	a.wantBody("docs/read me.txt", body)

	// Without a Content-Type the type is application/octet-stream.
	big := randomBody(200 << 10)
	o := wantObjects(t, "untyped upload", a.uploadRaw(a.acme, "pics", "blob.bin", "", big))[0]
	if o.ContentType != "application/octet-stream" || o.Size != int64(len(big)) || o.ETag != md5hex(big) {
		t.Errorf("untyped large upload = %+v", o)
	}
	a.wantBody("blob.bin", big)
	if files, tmp := a.blobFiles(); files != 1 || tmp != 0 {
		t.Errorf("after uploads: %d body files and %d tmp files, want 1 and 0", files, tmp)
	}
	if n, size := a.bucketCounts("pics"); n != 2 || size != int64(len(body)+len(big)) {
		t.Errorf("bucket after uploads: %d objects, %d bytes", n, size)
	}

	// An empty body is an empty object.
	if o := wantObjects(t, "empty upload", a.uploadRaw(a.acme, "pics", "empty", "text/plain", nil))[0]; o.Size != 0 || o.ETag != "d41d8cd98f00b204e9800998ecf8427e" {
		t.Errorf("empty upload = %+v", o)
	}

	// Overwriting replaces the object and the counts.
	a.clock.Advance(time.Hour)
	o = wantObjects(t, "overwrite", a.uploadRaw(a.acme, "pics", "blob.bin", "image/png", []byte("png")))[0]
	if o.Size != 3 || o.ContentType != "image/png" || rfc3339(t, o.LastModified) != t0.Add(time.Hour) {
		t.Errorf("overwrite = %+v", o)
	}
	a.wantBody("blob.bin", []byte("png"))
	if n, size := a.bucketCounts("pics"); n != 3 || size != int64(len(body)+3) {
		t.Errorf("bucket after overwrite: %d objects, %d bytes", n, size)
	}
	if files, _ := a.blobFiles(); files != 0 {
		t.Errorf("the replaced body's file is still there (%d files)", files)
	}
}

func TestUploadErrors(t *testing.T) {
	a := newObjAPI(t)
	other, _ := a.newKey("other")
	if r := a.do("POST", "/api/storage/buckets", other, `{"name":"theirs"}`); r.status != http.StatusCreated {
		t.Fatal(r.status)
	}
	up := func(q string) response {
		return a.do("POST", "/api/storage/buckets/pics/upload"+q, a.acme, "data", "Content-Type", "text/plain")
	}
	wantError(t, "raw upload without key", up(""), http.StatusBadRequest, "validation_error")
	wantError(t, "raw upload with an empty key", up("?key="), http.StatusBadRequest, "validation_error")
	wantError(t, "key with a control character", up("?key=a%01b"), http.StatusBadRequest, "validation_error")
	wantError(t, "key with NUL", up("?key=a%00b"), http.StatusBadRequest, "validation_error")
	wantError(t, "key of invalid UTF-8", up("?key=%FF"), http.StatusBadRequest, "validation_error")
	wantError(t, "key over 1024 bytes", up("?key="+strings.Repeat("k", 1025)), http.StatusBadRequest, "validation_error")
	if r := up("?key=" + strings.Repeat("k", 1024)); r.status != http.StatusCreated {
		t.Errorf("key of 1024 bytes: %d %s", r.status, r.body)
	}

	// Another account's bucket is not found, like a missing one.
	wantError(t, "upload to another account's bucket", a.uploadRaw(a.acme, "theirs", "x", "text/plain", []byte("x")), http.StatusNotFound, "not_found")
	wantError(t, "upload to their bucket, multipart", a.uploadForm(a.acme, "theirs", filePart{"file", "x.txt", "", []byte("x")}), http.StatusNotFound, "not_found")
	wantError(t, "upload to a missing bucket", a.uploadRaw(a.acme, "nope", "x", "text/plain", []byte("x")), http.StatusNotFound, "not_found")
	wantError(t, "upload to an invalid bucket name", a.uploadRaw(a.acme, "NO_PE", "x", "text/plain", []byte("x")), http.StatusNotFound, "not_found")
	wantError(t, "upload without a key", a.do("POST", "/api/storage/buckets/pics/upload?key=x", "", "x"), http.StatusUnauthorized, "unauthorized")
	if l := wantObjectList(t, "their bucket", a.do("GET", "/api/storage/buckets/theirs/objects", other, "")); len(l.Data) != 0 {
		t.Errorf("their bucket holds %s", listed(l))
	}
	if n, _ := a.bucketCounts("pics"); n != 1 {
		t.Errorf("pics holds %d objects after refused uploads, want 1", n)
	}
}

func TestUploadMultipart(t *testing.T) {
	a := newObjAPI(t)
	big := randomBody(150 << 10)
	objs := wantObjects(t, "multipart with prefix", a.uploadForm(a.acme, "pics",
		filePart{"prefix", "", "", []byte("photos/2024/")},
		filePart{"file", "a.jpg", "image/jpeg", []byte("jpeg a")},
		filePart{"file", "b.jpg", "image/jpeg", []byte("jpeg b")},
		filePart{"file", "c.bin", "", big},
		filePart{"file", "../../evil.txt", "text/plain", []byte("evil")},
	))
	var got []string
	for _, o := range objs {
		got = append(got, fmt.Sprintf("%s %d %s", o.Key, o.Size, o.ContentType))
	}
	want := []string{"photos/2024/a.jpg 6 image/jpeg", "photos/2024/b.jpg 6 image/jpeg",
		fmt.Sprintf("photos/2024/c.bin %d application/octet-stream", len(big)), "photos/2024/evil.txt 4 text/plain"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("multipart objects:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(objs) == 4 && objs[2].ETag != md5hex(big) {
		t.Errorf("etag of c.bin = %s, want %s", objs[2].ETag, md5hex(big))
	}
	a.wantBody("photos/2024/a.jpg", []byte("jpeg a"))
	a.wantBody("photos/2024/b.jpg", []byte("jpeg b"))
	a.wantBody("photos/2024/c.bin", big)
	if r := a.download(a.acme, "pics", "photos/2024/a.jpg"); r.header.Get("Content-Type") != "image/jpeg" {
		t.Errorf("a.jpg Content-Type %q", r.header.Get("Content-Type"))
	}

	// Without key or prefix the key is the file name.
	if objs := wantObjects(t, "multipart, bare", a.uploadForm(a.acme, "pics", filePart{"file", "plain.txt", "text/plain", []byte("plain")})); len(objs) != 1 || objs[0].Key != "plain.txt" {
		t.Errorf("bare multipart = %+v", objs)
	}
	// A key field names the one file.
	if objs := wantObjects(t, "multipart with key", a.uploadForm(a.acme, "pics",
		filePart{"key", "", "", []byte("named/object.dat")},
		filePart{"file", "ignored.txt", "text/csv", []byte("a,b")})); len(objs) != 1 || objs[0].Key != "named/object.dat" || objs[0].ContentType != "text/csv" {
		t.Errorf("multipart with key = %+v", objs)
	}
	// A key field without a file name.
	if objs := wantObjects(t, "multipart key, no filename", a.uploadForm(a.acme, "pics",
		filePart{"key", "", "", []byte("nofilename")},
		filePart{"file", "", "", []byte("x")})); len(objs) != 1 || objs[0].Key != "nofilename" {
		t.Errorf("multipart with key and no file name = %+v", objs)
	}
	if n, size := a.bucketCounts("pics"); n != 7 || size != int64(6+6+len(big)+4+5+3+1) {
		t.Errorf("bucket after multipart uploads: %d objects, %d bytes", n, size)
	}
}

func TestUploadMultipartErrors(t *testing.T) {
	a := newObjAPI(t)
	wantError(t, "key with two files", a.uploadForm(a.acme, "pics",
		filePart{"key", "", "", []byte("one")},
		filePart{"file", "a.txt", "", []byte("a")},
		filePart{"file", "b.txt", "", []byte("b")}), http.StatusBadRequest, "validation_error")
	// Whatever the first file became, the bucket's counts agree with it.
	l := wantObjectList(t, "after key with two files", a.do("GET", "/api/storage/buckets/pics/objects", a.acme, ""))
	if n, _ := a.bucketCounts("pics"); n != int64(len(l.Data)) {
		t.Errorf("bucket counts %d objects, listing %s", n, listed(l))
	}
	if len(l.Data) > 0 {
		t.Logf("note: a refused form (key with two files) left %s stored", listed(l))
	}
	before := len(l.Data)

	for _, tc := range []struct {
		what  string
		parts []filePart
	}{
		{"no file part", []filePart{{"prefix", "", "", []byte("p/")}}},
		{"empty form", nil},
		{"unknown field", []filePart{{"colour", "", "", []byte("red")}, {"file", "x.txt", "", []byte("x")}}},
		{"file without name or key", []filePart{{"file", "", "", []byte("x")}}},
		{"invalid key field", []filePart{{"key", "", "", []byte("bad\x01key")}, {"file", "x.txt", "", []byte("x")}}},
		{"key field too long", []filePart{{"key", "", "", bytes.Repeat([]byte("k"), 2000)}, {"file", "x.txt", "", []byte("x")}}},
		{"prefix making the key too long", []filePart{{"prefix", "", "", bytes.Repeat([]byte("p"), 1020)}, {"file", "long-name.txt", "", []byte("x")}}},
	} {
		wantError(t, tc.what, a.uploadForm(a.acme, "pics", tc.parts...), http.StatusBadRequest, "validation_error")
	}
	wantError(t, "multipart without boundary", a.do("POST", "/api/storage/buckets/pics/upload", a.acme, "--x\r\n", "Content-Type", "multipart/form-data"), http.StatusBadRequest, "validation_error")
	l = wantObjectList(t, "after refused forms", a.do("GET", "/api/storage/buckets/pics/objects", a.acme, ""))
	if len(l.Data) != before {
		t.Errorf("refused forms stored objects: %s", listed(l))
	}
	if _, tmp := a.blobFiles(); tmp != 0 {
		t.Errorf("%d tmp files left by refused forms", tmp)
	}
}

// TestUploadTruncatedMultipart sends a complete request whose form ends in
// the middle of a file part: a malformed form is the client's error (400),
// not an internal error, and nothing is stored.
func TestUploadTruncatedMultipart(t *testing.T) {
	a := newObjAPI(t)
	for _, size := range []int{4, 100 << 10} {
		body := "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"t.txt\"\r\n\r\n" + strings.Repeat("h", size)
		wantError(t, fmt.Sprintf("form cut off after %d bytes of file", size), a.do("POST", "/api/storage/buckets/pics/upload", a.acme, body, "Content-Type", "multipart/form-data; boundary=b"), http.StatusBadRequest, "validation_error")
	}
	wantError(t, "the cut-off file", a.download(a.acme, "pics", "t.txt"), http.StatusNotFound, "not_found")
	if files, tmp := a.blobFiles(); files != 0 || tmp != 0 {
		t.Errorf("after cut-off forms: %d body files, %d tmp", files, tmp)
	}
}

// TestUploadCutOff breaks the connection halfway through a large upload:
// nothing becomes visible and nothing stays on disk.
func TestUploadCutOff(t *testing.T) {
	a := newObjAPI(t)
	u, _ := url.Parse(a.url)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /api/storage/buckets/pics/upload?key=cut HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", u.Host, a.acme, 400<<10)
	conn.Write(randomBody(200 << 10))
	// Wait until the server has started the body, then cut it off.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, tmp := a.blobFiles(); tmp > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the upload never reached tmp")
		}
		time.Sleep(5 * time.Millisecond)
	}
	conn.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		files, tmp := a.blobFiles()
		if files == 0 && tmp == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after the cut: %d body files, %d tmp files; want none", files, tmp)
		}
	}
	wantError(t, "download of a cut upload", a.download(a.acme, "pics", "cut"), http.StatusNotFound, "not_found")
	if n, size := a.bucketCounts("pics"); n != 0 || size != 0 {
		t.Errorf("bucket after a cut upload: %d objects, %d bytes", n, size)
	}
}

func TestDownload(t *testing.T) {
	a := newObjAPI(t)
	other, _ := a.newKey("other")
	small := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	big := randomBody(300 << 10)
	wantObjects(t, "upload small", a.uploadRaw(a.acme, "pics", "dir/small.txt", "text/plain", small))
	wantObjects(t, "upload big", a.uploadRaw(a.acme, "pics", "big.bin", "application/x-big", big))
	lastMod := t0.Format(http.TimeFormat)

	for _, tc := range []struct {
		key   string
		body  []byte
		ctype string
	}{{"dir/small.txt", small, "text/plain"}, {"big.bin", big, "application/x-big"}} {
		etag := `"` + md5hex(tc.body) + `"`
		r := a.download(a.acme, "pics", tc.key)
		if r.status != http.StatusOK || !bytes.Equal(r.body, tc.body) {
			t.Fatalf("download %s: %d, %d bytes", tc.key, r.status, len(r.body))
		}
		for h, want := range map[string]string{
			"Content-Type":   tc.ctype,
			"ETag":           etag,
			"Last-Modified":  lastMod,
			"Content-Length": fmt.Sprint(len(tc.body)),
			"Accept-Ranges":  "bytes",
		} {
			if got := r.header.Get(h); got != want {
				t.Errorf("download %s: %s = %q, want %q", tc.key, h, got, want)
			}
		}

		// Ranges.
		r = a.download(a.acme, "pics", tc.key, "Range", "bytes=10-19")
		if r.status != http.StatusPartialContent || !bytes.Equal(r.body, tc.body[10:20]) {
			t.Errorf("%s bytes=10-19: %d %q", tc.key, r.status, r.body)
		}
		if got, want := r.header.Get("Content-Range"), fmt.Sprintf("bytes 10-19/%d", len(tc.body)); got != want {
			t.Errorf("%s: Content-Range %q, want %q", tc.key, got, want)
		}
		if r.header.Get("ETag") != etag {
			t.Errorf("%s: ranged ETag %q", tc.key, r.header.Get("ETag"))
		}
		r = a.download(a.acme, "pics", tc.key, "Range", "bytes=-5")
		if r.status != http.StatusPartialContent || !bytes.Equal(r.body, tc.body[len(tc.body)-5:]) {
			t.Errorf("%s bytes=-5: %d %q", tc.key, r.status, r.body)
		}
		r = a.download(a.acme, "pics", tc.key, "Range", fmt.Sprintf("bytes=%d-", len(tc.body)-3))
		if r.status != http.StatusPartialContent || !bytes.Equal(r.body, tc.body[len(tc.body)-3:]) {
			t.Errorf("%s open range: %d %q", tc.key, r.status, r.body)
		}
		r = a.download(a.acme, "pics", tc.key, "Range", fmt.Sprintf("bytes=%d-", len(tc.body)+10))
		if r.status != http.StatusRequestedRangeNotSatisfiable {
			t.Errorf("%s range past the end: %d", tc.key, r.status)
		}

		// Conditional requests.
		for _, inm := range []string{etag, `"nope", ` + etag, "*"} {
			r = a.download(a.acme, "pics", tc.key, "If-None-Match", inm)
			if r.status != http.StatusNotModified || len(r.body) != 0 {
				t.Errorf("%s If-None-Match %s: %d with %d bytes, want 304 and none", tc.key, inm, r.status, len(r.body))
			}
			if r.header.Get("ETag") != etag {
				t.Errorf("%s 304 ETag %q", tc.key, r.header.Get("ETag"))
			}
		}
		r = a.download(a.acme, "pics", tc.key, "If-None-Match", `"`+md5hex([]byte("other"))+`"`)
		if r.status != http.StatusOK || !bytes.Equal(r.body, tc.body) {
			t.Errorf("%s If-None-Match another etag: %d", tc.key, r.status)
		}
		for ims, want := range map[string]int{
			lastMod: http.StatusNotModified,
			t0.Add(time.Hour).Format(http.TimeFormat):    http.StatusNotModified,
			t0.Add(-time.Hour).Format(http.TimeFormat):   http.StatusOK,
			t0.Add(-time.Second).Format(http.TimeFormat): http.StatusOK,
		} {
			r = a.download(a.acme, "pics", tc.key, "If-Modified-Since", ims)
			if r.status != want {
				t.Errorf("%s If-Modified-Since %s: %d, want %d", tc.key, ims, r.status, want)
			}
		}
		// If-None-Match wins over If-Modified-Since.
		r = a.download(a.acme, "pics", tc.key, "If-None-Match", `"other"`, "If-Modified-Since", lastMod)
		if r.status != http.StatusOK {
			t.Errorf("%s If-None-Match mismatch with If-Modified-Since: %d, want 200", tc.key, r.status)
		}
		r = a.download(a.acme, "pics", tc.key, "If-Range", etag, "Range", "bytes=0-1")
		if r.status != http.StatusPartialContent || !bytes.Equal(r.body, tc.body[:2]) {
			t.Errorf("%s If-Range matching: %d", tc.key, r.status)
		}
		r = a.download(a.acme, "pics", tc.key, "If-Range", `"stale"`, "Range", "bytes=0-1")
		if r.status != http.StatusOK || !bytes.Equal(r.body, tc.body) {
			t.Errorf("%s If-Range stale: %d, want the whole body", tc.key, r.status)
		}
	}

	// HEAD gives the headers only.
	r := a.do("HEAD", "/api/storage/buckets/pics/download/big.bin", a.acme, "")
	if r.status != http.StatusOK || len(r.body) != 0 || r.header.Get("Content-Length") != fmt.Sprint(len(big)) {
		t.Errorf("HEAD: %d, %d bytes, Content-Length %q", r.status, len(r.body), r.header.Get("Content-Length"))
	}

	// Missing objects, and other accounts' objects, are not found.
	wantError(t, "missing key", a.download(a.acme, "pics", "nope.txt"), http.StatusNotFound, "not_found")
	wantError(t, "missing nested key", a.download(a.acme, "pics", "dir/nope"), http.StatusNotFound, "not_found")
	wantError(t, "directory part of a key", a.download(a.acme, "pics", "dir"), http.StatusNotFound, "not_found")
	wantError(t, "another account's object", a.download(other, "pics", "big.bin"), http.StatusNotFound, "not_found")
	wantError(t, "missing bucket", a.download(a.acme, "nope", "big.bin"), http.StatusNotFound, "not_found")
	wantError(t, "no API key", a.download("", "pics", "big.bin"), http.StatusUnauthorized, "unauthorized")
	wantError(t, "no key in the path", a.do("GET", "/api/storage/buckets/pics/download/", a.acme, ""), http.StatusNotFound, "not_found")
}

func TestDownloadUnusualKeys(t *testing.T) {
	a := newObjAPI(t)
	for _, key := range []string{"sp ace.txt", "q?x=1&y#frag", "pct%2Fx", "日本語/ファイル", "plus+sign", "semi;colon", "dir/", "trailing.", "..a", "a.."} {
		body := []byte("body of " + key)
		a.put(key, body)
		a.wantBody(key, body)
	}
}

// TestPathLikeKeys stores keys that are not clean URL paths ("a//b",
// "../x", "/lead", "a/./b"). The server may refuse them at upload, but a
// key it stores must download as itself, never as the object a cleaned
// path names, and deleting it must not delete that other object.
func TestPathLikeKeys(t *testing.T) {
	a := newObjAPI(t)
	a.put("a/b", []byte("the object a/b"))
	a.put("x", []byte("the object x"))
	a.put("lead", []byte("the object lead"))
	for _, key := range []string{"a//b", "../x", "/lead", "a/./b"} {
		body := []byte("the object " + key)
		r := a.uploadRaw(a.acme, "pics", key, "text/plain", body)
		if r.status == http.StatusBadRequest {
			continue // refused: fine
		}
		wantObjects(t, "upload "+key, r)
		req, _ := http.NewRequest("GET", a.url+"/api/storage/buckets/pics/download/"+keyPath(key), nil)
		req.Header.Set("Authorization", "Bearer "+a.acme)
		resp, err := http.DefaultTransport.RoundTrip(req) // no redirects followed
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) {
			t.Errorf("key %q stored, but its download answers %d %q (Location %q)", key, resp.StatusCode, got, resp.Header.Get("Location"))
		}
		// Deleting it, with a client that follows redirects as most do,
		// must not delete another object.
		a.do("DELETE", "/api/storage/buckets/pics/objects/"+keyPath(key), a.acme, "")
		for _, k := range []string{"a/b", "x", "lead"} {
			if r := a.download(a.acme, "pics", k); r.status != http.StatusOK {
				t.Errorf("DELETE of key %q deleted the object %q", key, k)
				a.put(k, []byte("the object "+k))
			}
		}
	}
}

func TestListObjectsAPI(t *testing.T) {
	a := newObjAPI(t)
	other, _ := a.newKey("other")
	for _, k := range []string{"a.txt", "b/1", "b/2", "c.txt", "d/x/1", "d/y", "e"} {
		a.put(k, []byte(k))
	}
	list := func(q string) cloudwire.ObjectList {
		t.Helper()
		return wantObjectList(t, q, a.do("GET", "/api/storage/buckets/pics/objects"+q, a.acme, ""))
	}
	for _, tc := range []struct{ q, want string }{
		{"", "a.txt b/1 b/2 c.txt d/x/1 d/y e |  7"},
		{"?delimiter=/", "a.txt c.txt e P:b/ P:d/ |  5"},
		{"?prefix=d/&delimiter=/", "d/y P:d/x/ |  2"},
		{"?prefix=b/", "b/1 b/2 |  2"},
		{"?prefix=zzz", " |  0"},
		{"?delimiter=/&per_page=2", "a.txt P:b/ | b/ 5"},
		{"?delimiter=/&per_page=2&page=2", "c.txt P:d/ | d/ 5"},
		{"?delimiter=/&per_page=2&page=3", "e |  5"},
		{"?delimiter=/&per_page=2&page=4", " |  5"},
		{"?delimiter=/&marker=b/", "c.txt e P:d/ |  3"},
		{"?delimiter=/&marker=b/&per_page=2", "c.txt P:d/ | d/ 3"},
		{"?marker=b/1&per_page=3", "b/2 c.txt d/x/1 | d/x/1 5"},
		{"?marker=e", " |  0"},
	} {
		l := list(tc.q)
		if got := listed(l); got != tc.want {
			t.Errorf("objects%s = %q, want %q", tc.q, got, tc.want)
		}
	}
	l := list("?per_page=3&page=2")
	if l.Meta.Page != 2 || l.Meta.PerPage != 3 || l.Meta.Total != 7 {
		t.Errorf("meta = %+v", l.Meta)
	}
	if d := list("?per_page=100").Meta; d.PerPage != 100 {
		t.Errorf("per_page 100: %+v", d)
	}
	if d := list("").Meta; d.PerPage != cloudwire.DefaultPerPage || d.Page != 1 {
		t.Errorf("default meta: %+v", d)
	}
	// Objects in the listing are metadata.
	for _, o := range list("?prefix=a").Data {
		if o.Key != "a.txt" || o.Size != 5 || o.ETag != md5hex([]byte("a.txt")) || o.ContentType != "application/octet-stream" {
			t.Errorf("listed object = %+v", o)
		}
	}
	for _, q := range []string{"?page=0", "?per_page=0", "?per_page=101", "?page=x", "?per_page=-1"} {
		wantError(t, "objects"+q, a.do("GET", "/api/storage/buckets/pics/objects"+q, a.acme, ""), http.StatusBadRequest, "validation_error")
	}
	wantError(t, "another account's listing", a.do("GET", "/api/storage/buckets/pics/objects", other, ""), http.StatusNotFound, "not_found")
	wantError(t, "missing bucket listing", a.do("GET", "/api/storage/buckets/nope/objects", a.acme, ""), http.StatusNotFound, "not_found")
}

// TestListObjectsWalk follows next_marker page by page through several
// listings: the pages add up to the listing in one go.
func TestListObjectsWalk(t *testing.T) {
	a := newObjAPI(t)
	wantObject(t, "folder", a.do("POST", "/api/storage/buckets/pics/folders", a.acme, `{"path":"photos"}`), http.StatusCreated)
	for _, k := range []string{"photos/2024/a.jpg", "photos/2024/b.jpg", "photos/cover.jpg", "photos/z/1", "readme", "videos/v.mp4"} {
		a.put(k, []byte(k))
	}
	for i := range 25 {
		a.put(fmt.Sprintf("many/%02d", i), []byte{byte(i)})
	}
	for _, base := range []string{"?delimiter=/", "?prefix=photos/&delimiter=/", "?prefix=photos/", "?prefix=many/", "?"} {
		full := listed(wantObjectList(t, base, a.do("GET", "/api/storage/buckets/pics/objects"+base+"&per_page=100", a.acme, "")))
		fullEntries := strings.Fields(strings.Split(full, "|")[0])
		for _, per := range []int{1, 2, 7} {
			var got []string
			marker := ""
			for page := 0; ; page++ {
				if page > 40 {
					t.Fatalf("%s per_page %d: no end", base, per)
				}
				q := fmt.Sprintf("%s&per_page=%d&marker=%s", base, per, url.QueryEscape(marker))
				l := wantObjectList(t, q, a.do("GET", "/api/storage/buckets/pics/objects"+q, a.acme, ""))
				if len(l.Data)+len(l.Prefixes) > per {
					t.Errorf("%s: %d entries", q, len(l.Data)+len(l.Prefixes))
				}
				got = append(got, strings.Fields(strings.Split(listed(l), "|")[0])...)
				if l.NextMarker == "" {
					break
				}
				marker = l.NextMarker
			}
			if len(got) != len(fullEntries) || !sameSet(got, fullEntries) {
				t.Errorf("%s walked with per_page %d:\n got %v\nwant %v", base, per, got, fullEntries)
			}
		}
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestDeleteObjectAPI(t *testing.T) {
	a := newObjAPI(t)
	other, _ := a.newKey("other")
	big := randomBody(100 << 10)
	a.put("dir/big.bin", big)
	a.put("small", []byte("small"))

	wantError(t, "another account's delete", a.do("DELETE", "/api/storage/buckets/pics/objects/dir/big.bin", other, ""), http.StatusNotFound, "not_found")
	a.wantBody("dir/big.bin", big)

	r := a.do("DELETE", "/api/storage/buckets/pics/objects/dir/big.bin", a.acme, "")
	if r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Errorf("delete: %d %q, want 204 and no body", r.status, r.body)
	}
	wantError(t, "download after delete", a.download(a.acme, "pics", "dir/big.bin"), http.StatusNotFound, "not_found")
	wantError(t, "second delete", a.do("DELETE", "/api/storage/buckets/pics/objects/dir/big.bin", a.acme, ""), http.StatusNotFound, "not_found")
	wantError(t, "delete of a missing key", a.do("DELETE", "/api/storage/buckets/pics/objects/never", a.acme, ""), http.StatusNotFound, "not_found")
	wantError(t, "delete in a missing bucket", a.do("DELETE", "/api/storage/buckets/nope/objects/small", a.acme, ""), http.StatusNotFound, "not_found")
	if files, tmp := a.blobFiles(); files != 0 || tmp != 0 {
		t.Errorf("after delete: %d body files, %d tmp", files, tmp)
	}
	if n, size := a.bucketCounts("pics"); n != 1 || size != 5 {
		t.Errorf("bucket after delete: %d objects, %d bytes", n, size)
	}
	if r := a.do("DELETE", "/api/storage/buckets/pics/objects/"+keyPath("small"), a.acme, ""); r.status != http.StatusNoContent {
		t.Errorf("delete small: %d", r.status)
	}
}

func TestCopyObjectAPI(t *testing.T) {
	a := newObjAPI(t)
	other, _ := a.newKey("other")
	big := randomBody(250 << 10)
	wantObjects(t, "upload", a.uploadRaw(a.acme, "pics", "src.bin", "application/x-src", big))
	a.clock.Advance(time.Minute)

	o := wantObject(t, "copy", a.do("POST", "/api/storage/buckets/pics/copy", a.acme, `{"source_key":"src.bin","dest_key":"copies/dst.bin"}`), http.StatusCreated)
	want := cloudwire.ObjectInfo{Key: "copies/dst.bin", Size: int64(len(big)), ETag: md5hex(big), ContentType: "application/x-src", LastModified: t0.Add(time.Minute).Format(time.RFC3339Nano)}
	if o != want {
		t.Errorf("copy = %+v, want %+v", o, want)
	}
	r := a.download(a.acme, "pics", "copies/dst.bin")
	if r.status != http.StatusOK || !bytes.Equal(r.body, big) || r.header.Get("Content-Type") != "application/x-src" {
		t.Errorf("download of the copy: %d, %d bytes, %q", r.status, len(r.body), r.header.Get("Content-Type"))
	}
	if files, _ := a.blobFiles(); files != 1 {
		t.Errorf("a copy made %d body files, want the one shared", files)
	}
	if n, size := a.bucketCounts("pics"); n != 2 || size != 2*int64(len(big)) {
		t.Errorf("bucket after copy: %d objects, %d bytes", n, size)
	}
	// Deleting the source keeps the copy.
	if r := a.do("DELETE", "/api/storage/buckets/pics/objects/src.bin", a.acme, ""); r.status != http.StatusNoContent {
		t.Fatal(r.status)
	}
	a.wantBody("copies/dst.bin", big)

	// Small objects copy too.
	a.put("small", []byte("tiny"))
	wantObject(t, "small copy", a.do("POST", "/api/storage/buckets/pics/copy", a.acme, `{"source_key":"small","dest_key":"small2"}`), http.StatusCreated)
	a.wantBody("small2", []byte("tiny"))

	for _, tc := range []struct {
		what, key, body string
		status          int
		code            string
	}{
		{"missing source", a.acme, `{"source_key":"nope","dest_key":"x"}`, 404, "not_found"},
		{"empty source", a.acme, `{"source_key":"","dest_key":"x"}`, 400, "validation_error"},
		{"no source", a.acme, `{"dest_key":"x"}`, 400, "validation_error"},
		{"source in capitals", a.acme, `{"SOURCE_KEY":"small","dest_key":"x"}`, 400, "validation_error"},
		{"empty dest", a.acme, `{"source_key":"small","dest_key":""}`, 400, "validation_error"},
		{"dest with a control character", a.acme, `{"source_key":"small","dest_key":"a\u0001b"}`, 400, "validation_error"},
		{"dest too long", a.acme, `{"source_key":"small","dest_key":"` + strings.Repeat("d", 1025) + `"}`, 400, "validation_error"},
		{"unknown field", a.acme, `{"source_key":"small","dest_key":"x","overwrite":true}`, 400, "validation_error"},
		{"not JSON", a.acme, `source_key=small`, 400, "validation_error"},
		{"another account", other, `{"source_key":"small","dest_key":"x"}`, 404, "not_found"},
	} {
		wantError(t, "copy: "+tc.what, a.do("POST", "/api/storage/buckets/pics/copy", tc.key, tc.body), tc.status, tc.code)
	}
	wantError(t, "copy in a missing bucket", a.do("POST", "/api/storage/buckets/nope/copy", a.acme, `{"source_key":"small","dest_key":"x"}`), http.StatusNotFound, "not_found")
	if n, _ := a.bucketCounts("pics"); n != 3 {
		t.Errorf("bucket after refused copies: %d objects, want 3", n)
	}
}

func TestFolders(t *testing.T) {
	a := newObjAPI(t)
	other, _ := a.newKey("other")
	o := wantObject(t, "folder", a.do("POST", "/api/storage/buckets/pics/folders", a.acme, `{"path":"photos/2024"}`), http.StatusCreated)
	want := cloudwire.ObjectInfo{Key: "photos/2024/", Size: 0, ETag: "d41d8cd98f00b204e9800998ecf8427e", ContentType: "application/x-directory", LastModified: t0.Format(time.RFC3339Nano)}
	if o != want {
		t.Errorf("folder = %+v, want %+v", o, want)
	}
	// Slashes around the path are trimmed.
	if o := wantObject(t, "folder with slashes", a.do("POST", "/api/storage/buckets/pics/folders", a.acme, `{"path":"/docs/"}`), http.StatusCreated); o.Key != "docs/" {
		t.Errorf("folder /docs/ = %q", o.Key)
	}
	l := wantObjectList(t, "root", a.do("GET", "/api/storage/buckets/pics/objects?delimiter=/", a.acme, ""))
	if got := listed(l); got != "P:docs/ P:photos/ |  2" {
		t.Errorf("root listing = %s", got)
	}
	l = wantObjectList(t, "photos/", a.do("GET", "/api/storage/buckets/pics/objects?prefix=photos/&delimiter=/", a.acme, ""))
	if got := listed(l); got != "P:photos/2024/ |  1" {
		t.Errorf("photos/ listing = %s", got)
	}
	l = wantObjectList(t, "photos/2024/", a.do("GET", "/api/storage/buckets/pics/objects?prefix=photos/2024/&delimiter=/", a.acme, ""))
	if got := listed(l); got != "photos/2024/ |  1" {
		t.Errorf("photos/2024/ listing = %s", got)
	}
	r := a.download(a.acme, "pics", "photos/2024/")
	if r.status != http.StatusOK || len(r.body) != 0 || r.header.Get("Content-Type") != "application/x-directory" {
		t.Errorf("download of a folder: %d %q %q", r.status, r.body, r.header.Get("Content-Type"))
	}
	for _, body := range []string{`{"path":""}`, `{"path":"/"}`, `{"path":"//"}`, `{}`, `{"path":"a\u0000b"}`, `{"path":"` + strings.Repeat("p", 1024) + `"}`, `{"path":1}`} {
		wantError(t, "folder "+body, a.do("POST", "/api/storage/buckets/pics/folders", a.acme, body), http.StatusBadRequest, "validation_error")
	}
	wantError(t, "folder in another account's bucket", a.do("POST", "/api/storage/buckets/pics/folders", other, `{"path":"x"}`), http.StatusNotFound, "not_found")
	if n, size := a.bucketCounts("pics"); n != 2 || size != 0 {
		t.Errorf("bucket with two folders: %d objects, %d bytes", n, size)
	}
	if r := a.do("DELETE", "/api/storage/buckets/pics/objects/photos/2024/", a.acme, ""); r.status != http.StatusNoContent {
		t.Errorf("delete folder: %d %s", r.status, r.body)
	}
}

func TestDeleteNonEmptyBucket(t *testing.T) {
	a := newObjAPI(t)
	a.put("one", []byte("1"))
	a.put("two/big", randomBody(100<<10))
	wantError(t, "delete a non-empty bucket", a.do("DELETE", "/api/storage/buckets/pics", a.acme, ""), http.StatusConflict, "bucket_not_empty")
	a.wantBody("one", []byte("1"))
	if r := a.do("DELETE", "/api/storage/buckets/pics/objects/one", a.acme, ""); r.status != http.StatusNoContent {
		t.Fatal(r.status)
	}
	wantError(t, "delete a bucket with one object", a.do("DELETE", "/api/storage/buckets/pics", a.acme, ""), http.StatusConflict, "bucket_not_empty")
	if r := a.do("DELETE", "/api/storage/buckets/pics/objects/two/big", a.acme, ""); r.status != http.StatusNoContent {
		t.Fatal(r.status)
	}
	r := a.do("DELETE", "/api/storage/buckets/pics", a.acme, "")
	if r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Errorf("delete of the emptied bucket: %d %s", r.status, r.body)
	}
	wantError(t, "the bucket is gone", a.do("GET", "/api/storage/buckets/pics", a.acme, ""), http.StatusNotFound, "not_found")
	wantError(t, "upload to the deleted bucket", a.uploadRaw(a.acme, "pics", "x", "", []byte("x")), http.StatusNotFound, "not_found")
	if files, tmp := a.blobFiles(); files != 0 || tmp != 0 {
		t.Errorf("after the bucket went: %d body files, %d tmp", files, tmp)
	}
}

func TestUsageCountsObjects(t *testing.T) {
	a := newObjAPI(t)
	other, _ := a.newKey("other")
	if r := a.do("POST", "/api/storage/buckets", a.acme, `{"name":"docs"}`); r.status != http.StatusCreated {
		t.Fatal(r.status)
	}
	if r := a.do("POST", "/api/storage/buckets", other, `{"name":"theirs"}`); r.status != http.StatusCreated {
		t.Fatal(r.status)
	}
	big := randomBody(120 << 10)
	a.put("a", []byte("12345"))
	a.put("b", big)
	wantObjects(t, "docs upload", a.uploadRaw(a.acme, "docs", "d", "", []byte("1234567")))
	wantObjects(t, "their upload", a.uploadRaw(other, "theirs", "t", "", randomBody(1000)))
	wantObject(t, "copy", a.do("POST", "/api/storage/buckets/pics/copy", a.acme, `{"source_key":"b","dest_key":"b2"}`), http.StatusCreated)

	usage := func() cloudwire.Usage {
		t.Helper()
		r := a.do("GET", "/api/storage/usage", a.acme, "")
		if r.status != http.StatusOK {
			t.Fatalf("usage: %d %s", r.status, r.body)
		}
		var u cloudwire.Usage
		dec := json.NewDecoder(bytes.NewReader(r.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	u := usage()
	wantPics := cloudwire.BucketUsage{Name: "pics", ObjectCount: 3, SizeBytes: 5 + 2*int64(len(big))}
	wantDocs := cloudwire.BucketUsage{Name: "docs", ObjectCount: 1, SizeBytes: 7}
	if u.TotalBytes != wantPics.SizeBytes+7 || u.ObjectCount != 4 || u.BucketCount != 2 ||
		len(u.BucketsUsage) != 2 || u.BucketsUsage[0] != wantDocs || u.BucketsUsage[1] != wantPics {
		t.Errorf("usage = %+v", u)
	}
	if n, size := a.bucketCounts("pics"); n != wantPics.ObjectCount || size != wantPics.SizeBytes {
		t.Errorf("bucket pics: %d objects, %d bytes; usage says %+v", n, size, wantPics)
	}
	a.do("DELETE", "/api/storage/buckets/pics/objects/b", a.acme, "")
	a.put("a", []byte("1"))
	u = usage()
	if u.TotalBytes != 1+int64(len(big))+7 || u.ObjectCount != 3 {
		t.Errorf("usage after delete and overwrite = %+v", u)
	}
}
