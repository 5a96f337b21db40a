package s3bench

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// MinIO is a MinIO server run as a subprocess on loopback, over a single
// drive in a directory of its own. Close kills it and removes the
// directory.
type MinIO struct {
	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
	out    *tail
	target Target
}

// MinIOOptions configure StartMinIO.
type MinIOOptions struct {
	// Parent is where the server's directory is made (default: the
	// system's temporary directory). Put it on the same disk as the
	// other targets' data.
	Parent string
	// OSync sets MINIO_FS_OSYNC=on: MinIO then calls sync(2) after each
	// object it commits, so that the rename that publishes the object is
	// on disk before the 200. Without it, MinIO writes object data and
	// metadata with O_DIRECT/O_DSYNC and fdatasync, but publishes them
	// with a rename that is not synced: a power loss right after a 200
	// can lose the object.
	OSync bool
	// KMS gives MinIO a static KMS key (MINIO_KMS_SECRET_KEY, a random
	// one), which it needs to do SSE-S3: without one it refuses a PUT with
	// x-amz-server-side-encryption. A key alone encrypts nothing else.
	KMS bool
}

// StartMinIO starts the MinIO server binary bin and waits until it is
// ready to serve.
func StartMinIO(ctx context.Context, bin string, opts MinIOOptions) (m *MinIO, err error) {
	dir, err := os.MkdirTemp(opts.Parent, "minio-s3bench-")
	if err != nil {
		return nil, fmt.Errorf("s3bench: %w", err)
	}
	m = &MinIO{dir: dir, exited: make(chan struct{}), out: &tail{max: 16 << 10}}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	console, err := freeAddr()
	if err != nil {
		return nil, err
	}
	user, password := "s3bench", rand.Text()
	osync := "off"
	if opts.OSync {
		osync = "on"
	}
	m.cmd = exec.Command(bin, "server", filepath.Join(dir, "data"), "--address", addr, "--console-address", console)
	m.cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+user, "MINIO_ROOT_PASSWORD="+password, "MINIO_FS_OSYNC="+osync)
	if opts.KMS {
		key := make([]byte, 32)
		rand.Read(key)
		m.cmd.Env = append(m.cmd.Env, "MINIO_KMS_SECRET_KEY=s3bench-key:"+base64.StdEncoding.EncodeToString(key))
	}
	m.cmd.Stdout, m.cmd.Stderr = m.out, m.out
	detach(m.cmd)
	if err := m.cmd.Start(); err != nil {
		m.cmd = nil
		return nil, fmt.Errorf("s3bench: start minio: %w", err)
	}
	go func() {
		m.cmd.Wait()
		close(m.exited)
	}()
	m.target = Target{Name: "minio", Endpoint: "http://" + addr, AccessKey: user, SecretKey: password, Region: "us-east-1",
		pids: []int{m.cmd.Process.Pid}}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.target.Endpoint+"/minio/health/ready", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return m, nil
			}
		}
		select {
		case <-m.exited:
			return nil, fmt.Errorf("s3bench: minio exited before it was ready (%s):\n%s", m.cmd.ProcessState, m.out)
		case <-ctx.Done():
			return nil, fmt.Errorf("s3bench: minio not ready: %w\n%s", ctx.Err(), m.out)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Target is the endpoint to measure.
func (m *MinIO) Target() Target { return m.target }

// Close kills the server, waits for it and removes its directory.
func (m *MinIO) Close() error {
	if m.cmd != nil {
		m.cmd.Process.Kill()
		<-m.exited
	}
	return os.RemoveAll(m.dir)
}

// freeAddr returns a loopback address with a port free at the time of
// the call.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("s3bench: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// tail keeps the last max bytes written to it, for error messages.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
