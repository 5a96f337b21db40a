package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/machine/access"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/node/vmnet"
)

const vmUsage = `Usage: lattice vm COMMAND [flags]

The machines of compute leases. A provider's node boots a VM for each
lease it accepted; any node shows it, runs commands in it and opens
tunnels to it (lattice tunnel), passing them to the provider over the
peer-to-peer network. Commands and tunnels are signed with the lease's
access key (--key; by default your account's, which lease create names).

Commands:
  list
      the VMs the node runs as a provider
  show LEASE
      one lease's VM: its status, size and times, from its provider
  exec LEASE -- COMMAND [ARG...]
      run a command line in the VM with /bin/sh and print its output;
      exits with the command's exit code
  sign METHOD TARGET [BODY]
      print the Authorization header that signs a request on a machine,
      for curl or any HTTP client

Examples:
  lattice vm list --node http://127.0.0.1:8082
  lattice vm show $LEASE
  lattice vm exec $LEASE -- uname -a
  lattice vm exec $LEASE -- 'cat /proc/cpuinfo | grep -c processor'
  curl -H "Authorization: $(lattice vm sign POST /vms/$LEASE/exec '{"command":"id"}')" -d '{"command":"id"}' $NODE/vms/$LEASE/exec
`

var vmCommands = []string{"list", "show", "exec", "sign"}

func runVM(ctx context.Context, e *env, args []string) error {
	if done, err := groupHelp(e, args, vmUsage, "want "+strings.Join(vmCommands, ", ")); done {
		return err
	}
	switch args[0] {
	case "list":
		return runVMList(ctx, e, args[1:])
	case "show":
		return runVMShow(ctx, e, args[1:])
	case "exec":
		return runVMExec(ctx, e, args[1:])
	case "sign":
		return runVMSign(ctx, e, args[1:])
	}
	return usageErr("unknown command %q%s; run `lattice vm -h`", args[0], suggestion(args[0], vmCommands))
}

func runVMList(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "vm list", "vm list [flags]", `
Lists the VMs the node runs as a provider: those of its live leases, and
those of settled leases for a day.`, "  lattice vm list --node http://127.0.0.1:8082\n")
	cf := addClientFlags(f, false)
	f.hide("key")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	vms, err := nodeclient.New(*cf.node, nil).VMs(ctx)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	if *cf.json {
		return printJSON(e.stdout, vms)
	}
	if len(vms) == 0 {
		fmt.Fprintf(e.stdout, "%s runs no VMs: only a provider's node does (lattice node --provider-key); name it with --node (lattice dev prints which node is the provider)\n", *cf.node)
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "LEASE\tSTATUS\tSIZE\tIMAGE\tENDS")
	for _, v := range vms {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.LeaseHash, v.Status, vmSize(v.Resources), v.Image, msTime(v.EndsAt))
	}
	return tw.Flush()
}

func vmSize(r nodewire.Resources) string {
	return fmt.Sprintf("%d vCPU, %d MB, %d GB", r.VCPUs, r.MemoryMB, r.DiskGB)
}

// msTime prints Unix milliseconds as a local time with its zone, or "-"
// for none.
func msTime(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return time.UnixMilli(ms).Local().Format(zonedLayout)
}

// zonedLayout is a local time to the second with its zone, for times a
// reader compares with other commands' (lease show's are in UTC).
const zonedLayout = "2006-01-02 15:04:05 MST"

func runVMShow(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "vm show", "vm show LEASE [flags]", `
Shows a lease's VM as its provider's node reports it: status (provisioning,
running, stopped, error and why), size, image and times. Any node answers;
it asks the provider.`, "  lattice vm show $LEASE\n  lattice vm show $LEASE --json\n")
	cf := addClientFlags(f, false)
	f.hide("key")
	if err := f.parse(args); err != nil {
		return err
	}
	h, err := leaseArg(f, "vm show")
	if err != nil {
		return err
	}
	v, err := nodeclient.New(*cf.node, nil).VM(ctx, h)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	if *cf.json {
		return printJSON(e.stdout, v)
	}
	fmt.Fprintf(e.stdout, "vm of lease %s\n", v.LeaseHash)
	fmt.Fprintf(e.stdout, "  status    %s\n", v.Status)
	if v.Error != "" {
		fmt.Fprintf(e.stdout, "  error     %s\n", v.Error)
	}
	fmt.Fprintf(e.stdout, "  size      %s\n", vmSize(v.Resources))
	fmt.Fprintf(e.stdout, "  image     %s\n", v.Image)
	fmt.Fprintf(e.stdout, "  provider  %s\n", v.Provider)
	fmt.Fprintf(e.stdout, "  created   %s\n", msTime(v.CreatedAt))
	fmt.Fprintf(e.stdout, "  ends      %s\n", msTime(v.EndsAt))
	if v.Restarts > 0 {
		fmt.Fprintf(e.stdout, "  restarts  %d, the last at %s: %s\n", v.Restarts, msTime(v.LastExitAt), v.LastExit)
	}
	return nil
}

// vmAccess loads the key that signs for a lease's machine and reads the
// network's genesis hash from the node.
func vmAccess(ctx context.Context, cf *clientFlags) (*nodeclient.Client, nodeclient.Access, error) {
	s, err := cf.connect(ctx, true)
	if err != nil {
		return nil, nodeclient.Access{}, err
	}
	return s.c, nodeclient.Access{Key: s.key.Private(), Network: s.info.Genesis}, nil
}

func runVMExec(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "vm exec", "vm exec LEASE [flags] -- COMMAND [ARG...]", `
Runs a command line in a lease's VM, as root, with /bin/sh -c (the words
after -- are joined with spaces, as ssh does), and prints its stdout and
stderr. lattice exits with the command's exit code. The request is signed
with --key, which must be the lease's access key; any node passes it to
the lease's provider. A command has 30 seconds; each output is cut at 1 MiB.`,
		"  lattice vm exec $LEASE -- uname -a\n  lattice vm exec $LEASE -- 'df -h /data'\n  lattice vm exec $LEASE --json -- id\n")
	cf := addClientFlags(f, false)
	if !slices.Contains(args, "--") && !wantsHelp(args) {
		// Without "--" a command's own flags (uname -a) would be read
		// as lattice's: say what to do rather than "-a is not defined".
		return usageErr("put the command after --: lattice vm exec LEASE -- COMMAND")
	}
	if err := f.parse(args); err != nil {
		return err
	}
	switch {
	case f.dashAt < 0 || f.NArg() == 0:
		return usageErr("want LEASE -- COMMAND: run `lattice vm exec -h`")
	case f.dashAt == 0:
		return usageErr("want the LEASE before --: lattice vm exec LEASE -- COMMAND")
	case f.dashAt > 1:
		// A word between the lease and "--" is a mistake, not a part of
		// the command: refused, never run.
		return usageErr("unexpected argument %q before --: lattice vm exec LEASE -- COMMAND", f.Arg(1))
	case f.NArg() == 1:
		return usageErr("want a COMMAND after --: lattice vm exec LEASE -- COMMAND")
	}
	h, err := ledger.ParseHash(f.Arg(0))
	if err != nil {
		return usageErr("LEASE %q: %v", f.Arg(0), err)
	}
	command := strings.Join(f.Args()[1:], " ")
	c, acc, err := vmAccess(ctx, cf)
	if err != nil {
		return err
	}
	res, err := c.Exec(ctx, h, acc, command)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	if *cf.json {
		return printJSON(e.stdout, res)
	}
	io.WriteString(e.stdout, res.Stdout)
	io.WriteString(e.stderr, res.Stderr)
	switch {
	case res.TimedOut:
		fmt.Fprintln(e.stderr, "lattice: the command was killed after its 30 seconds")
	case res.Truncated:
		fmt.Fprintln(e.stderr, "lattice: the output was cut at 1 MiB")
	}
	switch {
	case res.TimedOut:
		return &exitCodeError{code: 124} // as timeout(1)
	case res.ExitCode < 0 || res.ExitCode > 255:
		return &exitCodeError{code: 126}
	case res.ExitCode != 0:
		return &exitCodeError{code: res.ExitCode}
	}
	return nil
}

func runTunnel(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "tunnel", "tunnel LEASE [--port N] [--listen ADDR] [flags]", `
Forwards a local TCP port to a port of a lease's VM, like ssh -L: every
connection to --listen becomes a tunnel through the node (POST
/tunnel/LEASE/tcp), which reaches the VM at its provider over the
peer-to-peer network. Signed with --key, the lease's access key. It first
checks that the VM runs and something listens on --port, and exits with
the reason if not (a VM still provisioning: start it again once vm show
says running); then it runs until interrupted. With the debian-12 image,
log in with
`+"`lattice key ssh`"+`'s file: ssh -i FILE -o HostKeyAlias=LEASE -p PORT
root@127.0.0.1 (each lease's VM makes its own host key).`,
		"  lattice tunnel $LEASE --port 22 --listen 127.0.0.1:2222\n  ssh -i ~/.lattice/id_lattice -o HostKeyAlias=$LEASE -p 2222 root@127.0.0.1\n")
	cf := addClientFlags(f, false)
	port := f.Int("port", 22, "the VM's TCP port")
	listen := f.String("listen", "127.0.0.1:2222", "local address to listen on")
	if err := f.parse(args); err != nil {
		return err
	}
	h, err := leaseArg(f, "tunnel")
	if err != nil {
		return err
	}
	if *port < 1 || *port > 65535 {
		return usageErr("--port %d: want 1 to 65535", *port)
	}
	c, acc, err := vmAccess(ctx, cf)
	if err != nil {
		return err
	}
	// One tunnel first, so that a wrong key or lease fails now, not at
	// the first connection.
	probe, err := c.Tunnel(ctx, h, acc, *port)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	probe.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", *listen, err)
	}
	defer ln.Close()
	fmt.Fprintf(e.stdout, "forwarding %s to port %d of lease %s's VM through %s (%s); Ctrl-C stops\n", ln.Addr(), *port, h, c.BaseURL(), pathWords(probe.Path()))
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	defer func() {
		mu.Lock()
		for conn := range open {
			conn.Close()
		}
		mu.Unlock()
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		mu.Lock()
		open[conn] = true
		mu.Unlock()
		wg.Go(func() {
			defer func() {
				mu.Lock()
				delete(open, conn)
				mu.Unlock()
			}()
			t, err := c.Tunnel(ctx, h, acc, *port)
			if err != nil {
				fmt.Fprintf(e.stderr, "lattice tunnel: %v\n", err)
				conn.Close()
				return
			}
			up, down := vmnet.Splice(conn.(*net.TCPConn), t)
			fmt.Fprintf(e.stderr, "lattice tunnel: a connection closed (%d bytes up, %d down, %s)\n", up, down, pathWords(t.Path()))
		})
	}
}

// pathWords says in words how a tunnel reached the VM (TunnelConn.Path).
func pathWords(path string) string {
	switch path {
	case vmnet.PathLocal:
		return "the node is the provider"
	case vmnet.PathDirect:
		return "direct to the provider's node"
	case vmnet.PathRelayed:
		return "through a relay to the provider's node, which is behind NAT"
	}
	return "path not reported"
}

func runVMSign(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "vm sign", "vm sign METHOD TARGET [BODY] [flags]", `
Prints the value of the Authorization header that signs one request on a
lease's machine (docs/api.md, "Machine credentials"): METHOD, the request
TARGET as it will be sent (path and query), and the BODY (none when
absent), signed with --key at this moment with a fresh nonce, for the
network of --node. A signature is good once, within 5 minutes.`,
		"  lattice vm sign POST /vms/$LEASE/exec '{\"command\":\"id\"}'\n  BODY='{\"command\":\"uname -a\"}'\n  curl -H \"Authorization: $(lattice vm sign POST /vms/$LEASE/exec \"$BODY\")\" -d \"$BODY\" $NODE/vms/$LEASE/exec\n  curl -X POST -H \"Authorization: $(lattice vm sign POST \"/tunnel/$LEASE/tcp?port=22\")\" \"$NODE/tunnel/$LEASE/tcp?port=22\"\n")
	cf := addClientFlags(f, false)
	if err := f.parse(args); err != nil {
		return err
	}
	if f.NArg() < 2 || f.NArg() > 3 {
		return usageErr("want METHOD TARGET [BODY]: run `lattice vm sign -h`")
	}
	method, target := f.Arg(0), f.Arg(1)
	if method != strings.ToUpper(method) || method == "" {
		return usageErr("METHOD %q: want an HTTP method in capitals, like POST", method)
	}
	if !strings.HasPrefix(target, "/") {
		return usageErr("TARGET %q: want the request target, a path starting with / (and its query)", target)
	}
	var body []byte
	if f.NArg() == 3 {
		body = []byte(f.Arg(2))
	}
	_, acc, err := vmAccess(ctx, cf)
	if err != nil {
		return err
	}
	c := access.Sign(acc.Key, acc.Network, access.Request{Method: method, Target: target, Body: body}, time.Now())
	if *cf.json {
		return printJSON(e.stdout, map[string]string{"authorization": c.Header()})
	}
	fmt.Fprintln(e.stdout, c.Header())
	return nil
}
