package nodeapi_test

import (
	"net/http"
	"testing"

	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/wallet"
)

// TestQueryStrict: every endpoint that reads query parameters refuses,
// with 400 and nothing done, a query string that does not parse, one of
// its parameters given twice, and one given empty; parameters it does not
// read are ignored as before.
func TestQueryStrict(t *testing.T) {
	h := newChatHarness(t, chatnet.Config{})
	acct := "account=" + wallet.NewKey().Address().String()
	for _, tc := range []struct {
		path      string
		status    int
		fragments []string
	}{
		{"/blocks/recent?limit=%zz", 400, []string{"malformed query string", "%zz"}},
		{"/blocks/recent?limit=1;limit=2", 400, []string{"malformed query string", "semicolon"}},
		{"/blocks/recent?limit=1&limit=2", 400, []string{"limit", "given 2 times"}},
		{"/blocks/recent?limit=", 400, []string{"limit", "empty"}},
		{"/blocks/recent?limit", 400, []string{"limit", "empty"}},
		{"/leases?limit=%zz", 400, []string{"malformed query string"}},
		{"/leases?limit=1&limit=1", 400, []string{"limit", "given 2 times"}},
		{"/leases?after=", 400, []string{"after", "empty"}},
		{"/leases?consumer=", 400, []string{"consumer", "empty"}},
		{"/chat/messages?" + acct + "&since=", 400, []string{"since", "empty"}},
		{"/chat/messages?" + acct + "&since=1&since=2", 400, []string{"since", "given 2 times"}},
		{"/chat/messages?" + acct + "&" + acct, 400, []string{"account", "given 2 times"}},
		{"/chat/messages?" + acct + "&since=%zz", 400, []string{"malformed query string"}},
		{"/chat/events?account=", 400, []string{"account", "empty"}},
		{"/chat/events?" + acct + "&" + acct, 400, []string{"account", "given 2 times"}},
		{"/chat/events?%zz", 400, []string{"malformed query string"}},
		{"/statechain/blocks?to=%zz", 400, []string{"malformed query string"}},
		{"/statechain/blocks?to=1&to=2", 400, []string{"to", "given 2 times"}},
		{"/vms?%zz", 400, []string{"malformed query string"}},
		// Parameters an endpoint does not read stay ignored.
		{"/blocks/recent?limit=1&x=1&x=2", 200, nil},
		{"/blocks/recent?x=", 200, nil},
		{"/chat/messages?" + acct + "&x=", 200, nil},
		{"/statechain/blocks?x=1&x=2", 200, nil},
		{"/accounts?%zz", 200, nil}, // reads no query at all
	} {
		t.Run(tc.path, func(t *testing.T) {
			h.t = t
			r := h.get(tc.path)
			if tc.status == http.StatusOK {
				if r.status != http.StatusOK {
					t.Errorf("GET %s: status %d, want 200; body %s", tc.path, r.status, r.body)
				}
				return
			}
			checkError(t, r, tc.status, "GET "+tc.path, tc.fragments...)
		})
	}
}
