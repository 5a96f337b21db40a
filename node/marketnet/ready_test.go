package marketnet

import (
	"errors"
	"strings"
	"testing"

	"github.com/latticenet/lattice/market"
)

// TestOfferWhenNotReady: a provider whose host cannot run VMs makes no
// offer, and says why; a request it could not take anyway is refused
// for that reason first.
func TestOfferWhenNotReady(t *testing.T) {
	s := &Service{cfg: Config{
		Capacity: market.Resources{VCPUs: 4, MemoryMB: 4096, DiskGB: 50},
		Ready:    func() error { return errors.New("qemu: missing on this host: mkfs.ext4") },
	}}
	ans := s.offer(market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 3600})
	if ans.Offer != nil || !strings.Contains(ans.Error, "cannot run VMs now: qemu: missing on this host: mkfs.ext4") {
		t.Fatalf("offer from a host that cannot run VMs: %+v", ans)
	}
	ans = s.offer(market.Request{VCPUs: 0, MemoryMB: 512, DiskGB: 5, Duration: 3600})
	if ans.Offer != nil || strings.Contains(ans.Error, "cannot run VMs") {
		t.Fatalf("an invalid request: %+v", ans)
	}
}
