package cloudwire

// VM is the Compute VM resource. The list items the API description
// shows are id, name and status; the rest is this platform's.
type VM struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
	// StatusReason says why the VM is in error, or why it stopped when
	// it did not stop on request (its lease ended).
	StatusReason string   `json:"status_reason,omitempty"`
	VCPUs        int      `json:"vcpus"`
	MemoryMB     int      `json:"memory_mb"`
	DiskGB       int      `json:"disk_gb"`
	Image        string   `json:"image"`
	SSHKeys      []string `json:"ssh_keys"`
	// SSH is how to log in while the VM runs an image with an SSH server.
	SSH *VMSSH `json:"ssh,omitempty"`
	// Console is the path of the VM's console log on this API.
	Console string `json:"console"`
	// Accel is how the host runs it: "kvm" or "tcg" (emulated), or
	// "lease" when a provider of the ledger network runs it.
	Accel string `json:"accel"`
	// Lease is the lease a VM of the lease backend runs on.
	Lease     *VMLease `json:"lease,omitempty"`
	CreatedAt string   `json:"created_at"` // RFC 3339
	UpdatedAt string   `json:"updated_at"` // RFC 3339: the last status change
}

// VMLease is the lease a VM runs on, on the lease backend: the ledger
// network's provider runs the VM, and the platform's SSH address is a
// tunnel to it.
type VMLease struct {
	Hash     string `json:"hash"`
	Provider string `json:"provider"`
	EndsAt   string `json:"ends_at,omitempty"` // RFC 3339, once the provider has started it
}

// VMSSH is a running VM's SSH address, forwarded on the host.
type VMSSH struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	User    string `json:"user"`
	Command string `json:"command"` // "ssh -p PORT root@HOST"
}

// VMInput is the body that creates a VM; omitted numbers take their
// defaults (1 vCPU, 512 MB, the image's smallest disk).
type VMInput struct {
	Name     string   `json:"name"`
	VCPUs    int      `json:"vcpus,omitempty"`
	MemoryMB int      `json:"memory_mb,omitempty"`
	DiskGB   int      `json:"disk_gb,omitempty"`
	Image    string   `json:"image,omitempty"` // default "debian-12"
	SSHKeys  []string `json:"ssh_keys,omitempty"`
	UserData string   `json:"user_data,omitempty"`
}

// VMPower is the body of a power request: Action is "on", "off" or
// "reboot".
type VMPower struct {
	Action string `json:"action"`
}

// VMImage is an image VMs are made from.
type VMImage struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	MinDiskGB   int    `json:"min_disk_gb"`
	MinMemoryMB int    `json:"min_memory_mb"`
	SSH         bool   `json:"ssh"`
}

// ComputeUsage is what the account's VMs take against its quota.
type ComputeUsage struct {
	Used  ComputeResources `json:"used"`
	Quota ComputeResources `json:"quota"`
}

// ComputeResources counts VMs and what they take.
type ComputeResources struct {
	VMs      int `json:"vms"`
	VCPUs    int `json:"vcpus"`
	MemoryMB int `json:"memory_mb"`
	DiskGB   int `json:"disk_gb"`
}
