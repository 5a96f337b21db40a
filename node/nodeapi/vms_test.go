package nodeapi_test

import (
	"strings"
	"testing"
)

// The VM endpoints' answers that need no machine, on the lease harness's
// cluster, through the OpenAPI checker: the lists, and what each endpoint
// refuses before a provider is asked. The machines themselves, exec and
// the tunnel are tested with real VMs in package vmnet.
func TestVMEndpointsRefuse(t *testing.T) {
	lh := newLeaseHarness(t)
	h := lh.h[0]
	unknown := strings.Repeat("ab", 32)
	var vms []map[string]any
	h.getJSON("/vms", &vms)
	if len(vms) != 0 {
		t.Fatalf("GET /vms on a node that provides nothing: %v", vms)
	}
	checkError(t, h.get("/vms?all=1"), 400, "GET /vms?all=1", "no query parameters")
	checkError(t, h.get("/vms/xyz"), 400, "GET /vms/xyz", "invalid lease hash")
	checkError(t, h.get("/vms/"+unknown), 404, "GET /vms/unknown", "VM not found")

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

	checkError(t, h.do("POST", "/tunnel/xyz/tcp?port=22", nil), 400, "tunnel, bad hash", "invalid lease hash")
	for _, q := range []string{"", "?port=0", "?port=65536", "?port=ssh", "?port=22&port=23"} {
		checkError(t, h.do("POST", "/tunnel/"+unknown+"/tcp"+q, nil), 400, "tunnel"+q, "port must be")
	}
	checkError(t, h.post("/tunnel/"+unknown+"/tcp?port=22", "x"), 400, "tunnel with a body", "no body")
	checkError(t, h.do("POST", "/tunnel/"+unknown+"/tcp?port=22", nil), 404, "tunnel, unknown lease", "lease not found")
}
