package cdnbench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func objectPath(i int) string { return "/obj/" + strconv.Itoa(i) }

// origin is the HTTP server both caches stand in front of, on loopback in
// the benchmark's process. It serves objects /obj/0 ... /obj/N-1 of size
// bytes each, cacheable by a shared cache for an hour, with a strong
// ETag, and counts the requests it gets.
type origin struct {
	addr, url string
	srv       *http.Server
	served    chan struct{}
	requests  atomic.Int64
}

func startOrigin(objects, size int) (*origin, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("cdnbench: origin: %w", err)
	}
	o := &origin{addr: ln.Addr().String(), url: "http://" + ln.Addr().String(), served: make(chan struct{})}
	o.srv = &http.Server{Handler: o.handler(objects, size), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(o.served)
		o.srv.Serve(ln)
	}()
	return o, nil
}

func (o *origin) handler(objects, size int) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /obj/{i}", func(w http.ResponseWriter, r *http.Request) {
		o.requests.Add(1)
		i, err := strconv.Atoi(r.PathValue("i"))
		if err != nil || i < 0 || i >= objects || objectPath(i) != r.URL.Path {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Cache-Control", "public, max-age=3600")
		h.Set("ETag", fmt.Sprintf(`"obj-%d-%d"`, i, size))
		h.Set("Content-Type", "application/octet-stream")
		// ServeContent answers If-None-Match with 304 and Range with 206.
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(objectBody(i, size)))
	})
	return mux
}

// objectBody is object i's content: its name repeated to size bytes, so
// that every object differs.
func objectBody(i, size int) []byte {
	line := []byte(fmt.Sprintf("object %d\n", i))
	b := bytes.Repeat(line, size/len(line)+1)
	return b[:size]
}

func (o *origin) close() {
	o.srv.Close()
	<-o.served
}

// process is a server run as a child in a process group of its own, its
// output going to a log file.
type process struct {
	cmd     *exec.Cmd
	logPath string
	logf    *os.File
	exited  chan struct{}
}

func startProcess(logPath string, env []string, bin string, args ...string) (*process, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	detach(cmd)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &process{cmd: cmd, logPath: logPath, logf: logf, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(p.exited) }()
	return p, nil
}

// stop ends the process group with SIGTERM, then SIGKILL after 10 s,
// and waits for the process.
func (p *process) stop() {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
	p.logf.Close()
}

// log returns the end of the process's output, for error messages.
func (p *process) log() string {
	b, _ := os.ReadFile(p.logPath)
	if len(b) > 8<<10 {
		b = b[len(b)-8<<10:]
	}
	return string(b)
}

// failed stops the process and returns err with its output.
func (p *process) failed(err error) error {
	p.stop()
	return fmt.Errorf("%w; its output:\n%s", err, p.log())
}

// waitFor polls until ready returns true, the process exits, ctx ends or
// 60 s pass.
func (p *process) waitFor(ctx context.Context, what string, ready func() bool) error {
	deadline := time.Now().Add(time.Minute)
	for !ready() {
		select {
		case <-p.exited:
			return fmt.Errorf("exited (%s) before %s", p.cmd.ProcessState, what)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s in 60 s", what)
		}
	}
	return nil
}

// server is a cache under measurement: its base URL and its process.
type server struct {
	url string
	*process
}

var (
	apiLine  = regexp.MustCompile(`lattice cloud: REST API (http://\S+)`)
	edgeLine = regexp.MustCompile(`lattice cloud: CDN edge (http://\S+)`)
)

// startLattice runs `lattice cloud` over a new data directory, with its
// CDN edge, an S3 endpoint and REST API on loopback ports of the
// kernel's choosing, no DNS server, and cores as GOMAXPROCS; and creates
// the deployment Host names, with originURL as its origin.
func startLattice(ctx context.Context, bin, dataDir string, cores int, originURL string) (*server, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	p, err := startProcess(dataDir+".log", []string{"GOMAXPROCS=" + strconv.Itoa(cores)}, bin, "cloud",
		"--data", dataDir, "--api", "127.0.0.1:0", "--s3", "127.0.0.1:0", "--dns", "", "--s3-website", "", "--cdn", "127.0.0.1:0",
		"--cdn-domain", cdnDomain, "--cdn-private-origins", "true", "--metrics", "", "--log-level", "warn", "--log-format", "text")
	if err != nil {
		return nil, err
	}
	var api, edge string
	err = p.waitFor(ctx, "the ready lines of `lattice cloud`", func() bool {
		out := p.log()
		a, e := apiLine.FindStringSubmatch(out), edgeLine.FindStringSubmatch(out)
		if a == nil || e == nil {
			return false
		}
		api, edge = a[1], e[1]
		return true
	})
	if err != nil {
		return nil, p.failed(err)
	}
	key, err := os.ReadFile(filepath.Join(dataDir, "admin-api-key"))
	if err != nil {
		return nil, p.failed(err)
	}
	body := fmt.Sprintf(`{"name":%q,"origin":%q}`, deployment, originURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api+"/api/cdn/deployments", strings.NewReader(body))
	if err != nil {
		return nil, p.failed(err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(key)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, p.failed(fmt.Errorf("create the deployment: %w", err))
	}
	var msg bytes.Buffer
	msg.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return nil, p.failed(fmt.Errorf("create the deployment: %s: %s", resp.Status, bytes.TrimSpace(msg.Bytes())))
	}
	return &server{url: edge, process: p}, nil
}

// startNGINX runs nginx in the foreground with a configuration of its
// own in dir: cores worker processes, a proxy_cache in dir in front of
// originAddr (what nginx may cache and for how long is what the origin's
// Cache-Control says), and the settings a CDN node would use for hits:
// no access log, keep-alive without a per-connection request limit, open
// cache files kept open.
func startNGINX(ctx context.Context, bin, dir string, cores int, originAddr string) (*server, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConf(dir, cores, port, originAddr, os.Geteuid() == 0)), 0o644); err != nil {
		return nil, err
	}
	errorLog := filepath.Join(dir, "error.log")
	p, err := startProcess(filepath.Join(dir, "output.log"), nil, bin, "-e", errorLog, "-p", dir, "-c", conf, "-g", "daemon off;")
	if err != nil {
		return nil, err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	err = p.waitFor(ctx, "an answer from "+url, func() bool {
		resp, err := probe.Get(url + "/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})
	if err != nil {
		log, _ := os.ReadFile(errorLog)
		return nil, p.failed(fmt.Errorf("%w; error.log:\n%s", err, log))
	}
	return &server{url: url, process: p}, nil
}

// nginxConf is nginx's configuration. Run as root, nginx's workers would
// switch to nobody and could not reach the cache under the benchmark's
// private temporary directory: they stay root.
func nginxConf(dir string, cores, port int, originAddr string, root bool) string {
	user := ""
	if root {
		user = "user root;\n"
	}
	p := func(name string) string { return strconv.Quote(filepath.Join(dir, name)) }
	return fmt.Sprintf(`%sworker_processes %d;
pid %s;
error_log %s warn;

events {
    worker_connections 4096;
}

http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 75s;
    keepalive_requests 1000000000;
    open_file_cache max=100000 inactive=60s;

    client_body_temp_path %s;
    proxy_temp_path %s;
    fastcgi_temp_path %s;
    uwsgi_temp_path %s;
    scgi_temp_path %s;

    proxy_cache_path %s levels=1:2 keys_zone=bench:64m max_size=4g inactive=1d use_temp_path=off;

    upstream origin {
        server %s;
        keepalive 32;
    }

    server {
        listen 127.0.0.1:%d;

        location / {
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache bench;
            # The origin's Cache-Control decides; this is for responses
            # without one (lattice's default_ttl).
            proxy_cache_valid 200 1h;
            proxy_cache_lock on;
            proxy_cache_revalidate on;
            add_header X-Cache $upstream_cache_status always;
        }
    }
}
`, user, cores, p("nginx.pid"), p("error.log"), p("client_body"), p("proxy_temp"), p("fastcgi_temp"), p("uwsgi_temp"),
		p("scgi_temp"), p("cache"), originAddr, port)
}

// nginxVersion returns what `nginx -v` says, e.g. "nginx/1.22.1".
func nginxVersion(bin string) string {
	out, _ := exec.Command(bin, "-v").CombinedOutput()
	s := strings.TrimSpace(string(out))
	return strings.TrimPrefix(s, "nginx version: ")
}

// freePort returns a loopback TCP port free at the time of the call.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
