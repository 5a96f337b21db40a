package nodeapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/latticenet/lattice/node/chatnet"
)

// TestDecodeErrorsSpeakJSON: a body of the wrong JSON shape is refused
// with a message that names the field and the JSON types it wants and
// got, never encoding/json's Go types, on every endpoint whose body the
// API decodes itself (blocks are ledger's: TestSubmitBadRequests).
func TestDecodeErrorsSpeakJSON(t *testing.T) {
	h := newChatHarness(t, chatnet.Config{})
	lease := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		path, body string
		fragments  []string
	}{
		{"/pow", `[]`, []string{"want a JSON object, got an array"}},
		{"/pow", `"x"`, []string{"want a JSON object, got a string"}},
		{"/pow", `{"hash":1}`, []string{"hash: want a string, got a number"}},
		{"/pow", ``, []string{"empty body"}},
		{"/pow", `{"hash":`, []string{"truncated JSON"}},
		{"/pow", `{"hash" 1}`, []string{"malformed JSON at byte"}},
		{"/lease/request", `{"vcpus":"1","memory_mb":512,"disk_gb":5,"duration":60}`, []string{"vcpus: want a number, got a string"}},
		{"/lease/request", `{"vcpus":1.5,"memory_mb":512,"disk_gb":5,"duration":60}`, []string{"vcpus: want an integer from -9223372036854775808 to 9223372036854775807, got 1.5"}},
		{"/lease/request", `{"vcpus":1,"memory_mb":true,"disk_gb":5,"duration":60}`, []string{"memory_mb: want a number, got true or false"}},
		{"/lease/request", `[1]`, []string{"want a JSON object, got an array"}},
		{"/attestation/request", `{"lease_hash":5}`, []string{"lease_hash: want a string, got a number"}},
		{"/attestation/request", `{"lease_hash":"` + lease + `","purpose":{}}`, []string{"purpose: want a string, got an object"}},
		{"/chat/send", `{"timestamp":"5"}`, []string{"timestamp: want a number, got a string"}},
		{"/chat/send", `{"from":[]}`, []string{"from: want a string, got an array"}},
		{"/directory/register", `{"timestamp":-1.5}`, []string{"timestamp: want an integer", "got -1.5"}},
		{"/statechain/blocks", `{"signatures":[{"public_key":3}]}`, []string{"signatures.public_key: want a string, got a number"}},
		{"/statechain/blocks", `{"signatures":{}}`, []string{"signatures: want an array, got an object"}},
		{"/vms/" + lease + "/exec", `{"command":5}`, []string{"ExecRequest", "command: want a string, got a number"}},
		{"/vms/" + lease + "/exec", ``, []string{"ExecRequest", "empty body"}},
	} {
		t.Run(tc.path+" "+tc.body, func(t *testing.T) {
			h.t = t
			msg := checkError(t, h.post(tc.path, tc.body), http.StatusBadRequest, "POST "+tc.path+" "+tc.body, tc.fragments...)
			for _, goish := range []string{"Go ", "struct", "of type", "nodewire.", "int64", "uint64", "ledger."} {
				if strings.Contains(msg, goish) {
					t.Errorf("POST %s %s: %q names a Go type (%q)", tc.path, tc.body, msg, goish)
				}
			}
		})
	}
}
