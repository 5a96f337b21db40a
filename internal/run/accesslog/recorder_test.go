package accesslog

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRecorder(t *testing.T) {
	tests := []struct {
		name   string
		write  func(w http.ResponseWriter)
		status int
		bytes  int64
		wrote  bool
	}{
		{"nothing", func(http.ResponseWriter) {}, 200, 0, false},
		{"body only", func(w http.ResponseWriter) { w.Write([]byte("hello")) }, 200, 5, true},
		{"status then body", func(w http.ResponseWriter) { w.WriteHeader(404); w.Write([]byte("no")) }, 404, 2, true},
		{"second status ignored", func(w http.ResponseWriter) { w.WriteHeader(201); w.WriteHeader(500) }, 201, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := New(httptest.NewRecorder())
			tt.write(rec)
			if rec.Status != tt.status || rec.Bytes != tt.bytes || rec.Wrote != tt.wrote {
				t.Fatalf("got %d %d %v, want %d %d %v", rec.Status, rec.Bytes, rec.Wrote, tt.status, tt.bytes, tt.wrote)
			}
		})
	}
	if _, ok := New(httptest.NewRecorder()).Unwrap().(*httptest.ResponseRecorder); !ok {
		t.Fatal("Unwrap does not return the wrapped writer")
	}
}
