package qemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/latticenet/lattice/machine/agent"
)

// ErrExited is a VM whose QEMU exited other than through Stop: VM.Err
// wraps it, saying how.
var ErrExited = errors.New("qemu: VM ended")

// ErrGuestStopped is a VM whose guest ended it: QEMU exited with status
// 0, unasked and not on a signal, which is what a guest that powers
// itself off does (and one that reboots or panics, which -no-reboot
// turns into an exit). VM.Err wraps it with ErrExited.
var ErrGuestStopped = errors.New("QEMU exited with status 0: the guest powered off (or rebooted or panicked)")

// VM is a running virtual machine, a QEMU child process of the driver.
type VM struct {
	ID       string
	Spec     Spec
	dir      string
	cmd      *exec.Cmd
	console  *consoleLog
	agent    *agent.Client
	conn     net.Conn
	sshAddr  string
	poweroff []string // the guest's command that powers it off

	stopping atomic.Bool // Stop asked the guest to power off

	mu         sync.Mutex
	killReason string // why the driver killed QEMU, if it did

	exited  chan struct{}
	waitErr error // how QEMU exited, once exited is closed
	exitErr error // Err's answer when the exit was not Stop's, once exited is closed
}

// wait waits for QEMU to exit and records how, with the end of the
// console then (a next start of the same VM overwrites the console log).
func (vm *VM) wait() {
	err := vm.cmd.Wait() // the console copied to its end too
	vm.console.Close()
	vm.mu.Lock()
	reason := vm.killReason
	vm.mu.Unlock()
	var how error // how QEMU ended
	var exit *exec.ExitError
	switch {
	case reason != "":
		how = errors.New("killed by the driver: " + reason)
	case err == nil:
		// QEMU exits 0 when the guest powers off or reboots (which
		// -no-reboot turns into an exit, as a kernel panic is), and when
		// it is asked to quit with SIGTERM or SIGINT, which it logs.
		how = ErrGuestStopped
		if line := signalLine(fileTail(filepath.Join(vm.dir, "qemu.log"), 2000)); line != "" {
			how = errors.New("QEMU exited with status 0 on a signal, not the guest's doing: " + line)
		}
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			how = fmt.Errorf("QEMU was killed by signal %d (%v)", ws.Signal(), ws.Signal())
		} else {
			how = fmt.Errorf("QEMU exited with status %d", exit.ExitCode())
		}
	default:
		how = fmt.Errorf("waiting for QEMU: %v", err)
	}
	vm.waitErr = err
	vm.exitErr = fmt.Errorf("%w: %s: %w%s", ErrExited, vm.ID, how, vm.tail())
	close(vm.exited)
}

// connect attaches to the agent's socket and waits until the agent
// answers. Each attempt is a new connection, a handshake with a fresh
// nonce and a new session: bytes the host sent before the guest opened its
// port may be lost, and the guest may still hold the session of an
// earlier attempt; the handshake makes both skip such leftovers
// (agent.HostHandshake).
func (vm *VM) connect(ctx context.Context, sock string) error {
	for {
		select {
		case <-vm.exited:
			return fmt.Errorf("qemu exited: %v", vm.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		c, err := net.Dial("unix", sock)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		sc, err := agent.HostHandshake(pctx, c)
		if err != nil {
			cancel()
			c.Close()
			continue
		}
		cl, err := agent.NewClient(sc)
		if err != nil {
			cancel()
			c.Close()
			return err
		}
		err = cl.Ping(pctx)
		cancel()
		if err == nil {
			vm.conn, vm.agent = c, cl
			return nil
		}
		cl.Close()
		c.Close()
	}
}

// Exec runs a command in the guest (see agent.Client.Exec).
func (vm *VM) Exec(ctx context.Context, argv []string, stdin []byte, timeout time.Duration) (agent.ExecResult, error) {
	return vm.agent.Exec(ctx, argv, stdin, timeout)
}

// Dial connects to a TCP port on the guest's loopback, through the agent.
func (vm *VM) Dial(ctx context.Context, port int) (net.Conn, error) {
	return vm.agent.Dial(ctx, port)
}

// SSHAddr is the host address ("127.0.0.1:PORT") forwarded to the guest's
// SSH port, or "" when the spec did not ask for it (Spec.ForwardSSH). The
// guest's SSH server starts shortly after its agent answers: a client
// connecting right after Start may have to try again.
func (vm *VM) SSHAddr() string { return vm.sshAddr }

// Console returns the guest's console output so far.
func (vm *VM) Console() ([]byte, error) {
	return readConsole(vm.dir, ConsoleLimit)
}

// Done is closed when QEMU has exited.
func (vm *VM) Done() <-chan struct{} { return vm.exited }

// Err says why the VM stopped, once Done is closed (nil before): nil when
// Stop powered it off; otherwise an error wrapping ErrExited that says how
// QEMU exited (its exit status or signal, or that the driver killed it)
// followed by the last lines of the guest's console and of QEMU's log.
func (vm *VM) Err() error {
	select {
	case <-vm.exited:
	default:
		return nil
	}
	if vm.stopping.Load() && vm.waitErr == nil {
		vm.mu.Lock()
		killed := vm.killReason != ""
		vm.mu.Unlock()
		if !killed {
			return nil
		}
	}
	return vm.exitErr
}

// Stop shuts the guest down cleanly (the agent runs poweroff, which
// unmounts its disk) and waits until QEMU exits, or kills it once ctx
// ends.
func (vm *VM) Stop(ctx context.Context) error {
	select {
	case <-vm.exited:
		return nil
	default:
	}
	vm.stopping.Store(true)
	ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
	vm.agent.Exec(ectx, vm.poweroff, nil, 5*time.Second)
	cancel()
	select {
	case <-vm.exited:
		vm.agent.Close()
		return nil
	case <-ctx.Done():
		vm.kill("it did not power off within Stop's time")
		return fmt.Errorf("qemu: VM %s did not power off in time; killed", vm.ID)
	}
}

// kill ends QEMU at once, for reason, and waits for it.
func (vm *VM) kill(reason string) {
	vm.mu.Lock()
	vm.killReason = reason
	vm.mu.Unlock()
	vm.cmd.Process.Kill()
	<-vm.exited
	if vm.agent != nil {
		vm.agent.Close()
	}
}

// tail is the end of the VM's console and QEMU's log, for an error.
func (vm *VM) tail() string {
	var out string
	for _, f := range []string{"console.log", "qemu.log"} {
		if b := fileTail(filepath.Join(vm.dir, f), 2000); len(b) > 0 {
			out += "\n" + f + ":\n" + string(b)
		}
	}
	return out
}

// signalLine is QEMU's last "terminating on signal" line in log, or "".
func signalLine(log []byte) string {
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "terminating on signal") {
			return strings.TrimSpace(lines[i])
		}
	}
	return ""
}

// fileTail is the last n bytes of a file, or nothing.
func fileTail(path string, n int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, n))
	return b
}
