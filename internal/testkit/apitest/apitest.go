// Package apitest drives the cloud REST API in end-to-end tests: real
// requests over loopback HTTP with an API key, and checks of the answers'
// status, JSON and error envelope.
package apitest

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/accounts"
)

// Response is one answer, read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends method url with the API key (none if "") and a JSON body (none
// if "").
func Do(t testing.TB, method, url, key, body string) Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return Response{resp.StatusCode, resp.Header, data}
}

// Decode unmarshals r's body into v, strictly.
func Decode(t testing.TB, what string, r Response, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(r.Body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: body %s: %v", what, r.Body, err)
	}
}

// Want checks an answer's status, and that it is JSON when it has a body.
func Want(t testing.TB, what string, r Response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d (body %s)", what, r.Status, status, r.Body)
	}
	if status == http.StatusNoContent {
		if len(r.Body) != 0 {
			t.Errorf("%s: a 204 with a body: %s", what, r.Body)
		}
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
}

// WantError checks an error answer: status, code, and a message holding
// fragment and no internal package prefix (such as "dnsstore:").
func WantError(t testing.TB, what string, r Response, status int, code, fragment string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("%s: status %d, want %d (body %s)", what, r.Status, status, r.Body)
		return
	}
	var env struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	Decode(t, what, r, &env)
	if env.Error.Code != code {
		t.Errorf("%s: code %q, want %q (message %q)", what, env.Error.Code, code, env.Error.Message)
	}
	if env.Error.Message == "" || !strings.Contains(env.Error.Message, fragment) {
		t.Errorf("%s: message %q, want it to hold %q", what, env.Error.Message, fragment)
	}
	for _, leak := range []string{"invalid:", "store:", "cdnstore", "dnsstore", "cloudstore"} {
		if strings.Contains(env.Error.Message, leak) {
			t.Errorf("%s: message %q leaks an internal error prefix (%q)", what, env.Error.Message, leak)
		}
	}
}

// Accounts opens an accounts store in a temporary directory, closed when
// the test ends.
func Accounts(t testing.TB) *accounts.Store {
	t.Helper()
	acc, err := accounts.Open(t.TempDir(), accounts.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { acc.Close() })
	return acc
}
