package nodeapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/latticenet/lattice/wallet"
)

// The VM endpoints' answers that need no machine, on the lease harness's
// cluster, through the OpenAPI checker: the lists, and what each endpoint
// refuses before a provider is asked. The machines themselves, exec and
// the tunnel are tested with real VMs in package vmnet.
func TestVMEndpointsRefuse(t *testing.T) {
	lh := newLeaseHarness(t)
	h := lh.h[0]
	unknown := strings.Repeat("ab", 32)
	// A lease in the ledger that no provider will accept: it names an
	// account that provides nothing, so it never has a VM.
	idle := wallet.NewKey()
	lh.c.Open(idle, 1_000_000)
	lease := lh.leaseOf(idle.Address())
	h.okJSON(h.post("/blocks/lease", lease), "POST /blocks/lease", nil)
	known := lease.Hash.String()

	var vms []map[string]any
	h.getJSON("/vms", &vms)
	if len(vms) != 0 {
		t.Fatalf("GET /vms on a node that provides nothing: %v", vms)
	}
	checkError(t, h.get("/vms?all=1"), 400, "GET /vms?all=1", "no query parameters")
	checkError(t, h.get("/vms?%zz"), 400, "GET /vms?%zz", "malformed query string")
	checkError(t, h.get("/vms/xyz"), 400, "GET /vms/xyz", "invalid lease hash")
	// A lease not in the ledger, and a lease in it without a VM, are
	// both 404, told apart as exec and the tunnel tell them.
	if msg := checkError(t, h.get("/vms/"+unknown), 404, "GET /vms/unknown", "lease not found: "+unknown); strings.Contains(msg, "VM not found") {
		t.Errorf("GET /vms/unknown: %q, want lease not found alone", msg)
	}
	checkError(t, h.get("/vms/"+known), 404, "GET /vms/{a lease without a VM}", "VM not found", known)

	body := `{"command":"id"}`
	checkError(t, h.post("/vms/xyz/exec", body), 400, "exec, bad hash", "invalid lease hash")
	checkError(t, h.post("/vms/"+unknown+"/exec", `{"cmd":"id"}`), 400, "exec, unknown field", "ExecRequest")
	checkError(t, h.post("/vms/"+unknown+"/exec", `{"command":""}`), 400, "exec, empty command", "command is required")
	checkError(t, h.post("/vms/"+unknown+"/exec", `{"command":"a"} {}`), 400, "exec, two values", "data after the JSON value")
	checkError(t, h.post("/vms/"+unknown+"/exec", `{"command":"a"}}`), 400, "exec, a stray brace", "data after the JSON value")
	checkError(t, h.post("/vms/"+unknown+"/exec", `null`), 400, "exec, null", "not an object")
	checkError(t, h.post("/vms/"+unknown+"/exec", `{"command":"`+strings.Repeat("x", 65537)+`"}`), 400, "exec, long command", "more than 65536")
	checkError(t, h.post("/vms/"+unknown+"/exec", strings.Repeat(" ", 8*65536+1024+1)), 413, "exec, huge body", "bytes")
	checkError(t, h.post("/vms/"+unknown+"/exec", body), 404, "exec, unknown lease", "lease not found")

	// The tunnel: a malformed hash is 400; a lease not in the ledger is
	// 404 whatever else is wrong with the request (the contract); for a
	// lease in it, the port and the body are judged (400), then the VM.
	checkError(t, h.do("POST", "/tunnel/xyz/tcp?port=22", nil), 400, "tunnel, bad hash", "invalid lease hash")
	for _, tc := range []struct {
		name, lease, query, body string
		status                   int
		fragments                []string
	}{
		{"unknown lease", unknown, "?port=22", "", 404, []string{"lease not found", unknown}},
		{"unknown lease, no port", unknown, "", "", 404, []string{"lease not found"}},
		{"unknown lease, port 0", unknown, "?port=0", "", 404, []string{"lease not found"}},
		{"unknown lease, port twice", unknown, "?port=22&port=23", "", 404, []string{"lease not found"}},
		{"unknown lease, a malformed query", unknown, "?port=%zz", "", 404, []string{"lease not found"}},
		{"unknown lease, a body", unknown, "?port=22", "x", 404, []string{"lease not found"}},
		{"no port", known, "", "", 400, []string{"port must be"}},
		{"port 0", known, "?port=0", "", 400, []string{"port must be"}},
		{"port 65536", known, "?port=65536", "", 400, []string{"port must be"}},
		{"port ssh", known, "?port=ssh", "", 400, []string{"port must be"}},
		{"port twice", known, "?port=22&port=23", "", 400, []string{"port", "given 2 times"}},
		{"port empty", known, "?port=", "", 400, []string{"port", "empty"}},
		{"a malformed query", known, "?port=%zz", "", 400, []string{"malformed query string"}},
		{"a body", known, "?port=22", "x", 400, []string{"no body"}},
		{"no VM", known, "?port=22", "", 404, []string{"VM not found"}},
	} {
		t.Run("tunnel/"+tc.name, func(t *testing.T) {
			h.t = t
			path := "/tunnel/" + tc.lease + "/tcp" + tc.query
			var r resp
			if tc.body != "" {
				r = h.post(path, tc.body)
			} else {
				r = h.do(http.MethodPost, path, nil)
			}
			checkError(t, r, tc.status, "POST "+path, tc.fragments...)
		})
	}
}
