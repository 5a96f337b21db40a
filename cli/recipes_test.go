package cli

// The curl recipes of docs/api.md and docs/cloud-api.md: every operation
// of both APIs has one (TestDocRecipesCoverEveryOperation), and every
// recipe runs, in the order of its page, against a real `lattice dev`
// (TestDocRecipesRun).

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/platform"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
	"github.com/latticenet/lattice/internal/testkit/tooltest"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/govnet"
	"github.com/latticenet/lattice/node/leasenet"
	"github.com/latticenet/lattice/node/marketnet"
	"github.com/latticenet/lattice/node/nodeapi"
	"github.com/latticenet/lattice/node/vmnet"
)

// recipePages are the pages whose sh blocks are recipes, and the variable
// that begins the URLs of the API each one describes.
var recipePages = []struct{ file, base string }{
	{"../docs/api.md", "NODE"},
	{"../docs/cloud-api.md", "API"},
}

// A recipe is one sh block of a page.
type recipe struct {
	file string
	line int // of the opening ```sh
	text string
}

func (r recipe) String() string {
	return fmt.Sprintf("%s:%d", strings.TrimPrefix(r.file, "../"), r.line)
}

// recipes returns the sh blocks of a page, in order.
func recipes(t *testing.T, file string) []recipe {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []recipe
	var cur *recipe
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```sh":
			cur = &recipe{file: file, line: n}
		case cur != nil && strings.HasPrefix(strings.TrimSpace(line), "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s: the sh block that opens at line %d never closes", file, cur.line)
	}
	return out
}

// assignment is a line of a variables block: NAME=VALUE.
var assignment = regexp.MustCompile(`^([A-Z_][A-Z0-9_]*)=`)

// variables returns the names a block assigns, when the block is a
// variables block: nothing but assignments, comments and blank lines.
func variables(r recipe) (names []string, ok bool) {
	for _, l := range strings.Split(r.text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		m := assignment.FindStringSubmatch(l)
		if m == nil {
			return nil, false
		}
		names = append(names, m[1])
	}
	return names, len(names) > 0
}

// A call is what one curl command of a recipe asks: its method and the URL
// as written, variables and all.
type call struct {
	method, url string
}

// curlCalls returns the curl commands of a shell script, those inside
// $(...) included.
func curlCalls(script string) []call {
	script = stripComments(strings.ReplaceAll(script, "\\\n", " "))
	var out []call
	for i := 0; i < len(script); i++ {
		if !strings.HasPrefix(script[i:], "curl ") || (i > 0 && !strings.ContainsRune(" \t\n($;|&", rune(script[i-1]))) {
			continue
		}
		words, end := shellWords(script[i+len("curl "):])
		out = append(out, curlCall(words))
		i += len("curl ") + end - 1
	}
	return out
}

// stripComments removes the comments of a shell script: from a # that
// begins a word, outside quotes, to the end of its line.
func stripComments(script string) string {
	var b strings.Builder
	var quote byte
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(script) {
				b.WriteByte(c)
				i++
				c = script[i]
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || strings.IndexByte(" \t\n", script[i-1]) >= 0):
			for i < len(script) && script[i] != '\n' {
				i++
			}
			if i < len(script) {
				b.WriteByte('\n')
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// shellWords splits the words of one command at the start of s, up to an
// unquoted newline, ;, |, &, ) or #comment; quotes are removed, and $(...)
// is kept whole. It returns the words and where the command ended.
func shellWords(s string) (words []string, end int) {
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			inWord, i = true, i+1+j
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				w.WriteByte(s[i])
			}
			inWord = true
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			depth, j := 0, i
			for ; j < len(s); j++ {
				if s[j] == '(' {
					depth++
				} else if s[j] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			w.WriteString(s[i:min(j+1, len(s))])
			inWord, i = true, j
		case c == ' ' || c == '\t':
			flush()
		case strings.IndexByte("\n;|&)", c) >= 0:
			flush()
			return words, i
		case c == '#' && !inWord:
			flush()
			return words, i
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, i
}

// curlArgOptions are curl's options that take an argument.
var curlArgOptions = map[string]bool{
	"-H": true, "--header": true, "-d": true, "--data": true, "--data-binary": true, "--data-raw": true,
	"--data-urlencode": true, "-F": true, "--form": true, "-X": true, "--request": true, "-o": true,
	"--output": true, "-D": true, "--dump-header": true, "-m": true, "--max-time": true, "-u": true,
	"--user": true, "-T": true, "--upload-file": true, "--json": true, "-w": true, "--write-out": true,
	"--resolve": true, "-A": true, "--user-agent": true, "-r": true, "--range": true, "--connect-timeout": true,
}

// curlCall reads a curl command's method and URL from its words.
func curlCall(words []string) call {
	var c call
	var body, upload, head bool
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case curlArgOptions[w] && i+1 < len(words):
			switch w {
			case "-X", "--request":
				c.method = words[i+1]
			case "-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "-F", "--form", "--json":
				body = true
			case "-T", "--upload-file":
				upload = true
			}
			i++
		case w == "-I" || w == "--head":
			head = true
		case strings.HasPrefix(w, "-"):
		default:
			c.url = w
		}
	}
	if c.method == "" {
		switch {
		case head:
			c.method = "HEAD"
		case upload:
			c.method = "PUT"
		case body:
			c.method = "POST"
		default:
			c.method = "GET"
		}
	}
	return c
}

// shellValue matches what a shell fills in: $(...), ${NAME} and $NAME.
var shellValue = regexp.MustCompile(`\$\([^()]*(\([^()]*\)[^()]*)*\)|\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*`)

// request returns the request a call makes of the API whose URLs begin
// with $base, with "x" for every value the shell fills in; ok is false
// for a call to another URL.
func (c call) request(base string) (r *http.Request, ok bool) {
	u, found := strings.CutPrefix(c.url, "$"+base)
	if !found {
		if u, found = strings.CutPrefix(c.url, "${"+base+"}"); !found {
			return nil, false
		}
	}
	if !strings.HasPrefix(u, "/") {
		return nil, false
	}
	u, _, _ = strings.Cut(u, "?")
	u = shellValue.ReplaceAllString(u, "x")
	r, err := http.NewRequest(c.method, "http://recipe"+u, nil)
	return r, err == nil
}

// operationSets are the operations of the node's API and of the cloud's,
// each as the server routes them and as docs/openapi describes them:
// net/http patterns ("GET /accounts/{address}").
func operationSets(t *testing.T) map[string]map[string][]string {
	t.Helper()
	// The node's routes: a server of no node registers them all (chat,
	// the state chain, the marketplace and metrics included, as `lattice dev` serves them)
	// and is never served.
	node := nodeapi.New(nil, nodeapi.Options{Chat: new(chatnet.Service), StateChain: new(govnet.Service),
		Market: new(marketnet.Service), Leases: new(leasenet.Service), VMs: new(vmnet.Service), MetricsHandler: http.NotFoundHandler()}).Routes()
	// The platform's, provisioned as `lattice dev` runs it.
	quiet := &env{stdout: io.Discard, stderr: io.Discard}
	p, _ := newCloud(quiet, cloudConfig{Config: platform.Config{Dir: filepath.Join(t.TempDir(), "cloud"), API: "127.0.0.1:0"},
		Storage: platform.StorageConfig{S3: "127.0.0.1:0"}, DNS: platform.DNSConfig{Addr: "127.0.0.1:0"},
		CDN: platform.CDNConfig{Addr: "127.0.0.1:0", PrivateOrigins: true}})
	defer p.Close()
	if err := p.Listen(); err != nil {
		t.Fatal(err)
	}
	if err := p.Provision(); err != nil {
		t.Fatal(err)
	}
	return map[string]map[string][]string{
		"NODE": {"nodeapi routes": node, "docs/openapi/node.json": openapitest.Node.Checker(t).Patterns()},
		"API":  {"platform routes": p.API().Routes(), "docs/openapi/cloud.json": openapitest.Cloud.Checker(t).Patterns()},
	}
}

// TestDocRecipesCoverEveryOperation: every operation of the node's API has
// a curl recipe in docs/api.md, and every operation of the cloud's in
// docs/cloud-api.md; every curl of a recipe to $NODE or $API calls an
// operation. The operations are the servers' routes and those of
// docs/openapi, which other tests hold to each other.
func TestDocRecipesCoverEveryOperation(t *testing.T) {
	cleanEnv(t)
	sets := operationSets(t)
	for _, page := range recipePages {
		var calls []call
		var where []recipe
		for _, r := range recipes(t, page.file) {
			for _, c := range curlCalls(r.text) {
				if _, ok := c.request(page.base); ok {
					calls = append(calls, c)
					where = append(where, r)
				}
			}
		}
		if len(calls) == 0 {
			t.Errorf("%s: no curl recipe calls $%s", page.file, page.base)
		}
		for source, patterns := range sets[page.base] {
			mux := http.NewServeMux()
			for _, p := range patterns {
				mux.HandleFunc(p, func(http.ResponseWriter, *http.Request) {})
			}
			seen := map[string]bool{}
			for i, c := range calls {
				req, _ := c.request(page.base)
				if _, p := mux.Handler(req); p != "" {
					seen[p] = true
				} else {
					t.Errorf("%s: curl %s %s is no operation of the %s", where[i], c.method, c.url, source)
				}
			}
			var missing []string
			for _, p := range patterns {
				if !seen[p] {
					missing = append(missing, p)
				}
			}
			slices.Sort(missing)
			if len(missing) > 0 {
				t.Errorf("%s has no curl recipe of these operations (%d of the %s):\n\t%s",
					page.file, len(missing), source, strings.Join(missing, "\n\t"))
			}
		}
	}
}

// TestCurlCalls checks the reading of curl commands the coverage relies on.
func TestCurlCalls(t *testing.T) {
	script := `HASH=$(curl -fsS $NODE/accounts/$ME | jq -r .frontier)   # the latest
curl -fsS -H 'Content-Type: application/json' -d "{\"hash\": \"$HASH\"}" $NODE/pow
curl -fsS -X DELETE -H "Authorization: Bearer $KEY" \
  $API/api/storage/buckets/photos/objects/docs/a.txt
curl -fsS -N --max-time 2 "$NODE/chat/events?account=$ME" || [ $? -eq 28 ]
curl -fsS $NODE/accounts/$(jq -r .account open.json)/keyset
printf 'meow' | curl -fsS -X PUT --data-binary @- "$URL"
# curl $NODE/not/run
`
	want := []call{
		{"GET", "$NODE/accounts/$ME"},
		{"POST", "$NODE/pow"},
		{"DELETE", "$API/api/storage/buckets/photos/objects/docs/a.txt"},
		{"GET", "$NODE/chat/events?account=$ME"},
		{"GET", "$NODE/accounts/$(jq -r .account open.json)/keyset"},
		{"PUT", "$URL"},
	}
	got := curlCalls(script)
	if !slices.Equal(got, want) {
		t.Errorf("curlCalls =\n%q\nwant\n%q", got, want)
	}
	if r, ok := got[4].request("NODE"); !ok || r.URL.Path != "/accounts/x/keyset" {
		t.Errorf("request of %v = %v, %v; want /accounts/x/keyset", got[4], r, ok)
	}
	if _, ok := got[5].request("API"); ok {
		t.Errorf("a call to $URL is a request of $API")
	}
}

// TestDocRecipesRun runs every recipe of docs/api.md and docs/cloud-api.md,
// in the order of its page, with sh -eu (an unset variable fails too)
// against a fresh `lattice dev`, and fails at the first that exits non-zero,
// with the recipe and its output. The variables block at the top of each
// page's recipes runs first, with the test's URLs for NODE, API, CDN and
// DATA, and what it sets is given to every later block. `lattice` on PATH
// is this test binary, which runs the command line when
// LATTICE_TEST_AS_LATTICE is set (TestMain). A recipe that cannot end by
// itself (GET /chat/events) bounds itself, as a reader's would, with
// curl --max-time.
func TestDocRecipesRun(t *testing.T) {
	sh := tooltest.Need(t, "sh")
	// QEMU: docs/api.md's provider recipes boot a VM on a lease; without
	// it they would wait for a VM that never runs.
	for _, prog := range []string{"curl", "jq", "qemu-system-x86_64"} {
		tooltest.Need(t, prog)
	}
	cleanEnv(t)
	start := time.Now()
	data := filepath.Join(t.TempDir(), "dev")
	s := startServer(t, devReady, "dev", "--data", data, "--http", "127.0.0.1:0", "--api", "127.0.0.1:0", "--vm-image", "minimal")
	banner := s.stdout.String()
	url := func(label string) string {
		m := regexp.MustCompile(`(?m)^  ` + label + `\s+(http://\S+)`).FindStringSubmatch(banner)
		if m == nil {
			t.Fatalf("lattice dev's banner has no %q URL:\n%s", label, banner)
		}
		return m[1]
	}
	given := map[string]string{"NODE": s.url, "API": url("cloud API"), "CDN": url("CDN edge"), "DATA": data}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "lattice")); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir() // where the recipes write their files
	base := append(os.Environ(), "LATTICE_TEST_AS_LATTICE=1", "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	run := func(r recipe, script string, vars []string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, sh, "-eu", "-c", script)
		cmd.Dir = work
		cmd.Env = append(slices.Clone(base), vars...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		began := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: the recipe failed (%v):\n%s\n--- stdout:\n%s\n--- stderr:\n%s", r, err, r.text, stdout.String(), stderr.String())
		}
		t.Logf("%s: ok in %v", r, time.Since(began).Round(time.Millisecond))
		return stdout.String()
	}

	total := 0
	for _, page := range recipePages {
		var vars []string
		rs := recipes(t, page.file)
		if len(rs) == 0 {
			t.Fatalf("%s has no sh blocks", page.file)
		}
		names, ok := variables(rs[0])
		if !ok {
			t.Fatalf("%s: the first sh block is not the variables block (NAME=VALUE lines only):\n%s", rs[0], rs[0].text)
		}
		// The variables block, with the test's URLs in place of those of
		// `lattice dev`'s default ports; then print what it set.
		var script strings.Builder
		for _, l := range strings.Split(rs[0].text, "\n") {
			if m := assignment.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
				if v, ok := given[m[1]]; ok {
					l = m[1] + "='" + v + "'"
				}
			}
			script.WriteString(l + "\n")
		}
		for _, n := range names {
			fmt.Fprintf(&script, "printf '%%s=%%s\\0' %s \"$%s\"\n", n, n)
		}
		if !slices.Contains(names, page.base) {
			t.Fatalf("%s: the variables block does not set %s", rs[0], page.base)
		}
		for _, kv := range strings.Split(strings.TrimSuffix(run(rs[0], script.String(), nil), "\x00"), "\x00") {
			name, v, _ := strings.Cut(kv, "=")
			if v == "" {
				t.Fatalf("%s: the variables block left %s empty", rs[0], name)
			}
			vars = append(vars, kv)
		}
		for _, r := range rs[1:] {
			if _, ok := variables(r); ok {
				t.Fatalf("%s: a second variables block: the recipes' variables are set once, at the top", r)
			}
			run(r, r.text, vars)
		}
		total += len(rs)
	}
	t.Logf("%d recipe blocks ran in %v", total, time.Since(start).Round(time.Millisecond))
}
