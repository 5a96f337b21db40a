package netlab

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/latticenet/lattice/node/nodeapi"
)

// TestProxyNetworks: `lattice node --proxy-networks` reaches the node's
// bounds per client address. Two real nodes on public addresses; the
// monitor, a public address too, stands for a proxy that many users
// share. Node 1 gives it the bound of one address: its 17th event stream
// is refused with 429. Node 0, told the monitor is a proxy, spares it.
func TestProxyNetworks(t *testing.T) {
	if testing.Short() {
		t.Skip("real nodes in network namespaces: not in -short")
	}
	const spared, bounded = 0, 1
	c := StartCluster(t, ClusterOptions{Nodes: 2, Public: true, Users: 1,
		Args: map[int][]string{spared: {"--proxy-networks", monitorAddr(true).String() + "/32"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	account := c.Users[0].Address().String()
	// open starts an event stream at node i and answers its status; a
	// stream that was admitted stays open until ctx ends.
	open := func(i int) int {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Nodes[i].URL+"/chat/events?account="+account, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Lab.HTTPClient().Do(req)
		if err != nil {
			t.Fatalf("node %d: event stream: %v", i, err)
		}
		if resp.StatusCode != http.StatusOK {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		} else {
			t.Cleanup(func() { resp.Body.Close() })
		}
		return resp.StatusCode
	}
	for _, i := range []int{spared, bounded} {
		for n := range nodeapi.MaxEventStreamsPerSource {
			if code := open(i); code != http.StatusOK {
				t.Fatalf("node %d: event stream %d of %d from one address: %d, want 200", i, n+1, nodeapi.MaxEventStreamsPerSource, code)
			}
		}
	}
	if code := open(bounded); code != http.StatusTooManyRequests {
		t.Errorf("node %d, without --proxy-networks: stream %d from one public address: %d, want 429", bounded, nodeapi.MaxEventStreamsPerSource+1, code)
	}
	if code := open(spared); code != http.StatusOK {
		t.Errorf("node %d, --proxy-networks naming the address: stream %d from it: %d, want 200", spared, nodeapi.MaxEventStreamsPerSource+1, code)
	}
}
