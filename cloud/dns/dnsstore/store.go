// Package dnsstore keeps the platform's DNS zones and records in Pebble,
// each change synced to disk before it is acknowledged, and holds every
// zone in memory as a dnszone.Snapshot for the authoritative server. A
// change to a zone and the bump of its SOA serial are one atomic write.
package dnsstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/net/publicsuffix"

	"github.com/latticenet/lattice/cloud/dns/dnszone"
	"github.com/latticenet/lattice/internal/pebblekv"
	"github.com/latticenet/lattice/internal/run/failstop"
	"github.com/latticenet/lattice/internal/run/pebblelog"
)

// Errors of the store; rule errors wrap dnszone.ErrInvalid.
var (
	ErrNotFound = errors.New("dnsstore: not found")
	ErrExists   = errors.New("dnsstore: the zone name is taken")
	ErrLimit    = errors.New("dnsstore: limit reached")
	// ErrUnavailable is returned by every write once a write to the disk
	// has failed (a full disk, an I/O error): reads go on, writes wait for
	// a restart on a disk that works. Nothing acknowledged is lost.
	ErrUnavailable = errors.New("dnsstore: a write to the disk failed (full disk?); DNS changes are refused until the platform restarts")
)

// MaxZones bounds the zones of one account, and MaxAccountRecords the
// records of all its zones: the server holds every record in memory, so
// one account's 100 full zones (a million records, kilobytes each) would
// weigh on every other account's.
const (
	MaxZones          = 100
	MaxAccountRecords = 100000
)

// The tables: every key begins with its table's prefix, declared here
// once (a test checks that no prefix begins another).
const (
	tableZones   = "zone/"    // zone/<zone id> → Zone (JSON)
	tableNames   = "name/"    // name/<zone name> → zone id
	tableRecords = "record/"  // record/<zone id>/<record id> → dnszone.Record (JSON)
	tableRetired = "retired/" // retired/<zone name> → the last serial of the deleted zone (decimal)
)

var tables = []string{tableZones, tableNames, tableRecords, tableRetired}

// Zone is a zone's own fields.
type Zone struct {
	ID        string    `json:"id"`
	Account   string    `json:"account"`
	Name      string    `json:"name"`
	Serial    uint32    `json:"serial"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Options configure a store.
type Options struct {
	// Nameservers are the names of the platform's DNS servers: every new
	// zone gets an NS record at its apex for each. Default ns1.lattice.test.
	Nameservers []string
	FS          vfs.FS // default the disk
	Logger      *slog.Logger
	Now         func() time.Time
}

// Store holds the zones.
type Store struct {
	db   *pebble.DB
	opts Options

	mu      sync.RWMutex
	zones   map[string]*zone  // by id
	byName  map[string]string // zone name → id
	retired map[string]uint32 // the last serial of each deleted zone, by name
	watch   []func(name string, snap *dnszone.Snapshot)
	w       *failstop.Writer // commits; refuses every write after a failed one
}

type zone struct {
	Zone
	records []dnszone.Record
	snap    *dnszone.Snapshot
}

// Open opens or creates the store in dir.
func Open(dir string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Nameservers = slices.Clone(opts.Nameservers) // the caller's stays theirs
	if len(opts.Nameservers) == 0 {
		opts.Nameservers = []string{"ns1.lattice.test"}
	}
	for i, ns := range opts.Nameservers {
		name, err := dnszone.ZoneName(ns) // a host name of two labels or more
		if err != nil {
			return nil, fmt.Errorf("dnsstore: name server %q: %w", ns, err)
		}
		opts.Nameservers[i] = name
	}
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	db, err := pebblekv.Open(dir, &pebble.Options{FS: opts.FS, Logger: pebblelog.New(opts.Logger), FormatMajorVersion: pebble.FormatNewest})
	if err != nil {
		return nil, fmt.Errorf("dnsstore: open %s: %w", dir, err)
	}
	s := &Store{db: db, opts: opts, w: failstop.New(ErrUnavailable, opts.Logger, "dnsstore: a write failed; refusing DNS changes until restarted, still answering queries"), zones: map[string]*zone{}, byName: map[string]string{}, retired: map[string]uint32{}}
	if err := s.load(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// load reads every zone and record into memory.
func (s *Store) load() error {
	it, err := s.db.NewIter(&pebble.IterOptions{})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		key := string(it.Key())
		switch {
		case strings.HasPrefix(key, tableZones):
			var z zone
			if err := json.Unmarshal(it.Value(), &z.Zone); err != nil {
				return fmt.Errorf("dnsstore: zone %s: %w", key, err)
			}
			if old := s.zones[z.ID]; old != nil {
				z.records = old.records
			}
			s.zones[z.ID] = &z
			s.byName[z.Name] = z.ID
		case strings.HasPrefix(key, tableRetired):
			n, err := strconv.ParseUint(string(it.Value()), 10, 32)
			if err != nil {
				return fmt.Errorf("dnsstore: %s: %w", key, err)
			}
			s.retired[strings.TrimPrefix(key, tableRetired)] = uint32(n)
		case strings.HasPrefix(key, tableRecords):
			zoneID, _, _ := strings.Cut(strings.TrimPrefix(key, tableRecords), "/")
			var r dnszone.Record
			if err := json.Unmarshal(it.Value(), &r); err != nil {
				return fmt.Errorf("dnsstore: record %s: %w", key, err)
			}
			z := s.zones[zoneID]
			if z == nil { // "record/" sorts after "name/" but before "zone/"
				z = &zone{}
				s.zones[zoneID] = z
			}
			z.records = append(z.records, r)
		}
	}
	for id, z := range s.zones {
		if z.ID == "" {
			return fmt.Errorf("dnsstore: records of zone %s, which does not exist", id)
		}
		z.snap = dnszone.Build(z.Name, z.Serial, z.records)
	}
	return it.Error()
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Watch calls fn with a zone's new snapshot after every change to it (nil
// when it was deleted), in the order of the changes, and at once for every
// zone there is. fn runs with the store locked: it must not call the store.
func (s *Store) Watch(fn func(name string, snap *dnszone.Snapshot)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watch = append(s.watch, fn)
	for _, z := range s.zones {
		fn(z.Name, z.snap)
	}
}

// Summary is a zone with what the API shows beside it: its record count
// and the name servers its apex's NS records name.
type Summary struct {
	Zone
	Records     int
	Nameservers []string
}

func (z *zone) summary() Summary {
	sm := Summary{Zone: z.Zone, Records: len(z.records), Nameservers: []string{}}
	for _, r := range z.records {
		if r.Type == "NS" && r.Name == z.Name {
			sm.Nameservers = append(sm.Nameservers, r.Value)
		}
	}
	slices.Sort(sm.Nameservers)
	return sm
}

// Summaries returns account's zones by name.
func (s *Store) Summaries(account string) []Summary {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Summary
	for _, z := range s.zones {
		if z.Account == account {
			out = append(out, z.summary())
		}
	}
	slices.SortFunc(out, func(a, b Summary) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Summary returns account's zone id.
func (s *Store) Summary(account, id string) (Summary, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	z, err := s.owned(account, id)
	if err != nil {
		return Summary{}, err
	}
	return z.summary(), nil
}

// Zones returns account's zones by name.
func (s *Store) Zones(account string) []Zone {
	var out []Zone
	for _, sm := range s.Summaries(account) {
		out = append(out, sm.Zone)
	}
	return out
}

// Zone returns account's zone id, with its record count.
func (s *Store) Zone(account, id string) (Zone, int, error) {
	sm, err := s.Summary(account, id)
	return sm.Zone, sm.Records, err
}

// Records returns the records of account's zone id in DNS order (the
// apex first, each name before the names below it), then by type and
// value.
func (s *Store) Records(account, id string) ([]dnszone.Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	z, err := s.owned(account, id)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(z.records)
	slices.SortFunc(out, func(a, b dnszone.Record) int {
		return cmpStrings(dnszone.SortKey(a.Name), dnszone.SortKey(b.Name), a.Type, b.Type, a.Value, b.Value, a.ID, b.ID)
	})
	return out, nil
}

// Record returns one record of account's zone.
func (s *Store) Record(account, zoneID, id string) (dnszone.Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	z, err := s.owned(account, zoneID)
	if err != nil {
		return dnszone.Record{}, err
	}
	i := z.find(id)
	if i < 0 {
		return dnszone.Record{}, fmt.Errorf("record %s: %w", id, ErrNotFound)
	}
	return z.records[i], nil
}

// Snapshot returns the snapshot of the zone named name (any account's).
func (s *Store) Snapshot(name string) *dnszone.Snapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if id, ok := s.byName[name]; ok {
		return s.zones[id].snap
	}
	return nil
}

func cmpStrings(pairs ...string) int {
	for i := 0; i+1 < len(pairs); i += 2 {
		if c := strings.Compare(pairs[i], pairs[i+1]); c != 0 {
			return c
		}
	}
	return 0
}

// owned returns account's zone id; another account's zone is not found,
// so that nobody learns which ids exist.
func (s *Store) owned(account, id string) (*zone, error) {
	z := s.zones[id]
	if z == nil || z.Account != account {
		return nil, fmt.Errorf("zone %s: %w", id, ErrNotFound)
	}
	return z, nil
}

func (z *zone) find(id string) int {
	return slices.IndexFunc(z.records, func(r dnszone.Record) bool { return r.ID == id })
}

// CreateZone creates the zone name for account, with an NS record at its
// apex for each of the platform's name servers. A name is one account's:
// taken, or inside or above another account's zone, it is refused with
// ErrExists.
func (s *Store) CreateZone(account, name string) (Zone, error) {
	name, err := dnszone.ZoneName(name)
	if err != nil {
		return Zone{}, err
	}
	if ps, _ := publicsuffix.PublicSuffix(name); ps == name {
		return Zone{}, fmt.Errorf("%w: %s is a public suffix (such as com, co.uk or github.io): a zone is a domain registered under one", dnszone.ErrInvalid, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byName[name]; ok {
		return Zone{}, fmt.Errorf("%s: %w", name, ErrExists)
	}
	n := 0
	for _, z := range s.zones {
		if z.Account != account {
			if dnszone.InZone(z.Name, name) || dnszone.InZone(name, z.Name) {
				return Zone{}, fmt.Errorf("%s is inside or above another account's zone: %w", name, ErrExists)
			}
			continue
		}
		n++
		if dnszone.InZone(z.Name, name) {
			// A zone of one's own inside another: the server answers
			// for its names from the new zone, so records of the outer
			// zone at or below it would stop being answered.
			for _, r := range z.records {
				if dnszone.InZone(name, r.Name) && !(r.Type == "NS" && r.Name == name) {
					return Zone{}, fmt.Errorf("%w: zone %s has records at or below %s (%s %s): a zone %s would hide them; delete them first",
						dnszone.ErrInvalid, z.Name, name, r.Name, r.Type, name)
				}
			}
		}
	}
	if n >= MaxZones {
		return Zone{}, fmt.Errorf("%w: an account has at most %d zones", ErrLimit, MaxZones)
	}
	now := s.opts.Now().UTC()
	// A zone deleted and made again goes on from the serial it had: its
	// secondaries would take a lower one for old data and ignore it.
	serial := s.retired[name] + 1
	if serial == 0 {
		serial = 1 // serial arithmetic (RFC 1982) wraps; 0 is avoided
	}
	z := &zone{Zone: Zone{ID: failstop.NewID(), Account: account, Name: name, Serial: serial, CreatedAt: now, UpdatedAt: now}}
	for _, ns := range s.opts.Nameservers {
		r, err := dnszone.Parse(name, dnszone.Input{Type: "NS", Name: "@", Value: ns})
		if err != nil {
			return Zone{}, err
		}
		r.ID, r.CreatedAt, r.UpdatedAt = failstop.NewID(), stamp(now), stamp(now)
		z.records = append(z.records, r)
	}
	b := s.db.NewBatch()
	defer b.Close()
	failstop.SetJSON(b, tableZones+z.ID, z.Zone)
	b.Set([]byte(tableNames+name), []byte(z.ID), nil)
	for _, r := range z.records {
		failstop.SetJSON(b, string(recordKey(z.ID, r.ID)), r)
	}
	if err := s.w.Commit(b); err != nil {
		return Zone{}, err
	}
	s.zones[z.ID], s.byName[name] = z, z.ID
	s.publish(z)
	return z.Zone, nil
}

// DeleteZone deletes account's zone id and its records.
func (s *Store) DeleteZone(account, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	z, err := s.owned(account, id)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	b.Delete([]byte(tableZones+id), nil)
	b.Delete([]byte(tableNames+z.Name), nil)
	b.Set([]byte(tableRetired+z.Name), []byte(strconv.FormatUint(uint64(z.Serial), 10)), nil)
	for _, r := range z.records {
		b.Delete(recordKey(id, r.ID), nil)
	}
	if err := s.w.Commit(b); err != nil {
		return err
	}
	delete(s.zones, id)
	delete(s.byName, z.Name)
	s.retired[z.Name] = z.Serial
	for _, fn := range s.watch {
		fn(z.Name, nil)
	}
	return nil
}

// AddRecord adds a record to account's zone.
func (s *Store) AddRecord(account, zoneID string, in dnszone.Input) (dnszone.Record, error) {
	return s.change(account, zoneID, "", &in)
}

// UpdateRecord replaces record id of account's zone with in (its id and
// creation time stay).
func (s *Store) UpdateRecord(account, zoneID, id string, in dnszone.Input) (dnszone.Record, error) {
	if id == "" {
		return dnszone.Record{}, fmt.Errorf("record \"\": %w", ErrNotFound)
	}
	return s.change(account, zoneID, id, &in)
}

// DeleteRecord deletes record id of account's zone.
func (s *Store) DeleteRecord(account, zoneID, id string) error {
	if id == "" {
		return fmt.Errorf("record \"\": %w", ErrNotFound)
	}
	_, err := s.change(account, zoneID, id, nil)
	return err
}

// change adds (id ""), replaces or (in nil) deletes a record, and bumps
// the zone's serial, in one write.
func (s *Store) change(account, zoneID, id string, in *dnszone.Input) (dnszone.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	z, err := s.owned(account, zoneID)
	if err != nil {
		return dnszone.Record{}, err
	}
	i := -1
	if id != "" {
		if i = z.find(id); i < 0 {
			return dnszone.Record{}, fmt.Errorf("record %s: %w", id, ErrNotFound)
		}
	}
	others := slices.Clone(z.records)
	if i >= 0 {
		others = slices.Delete(others, i, i+1)
	}
	now := s.opts.Now().UTC()
	var r dnszone.Record
	if in != nil {
		if r, err = dnszone.Parse(z.Name, *in); err != nil {
			return dnszone.Record{}, err
		}
		if err := dnszone.Check(z.Name, others, r); err != nil {
			return dnszone.Record{}, err
		}
		if i < 0 {
			if n := s.accountRecords(account); n >= MaxAccountRecords {
				return dnszone.Record{}, fmt.Errorf("%w: the account's zones hold %d records, the most an account may", ErrLimit, n)
			}
		}
		if child := s.childZone(z, r.Name); child != "" && !(r.Type == "NS" && r.Name == child) {
			return dnszone.Record{}, fmt.Errorf("%w: %s is in the zone %s, which answers for it: add the record there", dnszone.ErrInvalid, r.Name, child)
		}
		if i >= 0 && !(r.Type == "NS" && r.Name == z.Name) {
			// The record replaced goes: the apex keeps an NS record.
			if err := dnszone.CheckRemove(z.Name, z.records, z.records[i]); err != nil {
				return dnszone.Record{}, err
			}
		}
		r.ID, r.CreatedAt, r.UpdatedAt = failstop.NewID(), stamp(now), stamp(now)
		if i >= 0 {
			r.ID, r.CreatedAt = z.records[i].ID, z.records[i].CreatedAt
		}
	} else if err := dnszone.CheckRemove(z.Name, z.records, z.records[i]); err != nil {
		return dnszone.Record{}, err
	}
	next := z.Zone
	next.Serial++
	if next.Serial == 0 {
		next.Serial = 1 // serial arithmetic (RFC 1982) wraps; 0 is avoided
	}
	next.UpdatedAt = now
	b := s.db.NewBatch()
	defer b.Close()
	failstop.SetJSON(b, tableZones+z.ID, next)
	if in != nil {
		failstop.SetJSON(b, string(recordKey(z.ID, r.ID)), r)
		others = append(others, r)
	} else {
		b.Delete(recordKey(z.ID, id), nil)
	}
	if err := s.w.Commit(b); err != nil {
		return dnszone.Record{}, err
	}
	z.Zone, z.records = next, others
	s.publish(z)
	return r, nil
}

// accountRecords counts the records of account's zones. Called with mu
// held.
func (s *Store) accountRecords(account string) int {
	n := 0
	for _, z := range s.zones {
		if z.Account == account {
			n += len(z.records)
		}
	}
	return n
}

// childZone returns the zone below z that name is in, if any: the server
// answers for name from it, not from z.
func (s *Store) childZone(z *zone, name string) string {
	best := ""
	for _, c := range s.zones {
		if c != z && c.Name != z.Name && dnszone.InZone(z.Name, c.Name) && dnszone.InZone(c.Name, name) && len(c.Name) > len(best) {
			best = c.Name
		}
	}
	return best
}

// publish rebuilds z's snapshot and hands it to the watchers.
func (s *Store) publish(z *zone) {
	z.snap = dnszone.Build(z.Name, z.Serial, z.records)
	for _, fn := range s.watch {
		fn(z.Name, z.snap)
	}
}

func recordKey(zoneID, id string) []byte { return []byte(tableRecords + zoneID + "/" + id) }

func stamp(t time.Time) string { return t.Format(time.RFC3339) }

// Nameservers are the platform's name servers, which every zone's apex
// names and which a registrar delegates a zone to.
func (s *Store) Nameservers() []string { return slices.Clone(s.opts.Nameservers) }

// Containing returns the zone, of any account, that name lies in: the
// zone named name or its closest ancestor. The CDN uses it to attach a
// custom domain through the platform's own DNS.
func (s *Store) Containing(name string) (Zone, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for n := name; n != ""; {
		if id, ok := s.byName[n]; ok {
			return s.zones[id].Zone, true
		}
		_, rest, ok := strings.Cut(n, ".")
		if !ok {
			break
		}
		n = rest
	}
	return Zone{}, false
}
