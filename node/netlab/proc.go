package netlab

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Proc is a long-running process in one of a lab's namespaces, with its
// standard output and error appended to a log file under the test's temp
// dir. The lab stops it at cleanup if the test did not.
type Proc struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process was waited for
	err     error         // Wait's, set before done is closed
}

// Start starts path with args in node i's namespace (or the monitor's),
// its output appended to the log file name.log. Variables LATTICE_* of
// the test's environment are not passed on, so that they configure
// nothing behind the test's back. The process gets SIGKILL if the test
// process dies.
func (l *Lab) Start(i int, name, path string, args ...string) (*Proc, error) {
	if _, err := l.ns(i); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return nil, errStopped
	}
	logPath := filepath.Join(l.logDir, name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("netlab: %w", err)
	}
	defer logf.Close() // the child has its own descriptor
	fmt.Fprintf(logf, "=== netlab %s: start %s in %s: %s %s\n", time.Now().Format(time.RFC3339Nano), name, l.Namespace(i), path, strings.Join(args, " "))
	cmd := exec.Command("ip", append([]string{"netns", "exec", l.Namespace(i), path}, args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = cleanEnv()
	// `ip netns exec` execs the command, so the signals below reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("netlab: start %s: %w", name, err)
	}
	p := &Proc{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	l.procs = append(l.procs, p)
	return p, nil
}

// cleanEnv returns the environment without LATTICE_* variables.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LATTICE_") {
			env = append(env, kv)
		}
	}
	return env
}

// Name returns the name the process was started with.
func (p *Proc) Name() string { return p.name }

// LogPath returns the process's log file.
func (p *Proc) LogPath() string { return p.logPath }

// Pid returns the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Running reports whether the process has not exited yet.
func (p *Proc) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Err returns how the process exited (nil for status 0); valid once Done
// is closed.
func (p *Proc) Err() error {
	<-p.done
	return p.err
}

// Wait waits until the process exits or ctx ends.
func (p *Proc) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return fmt.Errorf("netlab: %s still running: %w", p.name, ctx.Err())
	}
}

// Kill sends SIGKILL, as kill -9 does, and waits until the process is
// gone or ctx ends.
func (p *Proc) Kill(ctx context.Context) error {
	if !p.Running() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && p.Running() {
		return fmt.Errorf("netlab: kill %s: %w", p.name, err)
	}
	if err := p.Wait(ctx); err != nil && p.Running() {
		return err
	}
	return nil
}

// Stop sends SIGTERM and waits for the process to exit until ctx ends,
// then sends SIGKILL and waits up to 10 seconds more. It returns an error
// when the process had to be killed or would not die; a process that
// exits with a failure status after SIGTERM is not an error of Stop's
// (see Err).
func (p *Proc) Stop(ctx context.Context) error {
	if !p.Running() {
		return nil
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
	}
	kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Kill(kctx); err != nil {
		return err
	}
	return fmt.Errorf("netlab: %s ignored SIGTERM (%w); killed", p.name, ctx.Err())
}

// Tail returns the last n lines of the process's log.
func (p *Proc) Tail(n int) string { return p.TailFunc(n, nil) }

// TailFunc returns the last n lines of the process's log for which keep
// (if not nil) is true.
func (p *Proc) TailFunc(n int, keep func(line string) bool) string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	const window = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > window {
		f.Seek(st.Size()-window, io.SeekStart)
	}
	data, _ := io.ReadAll(f)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if keep != nil {
		lines = slices.DeleteFunc(lines, func(l []byte) bool { return !keep(string(l)) })
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
