package s3api

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// TestDiskFailuresAre503: a store that went read-only, or a body file that
// met a full disk, answers 503 (clients retry later), not a 500.
func TestDiskFailuresAre503(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("%w: pebble: no space left on device", cloudstore.ErrUnavailable),
		fmt.Errorf("cloudstore: writing a body file: %w", syscall.ENOSPC),
	} {
		if e := toError(err, errNoSuchKey); e.Status != 503 || e.Code != "ServiceUnavailable" {
			t.Errorf("toError(%v) = %d %s, want 503 ServiceUnavailable", err, e.Status, e.Code)
		}
		if e := toError(bodyError(err), errNoSuchKey); e.Status != 503 {
			t.Errorf("toError(bodyError(%v)) = %d %s, want 503", err, e.Status, e.Code)
		}
	}
}
