package cloudclient

import (
	"context"
	"io"
	"net/url"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

func vmPath(id string, parts ...string) string {
	p := "/api/compute/vms/" + url.PathEscape(id)
	for _, s := range parts {
		p += "/" + s
	}
	return p
}

// CreateVM creates a VM: it is provisioning at once, and running (or in
// error, with the reason) once the host has booted it; poll VM.
func (c *Client) CreateVM(ctx context.Context, in cloudwire.VMInput) (cloudwire.VM, error) {
	var v cloudwire.VM
	return v, c.do(ctx, "POST", "/api/compute/vms", in, &v)
}

// VMs returns every VM of the account, by name.
func (c *Client) VMs(ctx context.Context) ([]cloudwire.VM, error) {
	return allPages[cloudwire.VM](ctx, c, "/api/compute/vms")
}

// VM returns one VM by its ID.
func (c *Client) VM(ctx context.Context, id string) (cloudwire.VM, error) {
	var v cloudwire.VM
	return v, c.do(ctx, "GET", vmPath(id), nil, &v)
}

// DeleteVM deletes a VM with its disk: the answer is the VM deleting;
// it is gone (404) once the host has stopped it and removed its disk.
func (c *Client) DeleteVM(ctx context.Context, id string) (cloudwire.VM, error) {
	var v cloudwire.VM
	return v, c.do(ctx, "DELETE", vmPath(id), nil, &v)
}

// PowerVM asks a VM to power "on", "off" or "reboot"; the answer is the
// VM starting, stopping or rebooting (a 409 APIError when its status
// does not allow the action).
func (c *Client) PowerVM(ctx context.Context, id, action string) (cloudwire.VM, error) {
	var v cloudwire.VM
	return v, c.do(ctx, "POST", vmPath(id, "power"), cloudwire.VMPower{Action: action}, &v)
}

// VMConsole returns a VM's console log of its latest boot (its last MiB).
func (c *Client) VMConsole(ctx context.Context, id string) ([]byte, error) {
	req, err := c.request(ctx, "GET", vmPath(id, "console"), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// VMImages lists the images VMs are made from.
func (c *Client) VMImages(ctx context.Context) ([]cloudwire.VMImage, error) {
	return allPages[cloudwire.VMImage](ctx, c, "/api/compute/images")
}

// ComputeUsage is what the account's VMs take against its quota.
func (c *Client) ComputeUsage(ctx context.Context) (cloudwire.ComputeUsage, error) {
	var u cloudwire.ComputeUsage
	return u, c.do(ctx, "GET", "/api/compute/usage", nil, &u)
}
