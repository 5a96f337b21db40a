package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	binenc "encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/storage/sigv4"
)

// cloudProc is a running `lattice cloud`.
type cloudProc struct {
	cmd    *exec.Cmd
	url    string
	s3     string // the S3 endpoint's URL
	admin  string
	stderr bytes.Buffer  // read only once exited is closed
	exited chan struct{} // closed when the process has been waited for
	err    error         // Wait's answer, once exited is closed
}

// startCloud starts `lattice cloud` on dir and waits until its API answers
// the admin key. The free ports it picks may be taken by another process
// before the server binds them (a test running beside this one): it then
// tries again, on other ports.
func startCloud(t *testing.T, dir string) *cloudProc {
	t.Helper()
	for attempt := 1; ; attempt++ {
		p, taken := tryStartCloud(t, dir)
		if !taken {
			return p
		}
		if attempt == 3 {
			t.Fatalf("lattice cloud found its ports taken 3 times:\n%s", p.stderr.String())
		}
	}
}

// tryStartCloud is startCloud's one attempt; taken says the ports it
// picked were taken meanwhile.
func tryStartCloud(t *testing.T, dir string) (p *cloudProc, taken bool) {
	t.Helper()
	addr := freeAddr(t)
	p = &cloudProc{url: "http://" + addr, exited: make(chan struct{})}
	p.s3 = "http://" + freeAddr(t)
	// Every listener on a port of its own: another lattice cloud on the
	// default ports must not fail the test.
	p.cmd = exec.Command(binary, "cloud", "--data", dir, "--api", addr, "--s3", strings.TrimPrefix(p.s3, "http://"),
		"--dns", freeAddr(t), "--cdn", freeAddr(t), "--s3-website", "", "--log-level", "warn")
	p.cmd.Env = append(os.Environ(), "LATTICE_CONFIG=", "LATTICE_API=", "LATTICE_DATA=", "LATTICE_S3=", "LATTICE_DNS=", "LATTICE_CDN=", "LATTICE_S3_WEBSITE=")
	p.cmd.Stdout = io.Discard
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			t.Errorf("lattice cloud (pid %d) did not exit after SIGKILL", p.cmd.Process.Pid)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-p.exited:
			if strings.Contains(p.stderr.String(), "address already in use") {
				return p, true
			}
			t.Fatalf("lattice cloud exited at start: %v\n%s", p.err, p.stderr.String())
		default:
		}
		if data, err := os.ReadFile(filepath.Join(dir, "admin-api-key")); err == nil {
			p.admin = strings.TrimSpace(string(data))
			if r, err := p.call("GET", "/api/storage/buckets", p.admin, "", nil); err == nil && r.status == http.StatusOK {
				return p, false
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("lattice cloud did not come up on %s within 20 s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill ends the process with SIGKILL: no shutdown, no flush.
func (p *cloudProc) kill(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("lattice cloud did not die within 10 s of SIGKILL")
	}
}

// stop ends the process with SIGTERM and checks it shut down cleanly.
func (p *cloudProc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if p.err != nil {
			t.Errorf("lattice cloud exited after SIGTERM: %v\n%s", p.err, p.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("lattice cloud did not stop within 20 s of SIGTERM")
	}
}

type cloudResp struct {
	status int
	header http.Header
	body   []byte
}

var cloudHTTP = &http.Client{Timeout: 20 * time.Second}

// call sends one request; an answer of 429 is retried (the default rate
// limit is 100 requests/s per account) for up to 10 s. A transport error
// (the process died) is returned as is.
func (p *cloudProc) call(method, path, key, ctype string, body []byte) (cloudResp, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequest(method, p.url+path, rd)
		if err != nil {
			return cloudResp{}, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := cloudHTTP.Do(req)
		if err != nil {
			return cloudResp{}, err
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return cloudResp{}, err
		}
		if resp.StatusCode == http.StatusTooManyRequests && time.Now().Before(deadline) {
			time.Sleep(time.Duration(20+rand.IntN(30)) * time.Millisecond)
			continue
		}
		return cloudResp{resp.StatusCode, resp.Header, data}, nil
	}
}

// s3Key is an S3 key as POST /api/storage/keys answers it.
type s3Key struct {
	ID     string `json:"access_key_id"`
	Secret string `json:"secret_access_key"`
}

// s3Put uploads body to the S3 endpoint as bucket/key, signed with its
// SHA-256.
func (p *cloudProc) s3Put(k s3Key, path string, body []byte) (cloudResp, error) {
	req, err := http.NewRequest("PUT", p.s3+"/"+path, bytes.NewReader(body))
	if err != nil {
		return cloudResp{}, err
	}
	sum := sha256.Sum256(body)
	sigv4.Sign(req, k.ID, k.Secret, "us-east-1", hex.EncodeToString(sum[:]), time.Now())
	resp, err := cloudHTTP.Do(req)
	if err != nil {
		return cloudResp{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return cloudResp{resp.StatusCode, resp.Header, data}, err
}

func md5Hex(b []byte) string {
	h := md5.Sum(b)
	return hex.EncodeToString(h[:])
}

// Object states the uploaders record. A key is "inFlight" from the moment
// a request that changes it is sent until its answer arrives; the kill
// leaves some keys in flight, which may then be either way.
const (
	inFlight = iota
	present
	deleted
)

type objRecord struct {
	md5   string // the only body this key ever had
	size  int
	state int
}

const inlineMax = 64 << 10 // cloudstore.InlineMax

// TestCloudKillDuringUploads kills `lattice cloud` with SIGKILL while
// uploads (over the REST API and over S3), copies and deletes stream in, restarts it, and checks that every
// acknowledged object downloads intact, that what was acknowledged as
// deleted stayed deleted, that the bucket's counters agree with its
// objects, and that no temporary or unreferenced body file survived the
// restart.
func TestCloudKillDuringUploads(t *testing.T) {
	dir := t.TempDir()
	p := startCloud(t, dir)
	r, err := p.call("POST", "/api/admin/keys", p.admin, "application/json", []byte(`{"account":"crash","name":"test"}`))
	if err != nil || r.status != http.StatusCreated {
		t.Fatalf("create API key: %v %d %s", err, r.status, r.body)
	}
	var created struct{ Secret string }
	if err := json.Unmarshal(r.body, &created); err != nil || created.Secret == "" {
		t.Fatalf("create API key: %s", r.body)
	}
	key := created.Secret
	r, err = p.call("POST", "/api/storage/keys", key, "application/json", []byte(`{"name":"crash"}`))
	if err != nil || r.status != http.StatusCreated {
		t.Fatalf("create S3 key: %v %d %s", err, r.status, r.body)
	}
	var s3key s3Key
	if err := json.Unmarshal(r.body, &s3key); err != nil || s3key.Secret == "" {
		t.Fatalf("create S3 key: %s", r.body)
	}
	const bucket = "crash-bucket"
	if r, err := p.call("POST", "/api/storage/buckets", key, "application/json", []byte(`{"name":"`+bucket+`"}`)); err != nil || r.status != http.StatusCreated {
		t.Fatalf("create bucket: %v %d %s", err, r.status, r.body)
	}
	base := "/api/storage/buckets/" + bucket
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	recs := map[string]*objRecord{}
	for round := range 2 {
		killDuringUploads(t, p, key, s3key, base, round, seed, recs)
		// What the crash left: uploads cut off in tmp. Add a body file no
		// object refers to, as a crash between renaming a body into place
		// and committing its record would leave.
		tmpDir := filepath.Join(dir, "objects", "tmp")
		if es, _ := os.ReadDir(tmpDir); len(es) == 0 {
			t.Errorf("round %d: no cut-off upload in %s at the kill: the clean-up is not exercised", round, tmpDir)
		}
		orphan := filepath.Join(dir, "objects", "ab", fmt.Sprintf("ab%030d", round))
		os.MkdirAll(filepath.Dir(orphan), 0o700)
		if err := os.WriteFile(orphan, bytes.Repeat([]byte{'o'}, 100<<10), 0o600); err != nil {
			t.Fatal(err)
		}
		p = startCloud(t, dir)
		verifyAfterCrash(t, p, dir, key, base, recs)
		if _, err := os.Stat(orphan); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("round %d: the unreferenced body file %s survived the restart (%v)", round, orphan, err)
		}
		if t.Failed() {
			break
		}
	}
	// Still writable after the crashes.
	if r, err := p.call("POST", base+"/upload?key=after", key, "text/plain", []byte("after the crash")); err != nil || r.status != http.StatusCreated {
		t.Errorf("upload after restart: %v %d %s", err, r.status, r.body)
	}
	p.stop(t)
}

// killDuringUploads streams uploads, copies and deletes from several
// goroutines into the bucket, recording each key's body and state in recs,
// and kills the process with SIGKILL mid-stream.
func killDuringUploads(t *testing.T, p *cloudProc, key string, s3key s3Key, base string, round int, seed uint64, recs map[string]*objRecord) {
	// Two uploads that stall halfway, so that the kill surely finds bodies
	// in the middle of being written.
	for i := range 2 {
		conn, err := net.DialTimeout("tcp", strings.TrimPrefix(p.url, "http://"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST %s/upload?key=stalled-%d-%d HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", base, round, i, key, 300<<10)
		conn.Write(bytes.Repeat([]byte{'s'}, 150<<10))
	}

	var mu sync.Mutex
	acked := 0
	set := func(k string, rec objRecord) {
		mu.Lock()
		defer mu.Unlock()
		recs[k] = &rec
	}
	setState := func(k string, state int) {
		mu.Lock()
		defer mu.Unlock()
		recs[k].state = state
		if state == present {
			acked++
		}
	}
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(round*100+w)))
			for i := 0; ctx.Err() == nil; i++ {
				k := fmt.Sprintf("r%d/w%d/obj-%04d", round, w, i)
				size := 1 + rng.IntN(inlineMax)
				if rng.IntN(2) == 0 {
					size = 150<<10 + rng.IntN(100<<10)
				}
				body := make([]byte, size+7)
				for j := 0; j < size; j += 8 {
					binenc.LittleEndian.PutUint64(body[j:], rng.Uint64())
				}
				body = body[:size]
				sum := md5Hex(body)
				set(k, objRecord{md5: sum, size: size, state: inFlight})
				if w%2 == 0 { // half the uploaders use the REST API, half S3
					r, err := p.call("POST", base+"/upload?key="+url.QueryEscape(k), key, "application/octet-stream", body)
					if err != nil {
						return // the server died: this key stays in flight
					}
					if r.status != http.StatusCreated {
						fail("upload %s: %d %s", k, r.status, r.body)
						return
					}
					if !bytes.Contains(r.body, []byte(`"etag":"`+sum+`"`)) {
						fail("upload %s answered %s, want etag %s", k, r.body, sum)
					}
				} else {
					r, err := p.s3Put(s3key, strings.TrimPrefix(base, "/api/storage/buckets/")+"/"+k, body)
					if err != nil {
						return
					}
					if r.status != http.StatusOK || r.header.Get("ETag") != `"`+sum+`"` {
						fail("S3 PUT %s: %d ETag %s %s, want etag %s", k, r.status, r.header.Get("ETag"), r.body, sum)
						return
					}
				}
				setState(k, present)

				if size > inlineMax && rng.IntN(3) == 0 {
					dst := k + ".copy"
					set(dst, objRecord{md5: sum, size: size, state: inFlight})
					r, err := p.call("POST", base+"/copy", key, "application/json", []byte(fmt.Sprintf(`{"source_key":%q,"dest_key":%q}`, k, dst)))
					if err != nil {
						return
					}
					if r.status != http.StatusCreated {
						fail("copy %s: %d %s", k, r.status, r.body)
						return
					}
					setState(dst, present)
				}
				if rng.IntN(4) == 0 {
					setState(k, inFlight)
					r, err := p.call("DELETE", base+"/objects/"+k, key, "", nil)
					if err != nil {
						return
					}
					if r.status != http.StatusNoContent {
						fail("delete %s: %d %s", k, r.status, r.body)
						return
					}
					setState(k, deleted)
				}
			}
		}()
	}

	// Kill once a random number of uploads were acknowledged in this
	// round, while everything is still streaming.
	target := 100 + rand.IntN(150)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		mu.Lock()
		n := acked
		mu.Unlock()
		if n >= target {
			break
		}
	}
	p.kill(t)
	cancel()
	waitDone := make(chan struct{})
	go func() { wg.Wait(); close(waitDone) }()
	select {
	case <-waitDone:
	case <-time.After(30 * time.Second):
		t.Fatal("uploaders did not stop within 30 s of the kill")
	}
	for _, f := range failures {
		t.Error(f)
	}
	if acked < 50 {
		t.Errorf("round %d: only %d uploads acknowledged before the kill (target %d): the test did not exercise much", round, acked, target)
	}
	var nPresent, nDeleted, nFlight int
	for _, r := range recs {
		switch r.state {
		case present:
			nPresent++
		case deleted:
			nDeleted++
		default:
			nFlight++
		}
	}
	t.Logf("round %d killed after %d uploads acknowledged: %d objects acknowledged, %d acknowledged deletes, %d keys whose last request got no answer", round, acked, nPresent, nDeleted, nFlight)
}

// verifyAfterCrash checks the restarted cloud against recs: acknowledged
// objects are there and intact, acknowledged deletes stayed, every object
// there is the body its key was given, the bucket's counters agree, tmp is
// empty and there is one body file per distinct large body.
func verifyAfterCrash(t *testing.T, p *cloudProc, dir, key, base string, recs map[string]*objRecord) {
	type listed struct {
		Key  string `json:"key"`
		Size int64  `json:"size"`
		ETag string `json:"etag"`
	}
	have := map[string]listed{}
	marker := ""
	for page := 0; ; page++ {
		if page > 100 {
			t.Fatal("the listing does not end")
		}
		r, err := p.call("GET", base+"/objects?per_page=100&marker="+url.QueryEscape(marker), key, "", nil)
		if err != nil || r.status != http.StatusOK {
			t.Fatalf("list after restart: %v %d %s", err, r.status, r.body)
		}
		var l struct {
			Data       []listed `json:"data"`
			NextMarker string   `json:"next_marker"`
		}
		if err := json.Unmarshal(r.body, &l); err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Data {
			have[o.Key] = o
		}
		if l.NextMarker == "" {
			break
		}
		marker = l.NextMarker
	}

	for k, rec := range recs {
		o, ok := have[k]
		switch {
		case rec.state == present && !ok:
			t.Errorf("acknowledged object %s lost", k)
		case rec.state == deleted && ok:
			t.Errorf("acknowledged delete of %s undone", k)
		case ok && (o.ETag != rec.md5 || o.Size != int64(rec.size)):
			t.Errorf("%s listed as %d bytes etag %s, but was given %d bytes md5 %s", k, o.Size, o.ETag, rec.size, rec.md5)
		}
	}
	var total int64
	large := map[string]bool{} // distinct large bodies, by MD5
	for k, o := range have {
		if _, ok := recs[k]; !ok && k != "after" {
			t.Errorf("object %s after restart was never uploaded", k)
		}
		r, err := p.call("GET", base+"/download/"+k, key, "", nil)
		if err != nil || r.status != http.StatusOK {
			t.Errorf("download %s after restart: %v %d %s", k, err, r.status, r.body)
			continue
		}
		if got := md5Hex(r.body); got != o.ETag || int64(len(r.body)) != o.Size {
			t.Errorf("%s after restart: %d bytes md5 %s, want %d bytes md5 %s", k, len(r.body), got, o.Size, o.ETag)
		}
		total += o.Size
		if o.Size > inlineMax {
			large[o.ETag] = true
		}
	}

	r, err := p.call("GET", base, key, "", nil)
	if err != nil || r.status != http.StatusOK {
		t.Fatalf("get bucket: %v %d", err, r.status)
	}
	var bk struct {
		ObjectCount int64 `json:"object_count"`
		SizeBytes   int64 `json:"size_bytes"`
	}
	json.Unmarshal(r.body, &bk)
	if bk.ObjectCount != int64(len(have)) || bk.SizeBytes != total {
		t.Errorf("bucket counts %d objects, %d bytes; it holds %d objects, %d bytes", bk.ObjectCount, bk.SizeBytes, len(have), total)
	}

	tmpDir := filepath.Join(dir, "objects", "tmp")
	if es, err := os.ReadDir(tmpDir); err != nil || len(es) != 0 {
		t.Errorf("%s after restart holds %d entries (%v), want none", tmpDir, len(es), err)
	}
	shardRe, idRe := regexp.MustCompile(`^[0-9a-f]{2}$`), regexp.MustCompile(`^[0-9a-f]{32}$`)
	files := 0
	es, err := os.ReadDir(filepath.Join(dir, "objects"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Name() == "tmp" {
			continue
		}
		if !e.IsDir() || !shardRe.MatchString(e.Name()) {
			t.Errorf("unexpected entry objects/%s", e.Name())
			continue
		}
		names, err := os.ReadDir(filepath.Join(dir, "objects", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range names {
			files++
			if !idRe.MatchString(f.Name()) || !strings.HasPrefix(f.Name(), e.Name()) {
				t.Errorf("unexpected body file objects/%s/%s", e.Name(), f.Name())
			}
		}
	}
	if files != len(large) {
		t.Errorf("%d body files after restart, want %d (the distinct large bodies still referenced)", files, len(large))
	}
	t.Logf("after restart: %d objects, %d distinct large bodies, %d body files", len(have), len(large), files)
}
