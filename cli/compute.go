package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/latticenet/lattice/cloud/cloudclient"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/compute/computerules"
)

const computeUsage = `Usage: lattice compute COMMAND [ARGS] [flags]

Virtual machines on the cloud platform's host: QEMU with KVM where the
host has it, emulated (TCG) where it does not. A debian-12 VM runs an SSH
server reached through a port the host forwards; every VM has a console
log.

Commands:
  create NAME [--image debian-12] [--vcpus N] [--memory MB] [--disk GB]
         [--ssh-key FILE.pub]... [--user-data FILE] [--no-wait]
                                 create a VM and wait until it runs
  ls                             list your VMs
  show VM                        a VM: its image and size, status and SSH address
  power VM on|off|reboot         power a VM on, off, or reboot it
  ssh VM [-- SSH ARGS]           log into a VM with ssh (or run a command)
  logs VM                        a VM's console log of its latest boot
  rm VM [--no-wait]              delete a VM and its disk
  images                         the images VMs are made from
  usage                          what your VMs take against your quota

VM is a VM's name or ID. Every command takes --api URL (env
LATTICE_API_URL, default http://127.0.0.1:8090), --api-key KEY (env
LATTICE_API_KEY) and --json.

Examples:
  lattice compute create web            # debian-12, 1 vCPU, 512 MB, your lattice SSH key
  lattice compute ssh web -- cat /etc/debian_version
  lattice compute power web off && lattice compute power web on
  lattice compute rm web

Run ` + "`lattice compute COMMAND -h`" + ` for a command's flags.
`

const computeWant = "want `lattice compute create|ls|show|power|ssh|logs|rm|images|usage ...`"

func computeCommands() []string {
	return []string{"create", "ls", "show", "power", "ssh", "logs", "rm", "images", "usage"}
}

// runCompute is `lattice compute ...`.
func runCompute(ctx context.Context, e *env, args []string) error {
	if done, err := groupHelp(e, args, computeUsage, computeWant); done {
		return err
	}
	switch args[0] {
	case "create":
		return runComputeCreate(ctx, e, args[1:])
	case "ls", "list":
		return runComputeList(ctx, e, args[1:])
	case "show":
		return runComputeShow(ctx, e, args[1:])
	case "power":
		return runComputePower(ctx, e, args[1:])
	case "ssh":
		return runComputeSSH(ctx, e, args[1:])
	case "logs", "console":
		return runComputeLogs(ctx, e, args[1:])
	case "rm", "delete":
		return runComputeRemove(ctx, e, args[1:])
	case "images":
		return runComputeImages(ctx, e, args[1:])
	case "usage":
		return runComputeUsage(ctx, e, args[1:])
	}
	return usageErr("unknown command %q%s; %s", args[0], suggestion(args[0], computeCommands()), computeWant)
}

func newComputeFlags(e *env, name, args, about, examples string) *s3Flags {
	return newAPIFlags(e, "compute "+name, strings.TrimSpace("compute "+name+" "+args), about, examples)
}

// findVM resolves a VM's name or ID through the list of the account's
// VMs; a reference that is one VM's name and another's ID is refused.
func findVM(ctx context.Context, c *cloudclient.Client, ref string) (cloudwire.VM, error) {
	all, err := c.VMs(ctx)
	if err != nil {
		return cloudwire.VM{}, explainCompute(err, ref)
	}
	var byName, byID *cloudwire.VM
	for i := range all {
		if all[i].Name == ref {
			byName = &all[i]
		}
		if all[i].ID == ref {
			byID = &all[i]
		}
	}
	switch {
	case byName != nil && byID != nil && byName.ID != byID.ID:
		return cloudwire.VM{}, fmt.Errorf("%s is the name of VM %s and the ID of VM %s: give the other's name, or this one's ID", ref, byName.ID, byID.Name)
	case byName != nil:
		return *byName, nil
	case byID != nil:
		return *byID, nil
	}
	return cloudwire.VM{}, fmt.Errorf("no VM %s in your account: `lattice compute ls` lists yours", ref)
}

// explainCompute words the API's errors for the compute commands.
func explainCompute(err error, vm string) error {
	var ae *cloudclient.APIError
	if !errors.As(err, &ae) {
		return err
	}
	switch ae.Code {
	case "not_found":
		return &s3Error{fmt.Sprintf("VM %s not found: `lattice compute ls` lists yours", vm), err}
	case "conflict", "quota_exceeded", "insufficient_capacity", "validation_error":
		return &s3Error{ae.Message, err}
	}
	return explain(err, s3Path{})
}

// vmRef parses the arguments of a command on one VM (VM and n-1 more),
// then finds the VM.
func vmRef(ctx context.Context, f *s3Flags, args []string, n int, want string) (*cloudclient.Client, cloudwire.VM, error) {
	if err := f.parseN(args, n, want); err != nil {
		return nil, cloudwire.VM{}, err
	}
	c, err := f.client()
	if err != nil {
		return nil, cloudwire.VM{}, err
	}
	v, err := findVM(ctx, c, f.Arg(0))
	return c, v, err
}

// waitVM polls VM id until its status is no longer transitional, or it
// is gone (gone true), or timeout passes.
func waitVM(ctx context.Context, e *env, c *cloudclient.Client, id string, timeout time.Duration) (v cloudwire.VM, gone bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := ""
	since, hinted := time.Now(), false
	for {
		v, err = c.VM(ctx, id)
		var ae *cloudclient.APIError
		if errors.As(err, &ae) && ae.Code == "not_found" {
			return v, true, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return v, false, fmt.Errorf("VM %s still %s after %s: `lattice compute show %s` tells when it is done", id, last, timeout, id)
			}
			return v, false, err
		}
		if !computerules.Transitional(v.Status) {
			return v, false, nil // the caller says how it ended
		}
		if v.Status != last {
			fmt.Fprintf(e.stderr, "%s: %s\n", v.Name, v.Status)
			last, since = v.Status, time.Now()
		}
		if v.Status == computerules.Provisioning && !hinted && time.Since(since) >= provisioningHintAfter {
			fmt.Fprintf(e.stderr, "%s: still provisioning (%s)\n", v.Name, provisioningHint(v.Accel))
			hinted = true
		}
		select {
		case <-ctx.Done():
			return v, false, fmt.Errorf("VM %s still %s after %s: `lattice compute show %s` tells when it is done", v.Name, v.Status, timeout, v.Name)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// provisioningHint says what a VM that provisions long waits for on a
// host of accel: it is said whatever the VM waits for, so it names every
// likely cause: with its image built, a VM boots in seconds under KVM,
// longer emulated; a leased one waits for the provider too (16 s to
// running, debian-12 under TCG, in a trial of lattice dev --nodes 3).
func provisioningHint(accel string) string {
	const image = "a first VM of an image waits for the image to be built, about a minute"
	switch accel {
	case "tcg":
		return "the host has no KVM, so the VM boots emulated (TCG), which takes longer; " + image
	case "lease":
		return "a provider accepts the lease and boots the VM, emulated if its host has no KVM; " + image
	}
	return image // kvm, or "" while the first VM makes the host's driver
}

// computeWaitTimeout bounds --wait: a first start builds the image.
const computeWaitTimeout = 10 * time.Minute

// provisioningHintAfter is how long a VM provisions before the wait says
// why it may take long; a VM of an image already built runs sooner.
const provisioningHintAfter = 10 * time.Second

func runComputeCreate(ctx context.Context, e *env, args []string) error {
	f := newComputeFlags(e, "create", "NAME [flags]", `
Creates a VM and waits until it runs (or fails, with the reason). NAME is
a DNS label, unique among your VMs; it is also the guest's host name.
Without --ssh-key, a debian-12 VM gets your lattice SSH key (made at
~/.config/lattice/ssh/id_ed25519 the first time), which `+"`compute ssh`"+`
uses. --user-data runs a script once, as root, at the VM's first boot,
its output in /var/log/lattice-user-data.log.`, `  lattice compute create web
  lattice compute create db --vcpus 2 --memory 2048 --disk 20 --ssh-key ~/.ssh/id_ed25519.pub
  lattice compute create tiny --image minimal --memory 256
  lattice compute create app --user-data setup.sh
`)
	image := f.String("image", "debian-12", "the image: debian-12 or minimal (see lattice compute images)")
	vcpus := f.Int("vcpus", computerules.DefaultVCPUs, "virtual CPUs")
	memory := f.Int("memory", computerules.DefaultMemoryMB, "memory in MB")
	disk := f.Int("disk", 0, "disk in GB (default the image's smallest)")
	var keys stringList
	f.Var(&keys, "ssh-key", "a public key FILE (or the key itself) to install for root; repeatable")
	userData := f.String("user-data", "", "a script FILE run once as root at the first boot")
	noWait := f.Bool("no-wait", false, "return once the VM is created, without waiting until it runs")
	if err := f.parseN(args, 1, "one VM name, such as web"); err != nil {
		return err
	}
	// The body leaves a 0 or "" out (VMInput's omitempty), which would
	// take the default: a value given here is judged here instead.
	switch {
	case *vcpus < 1:
		return usageErr("--vcpus %d: want 1 or more", *vcpus)
	case *memory < 1:
		return usageErr("--memory %d: want a size in MB, such as 512", *memory)
	case *image == "":
		return usageErr("--image is empty: name an image (lattice compute images)")
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	in := cloudwire.VMInput{Name: f.Arg(0), VCPUs: *vcpus, MemoryMB: *memory, DiskGB: *disk, Image: *image}
	for _, k := range keys {
		line, err := readSSHKey(k)
		if err != nil {
			return err
		}
		in.SSHKeys = append(in.SSHKeys, line)
	}
	if len(keys) == 0 && *image != "minimal" {
		pub, made, err := latticeSSHKey()
		if err != nil {
			return fmt.Errorf("your lattice SSH key: %w (or give --ssh-key FILE.pub)", err)
		}
		if made {
			fmt.Fprintf(e.stderr, "made your lattice SSH key: %s\n", sshKeyPath())
		}
		in.SSHKeys = []string{pub}
	}
	if *userData != "" {
		b, err := os.ReadFile(*userData)
		if err != nil {
			return fmt.Errorf("--user-data: %w", err)
		}
		in.UserData = string(b)
	}
	v, err := c.CreateVM(ctx, in)
	if err != nil {
		return explainCompute(err, f.Arg(0))
	}
	if !*noWait {
		v, _, err = waitVM(ctx, e, c, v.ID, computeWaitTimeout)
		if err != nil {
			return err
		}
	}
	if *f.json {
		return printJSON(e.stdout, v)
	}
	if err := vmTable(e, v); err != nil {
		return err
	}
	if v.Status == computerules.Error {
		return fmt.Errorf("VM %s did not start: %s (`lattice compute logs %s` shows its console)", v.Name, v.StatusReason, v.Name)
	}
	return nil
}

// readSSHKey reads a public key from a file, or takes the argument as
// the key itself when no such file exists and it has a space.
func readSSHKey(arg string) (string, error) {
	b, err := os.ReadFile(arg)
	if errors.Is(err, fs.ErrNotExist) && strings.Contains(arg, " ") {
		return computerules.NormalizeSSHKey(arg) // the key itself
	}
	if err != nil {
		return "", fmt.Errorf("--ssh-key: %w", err)
	}
	line, err := computerules.NormalizeSSHKey(string(b))
	if err != nil {
		return "", fmt.Errorf("--ssh-key %s: %w (give the .pub file)", arg, err)
	}
	return line, nil
}

// sshKeyPath is the lattice SSH key's private half.
func sshKeyPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, "lattice", "ssh", "id_ed25519")
}

// latticeSSHKey returns the lattice SSH key's public line, making the
// key (mode 0600, in OpenSSH's format) when there is none.
func latticeSSHKey() (pub string, made bool, err error) {
	path := sshKeyPath()
	if b, err := os.ReadFile(path + ".pub"); err == nil {
		line, err := computerules.NormalizeSSHKey(string(b))
		return line, false, err
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", false, err
	}
	block, err := ssh.MarshalPrivateKey(sk, "lattice")
	if err != nil {
		return "", false, err
	}
	spk, err := ssh.NewPublicKey(pk)
	if err != nil {
		return "", false, err
	}
	pub = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(spk))) + " lattice"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, err
	}
	if err := writeFileExcl(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return "", false, err
	}
	if err := os.WriteFile(path+".pub", []byte(pub+"\n"), 0o644); err != nil {
		return "", false, err
	}
	return pub, true, nil
}

// writeFileExcl writes a new file, never replacing one, and syncs it.
func writeFileExcl(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// vmTable prints a VM's fields.
func vmTable(e *env, v cloudwire.VM) error {
	tw := table(e.stdout)
	fmt.Fprintf(tw, "name:\t%s\nid:\t%s\nstatus:\t%s\n", v.Name, v.ID, v.Status)
	if v.StatusReason != "" {
		fmt.Fprintf(tw, "reason:\t%s\n", v.StatusReason)
	}
	fmt.Fprintf(tw, "image:\t%s\nvcpus:\t%d\nmemory:\t%d MB\ndisk:\t%d GB\n", v.Image, v.VCPUs, v.MemoryMB, v.DiskGB)
	if v.SSH != nil {
		cmd := v.SSH.Command
		// The platform cannot know where the user's key is; the CLI can:
		// a plain ssh would not offer the lattice key and be refused.
		if rest, ok := strings.CutPrefix(cmd, "ssh "); ok {
			key := sshKeyPath()
			if _, err := os.Stat(key); err == nil {
				if strings.ContainsAny(key, " \t'\"$\\") { // macOS: "Application Support"
					key = "'" + strings.ReplaceAll(key, "'", `'\''`) + "'"
				}
				cmd = "ssh -i " + key + " " + rest
			}
		}
		fmt.Fprintf(tw, "ssh:\t%s (or: lattice compute ssh %s)\n", cmd, v.Name)
	}
	if v.Accel != "" && v.Lease == nil {
		fmt.Fprintf(tw, "accelerator:\t%s\n", v.Accel)
	}
	if l := v.Lease; l != nil {
		fmt.Fprintf(tw, "lease:\t%s (lattice lease show %s)\n", l.Hash, l.Hash)
		fmt.Fprintf(tw, "provider:\t%s\n", l.Provider)
		if l.EndsAt != "" {
			fmt.Fprintf(tw, "lease ends:\t%s\n", zonedTime(l.EndsAt))
		}
	}
	fmt.Fprintf(tw, "created:\t%s\n", zonedTime(v.CreatedAt))
	return tw.Flush()
}

func runComputeList(ctx context.Context, e *env, args []string) error {
	f := newComputeFlags(e, "ls", "", `
Lists your VMs: name, ID, status, image, vCPUs, memory, disk and the SSH
address of those running with one.`, `  lattice compute ls
  lattice compute ls --json
`)
	if err := f.parseN(args, 0, "no arguments"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	all, err := c.VMs(ctx)
	if err != nil {
		return explainCompute(err, "")
	}
	if *f.json {
		return printJSON(e.stdout, nonNil(all))
	}
	if len(all) == 0 {
		fmt.Fprintln(e.stderr, "no VMs yet: create one with `lattice compute create web`")
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "NAME\tID\tSTATUS\tIMAGE\tVCPUS\tMEMORY\tDISK\tSSH")
	for _, v := range all {
		sshAddr := "-"
		if v.SSH != nil {
			sshAddr = fmt.Sprintf("%s:%d", v.SSH.Host, v.SSH.Port)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d MB\t%d GB\t%s\n", v.Name, v.ID, v.Status, v.Image, v.VCPUs, v.MemoryMB, v.DiskGB, sshAddr)
	}
	return tw.Flush()
}

func runComputeShow(ctx context.Context, e *env, args []string) error {
	f := newComputeFlags(e, "show", "VM", `
Shows a VM: its image and size, status (with the reason of an error),
SSH address and accelerator.`, `  lattice compute show web
  lattice compute show web --json
`)
	_, v, err := vmRef(ctx, f, args, 1, "one VM name or ID")
	if err != nil {
		return err
	}
	if *f.json {
		return printJSON(e.stdout, v)
	}
	return vmTable(e, v)
}

func runComputePower(ctx context.Context, e *env, args []string) error {
	f := newComputeFlags(e, "power", "VM on|off|reboot [--no-wait]", `
Powers a VM on or off, or reboots it, and waits until it is done. Off
shuts the guest down cleanly (killed after 30 s); the disk is kept.`, `  lattice compute power web off
  lattice compute power web on
  lattice compute power web reboot
`)
	noWait := f.Bool("no-wait", false, "return once the request is taken")
	if err := f.parseN(args, 2, "a VM and on, off or reboot"); err != nil {
		return err
	}
	action := f.Arg(1)
	switch action {
	case computerules.On, computerules.Off, computerules.Reboot:
	default:
		return usageErr("power %q: want on, off or reboot", action)
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	v, err := findVM(ctx, c, f.Arg(0))
	if err != nil {
		return err
	}
	v, err = c.PowerVM(ctx, v.ID, action)
	if err != nil {
		return explainCompute(err, f.Arg(0))
	}
	if !*noWait {
		if v, _, err = waitVM(ctx, e, c, v.ID, computeWaitTimeout); err != nil {
			return err
		}
	}
	if *f.json {
		return printJSON(e.stdout, v)
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", v.Name, v.Status)
	if v.Status == computerules.Error {
		return fmt.Errorf("VM %s: %s", v.Name, v.StatusReason)
	}
	return nil
}

// howToRun says what brings a VM that is not running to running.
func howToRun(v cloudwire.VM) string {
	switch v.Status {
	case computerules.Stopped:
		return fmt.Sprintf("`lattice compute power %s on`", v.Name)
	case computerules.Error:
		return fmt.Sprintf("it failed: %s; `lattice compute logs %s` shows its console", v.StatusReason, v.Name)
	case computerules.Stopping:
		return fmt.Sprintf("once it has stopped, `lattice compute power %s on`", v.Name)
	default: // provisioning or starting
		return fmt.Sprintf("it is on its way: `lattice compute show %s` says when it runs", v.Name)
	}
}

func runComputeSSH(ctx context.Context, e *env, args []string) error {
	f := newComputeFlags(e, "ssh", "VM [-- SSH ARGS]", `
Logs into a running VM as root with the system's ssh, through the port
the host forwards, with your lattice SSH key when you have one. What
follows -- goes to ssh: a command to run, or ssh's own flags. Each VM's
host key is remembered in ~/.config/lattice/ssh/known_hosts-VMID (a VM
of the lease backend makes a new one at each lease).`, `  lattice compute ssh web
  lattice compute ssh web -- uptime
  lattice compute ssh web -- -i ~/.ssh/id_ed25519 -L 8080:localhost:80
`)
	var rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	_, v, err := vmRef(ctx, f, args, 1, "one VM name or ID (then -- and ssh's arguments)")
	if err != nil {
		return err
	}
	if v.SSH == nil {
		if v.Status != computerules.Running {
			return fmt.Errorf("VM %s is %s: ssh needs it running (%s)", v.Name, v.Status, howToRun(v))
		}
		return fmt.Errorf("VM %s (image %s) has no SSH server: use an image with one, such as debian-12", v.Name, v.Image)
	}
	if apiHost := apiHostOf(*f.api); v.SSH.Host == "127.0.0.1" && apiHost != "" && !isLoopbackHost(apiHost) {
		return fmt.Errorf("VM %s's SSH port is forwarded on the loopback of the platform's host (%s): run ssh there, or forward it to here first (ssh -L 2222:127.0.0.1:%d %s)",
			v.Name, apiHost, v.SSH.Port, apiHost)
	}
	// What the server answered becomes ssh's arguments and a file name
	// here: a user or host starting with '-' would be an ssh option
	// (-oProxyCommand=... runs a program on this machine), an id with a
	// slash a path elsewhere. A server that answers such is refused.
	argv, err := sshArgs(v, sshKeyPath(), rest)
	if err != nil {
		return err
	}
	bin, err := exec.LookPath("ssh")
	if err != nil {
		return errors.New("no ssh on this machine: install the Debian package openssh-client")
	}
	if err := os.MkdirAll(filepath.Dir(sshKeyPath()), 0o700); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, e.stdout, e.stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return &exitCodeError{code: ee.ExitCode()}
		}
		return err
	}
	return nil
}

// sshArgs are ssh's arguments for logging into v, once checkSSHTarget
// passes it, with the key at keyPath, if there is one, and the
// user's own arguments after. The host key is kept in a file of the VM's,
// whatever port the host forwards this boot, under the name of the
// machine that made it: the VM's id, and on the lease backend its lease
// too, since each lease is a new machine with a new host key (a VM
// powered on again at a new lease met "host key changed" before).
func sshArgs(v cloudwire.VM, keyPath string, rest []string) ([]string, error) {
	if err := checkSSHTarget(v); err != nil {
		return nil, err
	}
	alias := "lattice-vm-" + v.ID
	if v.Lease != nil {
		alias += "-lease-" + v.Lease.Hash[:16]
	}
	argv := []string{"-p", strconv.Itoa(v.SSH.Port), "-o", "StrictHostKeyChecking=accept-new",
		"-o", "UserKnownHostsFile=" + filepath.Join(filepath.Dir(keyPath), "known_hosts-"+v.ID),
		"-o", "HostKeyAlias=" + alias, "-o", "LogLevel=ERROR"}
	if _, err := os.Stat(keyPath); err == nil {
		argv = append(argv, "-i", keyPath)
	}
	// ssh reads options after the destination too, up to the command.
	return append(append(argv, v.SSH.User+"@"+v.SSH.Host), rest...), nil
}

var (
	leaseForm = regexp.MustCompile(`^[0-9a-f]{64}$`)
	sshUser   = regexp.MustCompile(`^[a-z_][a-z0-9_.-]{0,31}$`)
	sshHost   = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$`)
	vmIDForm  = regexp.MustCompile(`^[0-9a-f]{16}$`)
)

// checkSSHTarget refuses a VM record whose SSH user, host, id or lease
// could be anything but a user name, a host name or address, an id and a
// lease's hash.
func checkSSHTarget(v cloudwire.VM) error {
	switch {
	case !sshUser.MatchString(v.SSH.User):
		return fmt.Errorf("the platform answered an SSH user %q that is no user name: not running ssh", v.SSH.User)
	case !sshHost.MatchString(v.SSH.Host) && net.ParseIP(v.SSH.Host) == nil:
		return fmt.Errorf("the platform answered an SSH host %q that is no host name or address: not running ssh", v.SSH.Host)
	case !vmIDForm.MatchString(v.ID):
		return fmt.Errorf("the platform answered a VM id %q that is no id: not running ssh", v.ID)
	case v.Lease != nil && !leaseForm.MatchString(v.Lease.Hash):
		return fmt.Errorf("the platform answered a lease hash %q that is no hash: not running ssh", v.Lease.Hash)
	}
	return nil
}

// apiHostOf is the host of the API's URL ("" if it has none).
func apiHostOf(api string) string {
	u, err := url.Parse(api)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// isLoopbackHost reports whether host is this machine's loopback.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func runComputeLogs(ctx context.Context, e *env, args []string) error {
	f := newComputeFlags(e, "logs", "VM", `
Prints a VM's console log of its latest boot (its last MiB): the kernel's
messages and what the guest writes on its serial console.`, `  lattice compute logs web
  lattice compute logs web | tail -20
`)
	c, v, err := vmRef(ctx, f, args, 1, "one VM name or ID")
	if err != nil {
		return err
	}
	b, err := c.VMConsole(ctx, v.ID)
	if err != nil {
		return explainCompute(err, f.Arg(0))
	}
	_, err = e.stdout.Write(b)
	return err
}

func runComputeRemove(ctx context.Context, e *env, args []string) error {
	f := newComputeFlags(e, "rm", "VM [--no-wait]", `
Deletes a VM: the host stops it and removes its disk (a VM on a lease:
its lease ends early). Waits until it is gone.`, `  lattice compute rm web
`)
	noWait := f.Bool("no-wait", false, "return once the delete is taken")
	c, v, err := vmRef(ctx, f, args, 1, "one VM name or ID")
	if err != nil {
		return err
	}
	v, err = c.DeleteVM(ctx, v.ID)
	if err != nil {
		return explainCompute(err, f.Arg(0))
	}
	if !*noWait {
		w, gone, err := waitVM(ctx, e, c, v.ID, computeWaitTimeout)
		if err != nil {
			return err
		}
		if !gone {
			return fmt.Errorf("VM %s was not deleted: %s %s", v.Name, w.Status, w.StatusReason)
		}
	}
	if *f.json {
		return printJSON(e.stdout, v)
	}
	fmt.Fprintf(e.stdout, "deleted VM %s\n", v.Name)
	if v.Lease != nil {
		if end, err := time.Parse(time.RFC3339, v.Lease.EndsAt); err == nil && !time.Now().Before(end) {
			fmt.Fprintf(e.stdout, "its lease %s had run its term\n", v.Lease.Hash)
		} else {
			fmt.Fprintf(e.stdout, "its lease %s ends early: the provider is paid for the time served, and the rest of the cost comes back to the platform account\n", v.Lease.Hash)
		}
	}
	return nil
}

func runComputeImages(ctx context.Context, e *env, args []string) error {
	f := newComputeFlags(e, "images", "", `
Lists the images VMs are made from: built on the host from Debian's
packages the first time a VM needs one.`, `  lattice compute images
`)
	if err := f.parseN(args, 0, "no arguments"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	imgs, err := c.VMImages(ctx)
	if err != nil {
		return explainCompute(err, "")
	}
	if *f.json {
		return printJSON(e.stdout, nonNil(imgs))
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "IMAGE\tMIN DISK\tSSH\tDESCRIPTION")
	for _, img := range imgs {
		fmt.Fprintf(tw, "%s\t%d GB\t%v\t%s\n", img.Name, img.MinDiskGB, img.SSH, img.Description)
	}
	return tw.Flush()
}

func runComputeUsage(ctx context.Context, e *env, args []string) error {
	f := newComputeFlags(e, "usage", "", `
Shows what your VMs take (every VM, whatever its status) against your
account's quota.`, `  lattice compute usage
`)
	if err := f.parseN(args, 0, "no arguments"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	u, err := c.ComputeUsage(ctx)
	if err != nil {
		return explainCompute(err, "")
	}
	if *f.json {
		return printJSON(e.stdout, u)
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "\tUSED\tQUOTA")
	fmt.Fprintf(tw, "VMs\t%d\t%d\nvCPUs\t%d\t%d\nmemory\t%d MB\t%d MB\ndisk\t%d GB\t%d GB\n", u.Used.VMs, u.Quota.VMs,
		u.Used.VCPUs, u.Quota.VCPUs, u.Used.MemoryMB, u.Quota.MemoryMB, u.Used.DiskGB, u.Quota.DiskGB)
	return tw.Flush()
}
