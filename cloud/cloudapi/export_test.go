package cloudapi

import "testing"

// SetVersionChunk lowers the chunk versions listings skip and count by,
// until t ends, so that a test walks several chunks with few versions.
// Tests that call it must not run in parallel.
func SetVersionChunk(t testing.TB, n int) {
	old := versionChunk
	versionChunk = n
	t.Cleanup(func() { versionChunk = old })
}
