// Package openapitest holds the HTTP APIs to their OpenAPI documents: a
// handler wrapped by a Checker has every response it writes validated
// against the document (status, media type, body schema, documented
// headers), so the tests that already drive an API also prove that its
// document tells the truth.
//
// Requests are not validated: tests send bad requests on purpose, and the
// answers to those must be documented too.
package openapitest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// maxBody is how much of a response body is kept for validation; a longer
// one (an object download, an event stream) has its media type checked but
// not its body.
const maxBody = 4 << 20

// RestExtension marks a path parameter that takes the rest of the path,
// slashes included (net/http's {name...}); OpenAPI's path templates have
// no such form.
const RestExtension = "x-rest-of-path"

// A Checker validates responses against one OpenAPI document.
type Checker struct {
	doc    *openapi3.T
	mux    *http.ServeMux // the document's operations, as net/http patterns
	routes map[string]*routers.Route

	mu   sync.Mutex
	seen map[string]bool // patterns that answered at least once
}

// Load parses and validates an OpenAPI document; a document that does not
// validate fails t.
func Load(t testing.TB, data []byte) *Checker {
	t.Helper()
	c, err := New(data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// New parses and validates an OpenAPI document.
func New(data []byte) (*Checker, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("openapi: load: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi: invalid document: %w", err)
	}
	c := &Checker{doc: doc, mux: http.NewServeMux(), routes: map[string]*routers.Route{}, seen: map[string]bool{}}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			pattern := method + " " + muxPath(path, item, op)
			route := &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: op}
			c.routes[pattern] = route
			c.mux.HandleFunc(pattern, func(http.ResponseWriter, *http.Request) {})
		}
	}
	return c, nil
}

// muxPath is an OpenAPI path template as a net/http pattern's path.
func muxPath(path string, item *openapi3.PathItem, op *openapi3.Operation) string {
	params := append(slices.Clone(item.Parameters), op.Parameters...)
	for _, p := range params {
		if p.Value == nil || p.Value.In != openapi3.ParameterInPath || p.Value.Extensions[RestExtension] != true {
			continue
		}
		path = strings.Replace(path, "{"+p.Value.Name+"}", "{"+p.Value.Name+"...}", 1)
	}
	if strings.HasSuffix(path, "/") || path == "" {
		path += "{$}"
	}
	return path
}

// Patterns are the document's operations as net/http patterns ("GET
// /accounts/{address}"), sorted.
func (c *Checker) Patterns() []string {
	ps := make([]string, 0, len(c.routes))
	for p := range c.routes {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// Unseen are the documented patterns no checked handler has answered yet,
// sorted.
func (c *Checker) Unseen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, p := range c.Patterns() {
		if !c.seen[p] {
			out = append(out, p)
		}
	}
	return out
}

// Handler returns h with every response checked. What does not match the
// document is reported as an error of t when the test ends (handlers run
// on the server's goroutines, which may outlive the test function).
// Requests to paths the document does not describe are not checked: the
// server's own answer to an unknown path is tested where it is built.
func (c *Checker) Handler(t testing.TB, h http.Handler) http.Handler {
	var mu sync.Mutex
	var problems []string
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems {
			t.Error(p)
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if err := c.Check(r, rec.status(), rec.Header(), rec.body.Bytes(), rec.truncated); err != nil {
			mu.Lock()
			problems = append(problems, err.Error())
			mu.Unlock()
		}
	})
}

// redirect is the type of the handler ServeMux gives for a path it would
// redirect.
var redirect = reflect.TypeOf(http.RedirectHandler("/", http.StatusTemporaryRedirect))

// Check validates one response to r. A nil error for a request the
// document does not describe.
func (c *Checker) Check(r *http.Request, status int, header http.Header, body []byte, truncated bool) error {
	// Matching a clone through the document's own mux gives the pattern
	// and the path values as the document names them.
	m := r.Clone(r.Context())
	if h, _ := c.mux.Handler(m); reflect.TypeOf(h) == redirect {
		// A path the mux would redirect (.../objects for .../objects/{key}),
		// which it names by the pattern it redirects to: not described.
		return nil
	}
	c.mux.ServeHTTP(httptest.NewRecorder(), m)
	route := c.routes[m.Pattern]
	if route == nil {
		return nil
	}
	c.mu.Lock()
	c.seen[m.Pattern] = true
	c.mu.Unlock()
	params := map[string]string{}
	for _, name := range pathParams(m.Pattern) {
		params[name] = m.PathValue(name)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, ExcludeResponseBody: truncated},
	}
	in.SetBodyBytes(body)
	if err := c.checkMediaType(route, status, header, body); err != nil {
		return fmt.Errorf("%s %s: %d: %w", r.Method, r.URL, status, err)
	}
	if err := openapi3filter.ValidateResponse(r.Context(), in); err != nil {
		return fmt.Errorf("%s %s: %d %s: the document says otherwise: %w", r.Method, r.URL, status, abbreviate(body), err)
	}
	return nil
}

// checkMediaType holds a response with a body to a documented media type,
// and a documented response without content to an empty body. (The
// filter checks neither when a body is not read.)
func (c *Checker) checkMediaType(route *routers.Route, status int, header http.Header, body []byte) error {
	ref := route.Operation.Responses.Status(status)
	if ref == nil {
		ref = route.Operation.Responses.Default()
	}
	if ref == nil || ref.Value == nil {
		return nil // ValidateResponse reports it
	}
	content := ref.Value.Content
	if len(content) == 0 {
		if len(body) > 0 && status != http.StatusNotModified && route.Method != http.MethodHead {
			return fmt.Errorf("a body (%s) where the document gives none", abbreviate(body))
		}
		return nil
	}
	ct := header.Get("Content-Type")
	if ct == "" {
		if len(body) == 0 {
			return nil
		}
		return fmt.Errorf("a body with no Content-Type")
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return fmt.Errorf("Content-Type %q: %w", ct, err)
	}
	if content.Get(mt) == nil {
		return fmt.Errorf("Content-Type %q is not documented for this status", ct)
	}
	return nil
}

// pathParams are the wildcard names of a net/http pattern.
func pathParams(pattern string) []string {
	var names []string
	for {
		i := strings.IndexByte(pattern, '{')
		if i < 0 {
			return names
		}
		j := strings.IndexByte(pattern[i:], '}')
		if j < 0 {
			return names
		}
		name := strings.TrimSuffix(pattern[i+1:i+j], "...")
		if name != "$" {
			names = append(names, name)
		}
		pattern = pattern[i+j+1:]
	}
}

func abbreviate(body []byte) string {
	const n = 300
	if len(body) > n {
		return fmt.Sprintf("%q...", body[:n])
	}
	return fmt.Sprintf("%q", body)
}

// recorder passes a response through and keeps its status and the first
// maxBody bytes of its body.
type recorder struct {
	http.ResponseWriter
	code      int
	body      bytes.Buffer
	truncated bool
}

func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}

func (r *recorder) WriteHeader(code int) {
	// 101 is final too: the connection then changes protocols (a hijack).
	if r.code == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	keep := min(len(p), maxBody-r.body.Len())
	r.body.Write(p[:keep])
	if keep < len(p) {
		r.truncated = true
	}
	return r.ResponseWriter.Write(p)
}

// Flush and Unwrap keep streaming and http.ResponseController working
// through the recorder.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Hijack hands the connection over when the server allows it.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(r.ResponseWriter).Hijack()
}
