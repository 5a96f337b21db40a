package cloudclient

import (
	"context"
	"fmt"
	"net/url"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

// deploymentPath is the path of deployment id's endpoint, and of its
// sub-resource parts (each escaped on its own) when given.
func deploymentPath(id string, parts ...string) string {
	p := "/api/cdn/deployments/" + url.PathEscape(id)
	for _, s := range parts {
		p += "/" + url.PathEscape(s)
	}
	return p
}

// allPages gathers every page of the list endpoint at path, the largest
// pages the API gives.
func allPages[T any](ctx context.Context, c *Client, path string) ([]T, error) {
	all := []T{}
	for page := 1; ; page++ {
		var l cloudwire.List[T]
		if err := c.do(ctx, "GET", fmt.Sprintf("%s?page=%d&per_page=%d", path, page, cloudwire.MaxPerPage), nil, &l); err != nil {
			return nil, err
		}
		all = append(all, l.Data...)
		if len(l.Data) == 0 || page*l.Meta.PerPage >= l.Meta.Total {
			return all, nil
		}
	}
}

// CreateDeployment creates a CDN deployment: the edge answers for
// in.Name under the CDN domain from in.Origin (http(s)://HOST[/PATH], or
// s3://BUCKET[/PREFIX] for a bucket of this platform). The API checks the
// origin and answers 400 for one it will not fetch from, 409 for a name
// taken by any account.
func (c *Client) CreateDeployment(ctx context.Context, in cloudwire.DeploymentInput) (cloudwire.Deployment, error) {
	var d cloudwire.Deployment
	return d, c.do(ctx, "POST", "/api/cdn/deployments", in, &d)
}

// Deployments returns every deployment of the account, by name, reading
// as many pages as the API holds.
func (c *Client) Deployments(ctx context.Context) ([]cloudwire.Deployment, error) {
	return allPages[cloudwire.Deployment](ctx, c, "/api/cdn/deployments")
}

// Deployment returns one deployment by its ID.
func (c *Client) Deployment(ctx context.Context, id string) (cloudwire.Deployment, error) {
	var d cloudwire.Deployment
	return d, c.do(ctx, "GET", deploymentPath(id), nil, &d)
}

// DeleteDeployment deletes a deployment with its custom domains (and the
// CNAMEs the platform made for them) and its cached responses.
func (c *Client) DeleteDeployment(ctx context.Context, id string) error {
	return c.do(ctx, "DELETE", deploymentPath(id), nil, nil)
}

// Domains returns every domain of a deployment: its cname first (type
// cloudwire.DomainDefault), then its custom domains by name.
func (c *Client) Domains(ctx context.Context, id string) ([]cloudwire.Domain, error) {
	return allPages[cloudwire.Domain](ctx, c, deploymentPath(id, "domains"))
}

// AddDomain attaches the custom domain name to a deployment. In a zone of
// the account's on the platform's DNS the platform makes the CNAME and
// the domain is active at once; elsewhere it is pending, and its
// Verification names the CNAME to create before VerifyDomain.
func (c *Client) AddDomain(ctx context.Context, id, name string) (cloudwire.Domain, error) {
	var d cloudwire.Domain
	return d, c.do(ctx, "POST", deploymentPath(id, "domains"), map[string]string{"name": name}, &d)
}

// Domain returns one custom domain of a deployment.
func (c *Client) Domain(ctx context.Context, id, name string) (cloudwire.Domain, error) {
	var d cloudwire.Domain
	return d, c.do(ctx, "GET", deploymentPath(id, "domains", name), nil, &d)
}

// VerifyDomain asks the platform to look a pending domain's CNAME up in
// DNS and returns the domain, active; the API answers 409, saying what
// DNS gave, while the CNAME is missing. An active domain is returned as
// it is.
func (c *Client) VerifyDomain(ctx context.Context, id, name string) (cloudwire.Domain, error) {
	var d cloudwire.Domain
	return d, c.do(ctx, "POST", deploymentPath(id, "domains", name, "verify"), nil, &d)
}

// RemoveDomain detaches a custom domain from a deployment, with the
// CNAME the platform made for it, if it made one.
func (c *Client) RemoveDomain(ctx context.Context, id, name string) error {
	return c.do(ctx, "DELETE", deploymentPath(id, "domains", name), nil, nil)
}

// Purge drops a deployment's cached responses: the paths and prefixes p
// names, or every one when p names none. It takes effect before the
// answer, which counts the responses removed.
func (c *Client) Purge(ctx context.Context, id string, p cloudwire.Purge) (cloudwire.PurgeResult, error) {
	var r cloudwire.PurgeResult
	return r, c.do(ctx, "POST", deploymentPath(id, "purge"), p, &r)
}

// CDNStats returns a deployment's edge figures since the edge started.
func (c *Client) CDNStats(ctx context.Context, id string) (cloudwire.CDNStats, error) {
	var s cloudwire.CDNStats
	return s, c.do(ctx, "GET", deploymentPath(id, "stats"), nil, &s)
}
