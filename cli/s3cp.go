package cli

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"mime"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/latticenet/lattice/cloud/cloudclient"
	"github.com/latticenet/lattice/cloud/cloudwire"
)

// transfer is one file moved by cp, as --json reports it.
type transfer struct {
	Action      string `json:"action"` // upload, download or copy
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Size        int64  `json:"size"`
	ETag        string `json:"etag"`
}

// copier runs the transfers of one cp command.
type copier struct {
	e        *env
	c        *cloudclient.Client
	draw     bool // draw progress bars on stderr
	quiet    bool // no summary lines (--json)
	now      func() time.Time
	started  time.Time
	toStdout bool
	// parallel is how many files a recursive cp or a sync moves at once;
	// with more than one, each file's line is printed when it is done
	// instead of a progress bar.
	parallel int
	// verb, when set, names every transfer on its line in place of its
	// own action: mv's copy prints "move:", as it does in the AWS CLI.
	verb string

	mu    sync.Mutex // guards done, bytes and the lines on stdout
	done  []transfer
	bytes int64
}

// each runs fn(i) for i in [0, n), cp.parallel at a time, and returns the
// first error; after an error no new fn starts and ctx is cancelled for
// those running.
func (cp *copier) each(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		slots = make(chan struct{}, max(cp.parallel, 1))
	)
	for i := range n {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	return first
}

// parallelFlag defines --parallel for cp and sync.
func parallelFlag(f *s3Flags) *int {
	return f.Int("parallel", 4, "files moved at once by a recursive cp or a sync (1 to 32)")
}

func runS3Copy(ctx context.Context, e *env, args []string) error {
	return copyObjects(ctx, e, args, "")
}

// copyObjects is cp with its arguments; verb, when set, names each
// transfer on its line (see copier.verb).
func copyObjects(ctx context.Context, e *env, args []string, verb string) error {
	f := newS3Flags(e, "cp SRC DST [--recursive]", `
Uploads a file or (with --recursive) a folder, downloads an object or a
prefix, or copies an object within its bucket; one of SRC and DST is an
s3://BUCKET/KEY URL, and - is stdin or stdout. Draws progress bars when
stderr is a terminal.`, `  lattice s3 cp report.pdf s3://docs/
  lattice s3 cp ./holiday s3://photos/2026/ --recursive
  lattice s3 cp s3://photos/2026/beach.jpg .
  tar c . | lattice s3 cp - s3://backups/site.tar
`)
	recursive := f.recursive("copy a folder: every file under SRC")
	parallel := parallelFlag(f)
	progress := f.Bool("progress", false, "draw progress bars on stderr even when it is not a terminal")
	noProgress := f.Bool("no-progress", false, "draw no progress bars")
	if err := f.parseN(args, 2, "SRC and DST, one of them an s3://BUCKET/KEY URL"); err != nil {
		return err
	}
	if *progress && *noProgress {
		return usageErr("--progress and --no-progress contradict each other")
	}
	if *parallel < 1 || *parallel > 32 {
		return usageErr("--parallel must be 1 to 32")
	}
	src, dst := f.Arg(0), f.Arg(1)
	if !isS3URL(src) && !isS3URL(dst) {
		hint := ""
		if _, err := os.Stat(src); err != nil && strings.Contains(src, "/") {
			hint = fmt.Sprintf(" (did you mean s3://%s?)", src)
		}
		return usageErr("one of SRC and DST must be an s3://BUCKET/KEY URL%s", hint)
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	cp := &copier{e: e, c: c, draw: *progress || (!*noProgress && isTerminal(e.stderr)), quiet: *f.json, now: time.Now, parallel: *parallel, verb: verb}
	if !*recursive {
		cp.parallel = 1
	}
	if cp.parallel > 1 {
		cp.draw = false // bars of files moving at once would overwrite each other
	}
	cp.started = cp.now()
	switch {
	case isS3URL(src) && isS3URL(dst):
		err = cp.copyRemote(ctx, src, dst, *recursive)
	case isS3URL(dst):
		err = cp.uploadArg(ctx, src, dst, *recursive)
	default:
		if dst == "-" && *f.json {
			return usageErr("--json prints to stdout, where - would write the object: choose one")
		}
		err = cp.downloadArg(ctx, src, dst, *recursive)
	}
	if err != nil {
		return err
	}
	if *f.json {
		// Files moved at once finish in any order: report them in one.
		slices.SortFunc(cp.done, func(a, b transfer) int { return strings.Compare(a.Destination, b.Destination) })
		return printJSON(e.stdout, nonNil(cp.done))
	}
	if len(cp.done) > 1 {
		elapsed := cp.now().Sub(cp.started)
		fmt.Fprintf(e.stdout, "%d files, %s in %s (%s/s)\n", len(cp.done), humanBytes(cp.bytes), tookDuration(elapsed), humanBytes(int64(rate(cp.bytes, elapsed))))
	}
	return nil
}

// uploadArg uploads the file or, with recursive, the folder src to dst.
func (cp *copier) uploadArg(ctx context.Context, src, dst string, recursive bool) error {
	to, err := parseS3Path(dst)
	if err != nil {
		return err
	}
	if src == "-" {
		if to.key == "" || strings.HasSuffix(to.key, "/") {
			return usageErr("an upload from stdin needs a key: s3://%s/KEY", to.bucket)
		}
		return cp.upload(ctx, os.Stdin, "stdin", -1, to)
	}
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		if to.key == "" || strings.HasSuffix(to.key, "/") {
			to.key += filepath.Base(src)
		}
		return cp.uploadFile(ctx, src, to)
	}
	if !recursive {
		return usageErr("%s is a folder: add --recursive to upload everything in it", src)
	}
	// Walk first, so that a folder that cannot be read fails before
	// anything is sent.
	type file struct {
		local string
		key   string
	}
	var files []file
	prefix := dirPrefix(to.key)
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			fmt.Fprintf(cp.e.stderr, "skipping %s: not a regular file\n", p)
			return nil
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		files = append(files, file{p, prefix + filepath.ToSlash(rel)})
		return nil
	})
	if err != nil {
		return err
	}
	if len(files) == 0 {
		fmt.Fprintf(cp.e.stderr, "%s holds no files: nothing to upload\n", src)
	}
	return cp.each(ctx, len(files), func(ctx context.Context, i int) error {
		return cp.uploadFile(ctx, files[i].local, s3Path{to.bucket, files[i].key})
	})
}

func (cp *copier) uploadFile(ctx context.Context, local string, to s3Path) error {
	f, err := os.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return cp.upload(ctx, f, local, st.Size(), to)
}

// upload streams size bytes of r (all of it if size is -1) to the
// object to, with a Content-Type guessed from the key's extension, and
// checks the stored object's MD5 against what was read.
func (cp *copier) upload(ctx context.Context, r io.Reader, name string, size int64, to s3Path) error {
	if size >= 0 {
		r = io.LimitReader(r, size) // a file growing meanwhile must not outrun its Content-Length
	}
	ctype := mime.TypeByExtension(path.Ext(to.key))
	if strings.HasPrefix(ctype, "multipart/") {
		ctype = "" // would make the server read the body as a form
	}
	m := newMeter(cp.e.stderr, name, size, cp.draw, cp.now)
	sum := md5.New()
	o, err := cp.c.Upload(ctx, to.bucket, to.key, ctype, io.TeeReader(r, io.MultiWriter(sum, m)), size)
	n, elapsed := m.finish()
	if err != nil {
		return explain(fmt.Errorf("upload %s to %s: %w", name, to, err), to)
	}
	if err := checkSum(o.ETag, sum); err != nil {
		return fmt.Errorf("upload %s to %s: %w", name, to, err)
	}
	cp.record(transfer{"upload", name, to.String(), o.Size, o.ETag}, n, elapsed)
	return nil
}

// checkSum compares an object's ETag with the MD5 of the bytes that went
// through sum. An ETag that is not a plain MD5 (an S3 multipart upload's
// ends with "-N") cannot be checked.
func checkSum(etag string, sum hash.Hash) error {
	if len(etag) != 2*md5.Size {
		return nil
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != etag {
		return fmt.Errorf("the bytes sent have MD5 %s but the object's ETag is %s", got, etag)
	}
	return nil
}

func (cp *copier) record(t transfer, n int64, elapsed time.Duration) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.done = append(cp.done, t)
	cp.bytes += n
	if !cp.quiet && !cp.toStdout {
		verb := t.Action
		if cp.verb != "" {
			verb = cp.verb
		}
		fmt.Fprintf(cp.e.stdout, "%s: %s to %s  %s in %s\n", verb, t.Source, t.Destination, humanBytes(n), tookDuration(elapsed))
	}
}

// downloadArg downloads the object src, or with recursive every object
// under the prefix src, to dst.
func (cp *copier) downloadArg(ctx context.Context, src, dst string, recursive bool) (err error) {
	from, err := parseS3Path(src)
	if err != nil {
		return err
	}
	if !recursive {
		if from.key == "" || strings.HasSuffix(from.key, "/") {
			return usageErr("%s is a folder: add --recursive to download everything under it", from)
		}
		if dst == "-" {
			cp.toStdout = true
			return cp.download(ctx, from, "-")
		}
		if st, err := os.Stat(dst); (err == nil && st.IsDir()) || strings.HasSuffix(dst, string(filepath.Separator)) || strings.HasSuffix(dst, "/") {
			dst = filepath.Join(dst, path.Base(from.key))
		}
		return cp.download(ctx, from, dst)
	}
	if dst == "-" {
		return usageErr("a recursive download needs a folder, not -")
	}
	from.key = dirPrefix(from.key)
	objs, err := allObjects(ctx, cp.c, from)
	if err != nil {
		return err
	}
	if len(objs) == 0 {
		fmt.Fprintf(cp.e.stderr, "no objects under %s: nothing to download\n", from)
		return nil
	}
	skipped := 0
	defer func() {
		if skipped > 0 && err == nil {
			err = fmt.Errorf("%d object(s) skipped (listed above)", skipped)
		}
	}()
	type job struct {
		from  s3Path
		local string
	}
	var jobs []job
	for _, o := range objs {
		rel := filepath.FromSlash(strings.TrimPrefix(o.Key, from.key))
		if !filepath.IsLocal(rel) && rel != "" {
			fmt.Fprintf(cp.e.stderr, "skipping %s: its key does not make a path inside %s\n", s3Path{from.bucket, o.Key}, dst)
			skipped++
			continue
		}
		if cloudwire.ValidRESTKey(o.Key) != nil {
			fmt.Fprintf(cp.e.stderr, "skipping %s: its key has an empty, \".\" or \"..\" segment, which only the S3 endpoint can address\n", s3Path{from.bucket, o.Key})
			skipped++
			continue
		}
		local := filepath.Join(dst, rel)
		if strings.HasSuffix(o.Key, "/") { // a folder object
			if err := os.MkdirAll(local, 0o755); err != nil {
				return err
			}
			continue
		}
		jobs = append(jobs, job{s3Path{from.bucket, o.Key}, local})
	}
	return cp.each(ctx, len(jobs), func(ctx context.Context, i int) error {
		return cp.download(ctx, jobs[i].from, jobs[i].local)
	})
}

// download writes the object from to the file local ("-" for stdout). The
// body goes to a temporary file beside local, renamed over it only once
// complete and checked, so local never holds part of an object.
func (cp *copier) download(ctx context.Context, from s3Path, local string) (err error) {
	body, info, err := cp.c.Download(ctx, from.bucket, from.key)
	if err != nil {
		return explainObject(ctx, cp.c, err, from)
	}
	defer body.Close()
	var out io.Writer = cp.e.stdout
	var tmp *os.File
	if local != "-" {
		dir := filepath.Dir(local)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if tmp, err = os.CreateTemp(dir, "."+filepath.Base(local)+".lattice-*"); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				tmp.Close()
				os.Remove(tmp.Name())
			}
		}()
		out = tmp
	}
	m := newMeter(cp.e.stderr, from.String(), info.Size, cp.draw, cp.now)
	sum := md5.New()
	n, err := io.Copy(io.MultiWriter(out, sum, m), body)
	_, elapsed := m.finish()
	if err != nil {
		return fmt.Errorf("download %s: %w", from, err)
	}
	if info.Size >= 0 && n != info.Size {
		return fmt.Errorf("download %s: got %d bytes of %d", from, n, info.Size)
	}
	if err := checkSum(info.ETag, sum); err != nil {
		return fmt.Errorf("download %s: %w", from, err)
	}
	if tmp != nil {
		if err := finishFile(tmp, local); err != nil {
			return fmt.Errorf("download %s: %w", from, err)
		}
	}
	cp.record(transfer{"download", from.String(), local, n, info.ETag}, n, elapsed)
	return nil
}

// finishFile makes the complete temporary file tmp the file local: the
// usual mode, on disk, then renamed.
func finishFile(tmp *os.File, local string) error {
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), local)
}

// copyRemote copies an object to another key of the same bucket, on the
// server.
func (cp *copier) copyRemote(ctx context.Context, src, dst string, recursive bool) error {
	from, err := parseS3Path(src)
	if err != nil {
		return err
	}
	to, err := parseS3Path(dst)
	if err != nil {
		return err
	}
	if recursive {
		return usageErr("a recursive copy between s3:// URLs is not supported yet")
	}
	if from.bucket != to.bucket {
		return usageErr("copies between buckets are not supported yet: download, then upload")
	}
	if from.key == "" || strings.HasSuffix(from.key, "/") {
		return usageErr("%s is a folder: name one object", from)
	}
	if to.key == "" || strings.HasSuffix(to.key, "/") {
		to.key += path.Base(from.key)
	}
	start := cp.now()
	o, err := cp.c.CopyObject(ctx, from.bucket, from.key, to.key)
	if err != nil {
		return explainObject(ctx, cp.c, err, from) // dest_key errors are about a key, not an object
	}
	cp.record(transfer{"copy", from.String(), to.String(), o.Size, o.ETag}, o.Size, cp.now().Sub(start))
	return nil
}
