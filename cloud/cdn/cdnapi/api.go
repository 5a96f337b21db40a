// Package cdnapi serves the CDN endpoints of the cloud platform's REST API
// (deployments, their domains, purges and figures) through cloudapi's
// Handle, over a cdnstore, the edge that caches for it, the object store
// (bucket origins) and the DNS store (custom domains in the platform's own
// zones get their CNAME made for them).
package cdnapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/cdn/cdnedge"
	"github.com/latticenet/lattice/cloud/cdn/cdnrules"
	"github.com/latticenet/lattice/cloud/cdn/cdnstore"
	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/dns/dnsstore"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

// Resolver looks up a custom domain's CNAME (net.DefaultResolver does).
type Resolver interface {
	LookupCNAME(ctx context.Context, host string) (string, error)
}

// Options are the API's collaborators. Edge may be nil (no edge runs:
// purges and figures are then empty); DNS may be nil (no custom domain
// is then attached automatically).
type Options struct {
	Store   *cdnstore.Store
	Edge    *cdnedge.Edge
	Buckets cdnedge.Buckets
	DNS     *dnsstore.Store
	// AllowPrivateOrigins is the edge's setting: off, origins at
	// loopback or private addresses are refused at creation.
	AllowPrivateOrigins bool
	// Resolver verifies custom domains: net.DefaultResolver by default,
	// the platform's own DNS server under lattice dev, whose zones are
	// all the DNS there is.
	Resolver Resolver
}

// Register adds the CDN routes to api.
func Register(api *cloudapi.Server, opts Options) {
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	h := &handlers{api: api, Options: opts, registered: time.Now()}
	api.Handle("GET /api/cdn/deployments", h.list)
	api.Handle("POST /api/cdn/deployments", h.create)
	api.Handle("GET /api/cdn/deployments/{id}", h.get)
	api.Handle("DELETE /api/cdn/deployments/{id}", h.delete)
	api.Handle("GET /api/cdn/deployments/{id}/domains", h.domains)
	api.Handle("POST /api/cdn/deployments/{id}/domains", h.addDomain)
	api.Handle("GET /api/cdn/deployments/{id}/domains/{domain}", h.getDomain)
	api.Handle("POST /api/cdn/deployments/{id}/domains/{domain}/verify", h.verifyDomain)
	api.Handle("DELETE /api/cdn/deployments/{id}/domains/{domain}", h.removeDomain)
	api.Handle("POST /api/cdn/deployments/{id}/purge", h.purge)
	api.Handle("GET /api/cdn/deployments/{id}/stats", h.stats)
}

type handlers struct {
	api *cloudapi.Server
	Options
	// registered is when the routes were made: without an edge, the
	// (empty) figures count from then.
	registered time.Time
}

func (h *handlers) deploymentJSON(d cdnstore.Deployment) cloudwire.Deployment {
	return cloudwire.Deployment{ID: d.ID, Name: d.Name, Origin: d.Origin, CNAME: h.Store.CNAME(d), DefaultTTL: d.DefaultTTL,
		CreatedAt: d.CreatedAt.Format(time.RFC3339)}
}

func (h *handlers) list(w http.ResponseWriter, r *http.Request, account string) error {
	out := []cloudwire.Deployment{}
	for _, d := range h.Store.Deployments(account) {
		out = append(out, h.deploymentJSON(d))
	}
	page, err := cloudapi.Page(r, out)
	if err != nil {
		return err
	}
	cloudapi.WriteJSON(w, http.StatusOK, page)
	return nil
}

func (h *handlers) create(w http.ResponseWriter, r *http.Request, account string) error {
	var in cloudwire.DeploymentInput
	if err := h.api.Decode(w, r, &in); err != nil {
		return err
	}
	if in.Name == "" {
		return cloudapi.Validation("name is required: the deployment answers at NAME.%s", h.Store.CDNDomain())
	}
	if in.Origin == "" {
		return cloudapi.Validation("origin is required: http(s)://HOST[/PATH], or s3://BUCKET[/PREFIX] for a bucket of yours or a public one")
	}
	o, err := cdnrules.ParseOrigin(in.Origin)
	if err != nil {
		return cloudapi.Validation("%v", err)
	}
	if err := cdnedge.CheckOrigin(o, h.AllowPrivateOrigins); err != nil {
		return cloudapi.Validation("%v", err)
	}
	if o.URL == nil {
		if h.Buckets == nil {
			return cloudapi.Validation("origin %s: this platform serves no buckets to the CDN", o)
		}
		if err := cdnedge.CheckBucket(h.Buckets, account, o.Bucket); err != nil {
			return cloudapi.Validation("%v", err)
		}
	}
	d, err := h.Store.Create(account, cdnstore.Spec{Name: in.Name, Origin: in.Origin, DefaultTTL: in.DefaultTTL})
	if err != nil {
		return apiError(err, "deployment")
	}
	cloudapi.WriteJSON(w, http.StatusCreated, h.deploymentJSON(d))
	return nil
}

func (h *handlers) get(w http.ResponseWriter, r *http.Request, account string) error {
	d, err := h.Store.Deployment(account, r.PathValue("id"))
	if err != nil {
		return apiError(err, "deployment")
	}
	cloudapi.WriteJSON(w, http.StatusOK, h.deploymentJSON(d))
	return nil
}

func (h *handlers) delete(w http.ResponseWriter, r *http.Request, account string) error {
	gone, err := h.Store.Delete(account, r.PathValue("id"))
	if err != nil {
		return apiError(err, "deployment")
	}
	for _, dom := range gone {
		h.removeCNAME(account, dom)
	}
	if h.Edge != nil {
		h.Edge.Forget(r.PathValue("id"))
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// domains lists the deployment's domains: its own name under the CDN
// domain first, then its custom domains by name.
func (h *handlers) domains(w http.ResponseWriter, r *http.Request, account string) error {
	id := r.PathValue("id")
	d, err := h.Store.Deployment(account, id)
	if err != nil {
		return apiError(err, "deployment")
	}
	doms, err := h.Store.Domains(account, id)
	if err != nil {
		return apiError(err, "deployment")
	}
	out := []cloudwire.Domain{{Name: h.Store.CNAME(d), Type: cloudwire.DomainDefault, Status: cloudwire.DomainActive,
		CreatedAt: d.CreatedAt.Format(time.RFC3339)}}
	for _, dom := range doms {
		out = append(out, h.domainJSON(d, dom))
	}
	page, err := cloudapi.Page(r, out)
	if err != nil {
		return err
	}
	cloudapi.WriteJSON(w, http.StatusOK, page)
	return nil
}

func (h *handlers) domainJSON(d cdnstore.Deployment, dom cdnstore.Domain) cloudwire.Domain {
	out := cloudwire.Domain{Name: dom.Name, Type: cloudwire.DomainCustom, Status: cloudwire.DomainActive, Zone: dom.ZoneID,
		CreatedAt: dom.CreatedAt.Format(time.RFC3339)}
	if !dom.Active {
		out.Status = cloudwire.DomainPending
		out.Verification = &cloudwire.DomainVerification{Type: "CNAME", Name: dom.Name, Value: h.Store.CNAME(d)}
	}
	return out
}

// addDomain attaches a custom domain. In a zone of the caller's on this
// platform's DNS, the CDN makes the CNAME itself and the domain is active
// at once; elsewhere it is pending until verify finds the CNAME in DNS.
// A name held by another deployment, or in another account's zone here,
// is the caller's only when DNS already proves it: the host is a CNAME
// of the caller's deployment. Then the other claim gives way (neither
// attaching first nor making a zone here proves anything).
func (h *handlers) addDomain(w http.ResponseWriter, r *http.Request, account string) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := h.api.Decode(w, r, &in); err != nil {
		return err
	}
	id := r.PathValue("id")
	d, err := h.Store.Deployment(account, id)
	if err != nil {
		return apiError(err, "deployment")
	}
	host, err := h.Store.CheckDomain(in.Name)
	if err != nil {
		return apiError(err, "domain")
	}
	want := h.Store.CNAME(d)
	proven := func() bool {
		got, err := h.lookup(r.Context(), host, 5*time.Second)
		return err == nil && got == want
	}
	dom := cdnstore.Domain{Name: host, Deployment: id}
	if h.DNS != nil {
		if z, ok := h.DNS.Containing(host); ok {
			switch {
			case z.Account != account:
				if !proven() {
					return cloudapi.Conflict(fmt.Sprintf("%s lies in the zone %s, which another account holds on this platform; if the domain is yours, point a CNAME %s → %s at your DNS provider, then attach it again",
						host, z.Name, host, want))
				}
				dom.Active = true // DNS proves it; the other account's zone is not the one delegated
			default:
				if dom, err = h.cname(account, z, host, want, dom); err != nil {
					return err
				}
				// Holding a zone here proves nothing of the domain (anyone may
				// create any zone): the name is the account's once DNS, as the
				// resolver asks it, gives the CNAME, that is once the domain's
				// owner has delegated the zone to this platform.
				dom.Active = proven()
			}
		}
	}
	added, replaced, err := h.Store.AddDomain(account, dom)
	if errors.Is(err, cdnstore.ErrClaimed) && !dom.Active && proven() {
		dom.Active = true
		added, replaced, err = h.Store.AddDomain(account, dom)
	}
	if err != nil {
		h.removeCNAME(account, dom)
		if errors.Is(err, cdnstore.ErrClaimed) {
			return cloudapi.Conflict(fmt.Sprintf("%s is attached to another deployment, and DNS does not name yours; if the domain is yours, point a CNAME %s → %s at your DNS provider, then attach it again: a claim that DNS proves takes the name",
				host, host, want))
		}
		return apiError(err, "domain")
	}
	if replaced != nil {
		h.removeCNAME(replaced.Account, *replaced)
	}
	cloudapi.WriteJSON(w, http.StatusCreated, h.domainJSON(d, added))
	return nil
}

// cname makes host a CNAME of target in account's zone z, unless it is one
// already, and returns dom with the zone (and the record it made).
func (h *handlers) cname(account string, z dnsstore.Zone, host, target string, dom cdnstore.Domain) (cdnstore.Domain, error) {
	if host == z.Name {
		return dom, cloudapi.Validation("%s is the apex of your zone, where a CNAME cannot be (it must keep its SOA and NS): attach a name below it, such as www.%s", host, host)
	}
	records, err := h.DNS.Records(account, z.ID)
	if err != nil {
		return dom, dnsError(err)
	}
	for _, rec := range records {
		if rec.Name != host {
			continue
		}
		if rec.Type == "CNAME" && strings.TrimSuffix(rec.Value, ".") == target {
			dom.ZoneID = z.ID // there already; not ours to remove
			return dom, nil
		}
		return dom, cloudapi.Conflict(fmt.Sprintf("%s already has a %s record in your zone %s: remove it first, or attach another name", host, rec.Type, z.Name))
	}
	rec, err := h.DNS.AddRecord(account, z.ID, dnszone.Input{Type: "CNAME", Name: host + ".", Value: target + "."})
	if err != nil {
		return dom, dnsError(err)
	}
	dom.ZoneID, dom.RecordID = z.ID, rec.ID
	return dom, nil
}

// dnsError maps the DNS store's errors to the API's, their messages
// without the stores' prefixes ("invalid: ", "dnsstore: limit reached: ").
func dnsError(err error) error {
	switch {
	case errors.Is(err, dnszone.ErrInvalid):
		return cloudapi.Validation("%s", strings.TrimPrefix(err.Error(), dnszone.ErrInvalid.Error()+": "))
	case errors.Is(err, dnsstore.ErrUnavailable):
		return cloudapi.Unavailable()
	case errors.Is(err, dnsstore.ErrLimit):
		return cloudapi.Validation("%s", strings.TrimPrefix(err.Error(), dnsstore.ErrLimit.Error()+": "))
	}
	return err
}

// removeCNAME removes the CNAME the CDN made for dom, if it made one.
func (h *handlers) removeCNAME(account string, dom cdnstore.Domain) {
	if h.DNS != nil && dom.RecordID != "" {
		h.DNS.DeleteRecord(account, dom.ZoneID, dom.RecordID) // gone already is fine
	}
}

func (h *handlers) getDomain(w http.ResponseWriter, r *http.Request, account string) error {
	id := r.PathValue("id")
	d, err := h.Store.Deployment(account, id)
	if err != nil {
		return apiError(err, "deployment")
	}
	dom, err := h.Store.Domain(account, id, r.PathValue("domain"))
	if err != nil {
		return apiError(err, "domain")
	}
	cloudapi.WriteJSON(w, http.StatusOK, h.domainJSON(d, dom))
	return nil
}

// lookup asks the resolver for host's CNAME, lower-case and without the
// final dot, within d.
func (h *handlers) lookup(ctx context.Context, host string, d time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	got, err := h.Resolver.LookupCNAME(ctx, host)
	return strings.ToLower(strings.TrimSuffix(got, ".")), err
}

// dnsReason is why a lookup failed, without the resolver's address that
// net.DNSError names (the host's, which is not the tenant's to see, and
// not even the server asked when the platform verifies with its own).
func dnsReason(err error) string {
	// Fixed phrases only: a DNSError's Err can be a socket error that
	// names the addresses ("read udp 127.0.0.1:42501->...").
	var de *net.DNSError
	switch {
	case errors.As(err, &de) && de.IsNotFound:
		return "no such name"
	case errors.As(err, &de) && de.IsTimeout, errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.As(err, &de) && de.IsTemporary:
		return "the name server failed; try again"
	}
	return "lookup failed"
}

// verifyDomain looks a pending domain's CNAME up in DNS and activates the
// domain when it names the deployment's cname.
func (h *handlers) verifyDomain(w http.ResponseWriter, r *http.Request, account string) error {
	id := r.PathValue("id")
	d, err := h.Store.Deployment(account, id)
	if err != nil {
		return apiError(err, "deployment")
	}
	dom, err := h.Store.Domain(account, id, r.PathValue("domain"))
	if err != nil {
		return apiError(err, "domain")
	}
	if !dom.Active {
		want := h.Store.CNAME(d)
		got, err := h.lookup(r.Context(), dom.Name, 10*time.Second)
		if err != nil || got != want {
			found := "no CNAME"
			if err == nil && got != dom.Name {
				found = "a CNAME to " + got
			} else if err != nil {
				found = "no answer (" + dnsReason(err) + ")"
			}
			return cloudapi.Conflict(fmt.Sprintf("%s is not verified: DNS gives %s; create a CNAME record %s → %s at your DNS provider, then verify again", dom.Name, found, dom.Name, want))
		}
		if dom, err = h.Store.Activate(account, id, dom.Name); err != nil {
			return apiError(err, "domain")
		}
	}
	cloudapi.WriteJSON(w, http.StatusOK, h.domainJSON(d, dom))
	return nil
}

func (h *handlers) removeDomain(w http.ResponseWriter, r *http.Request, account string) error {
	dom, err := h.Store.RemoveDomain(account, r.PathValue("id"), r.PathValue("domain"))
	if err != nil {
		return apiError(err, "domain")
	}
	h.removeCNAME(account, dom)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// purge drops cached responses: an empty body or {} all of them, else the
// paths and prefixes named (cloudwire.Purge).
func (h *handlers) purge(w http.ResponseWriter, r *http.Request, account string) error {
	var in cloudwire.Purge
	if err := h.api.DecodeOptional(w, r, &in); err != nil {
		return err
	}
	id := r.PathValue("id")
	if _, err := h.Store.Deployment(account, id); err != nil {
		return apiError(err, "deployment")
	}
	if n := len(in.Paths) + len(in.Prefixes); n > cdnrules.MaxPurgeItems {
		return cloudapi.Validation("%d paths and prefixes: at most %d in one purge (purge a prefix, or everything with {})", n, cdnrules.MaxPurgeItems)
	}
	paths, err := escapePaths("paths", in.Paths)
	if err != nil {
		return err
	}
	prefixes, err := escapePaths("prefixes", in.Prefixes)
	if err != nil {
		return err
	}
	n := 0
	if h.Edge != nil {
		n = h.Edge.Purge(id, paths, prefixes)
	}
	cloudapi.WriteJSON(w, http.StatusOK, cloudwire.PurgeResult{Purged: n})
	return nil
}

// escapePaths checks purge paths (each begins with "/", no query) and
// gives them in the escaped form the edge keys its cache by, whether they
// came escaped ("/a%20b") or not ("/a b").
func escapePaths(field string, in []string) ([]string, error) {
	var out []string
	for _, p := range in {
		if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?#") {
			return nil, cloudapi.Validation("%s: %q: want a path beginning with / and without a query", field, p)
		}
		if un, err := url.PathUnescape(p); err == nil {
			p = un
		}
		out = append(out, (&url.URL{Path: p}).EscapedPath())
	}
	return out, nil
}

func (h *handlers) stats(w http.ResponseWriter, r *http.Request, account string) error {
	id := r.PathValue("id")
	if _, err := h.Store.Deployment(account, id); err != nil {
		return apiError(err, "deployment")
	}
	s := cloudwire.CDNStats{Since: h.registered.UTC().Format(time.RFC3339)}
	if h.Edge != nil {
		s = h.Edge.Stats(id)
	}
	cloudapi.WriteJSON(w, http.StatusOK, s)
	return nil
}

// apiError maps the store's errors to the API's.
func apiError(err error, what string) error {
	msg := err.Error()
	switch {
	case errors.Is(err, cdnstore.ErrInvalid):
		return cloudapi.Validation("%s", strings.TrimPrefix(msg, cdnstore.ErrInvalid.Error()+": "))
	case errors.Is(err, cdnstore.ErrNotFound):
		if strings.HasPrefix(msg, "deployment ") {
			return cloudapi.NotFound("deployment")
		}
		return cloudapi.NotFound(what)
	case errors.Is(err, cdnstore.ErrExists):
		return cloudapi.Conflict(strings.TrimSuffix(msg, ": "+cdnstore.ErrExists.Error()) + " is taken (by this or another account)")
	case errors.Is(err, cdnstore.ErrLimit):
		return cloudapi.Validation("%s", strings.TrimPrefix(msg, cdnstore.ErrLimit.Error()+": "))
	case errors.Is(err, cdnstore.ErrUnavailable):
		return cloudapi.Unavailable()
	}
	return err
}
