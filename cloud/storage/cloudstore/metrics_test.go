package cloudstore

// Tests of access metrics: hourly counters by kind, errors and bytes,
// per-object counts, what is dropped (missing buckets and objects, an
// earlier bucket of the same name, hours past retention), flushing at
// Close, and storage by file type.

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// hourLine is an hour's metrics in short.
func hourLine(h HourMetrics) string {
	r := h.Requests
	return fmt.Sprintf("%s get=%d put=%d delete=%d list=%d other=%d in=%d out=%d errors=%d",
		h.Hour.Format("15:04"), r.Get, r.Put, r.Delete, r.List, r.Other, h.BytesIn, h.BytesOut, h.Errors)
}

func hourLines(t *testing.T, s *Store, account, bucket string, from, to time.Time) string {
	t.Helper()
	hs, err := s.Metrics(account, bucket, from, to)
	if err != nil {
		t.Fatalf("Metrics: %v", err)
	}
	var lines []string
	for _, h := range hs {
		if h.Hour.Location() != time.UTC {
			t.Errorf("hour %v not in UTC", h.Hour)
		}
		lines = append(lines, hourLine(h))
	}
	return strings.Join(lines, "\n")
}

func TestMetricsHourly(t *testing.T) {
	b := newBlobStore(t) // pics, created at t0 = 12:00:00.12
	b.put("a", []byte("abc"))
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	for _, a := range []Access{
		{Time: at(1), Op: OpGet, Key: "a", Status: 200, BytesOut: 3},
		{Time: at(2), Op: OpGet, Key: "a", Status: 206, BytesOut: 1},
		{Time: at(3), Op: OpGet, Key: "nope", Status: 404, BytesOut: 60},
		{Time: at(4), Op: OpPut, Key: "a", Status: 201, BytesIn: 3},
		{Time: at(5), Op: OpList, Status: 200, BytesOut: 500},
		{Time: at(61), Op: OpDelete, Key: "a", Status: 204},
		{Time: at(62), Op: "head", Status: 200},
		{Time: at(63), Op: OpOther, Status: 500},
		{Time: at(185), Op: OpGet, Key: "a", Status: 304},
	} {
		b.RecordAccess("pics", a)
	}
	want := strings.Join([]string{
		"11:00 get=0 put=0 delete=0 list=0 other=0 in=0 out=0 errors=0",
		"12:00 get=3 put=1 delete=0 list=1 other=0 in=3 out=564 errors=1",
		"13:00 get=0 put=0 delete=1 list=0 other=2 in=0 out=0 errors=1",
		"14:00 get=0 put=0 delete=0 list=0 other=0 in=0 out=0 errors=0",
		"15:00 get=1 put=0 delete=0 list=0 other=0 in=0 out=0 errors=0",
	}, "\n")
	if got := hourLines(t, b.Store, "acme", "pics", at(-1), at(190)); got != want {
		t.Errorf("metrics:\n%s\nwant:\n%s", got, want)
	}
	// More accesses to an hour already written add to it; Close writes
	// what is still in memory.
	b.RecordAccess("pics", Access{Time: at(10), Op: OpGet, Key: "a", Status: 200, BytesOut: 3})
	b.reopen()
	if got, want := hourLines(t, b.Store, "acme", "pics", at(0), at(0)), "12:00 get=4 put=1 delete=0 list=1 other=0 in=3 out=567 errors=1"; got != want {
		t.Errorf("after more accesses and a reopen:\n%s\nwant:\n%s", got, want)
	}
	if got := hourLines(t, b.Store, "acme", "pics", at(60), at(0)); got != "" {
		t.Errorf("a window that ends before it starts: %q, want nothing", got)
	}
	if _, err := b.Metrics("other", "pics", at(0), at(0)); !errors.Is(err, ErrNotFound) {
		t.Errorf("Metrics of another account's bucket: %v, want ErrNotFound", err)
	}
}

func TestMetricsDropped(t *testing.T) {
	b := newBlobStore(t)
	b.RecordAccess("nope", Access{Time: t0, Op: OpGet, Status: 404})
	// Accesses before the bucket existed (an earlier bucket's name).
	b.RecordAccess("pics", Access{Time: t0.Add(-time.Hour), Op: OpGet, Status: 200})
	if err := b.flushMetrics(); err != nil {
		t.Fatal(err)
	}
	n := 0
	b.scan([]byte{tHour}, func(k, _ []byte) error { n++; return nil })
	if n != 0 {
		t.Errorf("%d hourly records, want none (a missing bucket, an hour before the bucket)", n)
	}

	// Hours older than the retention are dropped when newer ones are
	// written.
	old := t0.Add(time.Hour)
	b.RecordAccess("pics", Access{Time: old, Op: OpGet, Status: 200})
	b.flushMetrics()
	b.RecordAccess("pics", Access{Time: old.Add(MetricsRetention - time.Hour), Op: OpGet, Status: 200})
	b.flushMetrics()
	if got := countNonZero(t, b.Store, old, old.Add(MetricsRetention)); got != 2 {
		t.Errorf("%d hours with traffic within the retention, want 2", got)
	}
	b.RecordAccess("pics", Access{Time: old.Add(MetricsRetention + time.Hour), Op: OpGet, Status: 200})
	b.flushMetrics()
	if got := countNonZero(t, b.Store, old, old.Add(MetricsRetention+time.Hour)); got != 2 {
		t.Errorf("%d hours with traffic after the first fell out of retention, want 2", got)
	}

	// Deleting the bucket deletes its metrics; a new bucket of the name
	// starts with none.
	b.RecordAccess("pics", Access{Time: t0, Op: OpGet, Status: 200})
	if err := b.DeleteBucket("acme", "pics"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreateBucket("other", "pics", "", t0); err != nil {
		t.Fatal(err)
	}
	if got := countNonZero(t, b.Store, old, old.Add(MetricsRetention+time.Hour), "other"); got != 0 {
		t.Errorf("%d hours with traffic in a new bucket of a deleted one's name, want 0", got)
	}
}

// countNonZero counts the hours of pics (acme's, or account's) with
// requests.
func countNonZero(t *testing.T, s *Store, from, to time.Time, account ...string) int {
	t.Helper()
	acct := "acme"
	if len(account) > 0 {
		acct = account[0]
	}
	hs, err := s.Metrics(acct, "pics", from, to)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, h := range hs {
		if h.Requests.Total() > 0 {
			n++
		}
	}
	return n
}

func TestTopObjects(t *testing.T) {
	b := newBlobStore(t)
	for _, key := range []string{"a", "b", "c", "d"} {
		b.put(key, []byte(key))
	}
	get := func(key string, status int, out int64) {
		b.RecordAccess("pics", Access{Time: t0, Op: OpGet, Key: key, Status: status, BytesOut: out})
	}
	get("a", 200, 10)
	get("b", 200, 5)
	get("b", 200, 5)
	get("c", 200, 30)
	get("c", 200, 0)
	get("d", 404, 0)  // errors do not count
	get("zz", 200, 1) // a key with no object does not count
	tests := []struct {
		n    int
		want string
	}{
		{10, "c:2/30 b:2/10 a:1/10"},
		{2, "c:2/30 b:2/10"},
		{0, ""},
	}
	for _, tt := range tests {
		top, total, err := b.TopObjects("acme", "pics", tt.n)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range top {
			got = append(got, fmt.Sprintf("%s:%d/%d", o.Key, o.Requests, o.BytesOut))
		}
		if strings.Join(got, " ") != tt.want || total != 3 {
			t.Errorf("TopObjects(%d) = %q, total %d; want %q, total 3", tt.n, strings.Join(got, " "), total, tt.want)
		}
	}
	top, _, _ := b.TopObjects("acme", "pics", 1)
	if !top[0].LastAccess.Equal(t0) {
		t.Errorf("last access %v, want %v", top[0].LastAccess, t0)
	}
	// Deleting an object drops its counts; an object made again under
	// the key starts from zero.
	if _, err := b.Delete("acme", "pics", "c", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.put("c", []byte("again"))
	get("c", 200, 5)
	top, total, _ := b.TopObjects("acme", "pics", 10)
	if total != 3 || top[2].Key != "c" || top[2].Requests != 1 {
		t.Errorf("after deleting and remaking c: %+v (total %d), want c last with 1 request", top, total)
	}
	if _, _, err := b.TopObjects("other", "pics", 10); !errors.Is(err, ErrNotFound) {
		t.Errorf("TopObjects of another account's bucket: %v, want ErrNotFound", err)
	}
}

func TestFileTypes(t *testing.T) {
	b := newBlobStore(t)
	for key, size := range map[string]int{
		"a.JPG": 10, "b/c.jpg": 5, "d.png": 100, "notes": 7, ".bashrc": 1, "x.tar.gz": 3,
		"folder/": 0, "odd.a-b": 2,
	} {
		b.put(key, []byte(strings.Repeat("x", size)))
	}
	got, err := b.FileTypes("acme", "pics")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, ft := range got {
		lines = append(lines, fmt.Sprintf("%q:%d/%d", ft.Extension, ft.Objects, ft.Bytes))
	}
	if got, want := strings.Join(lines, " "), `"png":1/100 "jpg":2/15 "":3/10 "gz":1/3`; got != want {
		t.Errorf("FileTypes = %s, want %s", got, want)
	}
	if _, err := b.FileTypes("other", "pics"); !errors.Is(err, ErrNotFound) {
		t.Errorf("FileTypes of another account's bucket: %v, want ErrNotFound", err)
	}
}

func TestExtension(t *testing.T) {
	tests := []struct{ key, want string }{
		{"a.txt", "txt"},
		{"A.TXT", "txt"},
		{"dir.d/file", ""},
		{"dir/file.Tar.GZ", "gz"},
		{".bashrc", ""},
		{"dir/.hidden", ""},
		{"trailing.", ""},
		{"x.abcdefghijklmnop", "abcdefghijklmnop"},
		{"x.abcdefghijklmnopq", ""},
		{"x.a b", ""},
		{"x.é", ""},
		{"", ""},
		{"a/", ""},
	}
	for _, tt := range tests {
		if got := Extension(tt.key); got != tt.want {
			t.Errorf("Extension(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

// TestMetricsDoNotPassToTheNextOwner: counts of a deleted bucket, still
// in memory, never reach a bucket later made under its name, not even
// when they were taken from memory before the delete.
func TestMetricsDoNotPassToTheNextOwner(t *testing.T) {
	s := newStore(t)
	now := time.Now().UTC()
	if _, err := s.CreateBucket("acme", "pics", "", now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	for range 7 {
		s.RecordAccess("pics", Access{Time: now, Op: OpGet, Key: "index.html", Status: 200, BytesOut: 50})
	}
	if err := s.DeleteBucket("acme", "pics"); err != nil {
		t.Fatal(err)
	}
	// A flush that took acme's counts before the delete and writes them
	// after the name was taken again.
	s.RecordAccess("pics", Access{Time: now, Op: OpGet, Key: "index.html", Status: 200, BytesOut: 50})
	if _, err := s.CreateBucket("evil", "pics", "", now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.flushMetrics(); err != nil {
		t.Fatal(err)
	}
	hours, err := s.Metrics("evil", "pics", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hours {
		if h.Requests.Total() != 0 || h.BytesOut != 0 {
			t.Fatalf("the new owner sees the old owner's traffic: %+v", h)
		}
	}
	top, _, err := s.TopObjects("evil", "pics", 10)
	if err != nil || len(top) != 0 {
		t.Fatalf("the new owner's top objects = %+v, %v", top, err)
	}
}

// TestMetricsFlushSurvivesPowerLoss: what a flush wrote is synced, so a
// crash loses only the counts gathered since (at most one
// MetricsFlushInterval), not older ones waiting in Pebble's log buffer.
func TestMetricsFlushSurvivesPowerLoss(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := openWithBucket(t, fs) // acme's pics, created at t0
	s.RecordAccess("pics", Access{Time: t0.Add(time.Minute), Op: OpList, Status: 200, BytesOut: 42})
	if err := s.flushMetrics(); err != nil {
		t.Fatal(err)
	}
	s.RecordAccess("pics", Access{Time: t0.Add(2 * time.Minute), Op: OpGet, Status: 404}) // not flushed: lost
	after := afterPowerLoss(t, fs, s)
	if got, want := hourLines(t, after, "acme", "pics", t0, t0), "12:00 get=0 put=0 delete=0 list=1 other=0 in=0 out=42 errors=0"; got != want {
		t.Errorf("after the crash:\n%s\nwant:\n%s", got, want)
	}
}
