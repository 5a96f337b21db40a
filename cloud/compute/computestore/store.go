// Package computestore keeps the cloud's VM records in Pebble, each
// change synced before it is acknowledged, and holds them in memory. A
// record says what the VM is made of and its status, which is also what
// the host must make true after a restart (computerules.Restarted).
package computestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/cloud/compute/computerules"
	"github.com/latticenet/lattice/internal/pebblekv"
	"github.com/latticenet/lattice/internal/run/failstop"
	"github.com/latticenet/lattice/internal/run/pebblelog"
)

// Errors of the store.
var (
	ErrNotFound = errors.New("computestore: not found")
	ErrExists   = errors.New("computestore: name taken")
	// ErrUnavailable is returned by every write once a write to the disk
	// has failed.
	ErrUnavailable = errors.New("computestore: a write to the disk failed (full disk?); compute changes are refused until the platform restarts")
)

const tableVMs = "vm/" // vm/<id> → VM (JSON)

// VM is a VM's record.
type VM struct {
	ID       string   `json:"id"`
	Account  string   `json:"account"`
	Name     string   `json:"name"`
	VCPUs    int      `json:"vcpus"`
	MemoryMB int      `json:"memory_mb"`
	DiskGB   int      `json:"disk_gb"`
	Image    string   `json:"image"`
	SSHKeys  []string `json:"ssh_keys,omitempty"`
	UserData string   `json:"user_data,omitempty"`
	Status   string   `json:"status"`
	// Reason says why the VM is in error.
	Reason string `json:"reason,omitempty"`
	// UserDataRan is set once the user data has run, on the first boot.
	UserDataRan bool      `json:"user_data_ran,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Spec is the VM's make.
func (v VM) Spec() computerules.Spec {
	return computerules.Spec{Name: v.Name, VCPUs: v.VCPUs, MemoryMB: v.MemoryMB, DiskGB: v.DiskGB, Image: v.Image,
		SSHKeys: v.SSHKeys, UserData: v.UserData}
}

// Options configure a store.
type Options struct {
	// Quota is every account's quota; a zero figure is no limit (the
	// platform gives computerules.DefaultQuota unless told otherwise).
	Quota computerules.Resources
	// Capacity is what the host gives all VMs together: vCPUs and memory
	// of the VMs that are not stopped, disk of all; a zero figure is no
	// limit.
	Capacity computerules.Resources
	FS       vfs.FS // default the disk
	Logger   *slog.Logger
	Now      func() time.Time
}

// Store holds the VM records.
type Store struct {
	db   *pebble.DB
	opts Options
	w    *failstop.Writer

	mu  sync.Mutex
	vms map[string]*VM // by id
}

// Open opens or creates the store in dir.
func Open(dir string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	db, err := pebblekv.Open(dir, &pebble.Options{FS: opts.FS, Logger: pebblelog.New(opts.Logger), FormatMajorVersion: pebble.FormatNewest})
	if err != nil {
		return nil, fmt.Errorf("computestore: open %s: %w", dir, err)
	}
	s := &Store{db: db, opts: opts, vms: map[string]*VM{},
		w: failstop.New(ErrUnavailable, opts.Logger, "computestore: a write failed; refusing compute changes until restarted")}
	if err := s.load(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) load() error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(tableVMs), UpperBound: []byte("vm0")})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		var v VM
		if err := json.Unmarshal(it.Value(), &v); err != nil {
			return fmt.Errorf("computestore: %s: %w", it.Key(), err)
		}
		s.vms[v.ID] = &v
	}
	return it.Error()
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Quota is every account's quota.
func (s *Store) Quota() computerules.Resources { return s.opts.Quota }

// Capacity is the host's capacity for VMs.
func (s *Store) Capacity() computerules.Resources { return s.opts.Capacity }

// put writes v and keeps it; s.mu is held.
func (s *Store) put(v *VM) error {
	v.UpdatedAt = s.opts.Now().UTC()
	b := s.db.NewBatch()
	defer b.Close()
	failstop.SetJSON(b, tableVMs+v.ID, v)
	if err := s.w.Commit(b); err != nil {
		return err
	}
	s.vms[v.ID] = v
	return nil
}

// usage sums what account's VMs take (all of them for "") and, for the
// host, what the live ones take; s.mu is held.
func (s *Store) usage(account string) (acct, host computerules.Resources) {
	for _, v := range s.vms {
		r := v.Spec().Resources()
		if account == "" || v.Account == account {
			acct = acct.Add(r)
		}
		if !computerules.Live(v.Status) {
			r.VCPUs, r.MemoryMB = 0, 0
		}
		host = host.Add(r)
	}
	return acct, host
}

// Usage is what account's VMs take, against its quota.
func (s *Store) Usage(account string) computerules.Resources {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, _ := s.usage(account)
	return u
}

// HostUsage is what the host gives its VMs now (vCPUs and memory of the
// live ones, disk of all).
func (s *Store) HostUsage() computerules.Resources {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, h := s.usage("")
	return h
}

// Create records a new VM for account, in status provisioning, after
// checking spec (computerules.Spec.Check against images), the name
// (unique in the account), the account's quota and the host's capacity.
func (s *Store) Create(account string, spec computerules.Spec, images []computerules.Image) (VM, error) {
	if err := spec.Check(images); err != nil {
		return VM{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.vms {
		if v.Account == account && v.Name == spec.Name {
			return VM{}, fmt.Errorf("VM name %q: %w", spec.Name, ErrExists)
		}
	}
	acct, host := s.usage(account)
	if over := acct.Add(spec.Resources()).Over(s.opts.Quota); over != "" {
		return VM{}, fmt.Errorf("%w: the account would have %s", computerules.ErrQuota, over)
	}
	if short := host.Add(spec.Resources()).Short(s.opts.Capacity); short != "" {
		return VM{}, fmt.Errorf("%w: the host has not enough %s free for this VM now; try again later, or a smaller VM", computerules.ErrCapacity, short)
	}
	now := s.opts.Now().UTC()
	v := &VM{ID: failstop.NewID(), Account: account, Name: spec.Name, VCPUs: spec.VCPUs, MemoryMB: spec.MemoryMB,
		DiskGB: spec.DiskGB, Image: spec.Image, SSHKeys: spec.SSHKeys, UserData: spec.UserData,
		Status: computerules.Provisioning, CreatedAt: now.Truncate(time.Second)}
	if err := s.put(v); err != nil {
		return VM{}, err
	}
	return *v, nil
}

// List returns account's VMs by name.
func (s *Store) List(account string) []VM {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []VM
	for _, v := range s.vms {
		if v.Account == account {
			out = append(out, *v)
		}
	}
	slices.SortFunc(out, func(a, b VM) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// All returns every VM, by id: the host's view.
func (s *Store) All() []VM {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []VM
	for _, v := range s.vms {
		out = append(out, *v)
	}
	slices.SortFunc(out, func(a, b VM) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// owned is account's VM id; s.mu is held.
func (s *Store) owned(account, id string) (*VM, error) {
	v := s.vms[id]
	if v == nil || v.Account != account {
		return nil, fmt.Errorf("VM %s: %w", id, ErrNotFound)
	}
	return v, nil
}

// ByID returns VM id, whoever's it is: the host's view.
func (s *Store) ByID(id string) (VM, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[id]
	if v == nil {
		return VM{}, false
	}
	return *v, true
}

// Get returns account's VM id; another account's is not found, so that
// nobody learns which ids exist.
func (s *Store) Get(account, id string) (VM, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.owned(account, id)
	if err != nil {
		return VM{}, err
	}
	return *v, nil
}

// Power records that account's VM id was asked action
// (computerules.Power), checking the host's capacity for a power on,
// and returns the record in its new status.
func (s *Store) Power(account, id, action string) (VM, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.owned(account, id)
	if err != nil {
		return VM{}, err
	}
	next, err := computerules.Power(v.Status, action)
	if err != nil {
		return VM{}, err
	}
	if !computerules.Live(v.Status) && computerules.Live(next) {
		_, host := s.usage("")
		r := v.Spec().Resources()
		r.VMs, r.DiskGB = 0, 0 // already counted
		if short := host.Add(r).Short(s.opts.Capacity); short != "" {
			return VM{}, fmt.Errorf("%w: the host has not enough %s free to power this VM on now; try again later", computerules.ErrCapacity, short)
		}
	}
	n := *v
	n.Status, n.Reason = next, ""
	if err := s.put(&n); err != nil {
		return VM{}, err
	}
	return n, nil
}

// Delete records that account's VM id is being deleted
// (computerules.Delete) and returns the record.
func (s *Store) Delete(account, id string) (VM, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.owned(account, id)
	if err != nil {
		return VM{}, err
	}
	next, err := computerules.Delete(v.Status)
	if err != nil {
		return VM{}, err
	}
	n := *v
	n.Status = next
	if err := s.put(&n); err != nil {
		return VM{}, err
	}
	return n, nil
}

// SetStatus records the host's progress on VM id: its new status (and
// the reason, for error or an unasked stop), when the record is still in
// status from; it reports whether it changed the record (a record
// deleted or changed meanwhile is left alone).
func (s *Store) SetStatus(id, from, to, reason string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[id]
	if v == nil || v.Status != from {
		return false, nil
	}
	n := *v
	n.Status, n.Reason = to, reason
	if err := s.put(&n); err != nil {
		return false, err
	}
	return true, nil
}

// UserDataDone records that VM id's user data has run.
func (s *Store) UserDataDone(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vms[id]
	if v == nil {
		return nil
	}
	n := *v
	n.UserDataRan = true
	return s.put(&n)
}

// Remove forgets VM id, once the host has removed its files.
func (s *Store) Remove(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	b.Delete([]byte(tableVMs+id), nil)
	if err := s.w.Commit(b); err != nil {
		return err
	}
	delete(s.vms, id)
	return nil
}
