package openapitest

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/latticenet/lattice/docs/openapi"
	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// A Document is one of the embedded API documents, loaded once per test
// binary so that Covered sees every test's requests.
type Document struct {
	name string // its file, for messages
	load func() (*Checker, error)
}

var (
	// Node is docs/openapi/node.json, the ledger node's API.
	Node = Document{"docs/openapi/node.json", sync.OnceValues(func() (*Checker, error) { return New(openapi.Node) })}
	// Cloud is docs/openapi/cloud.json, the cloud platform's REST API.
	Cloud = Document{"docs/openapi/cloud.json", sync.OnceValues(func() (*Checker, error) { return New(openapi.Cloud) })}
)

// Describes fails t for each route ("GET /accounts/{address}") the
// document does not describe, and each operation it describes that is not
// among routes: the document and the server, held to each other both ways.
func (d Document) Describes(t testing.TB, routes []string) {
	t.Helper()
	documented := d.Checker(t).Patterns()
	for _, r := range routes {
		if !slices.Contains(documented, r) {
			t.Errorf("route %q is not in %s", r, d.name)
		}
	}
	for _, p := range documented {
		if !slices.Contains(routes, p) {
			t.Errorf("%s describes %q, which the server does not route", d.name, p)
		}
	}
}

// Checker is the document's checker; a document that does not load fails
// t.
func (d Document) Checker(t testing.TB) *Checker {
	t.Helper()
	c, err := d.load()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Handler is d.Checker(t).Handler(t, h).
func (d Document) Handler(t testing.TB, h http.Handler) http.Handler {
	t.Helper()
	return d.Checker(t).Handler(t, h)
}

// Covered is for TestMain, after m.Run: when the whole package ran and
// passed (code 0, no -run, -skip or -short, and no test skipped for want
// of a tool: tooltest.Skipped, which CI never allows), every documented
// operation whose path
// starts with one of prefixes must have been answered by a checked
// handler at least once, so that every one is validated against a real
// response. It returns the exit code.
func (d Document) Covered(code int, prefixes ...string) int {
	if code != 0 || filtered() || testing.Short() || tooltest.Skipped() {
		return code
	}
	ck, err := d.load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var missing []string
	for _, p := range ck.Unseen() {
		path := p[strings.IndexByte(p, ' ')+1:]
		for _, prefix := range prefixes {
			if strings.HasPrefix(path, prefix) {
				missing = append(missing, p)
				break
			}
		}
	}
	if len(missing) == 0 {
		return 0
	}
	fmt.Fprintf(os.Stderr, "FAIL: no test validated a response of these documented operations against docs/openapi:\n\t%s\n", strings.Join(missing, "\n\t"))
	return 1
}

// filtered says whether the tests ran were chosen by a flag.
func filtered() bool {
	for _, name := range []string{"test.run", "test.skip", "test.fuzz", "test.list"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return true
		}
	}
	return false
}
