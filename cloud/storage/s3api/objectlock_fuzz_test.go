package s3api

import (
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// FuzzParseObjectLock checks that an ObjectLockConfiguration document
// either is refused or gives a configuration the store accepts, and that
// a retention's mode and date either are refused or give a retention of a
// known mode that ends after now.
func FuzzParseObjectLock(f *testing.F) {
	f.Add([]byte(`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>`), "GOVERNANCE", "2030-01-01T00:00:00Z")
	f.Add([]byte(`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`), "COMPLIANCE", "2030-01-01T00:00:00.123+02:00")
	f.Add([]byte(`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Years>-1</Years></DefaultRetention></Rule></ObjectLockConfiguration>`), "", "")
	f.Add([]byte(`<ObjectLockConfiguration><Rule><DefaultRetention><Days>9999999999</Days><Years>1</Years></DefaultRetention></Rule></ObjectLockConfiguration>`), "governance", "2001-01-01T00:00:00Z")
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, doc []byte, mode, until string) {
		if l, err := parseLockConfig(doc); err == nil {
			if err := l.Check(); err != nil {
				t.Fatalf("parseLockConfig(%q) = %+v, which Check refuses: %v", doc, l, err)
			}
		}
		r, err := retention(mode, until, now)
		switch {
		case err != nil:
		case r == nil:
			if mode != "" || until != "" {
				t.Fatalf("retention(%q, %q) = nil, nil", mode, until)
			}
		case r.Mode != cloudstore.LockGovernance && r.Mode != cloudstore.LockCompliance || !r.Until.After(now):
			t.Fatalf("retention(%q, %q) = %+v", mode, until, r)
		}
	})
}
