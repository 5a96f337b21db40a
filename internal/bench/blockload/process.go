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
//	child -> parent  {"ready":true} once every connection is open
//	parent -> child  "go\n": the clock starts
//	child -> parent  {"phase":{...}}, and it exits
//
// A failure at any point is the line {"error":"..."} instead, so that the
// parent can say what went wrong rather than only that the child exited.
// The job travels as one gob message, which caps it at 1 GiB of requests.

// job is what the parent sends the child.
type job struct {
	Addr    string
	Workers int
	Streams [][]Request
}

// reply is one line the child writes.
type reply struct {
	Ready bool   `json:"ready,omitempty"`
	Phase *Phase `json:"phase,omitempty"`
	Error string `json:"error,omitempty"`
}

// readyTimeout bounds how long the child may take to read its job and open
// its connections.
const readyTimeout = time.Minute

// Process is a load generator in a process of its own, ready to post
// streams of requests to a node.
type Process struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	drove  bool
	waited bool
	werr   error
}

// StartProcess starts argv (with env added to this process's environment,
// and its standard error on stderr) as a driver process, a program that
// runs ServeProcess; hands it the streams to post to addr with workers
// connections; and returns once it has opened them, or ctx ends. Close
// must follow.
func StartProcess(ctx context.Context, argv, env []string, stderr io.Writer, addr string, workers int, streams [][]Request) (*Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("blockload: no command for the load generator process")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("blockload: load generator process: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("blockload: load generator process: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("blockload: start the load generator process: %w", err)
	}
	p := &Process{cmd: cmd, in: in, out: bufio.NewReader(stdout)}
	// The job goes in while the child reads it: a pipe holds only 64 KiB.
	sent := make(chan error, 1)
	go func() { sent <- gob.NewEncoder(in).Encode(job{Addr: addr, Workers: workers, Streams: streams}) }()
	ready := make(chan error, 1)
	go func() {
		r, err := p.read()
		if err == nil && !r.Ready {
			err = fmt.Errorf("it answered %+v, not ready", r)
		}
		ready <- err
	}()
	t := time.NewTimer(readyTimeout)
	defer t.Stop()
	fail := func(err error) (*Process, error) {
		p.Close()
		return nil, fmt.Errorf("blockload: load generator process: %w", err)
	}
	var sendErr error
	for ready != nil || sent != nil {
		select {
		case err := <-ready:
			ready = nil
			if err != nil {
				return fail(err)
			}
		case err := <-sent:
			// A child that stopped reading has its own word for why,
			// or stops without one: wait for that.
			sent, sendErr = nil, err
		case <-t.C:
			return fail(fmt.Errorf("not ready after %v", readyTimeout))
		case <-ctx.Done():
			return fail(ctx.Err())
		}
	}
	if sendErr != nil {
		return fail(sendErr)
	}
	return p, nil
}

// read reads the child's next reply; a reply that carries an error is
// returned as one.
func (p *Process) read() (reply, error) {
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		if len(line) == 0 {
			return reply{}, fmt.Errorf("it stopped without a word: %w", err)
		}
		return reply{}, fmt.Errorf("it said %q and stopped: %w", line, err)
	}
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		return reply{}, fmt.Errorf("it said %q: %w", line, err)
	}
	if r.Error != "" {
		return reply{}, errors.New(r.Error)
	}
	return r, nil
}

// Drive starts the clock: the driver posts every request and reports the
// phase it timed. If ctx ends first, the driver is killed. A Process
// drives once.
func (p *Process) Drive(ctx context.Context) (Phase, error) {
	if p.drove {
		return Phase{}, errors.New("blockload: the load generator process already ran")
	}
	p.drove = true
	stop := context.AfterFunc(ctx, func() { p.cmd.Process.Kill() })
	defer stop()
	r, err := p.drive()
	if werr := p.wait(); err == nil && werr != nil {
		err = werr
	}
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return Phase{}, fmt.Errorf("blockload: load generator process: %w", err)
	}
	return *r.Phase, nil
}

func (p *Process) drive() (reply, error) {
	if _, err := io.WriteString(p.in, "go\n"); err != nil {
		return reply{}, err
	}
	r, err := p.read()
	if err == nil && r.Phase == nil {
		err = fmt.Errorf("it answered %+v, not a phase", r)
	}
	return r, err
}

// wait waits for the child once, after its output has been read.
func (p *Process) wait() error {
	if !p.waited {
		p.waited = true
		p.werr = p.cmd.Wait()
	}
	return p.werr
}

// Close stops the driver if it still runs; it may be called more than
// once.
func (p *Process) Close() {
	if !p.waited {
		p.cmd.Process.Kill()
	}
	p.in.Close()
	p.wait()
}

// ServeProcess is the driver process's side of StartProcess: it reads its
// job from in, opens the connections, says it is ready on out, waits for
// the word to go, posts every request and writes the phase on out. A
// failure is reported on out, where the parent reads it, and only an
// error in reporting it is returned. A parent that closes in before the
// word to go has given up, and ServeProcess returns nil.
func ServeProcess(ctx context.Context, in io.Reader, out io.Writer) error {
	ph, err := serve(ctx, bufio.NewReader(in), out)
	if errors.Is(err, errGone) {
		return nil
	}
	r := reply{Phase: ph}
	if err != nil {
		r = reply{Error: err.Error()}
	}
	return writeReply(out, r)
}

// errGone is the parent closing the pipe before the word to go.
var errGone = errors.New("the parent is gone")

func serve(ctx context.Context, r *bufio.Reader, out io.Writer) (*Phase, error) {
	var j job
	if err := gob.NewDecoder(r).Decode(&j); err != nil {
		return nil, fmt.Errorf("read the job: %w", err)
	}
	if j.Workers < 1 {
		return nil, fmt.Errorf("the job has %d workers", j.Workers)
	}
	h, err := DialHTTP(j.Addr, j.Workers)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if err := writeReply(out, reply{Ready: true}); err != nil {
		return nil, err
	}
	line, err := r.ReadString('\n')
	if errors.Is(err, io.EOF) && line == "" {
		return nil, errGone
	}
	if err != nil {
		return nil, fmt.Errorf("wait for the word to go: %w", err)
	}
	if strings.TrimSpace(line) != "go" {
		return nil, fmt.Errorf("waited for the word to go, read %q", line)
	}
	ph, err := Drive(ctx, j.Streams, j.Workers, h.Post)
	if err != nil {
		return nil, err
	}
	return &ph, nil
}

func writeReply(out io.Writer, r reply) error {
	b, err := json.Marshal(r)
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
	// Env added to its environment and its standard error on Stderr (nil:
	// discarded).
	Command []string
	Env     []string
	Stderr  io.Writer
}

// Where names the driver's place, as bench's --load-generator does:
// "process" (a process of its own) or "inprocess".
func (d Driver) Where() string {
	if len(d.Command) > 0 {
		return "process"
	}
	return "inprocess"
}

// A Runner has its connections open and posts its streams when told.
type Runner interface {
	// Drive posts every request and times it; a Runner drives once. The
	// first refused request, or ctx's end, stops it with an error.
	Drive(ctx context.Context) (Phase, error)
	Close()
}

// Start prepares to post streams to addr with workers connections, opened
// before Start returns.
func (d Driver) Start(ctx context.Context, addr string, workers int, streams [][]Request) (Runner, error) {
	if len(d.Command) > 0 {
		return StartProcess(ctx, d.Command, d.Env, d.Stderr, addr, workers, streams)
	}
	h, err := DialHTTP(addr, workers)
	if err != nil {
		return nil, err
	}
	return &local{h: h, streams: streams, workers: workers}, nil
}

// local drives from this process.
type local struct {
	h       *HTTP
	streams [][]Request
	workers int
	drove   bool
}

func (l *local) Drive(ctx context.Context) (Phase, error) {
	if l.drove {
		return Phase{}, errors.New("blockload: the load generator already ran")
	}
	l.drove = true
	return Drive(ctx, l.streams, l.workers, l.h.Post)
}

func (l *local) Close() { l.h.Close() }
