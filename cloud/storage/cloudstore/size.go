package cloudstore

import "encoding/json"

// Totals are what the store holds, for monitoring.
type Totals struct {
	Buckets int64
	Objects int64 // objects in all buckets
	// Bytes is the sum of the objects' sizes. Copies share their body on
	// disk but count once each here, and neither multipart uploads in
	// progress nor the metadata count.
	Bytes int64
}

// Totals sums the bucket records, which keep their objects' count and
// size as objects come and go: it reads one record per bucket, never the
// objects. Call it while the store is open.
func (s *Store) Totals() (Totals, error) {
	var t Totals
	err := s.scan([]byte{tBucket}, func(_, v []byte) error {
		var bk Bucket
		if err := json.Unmarshal(v, &bk); err != nil {
			return err
		}
		t.Buckets++
		t.Objects += bk.Objects
		t.Bytes += bk.Bytes
		return nil
	})
	return t, err
}

// DiskUsage returns the bytes the metadata database takes on disk, as
// Pebble counts them: its tables (live, and obsolete ones not yet
// deleted), write-ahead log, manifest and options files. Object bodies
// over 64 KiB live outside it, under the objects directory, and are not
// counted. Call it while the store is open.
func (s *Store) DiskUsage() uint64 { return s.db.Metrics().DiskSpaceUsage() }
