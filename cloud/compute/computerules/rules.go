// Package computerules is the pure core of the cloud's Compute service:
// a VM's statuses and the transitions between them, what a VM may be
// made of, and the arithmetic of quotas and host capacity. It does no
// I/O; the store keeps what these rules allow, the host runs it.
package computerules

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Statuses of a VM. The steady ones are Running, Stopped and Error; the
// others last while the host acts, and a power request or a delete made
// in one of them is refused (ErrBusy) except a delete in Error.
const (
	Provisioning = "provisioning" // created: disk and image being made, first boot
	Starting     = "starting"     // powered on: booting
	Running      = "running"      // its agent answers; exec, SSH and the console work
	Stopping     = "stopping"     // powered off: the guest shutting down
	Stopped      = "stopped"      // no process; disk kept
	Rebooting    = "rebooting"    // shut down and booted again
	Deleting     = "deleting"     // being stopped and its disk removed; then gone
	Error        = "error"        // failed to boot, or its QEMU exited unasked; Reason says why
)

// Statuses lists every status, steady ones first.
var Statuses = []string{Running, Stopped, Error, Provisioning, Starting, Stopping, Rebooting, Deleting}

// Power actions.
const (
	On     = "on"
	Off    = "off"
	Reboot = "reboot"
)

// Errors of the rules. ErrInvalid wraps what a request got wrong.
var (
	ErrInvalid = errors.New("computerules: invalid")
	// ErrBusy is a power request or delete while the VM is changing.
	ErrBusy = errors.New("computerules: VM busy")
	// ErrState is a power request that the VM's status does not allow
	// (on for a running VM, off for a stopped one).
	ErrState = errors.New("computerules: not allowed in this status")
	// ErrQuota is a request past the account's quota.
	ErrQuota = errors.New("computerules: quota exceeded")
	// ErrCapacity is a request the host has no room for now.
	ErrCapacity = errors.New("computerules: host capacity")
)

// Transitional reports whether status lasts only while the host acts.
func Transitional(status string) bool {
	switch status {
	case Provisioning, Starting, Stopping, Rebooting, Deleting:
		return true
	}
	return false
}

// Power returns the status a VM in status takes when action is asked:
// the host then carries the change out. Running takes off (Stopping) and
// reboot (Rebooting); Stopped and Error take on (Starting); Error also
// takes off (Stopped at once: there is no process). Anything else is
// ErrBusy (during a change) or ErrState.
func Power(status, action string) (string, error) {
	switch action {
	case On, Off, Reboot:
	default:
		return "", fmt.Errorf("%w: action %q: want on, off or reboot", ErrInvalid, action)
	}
	if Transitional(status) {
		return "", fmt.Errorf("%w: the VM is %s; wait until it is %s, %s or %s", ErrBusy, status, Running, Stopped, Error)
	}
	switch {
	case status == Running && action == Off:
		return Stopping, nil
	case status == Running && action == Reboot:
		return Rebooting, nil
	case (status == Stopped || status == Error) && action == On:
		return Starting, nil
	case status == Error && action == Off:
		return Stopped, nil
	}
	return "", fmt.Errorf("%w: the VM is %s; power %s is for a VM that is %s", ErrState, status, action, wants(action))
}

func wants(action string) string {
	switch action {
	case On:
		return "stopped or in error"
	case Off:
		return "running or in error"
	}
	return "running"
}

// Delete returns the status a VM in status takes when deleted: Deleting,
// or ErrBusy while it is changing (Provisioning, Starting, Stopping,
// Rebooting, Deleting).
func Delete(status string) (string, error) {
	if Transitional(status) {
		return "", fmt.Errorf("%w: the VM is %s; delete it once it is %s, %s or %s", ErrBusy, status, Running, Stopped, Error)
	}
	return Deleting, nil
}

// Restarted is the status a VM's record takes when the host starts with
// it on record (VMs do not outlive their host process): the host boots
// again every VM that was up or coming up, finishes a delete, and lets a
// stop stand.
func Restarted(status string) string {
	switch status {
	case Running, Provisioning, Starting, Rebooting:
		return Starting
	case Stopping:
		return Stopped
	}
	return status // Stopped, Error, Deleting
}

// Resources are what VMs take: their count, vCPUs, memory and disk.
type Resources struct {
	VMs      int `json:"vms"`
	VCPUs    int `json:"vcpus"`
	MemoryMB int `json:"memory_mb"`
	DiskGB   int `json:"disk_gb"`
}

// Add returns r plus o.
func (r Resources) Add(o Resources) Resources {
	return Resources{r.VMs + o.VMs, r.VCPUs + o.VCPUs, r.MemoryMB + o.MemoryMB, r.DiskGB + o.DiskGB}
}

// Over names the first of r's figures above limit's (a zero limit
// figure is no limit), or "" when r fits.
func (r Resources) Over(limit Resources) string {
	switch {
	case limit.VMs > 0 && r.VMs > limit.VMs:
		return fmt.Sprintf("%d VMs, at most %d", r.VMs, limit.VMs)
	case limit.VCPUs > 0 && r.VCPUs > limit.VCPUs:
		return fmt.Sprintf("%d vCPUs, at most %d", r.VCPUs, limit.VCPUs)
	case limit.MemoryMB > 0 && r.MemoryMB > limit.MemoryMB:
		return fmt.Sprintf("%d MB of memory, at most %d", r.MemoryMB, limit.MemoryMB)
	case limit.DiskGB > 0 && r.DiskGB > limit.DiskGB:
		return fmt.Sprintf("%d GB of disk, at most %d", r.DiskGB, limit.DiskGB)
	}
	return ""
}

// Short names the first of r's figures above limit's ("vCPUs",
// "memory", "disk"; "" when r fits): what a tenant is told of the host's
// capacity, which is not theirs to measure.
func (r Resources) Short(limit Resources) string {
	switch {
	case limit.VMs > 0 && r.VMs > limit.VMs:
		return "VMs"
	case limit.VCPUs > 0 && r.VCPUs > limit.VCPUs:
		return "vCPUs"
	case limit.MemoryMB > 0 && r.MemoryMB > limit.MemoryMB:
		return "memory"
	case limit.DiskGB > 0 && r.DiskGB > limit.DiskGB:
		return "disk"
	}
	return ""
}

// DefaultQuota is an account's quota unless the operator sets another.
var DefaultQuota = Resources{VMs: 10, VCPUs: 16, MemoryMB: 32768, DiskGB: 200}

// Limits of a VM's fields.
const (
	MaxNameLen      = 63
	MaxVCPUs        = 64
	MinMemoryMB     = 128
	MaxMemoryMB     = 262144
	MaxDiskGB       = 16384
	MaxSSHKeys      = 10
	MaxUserDataSize = 16 << 10 // 16 KiB, as EC2's user data
	// MaxSSHKeyLen bounds one key's line, its comment included: an RSA
	// key of 8192 bits is about 1400 bytes. Ten of them and the user
	// data fit the 64 KiB command that prepares a leased VM's guest.
	MaxSSHKeyLen = 2048
)

// Defaults of a create body's omitted fields.
const (
	DefaultVCPUs    = 1
	DefaultMemoryMB = 512
)

// Image is an image a VM can be made from.
type Image struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	MinDiskGB   int    `json:"min_disk_gb"`
	MinMemoryMB int    `json:"min_memory_mb"`
	// SSH says the image runs an SSH server (ssh_keys are installed).
	SSH bool `json:"ssh"`
}

// Spec is what a VM is made of: a create body with its defaults filled.
type Spec struct {
	Name     string
	VCPUs    int
	MemoryMB int
	DiskGB   int
	Image    string
	SSHKeys  []string // authorized_keys lines, normalised
	UserData string
}

// Resources are what the VM takes.
func (s Spec) Resources() Resources {
	return Resources{VMs: 1, VCPUs: s.VCPUs, MemoryMB: s.MemoryMB, DiskGB: s.DiskGB}
}

// Check validates s against images (the host's list) and fills its
// defaults: vcpus, memory_mb and disk_gb (the image's minimum) when 0.
// SSH keys are parsed as OpenSSH's authorized_keys lines and normalised.
func (s *Spec) Check(images []Image) error {
	if err := CheckName(s.Name); err != nil {
		return err
	}
	var img *Image
	var names []string
	for i := range images {
		names = append(names, images[i].Name)
		if images[i].Name == s.Image {
			img = &images[i]
		}
	}
	if img == nil {
		return fmt.Errorf("%w: image %q: want one of %s", ErrInvalid, s.Image, strings.Join(names, ", "))
	}
	if s.VCPUs == 0 {
		s.VCPUs = DefaultVCPUs
	}
	if s.MemoryMB == 0 {
		s.MemoryMB = DefaultMemoryMB
	}
	if s.DiskGB == 0 {
		s.DiskGB = img.MinDiskGB
	}
	switch {
	case s.VCPUs < 1 || s.VCPUs > MaxVCPUs:
		return fmt.Errorf("%w: vcpus %d: want 1 to %d", ErrInvalid, s.VCPUs, MaxVCPUs)
	case s.MemoryMB < MinMemoryMB || s.MemoryMB > MaxMemoryMB:
		return fmt.Errorf("%w: memory_mb %d: want %d to %d", ErrInvalid, s.MemoryMB, MinMemoryMB, MaxMemoryMB)
	case s.MemoryMB < img.MinMemoryMB:
		return fmt.Errorf("%w: memory_mb %d: image %s wants at least %d", ErrInvalid, s.MemoryMB, img.Name, img.MinMemoryMB)
	case s.DiskGB < img.MinDiskGB || s.DiskGB > MaxDiskGB:
		return fmt.Errorf("%w: disk_gb %d: image %s wants %d to %d", ErrInvalid, s.DiskGB, img.Name, img.MinDiskGB, MaxDiskGB)
	case len(s.UserData) > MaxUserDataSize:
		return fmt.Errorf("%w: user_data is %d bytes, at most %d", ErrInvalid, len(s.UserData), MaxUserDataSize)
	case strings.ContainsRune(s.UserData, 0):
		return fmt.Errorf("%w: user_data holds a NUL byte: it is a script, text", ErrInvalid)
	case len(s.SSHKeys) > MaxSSHKeys:
		return fmt.Errorf("%w: %d ssh_keys, at most %d", ErrInvalid, len(s.SSHKeys), MaxSSHKeys)
	case len(s.SSHKeys) > 0 && !img.SSH:
		return fmt.Errorf("%w: image %s runs no SSH server: ssh_keys need an image with one (debian-12)", ErrInvalid, img.Name)
	}
	for i, k := range s.SSHKeys {
		line, err := NormalizeSSHKey(k)
		if err != nil {
			return fmt.Errorf("%w: ssh_keys[%d]: %v", ErrInvalid, i, err)
		}
		s.SSHKeys[i] = line
	}
	return nil
}

// CheckName checks a VM's name: a DNS label of lower-case letters,
// digits and hyphens, 1 to 63 long, not starting or ending with a hyphen
// (it becomes the guest's host name).
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: name is required: a DNS label such as web-1", ErrInvalid)
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("%w: name %q is longer than %d", ErrInvalid, name, MaxNameLen)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("%w: name %q: use lower-case letters, digits and hyphens", ErrInvalid, name)
		}
	}
	if name[0] == '-' || name[len(name)-1] == '-' {
		return fmt.Errorf("%w: name %q begins or ends with a hyphen", ErrInvalid, name)
	}
	return nil
}

// NormalizeSSHKey parses one OpenSSH public key (an authorized_keys
// line without options) and returns it as "TYPE BASE64 [COMMENT]".
func NormalizeSSHKey(line string) (string, error) {
	line = strings.TrimSpace(line)
	if strings.ContainsAny(line, "\r\n") {
		return "", errors.New("one key per entry, on one line")
	}
	if strings.IndexFunc(line, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) >= 0 {
		return "", errors.New("a control character in the key or its comment")
	}
	pub, comment, options, rest, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		return "", fmt.Errorf("not an OpenSSH public key (ssh-ed25519 AAAA... [comment]): %v", err)
	}
	if len(options) > 0 || len(rest) > 0 {
		return "", errors.New("a public key alone, without authorized_keys options")
	}
	out := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
	if comment = strings.TrimSpace(comment); comment != "" {
		out += " " + comment
	}
	if len(out) > MaxSSHKeyLen {
		return "", fmt.Errorf("a key of %d bytes with its comment, more than %d: shorten the comment", len(out), MaxSSHKeyLen)
	}
	return out, nil
}

// Live reports whether a VM in status has, or is about to have, a
// process on the host: it then takes its vCPUs and memory from the
// host's capacity. Every VM takes its disk, whatever its status.
func Live(status string) bool {
	return status != Stopped && status != Error
}
