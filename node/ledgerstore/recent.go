package ledgerstore

// recent is the write path's memory of what the latest batches wrote, so
// that the writer does not read back from Pebble what it wrote a moment
// before: a block is confirmed, and its chain walked, a few milliseconds to
// seconds after it was applied, and a Pebble point read (a memtable
// skiplist search, a copy and a decode) cost the confirmation walk more
// than applying the block had. Entries are shared, as the batch shares
// them: nothing modifies an entry once written. Two generations bound it:
// when the newer is full it becomes the older, and the older is dropped.
// Like the account cache, only the one open Batch reads and updates it.
type recent[K comparable, V any] struct {
	cur, old map[K]V
	size     int // entries per generation
}

func newRecent[K comparable, V any](size int) recent[K, V] {
	return recent[K, V]{cur: make(map[K]V), old: make(map[K]V), size: size}
}

func (r *recent[K, V]) get(k K) (V, bool) {
	if v, ok := r.cur[k]; ok {
		return v, true
	}
	v, ok := r.old[k]
	return v, ok
}

func (r *recent[K, V]) put(k K, v V) {
	if len(r.cur) >= r.size {
		r.old, r.cur = r.cur, make(map[K]V, r.size)
	}
	r.cur[k] = v
}

func (r *recent[K, V]) remove(k K) {
	delete(r.cur, k)
	delete(r.old, k)
}
