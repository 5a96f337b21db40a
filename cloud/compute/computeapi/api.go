// Package computeapi serves the Compute endpoints of the cloud
// platform's REST API (VMs: list, create, get, delete, power; and this
// platform's console, images and usage) through cloudapi's Handle, over
// the VM records (computestore) and the host that runs them (vmhost).
package computeapi

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/compute/computerules"
	"github.com/latticenet/lattice/cloud/compute/computestore"
	"github.com/latticenet/lattice/cloud/compute/vmhost"
)

// DefaultImage is the image of a create body that names none.
const DefaultImage = "debian-12"

// MaxConsole is how much of a console log GET .../console answers: its
// last MaxConsole bytes.
const MaxConsole = 1 << 20

// Register adds the Compute routes to api.
func Register(api *cloudapi.Server, store *computestore.Store, host *vmhost.Host) {
	h := &handlers{api: api, store: store, host: host}
	api.Handle("GET /api/compute/vms", h.list)
	api.Handle("POST /api/compute/vms", h.create)
	api.Handle("GET /api/compute/vms/{id}", h.get)
	api.Handle("DELETE /api/compute/vms/{id}", h.delete)
	api.Handle("POST /api/compute/vms/{id}/power", h.power)
	api.Handle("GET /api/compute/vms/{id}/console", h.console)
	api.Handle("GET /api/compute/images", h.images)
	api.Handle("GET /api/compute/usage", h.usage)
}

type handlers struct {
	api   *cloudapi.Server
	store *computestore.Store
	host  *vmhost.Host
}

func (h *handlers) vmJSON(v computestore.VM) cloudwire.VM {
	out := cloudwire.VM{ID: v.ID, Name: v.Name, Status: v.Status, StatusReason: v.Reason, VCPUs: v.VCPUs, MemoryMB: v.MemoryMB,
		DiskGB: v.DiskGB, Image: v.Image, SSHKeys: v.SSHKeys, Console: "/api/compute/vms/" + v.ID + "/console",
		Accel: h.host.Accel(), CreatedAt: v.CreatedAt.Format(time.RFC3339), UpdatedAt: v.UpdatedAt.Format(time.RFC3339)}
	if out.SSHKeys == nil {
		out.SSHKeys = []string{}
	}
	if p, ok := h.host.Place(v.ID); ok {
		out.Lease = &cloudwire.VMLease{Hash: p.Lease, Provider: p.Provider}
		if !p.EndsAt.IsZero() {
			out.Lease.EndsAt = p.EndsAt.UTC().Format(time.RFC3339)
		}
	}
	if v.Status == computerules.Running {
		if addr := h.host.SSHAddr(v.ID); addr != "" {
			if host, p, err := net.SplitHostPort(addr); err == nil {
				port, _ := strconv.Atoi(p)
				out.SSH = &cloudwire.VMSSH{Host: host, Port: port, User: "root", Command: fmt.Sprintf("ssh -p %d root@%s", port, host)}
			}
		}
	}
	return out
}

func (h *handlers) list(w http.ResponseWriter, r *http.Request, account string) error {
	out := []cloudwire.VM{}
	for _, v := range h.store.List(account) {
		out = append(out, h.vmJSON(v))
	}
	page, err := cloudapi.Page(r, out)
	if err != nil {
		return err
	}
	cloudapi.WriteJSON(w, http.StatusOK, page)
	return nil
}

// create records the VM (201, provisioning) and has the host boot it in
// the background: poll it until running or error.
func (h *handlers) create(w http.ResponseWriter, r *http.Request, account string) error {
	var in createBody
	if err := h.api.Decode(w, r, &in); err != nil {
		return err
	}
	spec, err := in.spec()
	if err != nil {
		return err
	}
	v, err := h.store.Create(account, spec, h.host.Images())
	if err != nil {
		return apiError(err)
	}
	h.host.Kick(v.ID)
	cloudapi.WriteJSON(w, http.StatusCreated, h.vmJSON(v))
	return nil
}

// createBody is cloudwire.VMInput as the server reads it: vcpus,
// memory_mb and image omitted take their defaults, and given are checked
// as given (a 0 or "" is refused, not taken for the default). disk_gb 0
// is a documented value: the image's minimum (none for minimal).
type createBody struct {
	Name     string   `json:"name"`
	VCPUs    *int     `json:"vcpus"`
	MemoryMB *int     `json:"memory_mb"`
	DiskGB   int      `json:"disk_gb"`
	Image    *string  `json:"image"`
	SSHKeys  []string `json:"ssh_keys"`
	UserData string   `json:"user_data"`
}

// spec is the body as a computerules.Spec, whose Check fills the
// defaults of the fields left 0.
func (in createBody) spec() (computerules.Spec, error) {
	spec := computerules.Spec{Name: in.Name, DiskGB: in.DiskGB, Image: DefaultImage, SSHKeys: in.SSHKeys, UserData: in.UserData}
	for _, f := range []struct {
		name  string
		dflt  int
		given *int
		to    *int
	}{
		{"vcpus", computerules.DefaultVCPUs, in.VCPUs, &spec.VCPUs},
		{"memory_mb", computerules.DefaultMemoryMB, in.MemoryMB, &spec.MemoryMB},
	} {
		if f.given == nil {
			continue
		}
		if *f.given == 0 {
			return spec, cloudapi.Validation("%s 0: want a positive number, or leave it out for the default (%d)", f.name, f.dflt)
		}
		*f.to = *f.given
	}
	if in.Image != nil {
		if *in.Image == "" {
			return spec, cloudapi.Validation("image \"\": name one (GET /api/compute/images), or leave it out for the default (%s)", DefaultImage)
		}
		spec.Image = *in.Image
	}
	return spec, nil
}

func (h *handlers) get(w http.ResponseWriter, r *http.Request, account string) error {
	v, err := h.store.Get(account, r.PathValue("id"))
	if err != nil {
		return apiError(err)
	}
	cloudapi.WriteJSON(w, http.StatusOK, h.vmJSON(v))
	return nil
}

// delete records the delete (202, deleting); the host stops the VM,
// removes its disk and then the record.
func (h *handlers) delete(w http.ResponseWriter, r *http.Request, account string) error {
	v, err := h.store.Delete(account, r.PathValue("id"))
	if err != nil {
		return apiError(err)
	}
	h.host.Kick(v.ID)
	cloudapi.WriteJSON(w, http.StatusAccepted, h.vmJSON(v))
	return nil
}

func (h *handlers) power(w http.ResponseWriter, r *http.Request, account string) error {
	var in cloudwire.VMPower
	if err := h.api.Decode(w, r, &in); err != nil {
		return err
	}
	// The VM's existence first: another account's VM is 404 whatever
	// the body says.
	if _, err := h.store.Get(account, r.PathValue("id")); err != nil {
		return apiError(err)
	}
	if _, err := computerules.Power(computerules.Running, in.Action); errors.Is(err, computerules.ErrInvalid) {
		return apiError(err)
	}
	if err := h.host.CheckPower(in.Action); err != nil {
		return apiError(err)
	}
	v, err := h.store.Power(account, r.PathValue("id"), in.Action)
	if err != nil {
		return apiError(err)
	}
	h.host.Kick(v.ID)
	cloudapi.WriteJSON(w, http.StatusAccepted, h.vmJSON(v))
	return nil
}

func (h *handlers) console(w http.ResponseWriter, r *http.Request, account string) error {
	v, err := h.store.Get(account, r.PathValue("id"))
	if err != nil {
		return apiError(err)
	}
	b, err := h.host.Console(v.ID, MaxConsole)
	if errors.Is(err, vmhost.ErrNoConsole) {
		return cloudapi.Conflict("this VM runs at its lease's provider, which keeps its console")
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return nil
}

func (h *handlers) images(w http.ResponseWriter, r *http.Request, account string) error {
	out := []cloudwire.VMImage{}
	for _, img := range h.host.Images() {
		out = append(out, cloudwire.VMImage{Name: img.Name, Description: img.Description, MinDiskGB: img.MinDiskGB, MinMemoryMB: img.MinMemoryMB, SSH: img.SSH})
	}
	page, err := cloudapi.Page(r, out)
	if err != nil {
		return err
	}
	cloudapi.WriteJSON(w, http.StatusOK, page)
	return nil
}

func (h *handlers) usage(w http.ResponseWriter, r *http.Request, account string) error {
	u, q := h.store.Usage(account), h.store.Quota()
	cloudapi.WriteJSON(w, http.StatusOK, cloudwire.ComputeUsage{Used: cloudwire.ComputeResources(u), Quota: cloudwire.ComputeResources(q)})
	return nil
}

// CapacityRetry is the Retry-After of an insufficient_capacity answer.
const CapacityRetry = 30 * time.Second

func apiError(err error) error {
	switch {
	case errors.Is(err, computerules.ErrInvalid):
		return cloudapi.Validation("%v", unwrapInvalid(err))
	case errors.Is(err, computestore.ErrNotFound):
		return cloudapi.NotFound("VM")
	case errors.Is(err, computestore.ErrExists):
		return cloudapi.Conflict("you already have a VM of that name")
	case errors.Is(err, computerules.ErrBusy), errors.Is(err, computerules.ErrState):
		return cloudapi.Conflict(message(err))
	case errors.Is(err, computerules.ErrQuota):
		return &cloudapi.Error{Status: http.StatusForbidden, Code: "quota_exceeded", Message: message(err)}
	case errors.Is(err, computerules.ErrCapacity):
		return &cloudapi.Error{Status: http.StatusServiceUnavailable, Code: "insufficient_capacity", Message: message(err), RetryAfter: CapacityRetry}
	case errors.Is(err, computestore.ErrUnavailable):
		return cloudapi.Unavailable()
	}
	return err
}

// message is err's text without the rules' package prefix.
func message(err error) string {
	for _, s := range []error{computerules.ErrBusy, computerules.ErrState, computerules.ErrQuota, computerules.ErrCapacity} {
		if errors.Is(err, s) {
			return trimPrefix(err.Error(), s.Error()+": ")
		}
	}
	return err.Error()
}

func unwrapInvalid(err error) string {
	return trimPrefix(err.Error(), computerules.ErrInvalid.Error()+": ")
}

func trimPrefix(s, p string) string {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}
