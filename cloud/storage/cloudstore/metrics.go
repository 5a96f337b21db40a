package cloudstore

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/internal/pebblekv"
)

// Access kinds, for Access.Op.
const (
	OpGet    = "get"
	OpPut    = "put"
	OpDelete = "delete"
	OpList   = "list"
	OpOther  = "other"
)

// Metrics bounds.
const (
	// MetricsFlushInterval is how often access metrics gathered in memory
	// are written to the database; a crash loses at most this much.
	MetricsFlushInterval = 10 * time.Second
	// MetricsRetention is how long hourly metrics are kept.
	MetricsRetention = 30 * 24 * time.Hour
	// maxPendingObjects bounds the distinct objects counted in memory
	// between two flushes; accesses to more are counted in the hourly
	// metrics but not per object.
	maxPendingObjects = 1 << 17
)

// Access is one request to a bucket, for its metrics.
type Access struct {
	Time   time.Time
	Op     string // OpGet, OpPut, OpDelete, OpList; anything else counts as OpOther
	Key    string // the object the request named, if any
	Status int    // the HTTP status answered; 400 and above count as errors
	// BytesIn and BytesOut are the body bytes received and sent.
	BytesIn, BytesOut int64
}

// Requests counts requests by kind.
type Requests struct {
	Get    int64 `json:"get"`
	Put    int64 `json:"put"`
	Delete int64 `json:"delete"`
	List   int64 `json:"list"`
	Other  int64 `json:"other"`
}

// Total is the number of requests of every kind.
func (r Requests) Total() int64 { return r.Get + r.Put + r.Delete + r.List + r.Other }

// HourMetrics is a bucket's traffic during one hour.
type HourMetrics struct {
	Hour     time.Time `json:"hour"` // the hour's start, UTC
	Requests Requests  `json:"requests"`
	BytesIn  int64     `json:"bytes_in"`
	BytesOut int64     `json:"bytes_out"`
	Errors   int64     `json:"errors"` // answers with a status of 400 or more
}

// Add adds o's counts to m's.
func (m *HourMetrics) Add(o HourMetrics) {
	m.Requests.Get += o.Requests.Get
	m.Requests.Put += o.Requests.Put
	m.Requests.Delete += o.Requests.Delete
	m.Requests.List += o.Requests.List
	m.Requests.Other += o.Requests.Other
	m.BytesIn += o.BytesIn
	m.BytesOut += o.BytesOut
	m.Errors += o.Errors
}

// ObjectAccess counts the successful requests (status below 400) that
// named one object. Overwriting the object keeps its counts; deleting it
// drops them.
type ObjectAccess struct {
	Key        string    `json:"-"`
	Requests   int64     `json:"requests"`
	BytesIn    int64     `json:"bytes_in"`
	BytesOut   int64     `json:"bytes_out"`
	LastAccess time.Time `json:"last_access"`
}

func (a *ObjectAccess) add(o ObjectAccess) {
	a.Requests += o.Requests
	a.BytesIn += o.BytesIn
	a.BytesOut += o.BytesOut
	if o.LastAccess.After(a.LastAccess) {
		a.LastAccess = o.LastAccess
	}
}

const (
	tHour = 'H' // H | bucket | 0 | hour (unix seconds, 8 bytes big-endian) -> HourMetrics
	tTop  = 'T' // T | bucket | 0 | key -> ObjectAccess
)

func hourKey(bucket string, hour int64) []byte {
	return binary.BigEndian.AppendUint64(append(k(tHour, bucket), 0), uint64(hour))
}

func topKey(bucket, key string) []byte { return k(tTop, bucket, key) }

// deleteMetrics drops bucket's metrics in b.
func deleteMetrics(b *pebble.Batch, bucket string) error {
	for _, t := range []byte{tHour, tTop} {
		p := append(k(t, bucket), 0)
		if err := b.DeleteRange(p, pebblekv.PrefixEnd(p), nil); err != nil {
			return err
		}
	}
	return nil
}

// meters gathers accesses in memory until the next flush.
type meters struct {
	mu      sync.Mutex
	buckets map[string]*pendingMetrics
	objects int // distinct objects in buckets
}

type pendingMetrics struct {
	hours   map[int64]*HourMetrics // by hour, unix seconds
	objects map[string]*ObjectAccess
	first   time.Time // the earliest access gathered
}

// RecordAccess counts a request to bucket in its metrics. It only updates
// counters in memory, so it never waits for the disk; they are written
// and fsync'd every MetricsFlushInterval and by Close, so a crash loses at
// most the counts of the last interval. Accesses to a bucket that does not exist when
// they are written are dropped.
func (s *Store) RecordAccess(bucket string, a Access) {
	hour := a.Time.UTC().Truncate(time.Hour)
	m := &s.meters
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.buckets == nil {
		m.buckets = make(map[string]*pendingMetrics)
	}
	p := m.buckets[bucket]
	if p == nil {
		p = &pendingMetrics{hours: make(map[int64]*HourMetrics), objects: make(map[string]*ObjectAccess), first: a.Time}
		m.buckets[bucket] = p
	}
	if a.Time.Before(p.first) {
		p.first = a.Time
	}
	h := p.hours[hour.Unix()]
	if h == nil {
		h = &HourMetrics{Hour: hour}
		p.hours[hour.Unix()] = h
	}
	switch a.Op {
	case OpGet:
		h.Requests.Get++
	case OpPut:
		h.Requests.Put++
	case OpDelete:
		h.Requests.Delete++
	case OpList:
		h.Requests.List++
	default:
		h.Requests.Other++
	}
	h.BytesIn += a.BytesIn
	h.BytesOut += a.BytesOut
	if a.Status >= 400 {
		h.Errors++
		return
	}
	if a.Key == "" {
		return
	}
	o := p.objects[a.Key]
	if o == nil {
		if m.objects >= maxPendingObjects {
			return
		}
		o = &ObjectAccess{}
		p.objects[a.Key] = o
		m.objects++
	}
	o.add(ObjectAccess{Requests: 1, BytesIn: a.BytesIn, BytesOut: a.BytesOut, LastAccess: a.Time.UTC()})
}

// flushMetrics adds the counters gathered in memory to the database's,
// in one synced batch.
func (s *Store) flushMetrics() error {
	m := &s.meters
	m.mu.Lock()
	pending := m.buckets
	m.buckets, m.objects = nil, 0
	m.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	// Under s.mu, so that no object or bucket is deleted between the
	// check that it exists and the write of its counts.
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	for name, p := range pending {
		var bk Bucket
		if err := s.getJSON(k(tBucket, name), &bk); errors.Is(err, ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		if p.first.Before(bk.CreatedAt) {
			// Some of these counts are of an earlier bucket of the same
			// name, perhaps another account's: they cannot be told apart
			// from the new bucket's first ones, so all are dropped.
			continue
		}
		var newest int64
		for hour, h := range p.hours {
			if !time.Unix(hour, 0).Add(time.Hour).After(bk.CreatedAt) {
				continue // an earlier bucket of the same name
			}
			sum := HourMetrics{Hour: h.Hour}
			if err := s.getJSON(hourKey(name, hour), &sum); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			sum.Add(*h)
			if err := setJSON(b, hourKey(name, hour), sum); err != nil {
				return err
			}
			newest = max(newest, hour)
		}
		if newest > 0 {
			cut := newest - int64(MetricsRetention/time.Second)
			if err := b.DeleteRange(hourKey(name, 0), hourKey(name, cut), nil); err != nil {
				return err
			}
		}
		for key, o := range p.objects {
			if _, closer, err := s.db.Get(k(tObject, name, key)); errors.Is(err, pebble.ErrNotFound) {
				continue // counted only while the object exists
			} else if err != nil {
				return fmt.Errorf("cloudstore: %w", err)
			} else {
				closer.Close()
			}
			var sum ObjectAccess
			if err := s.getJSON(topKey(name, key), &sum); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			sum.add(*o)
			if err := setJSON(b, topKey(name, key), sum); err != nil {
				return err
			}
		}
	}
	// Synced: an unsynced commit can sit in Pebble's log buffer, not even
	// in the kernel, until a later synced write, so a kill -9 lost counts
	// far older than the flush interval. One fsync every
	// MetricsFlushInterval bounds the loss to that interval.
	return s.durable(func() error { return b.Commit(pebble.Sync) })
}

// runFlusher flushes the metrics every MetricsFlushInterval until Close.
func (s *Store) runFlusher(log *slog.Logger) {
	defer close(s.flushed)
	t := time.NewTicker(MetricsFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stopFlush:
			return
		case <-t.C:
		}
		if err := s.flushMetrics(); err != nil {
			log.Error("writing access metrics failed", "err", err)
		}
	}
}

// ownedSnapshot flushes the metrics and returns a snapshot in which
// account owns bucket.
func (s *Store) ownedSnapshot(account, bucket string) (*pebble.Snapshot, Bucket, error) {
	if err := s.flushMetrics(); err != nil {
		return nil, Bucket{}, err
	}
	snap := s.db.NewSnapshot()
	var bk Bucket
	err := getJSONFrom(snap, k(tBucket, bucket), &bk)
	if err == nil && bk.Account != account {
		err = ErrNotFound
	}
	if err != nil {
		snap.Close()
		return nil, Bucket{}, err
	}
	return snap, bk, nil
}

// Metrics returns account's bucket's traffic in each hour from the one
// holding from to the one holding to, oldest first, hours without traffic
// included (as zeros).
func (s *Store) Metrics(account, bucket string, from, to time.Time) ([]HourMetrics, error) {
	snap, _, err := s.ownedSnapshot(account, bucket)
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	first, last := from.UTC().Truncate(time.Hour), to.UTC().Truncate(time.Hour)
	if last.Before(first) {
		return []HourMetrics{}, nil
	}
	out := make([]HourMetrics, int(last.Sub(first)/time.Hour)+1)
	for i := range out {
		out[i].Hour = first.Add(time.Duration(i) * time.Hour)
	}
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: hourKey(bucket, first.Unix()), UpperBound: hourKey(bucket, last.Unix()+1)})
	if err != nil {
		return nil, fmt.Errorf("cloudstore: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		key := it.Key()
		hour := int64(binary.BigEndian.Uint64(key[len(key)-8:]))
		var h HourMetrics
		if err := json.Unmarshal(it.Value(), &h); err != nil {
			return nil, err
		}
		if i := (hour - first.Unix()) / 3600; i >= 0 && i < int64(len(out)) {
			h.Hour = out[i].Hour
			out[i] = h
		}
	}
	return out, it.Error()
}

// TopObjects returns account's bucket's n most requested objects (by
// requests, then bytes sent, then key), and how many objects have counts.
func (s *Store) TopObjects(account, bucket string, n int) ([]ObjectAccess, int, error) {
	snap, _, err := s.ownedSnapshot(account, bucket)
	if err != nil {
		return nil, 0, err
	}
	defer snap.Close()
	p := append(k(tTop, bucket), 0)
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: pebblekv.PrefixEnd(p)})
	if err != nil {
		return nil, 0, fmt.Errorf("cloudstore: %w", err)
	}
	defer it.Close()
	var all []ObjectAccess
	for ok := it.First(); ok; ok = it.Next() {
		var a ObjectAccess
		if err := json.Unmarshal(it.Value(), &a); err != nil {
			return nil, 0, err
		}
		a.Key = string(it.Key()[len(p):])
		all = append(all, a)
	}
	if err := it.Error(); err != nil {
		return nil, 0, err
	}
	slices.SortFunc(all, func(a, b ObjectAccess) int {
		return cmp.Or(cmp.Compare(b.Requests, a.Requests), cmp.Compare(b.BytesOut, a.BytesOut), strings.Compare(a.Key, b.Key))
	})
	return all[:min(max(n, 0), len(all))], len(all), nil
}

// FileType is the storage taken by the objects of one file type.
type FileType struct {
	// Extension is the lowercase text after the last "." of the key's
	// last "/"-separated segment, when it is 1 to 16 ASCII letters and
	// digits and the dot does not open the segment; "" otherwise.
	Extension string `json:"extension"`
	Objects   int64  `json:"object_count"`
	Bytes     int64  `json:"size_bytes"`
}

// FileTypes groups account's bucket's objects by extension, the largest
// groups (by bytes, then objects, then extension) first. Folder markers
// (keys ending in "/") are left out. It reads every object's record.
func (s *Store) FileTypes(account, bucket string) ([]FileType, error) {
	snap := s.db.NewSnapshot()
	defer snap.Close()
	var bk Bucket
	if err := getJSONFrom(snap, k(tBucket, bucket), &bk); err != nil {
		return nil, err
	}
	if bk.Account != account {
		return nil, ErrNotFound
	}
	p := append(k(tObject, bucket), 0)
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: pebblekv.PrefixEnd(p)})
	if err != nil {
		return nil, fmt.Errorf("cloudstore: %w", err)
	}
	defer it.Close()
	groups := map[string]*FileType{}
	for ok := it.First(); ok; ok = it.Next() {
		key := string(it.Key()[len(p):])
		if strings.HasSuffix(key, "/") {
			continue
		}
		var meta struct {
			Size int64 `json:"size"`
		}
		if err := json.Unmarshal(it.Value(), &meta); err != nil {
			return nil, err
		}
		ext := Extension(key)
		g := groups[ext]
		if g == nil {
			g = &FileType{Extension: ext}
			groups[ext] = g
		}
		g.Objects++
		g.Bytes += meta.Size
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	out := make([]FileType, 0, len(groups))
	for _, g := range groups {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b FileType) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.Objects, a.Objects), strings.Compare(a.Extension, b.Extension))
	})
	return out, nil
}

// Extension is a key's file type, as FileType.Extension defines it.
func Extension(key string) string {
	seg := key[strings.LastIndexByte(key, '/')+1:]
	i := strings.LastIndexByte(seg, '.')
	if i <= 0 || len(seg)-i-1 > 16 || i == len(seg)-1 {
		return ""
	}
	ext := seg[i+1:]
	for j := 0; j < len(ext); j++ {
		c := ext[j]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return ""
		}
	}
	return strings.ToLower(ext)
}

// dropPending forgets the counts gathered for bucket and not yet written;
// DeleteBucket calls it, so that a later bucket of the name never inherits
// them.
func (s *Store) dropPending(bucket string) {
	m := &s.meters
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.buckets[bucket]; p != nil {
		m.objects -= len(p.objects)
		delete(m.buckets, bucket)
	}
}
