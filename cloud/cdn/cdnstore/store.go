// Package cdnstore keeps the platform's CDN deployments and their custom
// domains in Pebble, each change synced before it is acknowledged, and
// holds them in memory: the edge routes every request through Route,
// which reads an immutable host table without a lock.
package cdnstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/cloud/cdn/cdnrules"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
	"github.com/latticenet/lattice/internal/pebblekv"
	"github.com/latticenet/lattice/internal/run/failstop"
	"github.com/latticenet/lattice/internal/run/pebblelog"
)

// Errors of the store. ErrInvalid wraps what a request got wrong.
var (
	ErrInvalid  = errors.New("cdnstore: invalid")
	ErrNotFound = errors.New("cdnstore: not found")
	ErrExists   = errors.New("cdnstore: taken")
	// ErrClaimed: a custom domain is attached to another deployment (an
	// ErrExists).
	ErrClaimed = fmt.Errorf("%w by another deployment", ErrExists)
	ErrLimit   = errors.New("cdnstore: limit reached")
	// ErrUnavailable is returned by every write once a write to the disk
	// has failed: the edge keeps serving, changes wait for a restart.
	ErrUnavailable = errors.New("cdnstore: a write to the disk failed (full disk?); CDN changes are refused until the platform restarts")
)

// Limits.
const (
	MaxDeployments = 100 // per account
	MaxDomains     = 50  // custom domains per deployment
)

// The tables: every key begins with its table's prefix, declared here
// once (a test checks that no prefix begins another).
const (
	tableDeployments = "deployment/" // deployment/<id> → Deployment (JSON)
	tableDomains     = "domain/"     // domain/<host name> → Domain (JSON)
)

var tables = []string{tableDeployments, tableDomains}

// Deployment is a deployment's stored fields; its cname is its name under
// the store's CDN domain.
type Deployment struct {
	ID         string    `json:"id"`
	Account    string    `json:"account"`
	Name       string    `json:"name"`
	Origin     string    `json:"origin"` // canonical (cdnrules.Origin.String)
	DefaultTTL int       `json:"default_ttl"`
	CreatedAt  time.Time `json:"created_at"`
}

// Domain is a custom domain of a deployment.
type Domain struct {
	Name       string    `json:"name"`
	Deployment string    `json:"deployment"`
	Account    string    `json:"account"`
	Active     bool      `json:"active"`
	ZoneID     string    `json:"zone_id,omitempty"`   // the platform zone where the CDN made the CNAME
	RecordID   string    `json:"record_id,omitempty"` // that CNAME
	CreatedAt  time.Time `json:"created_at"`
}

// Options configure a store.
type Options struct {
	// Domain is the CDN's own domain: a deployment named n answers at
	// n.Domain. Default cdn.localhost, whose names resolve to the
	// loopback address on most systems (RFC 6761).
	Domain string
	FS     vfs.FS // default the disk
	Logger *slog.Logger
	Now    func() time.Time
}

// DefaultDomain is Options.Domain's default.
const DefaultDomain = "cdn.localhost"

// Store holds the deployments.
type Store struct {
	db   *pebble.DB
	opts Options

	mu          sync.Mutex
	deployments map[string]*Deployment                // by id
	byName      map[string]string                     // name → id
	domains     map[string]*Domain                    // by host name
	w           *failstop.Writer                      // commits; refuses every write after a failed one
	routes      atomic.Pointer[map[string]Deployment] // host → deployment: cnames and active domains
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
	if opts.Domain == "" {
		opts.Domain = DefaultDomain
	}
	domain, err := dnszone.ZoneName(opts.Domain)
	if err != nil {
		return nil, fmt.Errorf("cdnstore: CDN domain %q: %w", opts.Domain, err)
	}
	opts.Domain = domain
	db, err := pebblekv.Open(dir, &pebble.Options{FS: opts.FS, Logger: pebblelog.New(opts.Logger), FormatMajorVersion: pebble.FormatNewest})
	if err != nil {
		return nil, fmt.Errorf("cdnstore: open %s: %w", dir, err)
	}
	s := &Store{db: db, opts: opts, w: failstop.New(ErrUnavailable, opts.Logger, "cdnstore: a write failed; refusing CDN changes until restarted, the edge still serves"), deployments: map[string]*Deployment{}, byName: map[string]string{}, domains: map[string]*Domain{}}
	if err := s.load(); err != nil {
		db.Close()
		return nil, err
	}
	s.publish()
	return s, nil
}

func (s *Store) load() error {
	it, err := s.db.NewIter(&pebble.IterOptions{})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		key := string(it.Key())
		switch {
		case strings.HasPrefix(key, tableDeployments):
			var d Deployment
			if err := json.Unmarshal(it.Value(), &d); err != nil {
				return fmt.Errorf("cdnstore: %s: %w", key, err)
			}
			s.deployments[d.ID] = &d
			s.byName[d.Name] = d.ID
		case strings.HasPrefix(key, tableDomains):
			var d Domain
			if err := json.Unmarshal(it.Value(), &d); err != nil {
				return fmt.Errorf("cdnstore: %s: %w", key, err)
			}
			s.domains[d.Name] = &d
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	for name, d := range s.domains {
		if s.deployments[d.Deployment] == nil {
			return fmt.Errorf("cdnstore: domain %s of deployment %s, which does not exist", name, d.Deployment)
		}
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// CDNDomain is the CDN's own domain.
func (s *Store) CDNDomain() string { return s.opts.Domain }

// CNAME is the host name a deployment answers at.
func (s *Store) CNAME(d Deployment) string { return d.Name + "." + s.opts.Domain }

// Route returns the deployment that answers for host (lower-case, no
// port), by its cname or an active custom domain. It takes no lock.
func (s *Store) Route(host string) (Deployment, bool) {
	d, ok := (*s.routes.Load())[host]
	return d, ok
}

// publish rebuilds the host table; s.mu is held (or the store is new).
func (s *Store) publish() {
	m := make(map[string]Deployment, len(s.deployments)+len(s.domains))
	for _, d := range s.deployments {
		m[s.CNAME(*d)] = *d
	}
	for _, dom := range s.domains {
		if dom.Active {
			m[dom.Name] = *s.deployments[dom.Deployment]
		}
	}
	s.routes.Store(&m)
}

// Spec is what a new deployment is made of.
type Spec struct {
	Name   string
	Origin string // as cdnrules.ParseOrigin reads it
	// DefaultTTL is in seconds; nil means cdnrules.DefaultTTL.
	DefaultTTL *int
}

// Create creates a deployment for account. Its name is the platform's:
// taken by anyone, it is ErrExists.
func (s *Store) Create(account string, in Spec) (Deployment, error) {
	if err := cdnrules.CheckDeploymentName(in.Name); err != nil {
		return Deployment{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	o, err := cdnrules.ParseOrigin(in.Origin)
	if err != nil {
		return Deployment{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	ttl := cdnrules.DefaultTTL
	if in.DefaultTTL != nil {
		ttl = *in.DefaultTTL
		if err := cdnrules.CheckDefaultTTL(ttl); err != nil {
			return Deployment{}, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byName[in.Name]; ok {
		return Deployment{}, fmt.Errorf("deployment name %q: %w", in.Name, ErrExists)
	}
	n := 0
	for _, d := range s.deployments {
		if d.Account == account {
			n++
		}
	}
	if n >= MaxDeployments {
		return Deployment{}, fmt.Errorf("%w: an account may have %d deployments", ErrLimit, MaxDeployments)
	}
	d := &Deployment{ID: failstop.NewID(), Account: account, Name: in.Name, Origin: o.String(), DefaultTTL: ttl, CreatedAt: s.opts.Now().UTC().Truncate(time.Second)}
	b := s.db.NewBatch()
	defer b.Close()
	failstop.SetJSON(b, tableDeployments+d.ID, d)
	if err := s.w.Commit(b); err != nil {
		return Deployment{}, err
	}
	s.deployments[d.ID] = d
	s.byName[d.Name] = d.ID
	s.publish()
	return *d, nil
}

// Deployments returns account's deployments by name.
func (s *Store) Deployments(account string) []Deployment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Deployment
	for _, d := range s.deployments {
		if d.Account == account {
			out = append(out, *d)
		}
	}
	slices.SortFunc(out, func(a, b Deployment) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Deployment returns account's deployment id; another account's is not
// found, so that nobody learns which ids exist.
func (s *Store) Deployment(account, id string) (Deployment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.owned(account, id)
	if err != nil {
		return Deployment{}, err
	}
	return *d, nil
}

func (s *Store) owned(account, id string) (*Deployment, error) {
	d := s.deployments[id]
	if d == nil || d.Account != account {
		return nil, fmt.Errorf("deployment %s: %w", id, ErrNotFound)
	}
	return d, nil
}

// Delete deletes account's deployment id with its custom domains, in one
// write, and returns the domains it had.
func (s *Store) Delete(account, id string) ([]Domain, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.owned(account, id)
	if err != nil {
		return nil, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	b.Delete([]byte(tableDeployments+id), nil)
	var gone []Domain
	for name, dom := range s.domains {
		if dom.Deployment == id {
			b.Delete([]byte(tableDomains+name), nil)
			gone = append(gone, *dom)
		}
	}
	if err := s.w.Commit(b); err != nil {
		return nil, err
	}
	for _, dom := range gone {
		delete(s.domains, dom.Name)
	}
	delete(s.deployments, id)
	delete(s.byName, d.Name)
	s.publish()
	return gone, nil
}

// Domains returns the custom domains of account's deployment id by name.
func (s *Store) Domains(account, id string) ([]Domain, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.owned(account, id); err != nil {
		return nil, err
	}
	var out []Domain
	for _, dom := range s.domains {
		if dom.Deployment == id {
			out = append(out, *dom)
		}
	}
	slices.SortFunc(out, func(a, b Domain) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// CheckDomain checks and canonicalises a custom domain's name: a host
// name of two labels or more, not under the CDN's own domain.
func (s *Store) CheckDomain(name string) (string, error) {
	host, err := dnszone.ZoneName(name)
	if err != nil {
		// dnszone's reason without its "invalid: " prefix (unwrapping
		// the error gave the bare "invalid" and lost the reason).
		return "", fmt.Errorf("%w: domain: %s", ErrInvalid, strings.TrimPrefix(err.Error(), dnszone.ErrInvalid.Error()+": "))
	}
	if host == s.opts.Domain || strings.HasSuffix(host, "."+s.opts.Domain) {
		return "", fmt.Errorf("%w: %s is under the CDN's own domain %s: every deployment already answers at NAME.%s", ErrInvalid, host, s.opts.Domain, s.opts.Domain)
	}
	return host, nil
}

// AddDomain adds dom (its Name checked by CheckDomain) to account's
// deployment dom.Deployment. A host name belongs to one deployment: held
// by another, it is ErrExists, unless dom is Active, which its caller
// sets only when DNS proves the name is this deployment's (the host is a
// CNAME of the deployment's own name). Then the other claim, which DNS
// no longer proves, gives way: it is removed in the same write and
// returned as replaced, so that a name cannot be held against its owner
// by whoever attached it first.
func (s *Store) AddDomain(account string, dom Domain) (added Domain, replaced *Domain, err error) {
	host, err := s.CheckDomain(dom.Name)
	if err != nil {
		return Domain{}, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.owned(account, dom.Deployment); err != nil {
		return Domain{}, nil, err
	}
	if old, ok := s.domains[host]; ok {
		if old.Deployment == dom.Deployment {
			return Domain{}, nil, fmt.Errorf("domain %s: %w", host, ErrExists)
		}
		if !dom.Active {
			return Domain{}, nil, fmt.Errorf("domain %s: %w", host, ErrClaimed)
		}
		prev := *old
		replaced = &prev
	}
	n := 0
	for _, d := range s.domains {
		if d.Deployment == dom.Deployment {
			n++
		}
	}
	if n >= MaxDomains {
		return Domain{}, nil, fmt.Errorf("%w: a deployment may have %d custom domains", ErrLimit, MaxDomains)
	}
	dom.Name, dom.Account, dom.CreatedAt = host, account, s.opts.Now().UTC().Truncate(time.Second)
	b := s.db.NewBatch()
	defer b.Close()
	failstop.SetJSON(b, tableDomains+host, dom) // over the replaced claim's record
	if err := s.w.Commit(b); err != nil {
		return Domain{}, nil, err
	}
	if replaced != nil {
		s.opts.Logger.Info("custom domain taken by the deployment DNS names", "domain", host,
			"deployment", dom.Deployment, "account", account, "from_deployment", replaced.Deployment, "from_account", replaced.Account)
	}
	s.domains[host] = &dom
	s.publish()
	return dom, replaced, nil
}

// Activate marks account's pending domain host of deployment id active.
func (s *Store) Activate(account, id, host string) (Domain, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dom, err := s.domainOf(account, id, host)
	if err != nil {
		return Domain{}, err
	}
	if dom.Active {
		return *dom, nil
	}
	next := *dom
	next.Active = true
	b := s.db.NewBatch()
	defer b.Close()
	failstop.SetJSON(b, tableDomains+host, next)
	if err := s.w.Commit(b); err != nil {
		return Domain{}, err
	}
	*dom = next
	s.publish()
	return next, nil
}

// Domain returns custom domain host of account's deployment id.
func (s *Store) Domain(account, id, host string) (Domain, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dom, err := s.domainOf(account, id, host)
	if err != nil {
		return Domain{}, err
	}
	return *dom, nil
}

func (s *Store) domainOf(account, id, host string) (*Domain, error) {
	if _, err := s.owned(account, id); err != nil {
		return nil, err
	}
	dom := s.domains[dnszone.LowerASCII(strings.TrimSuffix(host, "."))]
	if dom == nil || dom.Deployment != id {
		return nil, fmt.Errorf("domain %s: %w", host, ErrNotFound)
	}
	return dom, nil
}

// RemoveDomain removes custom domain host from account's deployment id
// and returns it.
func (s *Store) RemoveDomain(account, id, host string) (Domain, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dom, err := s.domainOf(account, id, host)
	if err != nil {
		return Domain{}, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	b.Delete([]byte(tableDomains+dom.Name), nil)
	if err := s.w.Commit(b); err != nil {
		return Domain{}, err
	}
	delete(s.domains, dom.Name)
	s.publish()
	return *dom, nil
}
