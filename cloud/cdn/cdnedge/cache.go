package cdnedge

import (
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/latticenet/lattice/cloud/cdn/cdnpolicy"
)

// The cache holds stored responses in two tiers. The disk tier is the
// tier of record: when it is enabled every entry has a body file, and the
// memory tier keeps a copy of the bodies of the small, recently used
// entries. Each tier has a byte limit and evicts in LRU order; leaving the
// memory tier only drops the copy, leaving the disk tier drops the entry.
// With no disk tier, memory is the only one.
//
// Entries are immutable once published except for their LRU links, their
// memory copy (dropped on eviction) and, on revalidation, their header and
// freshness, which are replaced (never changed in place); all of those
// under c.mu. A reader copies what it needs into a view under the lock.
type cache struct {
	mu sync.Mutex

	deps map[string]*depCache // by deployment id

	all, mem  lru // every entry; entries with a memory copy
	memBytes  int64
	diskBytes int64 // bodies on disk, or in memory when there is no disk tier

	dir                         string // "" for no disk tier
	memLimit, diskLimit, memMax int64
}

// depCache is one deployment's part of the cache.
type depCache struct {
	gen     uint64               // bumped by every purge: fills begun before it are not stored
	paths   map[string]*variants // by cache key (path and query)
	objects int64
	bytes   int64
}

// variants are the stored responses of one cache key: one per Vary key.
type variants struct {
	fields []string // the Vary fields of the newest stored response
	byKey  map[string]*entry
}

type entry struct {
	dep, key, vkey string

	status int
	header http.Header
	fresh  cdnpolicy.Freshness
	size   int64
	body   []byte      // the memory copy, nil when there is none
	file   string      // the body file, "" with no disk tier
	wire   *wireHeader // the header as the fast path sends it; nil when it cannot

	all, mem links
}

type links struct{ prev, next *entry }

// lru is a doubly linked list threaded through entries by one of their
// links fields; front is the most recently used.
type lru struct {
	front, back *entry
	link        func(*entry) *links
}

func (l *lru) pushFront(e *entry) {
	le := l.link(e)
	le.prev, le.next = nil, l.front
	if l.front != nil {
		l.link(l.front).prev = e
	}
	l.front = e
	if l.back == nil {
		l.back = e
	}
}

func (l *lru) remove(e *entry) {
	le := l.link(e)
	if le.prev != nil {
		l.link(le.prev).next = le.next
	} else if l.front == e {
		l.front = le.next
	} else {
		return // not in the list
	}
	if le.next != nil {
		l.link(le.next).prev = le.prev
	} else {
		l.back = le.prev
	}
	le.prev, le.next = nil, nil
}

func (l *lru) touch(e *entry) {
	if l.front != e {
		l.remove(e)
		l.pushFront(e)
	}
}

func newCache(dir string, memLimit, diskLimit, memMax int64) *cache {
	c := &cache{deps: map[string]*depCache{}, dir: dir, memLimit: memLimit, diskLimit: diskLimit, memMax: memMax}
	c.all.link = func(e *entry) *links { return &e.all }
	c.mem.link = func(e *entry) *links { return &e.mem }
	return c
}

// view is what a reader needs of an entry, copied under the lock.
type view struct {
	e      *entry // for refresh; compare, never read its fields unlocked
	status int
	header http.Header
	fresh  cdnpolicy.Freshness
	size   int64
	body   []byte
	wire   *wireHeader
	// f is the body file, opened while the entry was still in the cache
	// (so an eviction that unlinks it later cannot take it from the
	// reader), when there is no memory copy; the taker of the view closes
	// it.
	f *os.File
}

// view copies e; c.mu is held. It opens e's body file when e has no
// memory copy, and reports false when that fails.
func (e *entry) view() (view, bool) {
	v := view{e: e, status: e.status, header: e.header, fresh: e.fresh, size: e.size, body: e.body, wire: e.wire}
	if v.body == nil && e.file != "" {
		f, err := os.Open(e.file)
		if err != nil {
			return view{}, false
		}
		v.f = f
	}
	return v, true
}

// close closes v's body file, if it has one.
func (v view) close() {
	if v.f != nil {
		v.f.Close()
	}
}

// lookup finds the entry of dep's key that matches the request's Vary
// fields (req gives its header, called only when the key varies); the
// caller closes the view.
func (c *cache) lookup(dep, key string, req func() http.Header) (view, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.deps[dep]
	if d == nil {
		return view{}, false
	}
	vs := d.paths[key]
	if vs == nil {
		return view{}, false
	}
	var h http.Header
	if len(vs.fields) > 0 {
		h = req()
	}
	e := vs.byKey[cdnpolicy.VaryKey(vs.fields, h)]
	if e == nil {
		return view{}, false
	}
	c.all.touch(e)
	if e.body != nil {
		c.mem.touch(e)
	}
	return e.view()
}

// generation is dep's purge generation, read before a fill begins.
func (c *cache) generation(dep string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.deps[dep]; d != nil {
		return d.gen
	}
	return 0
}

// insert publishes e (its body in e.body and, with a disk tier, already
// written to e.file) unless a purge of its deployment came after gen; it
// replaces the entry of the same key and Vary key, and evicts what the
// limits require. It reports whether e was stored; when not, the caller
// removes e.file.
func (c *cache) insert(e *entry, fields []string, gen uint64) bool {
	var doomed []string
	defer func() { removeFiles(doomed) }()
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.deps[e.dep]
	if d == nil {
		d = &depCache{paths: map[string]*variants{}}
		c.deps[e.dep] = d
	}
	if d.gen != gen {
		return false
	}
	vs := d.paths[e.key]
	if vs == nil {
		vs = &variants{byKey: map[string]*entry{}}
		d.paths[e.key] = vs
	}
	if !slices.Equal(vs.fields, fields) {
		// The resource now varies on other fields: the old variants can
		// no longer be matched.
		for _, old := range vs.byKey {
			doomed = c.drop(d, vs, old, doomed)
		}
		vs.fields = fields
	}
	if old := vs.byKey[e.vkey]; old != nil {
		doomed = c.drop(d, vs, old, doomed)
	}
	// Dropping the last variant above unlinked vs from d.paths: link it
	// again, or the new entry would be stored where no lookup finds it.
	d.paths[e.key] = vs
	vs.byKey[e.vkey] = e
	d.objects++
	d.bytes += e.size
	c.all.pushFront(e)
	c.diskBytes += e.size
	if e.body != nil {
		c.mem.pushFront(e)
		c.memBytes += e.size
	}
	return c.evict(&doomed)
}

// evict enforces the limits, dropping from the LRU end; it reports whether
// the entry just inserted (at the front) survived.
func (c *cache) evict(doomed *[]string) bool {
	newest := c.all.front
	for c.memBytes > c.memLimit && c.mem.back != nil {
		e := c.mem.back
		if e.file == "" {
			*doomed = c.drop(c.deps[e.dep], c.deps[e.dep].paths[e.key], e, *doomed)
			continue
		}
		c.mem.remove(e)
		c.memBytes -= e.size
		e.body = nil
	}
	for c.diskBytes > c.diskLimit && c.all.back != nil {
		e := c.all.back
		*doomed = c.drop(c.deps[e.dep], c.deps[e.dep].paths[e.key], e, *doomed)
	}
	if newest == nil {
		return false
	}
	d := c.deps[newest.dep]
	vs := d.paths[newest.key]
	return vs != nil && vs.byKey[newest.vkey] == newest
}

// drop removes e from the cache; c.mu is held. It returns doomed with e's
// body file added, to be removed once the lock is released.
func (c *cache) drop(d *depCache, vs *variants, e *entry, doomed []string) []string {
	if vs.byKey[e.vkey] != e {
		return doomed
	}
	delete(vs.byKey, e.vkey)
	if len(vs.byKey) == 0 {
		delete(d.paths, e.key)
	}
	d.objects--
	d.bytes -= e.size
	c.all.remove(e)
	c.diskBytes -= e.size
	if e.body != nil {
		c.mem.remove(e)
		c.memBytes -= e.size
		e.body = nil
	}
	if e.file != "" {
		doomed = append(doomed, e.file)
	}
	return doomed
}

// refresh replaces e's header, freshness and wire header after a 304 from the origin;
// it reports false when e has been dropped meanwhile. The caller closes
// the view.
func (c *cache) refresh(e *entry, header http.Header, fresh cdnpolicy.Freshness, wire *wireHeader) (view, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.deps[e.dep]
	if d == nil || d.paths[e.key] == nil || d.paths[e.key].byKey[e.vkey] != e {
		return view{}, false
	}
	e.header, e.fresh, e.wire = header, fresh, wire
	return e.view()
}

// remove drops one entry (a stored response the origin now refuses to
// let be stored).
func (c *cache) remove(e *entry) {
	var doomed []string
	c.mu.Lock()
	if d := c.deps[e.dep]; d != nil {
		if vs := d.paths[e.key]; vs != nil {
			doomed = c.drop(d, vs, e, doomed)
		}
	}
	c.mu.Unlock()
	removeFiles(doomed)
}

// purge drops dep's entries: all of them when paths and prefixes are both
// empty, else those whose path (the key without its query) is one of
// paths or begins with one of prefixes. It bumps dep's generation, so
// that no fill begun before it is stored, and returns how many it dropped.
func (c *cache) purge(dep string, paths, prefixes []string) int {
	var doomed []string
	defer func() { removeFiles(doomed) }()
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.deps[dep]
	if d == nil {
		d = &depCache{paths: map[string]*variants{}}
		c.deps[dep] = d
	}
	d.gen++
	all := len(paths) == 0 && len(prefixes) == 0
	paths, prefixes = samePaths(paths), samePaths(prefixes)
	n := 0
	for key, vs := range d.paths {
		path, _, _ := strings.Cut(key, "?")
		if !all && !matches(path, paths, prefixes) {
			continue
		}
		for _, e := range vs.byKey {
			doomed = c.drop(d, vs, e, doomed)
			n++
		}
	}
	return n
}

// forget drops a deleted deployment's part of the cache. Its (empty)
// record stays, with the generation the purge bumped, so that a fill
// begun before the deletion is not stored after it; a deleted
// deployment's id is never reused, and the record is a few words.
func (c *cache) forget(dep string) {
	c.purge(dep, nil, nil)
}

// matches reports whether path, as a cached key spells it, is one of
// paths or under one of prefixes, both given as samePath spells them.
func matches(path string, paths, prefixes []string) bool {
	path = samePath(path)
	if slices.Contains(paths, path) {
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// samePaths is samePath of each of ps.
func samePaths(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = samePath(p)
	}
	return out
}

// samePath is the one spelling of a request path that a purge compares:
// percent-escapes decoded, dot segments resolved and slashes merged, a
// final slash kept. The cache keeps each spelling a client sends apart
// (/img/a.png, /im%67/a.png, //img/./a.png), but origins read them as one
// resource (a bucket origin cleans the path so), and a purge of it must
// reach them all; one that takes a spelling for another that the origin
// keeps apart only costs a fetch.
func samePath(p string) string {
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	c := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// usage returns dep's stored responses and their bytes.
func (c *cache) usage(dep string) (objects, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.deps[dep]; d != nil {
		return d.objects, d.bytes
	}
	return 0, 0
}

// totals returns the whole cache's figures.
func (c *cache) totals() (objects, memBytes, diskBytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.deps {
		objects += d.objects
	}
	return objects, c.memBytes, c.diskBytes
}

func removeFiles(paths []string) {
	for _, p := range paths {
		os.Remove(p)
	}
}

// newBodyFile creates a body file in the cache directory.
func (c *cache) newBodyFile() (*os.File, error) {
	return os.CreateTemp(c.dir, "body-*")
}

// reset empties the cache directory: the cache starts cold, so that no
// response purged before a restart (or a crash) can be served after it.
func resetDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.MkdirAll(filepath.Clean(dir), 0o700)
}
