package s3api_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// The interop scripts (testdata/interop) use the endpoint as a new user
// would, with boto3 and with the AWS SDK for JavaScript v3, feature by
// feature: buckets, objects and listings, multipart and managed
// transfers, copies, presigned URLs and POST forms, checksums,
// versioning, encryption, lifecycle, policies and ACLs, CORS, tagging,
// GetObjectAttributes and conditional writes. Each prints "ok NAME" or
// "FAIL NAME: why" per feature and fails when any fails; they can be
// run by hand against `lattice dev` too (see their first lines).

// runInterop runs an interop script with path on e for at most three
// minutes and fails t with its output when it fails.
func (e *env) runInterop(t *testing.T, prefix, path string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append(args, e.srv.URL, prefix)...)
	cmd.Env = e.clientEnv(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(path), strings.Join(args, " "), err, out)
	}
	t.Logf("%s", out)
}

// TestBoto3Interop runs testdata/interop/boto3_interop.py with the
// python3 on PATH (in CI Debian's, with python3-boto3 1.26) and, when
// it is another one with boto3, with /usr/bin/python3 as well, so that a
// machine with a current boto3 checks both.
func TestBoto3Interop(t *testing.T) {
	python := tooltest.Need(t, "python3", "-c", "import boto3")
	script, err := filepath.Abs(filepath.Join("testdata", "interop", "boto3_interop.py"))
	if err != nil {
		t.Fatal(err)
	}
	pythons := []string{python}
	if other, err := filepath.EvalSymlinks("/usr/bin/python3"); err == nil {
		if mine, _ := filepath.EvalSymlinks(python); mine != other && exec.Command(other, "-c", "import boto3").Run() == nil {
			pythons = append(pythons, "/usr/bin/python3")
		}
	}
	for i, py := range pythons {
		t.Run(strings.ReplaceAll(py, "/", "_"), func(t *testing.T) {
			e := newEnv(t)
			e.runInterop(t, "boto"+string(rune('a'+i)), py, script)
		})
	}
}

// jsSDKModules is what the JavaScript interop script requires; NODE_PATH
// names the node_modules that holds them (.ci/run installs the versions
// of testdata/interop/package-lock.json there).
const jsSDKModules = `for (const m of ["@aws-sdk/client-s3", "@aws-sdk/s3-request-presigner", "@aws-sdk/lib-storage", "@aws-sdk/s3-presigned-post"]) require(m)`

// TestJSSDKInterop runs testdata/interop/jssdk_interop.mjs with node
// (20 or newer, as the SDK requires) and the SDK found through
// NODE_PATH: skipped where either is missing, failed in CI.
func TestJSSDKInterop(t *testing.T) {
	if os.Getenv("NODE_PATH") == "" && os.Getenv("CI") != "true" {
		t.Skip("NODE_PATH names no node_modules with the AWS SDK for JavaScript v3 (npm ci in testdata/interop, then NODE_PATH=$PWD/node_modules); with CI=true this fails")
	}
	node := tooltest.Need(t, "node", "-e", jsSDKModules)
	script, err := filepath.Abs(filepath.Join("testdata", "interop", "jssdk_interop.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.runInterop(t, "js", node, script)
}
