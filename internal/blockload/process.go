package blockload

import (
	"bufio"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// The driver process and its parent talk over the child's stdin and
// stdout:
//
//	parent -> child  gob: the job (address, workers, requests)
//	child -> parent  "ready\n" once every connection is open
//	parent -> child  "go\n": the clock starts
//	child -> parent  one line of JSON, the Phase, then it exits
//
// An error in the child goes to its stderr and its exit status.

// job is what the parent sends the child.
type job struct {
	Addr    string
	Workers int
	Streams [][]Request
}

// readyTimeout bounds how long the child may take to read its job and open
// its connections.
const readyTimeout = time.Minute

// Process is a load generator in a process of its own, ready to post
// streams of requests to a node.
type Process struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	done bool
}

// StartProcess starts argv (with env added to this process's environment)
// as a driver process, a program that runs ServeProcess, hands it the
// streams to post to addr with workers connections, and returns once it
// has opened them. Close must follow.
func StartProcess(ctx context.Context, argv, env []string, addr string, workers int, streams [][]Request) (*Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("blockload: no driver command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 5 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("blockload: start driver: %w", err)
	}
	p := &Process{cmd: cmd, in: in, out: bufio.NewReader(stdout)}
	// The job goes in while the child reads it: a pipe holds only 64 KiB.
	sent := make(chan error, 1)
	go func() { sent <- gob.NewEncoder(in).Encode(job{Addr: addr, Workers: workers, Streams: streams}) }()
	ready := make(chan error, 1)
	go func() {
		line, err := p.out.ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("said %q", line)
		}
		ready <- err
	}()
	t := time.NewTimer(readyTimeout)
	defer t.Stop()
	select {
	case err = <-ready:
	case <-t.C:
		err = fmt.Errorf("not ready after %v", readyTimeout)
	}
	if err == nil {
		err = <-sent
	}
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("blockload: driver: %w", err)
	}
	return p, nil
}

// Drive starts the clock: the driver posts every request and reports the
// phase it timed. A Process drives once.
func (p *Process) Drive() (Phase, error) {
	if p.done {
		return Phase{}, errors.New("blockload: driver already ran")
	}
	p.done = true
	if _, err := io.WriteString(p.in, "go\n"); err != nil {
		return Phase{}, fmt.Errorf("blockload: driver: %w", err)
	}
	line, rerr := p.out.ReadBytes('\n')
	werr := p.cmd.Wait()
	if werr != nil {
		return Phase{}, fmt.Errorf("blockload: driver: %w", werr)
	}
	var ph Phase
	if err := json.Unmarshal(line, &ph); err != nil {
		return Phase{}, fmt.Errorf("blockload: driver said %q (%v): %w", line, rerr, err)
	}
	return ph, nil
}

// Close stops the driver if it still runs.
func (p *Process) Close() {
	p.in.Close()
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

// ServeProcess is the driver process's side of StartProcess: it reads its
// job from in, opens the connections, says ready on out, waits for the
// word to go, posts every request and writes the phase on out.
func ServeProcess(ctx context.Context, in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	var j job
	if err := gob.NewDecoder(r).Decode(&j); err != nil {
		return fmt.Errorf("read job: %w", err)
	}
	if j.Workers < 1 {
		return fmt.Errorf("job has %d workers", j.Workers)
	}
	h, err := DialHTTP(j.Addr, j.Workers)
	if err != nil {
		return err
	}
	defer h.Close()
	if _, err := io.WriteString(out, "ready\n"); err != nil {
		return err
	}
	line, err := r.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "go" {
		return fmt.Errorf("waited for go, read %q: %v", line, err)
	}
	ph, err := Drive(ctx, j.Streams, j.Workers, h.Post)
	if err != nil {
		return err
	}
	b, err := json.Marshal(ph)
	if err != nil {
		return err
	}
	_, err = out.Write(append(b, '\n'))
	return err
}

// Driver says where the load generator runs. Its zero value drives from
// this process.
type Driver struct {
	// Command, when set, runs the driver process (see StartProcess), with
	// Env added to its environment.
	Command []string
	Env     []string
}

// Where names the driver's place, for reports: "a process of its own" or
// "the nodes' process".
func (d Driver) Where() string {
	if len(d.Command) > 0 {
		return "a process of its own"
	}
	return "the nodes' process"
}

// A Runner has its connections open and posts its streams when told.
type Runner interface {
	// Drive posts every request and times it; a Runner drives once.
	Drive() (Phase, error)
	Close()
}

// Start prepares to post streams to addr with workers connections, opened
// before Start returns.
func (d Driver) Start(ctx context.Context, addr string, workers int, streams [][]Request) (Runner, error) {
	if len(d.Command) > 0 {
		return StartProcess(ctx, d.Command, d.Env, addr, workers, streams)
	}
	h, err := DialHTTP(addr, workers)
	if err != nil {
		return nil, err
	}
	return &local{ctx: ctx, h: h, streams: streams, workers: workers}, nil
}

// local drives from this process.
type local struct {
	ctx     context.Context
	h       *HTTP
	streams [][]Request
	workers int
	done    bool
}

func (l *local) Drive() (Phase, error) {
	if l.done {
		return Phase{}, errors.New("blockload: driver already ran")
	}
	l.done = true
	return Drive(l.ctx, l.streams, l.workers, l.h.Post)
}

func (l *local) Close() { l.h.Close() }
