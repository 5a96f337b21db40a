package cli

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// runS3Sync is `lattice s3 sync`, in the words of `aws s3 sync`: a folder
// and a prefix made alike, one way, sending only what differs.
func runS3Sync(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "sync SRC DST [--delete] [--dry-run]", `
Makes DST hold what SRC holds, one way: a local folder to an s3://BUCKET/
[PREFIX], or a prefix to a local folder. A file is sent when DST lacks it,
when the sizes differ, or when the object's ETag is an MD5 that is not the
file's. --delete also removes what DST holds and SRC does not. --dry-run
prints what would be done and does nothing.`, `  lattice s3 sync ./site s3://www/
  lattice s3 sync ./site s3://www/ --delete --dry-run
  lattice s3 sync s3://backups/2026/ ./restore
`)
	del := f.Bool("delete", false, "remove from DST what SRC does not hold")
	dry := f.Bool("dry-run", false, "print what would be done, do nothing")
	noProgress := f.Bool("no-progress", false, "draw no progress bars")
	parallel := parallelFlag(f)
	if err := f.parseN(args, 2, "SRC and DST: a local folder and an s3://BUCKET/[PREFIX] URL, either way"); err != nil {
		return err
	}
	src, dst := f.Arg(0), f.Arg(1)
	if isS3URL(src) == isS3URL(dst) {
		return usageErr("one of SRC and DST must be a local folder and the other an s3://BUCKET/[PREFIX] URL")
	}
	if *parallel < 1 || *parallel > 32 {
		return usageErr("--parallel must be 1 to 32")
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	cp := &copier{e: e, c: c, draw: *parallel == 1 && !*noProgress && isTerminal(e.stderr), quiet: *f.json, now: time.Now, parallel: *parallel}
	cp.started = cp.now()
	local, remote := src, dst
	if isS3URL(src) {
		local, remote = dst, src
	}
	p, err := parseS3Path(remote)
	if err != nil {
		return err
	}
	p.key = dirPrefix(p.key)
	objs, err := allObjects(ctx, c, p)
	if err != nil {
		return explain(err, p)
	}
	remoteFiles := map[string]syncEntry{} // by path relative to the prefix
	for _, o := range objs {
		rel := strings.TrimPrefix(o.Key, p.key)
		if rel == "" || strings.HasSuffix(rel, "/") {
			continue // a folder marker
		}
		remoteFiles[rel] = syncEntry{size: o.Size, etag: o.ETag}
	}
	localFiles := map[string]syncEntry{}
	if st, err := os.Stat(local); err == nil && !st.IsDir() {
		return usageErr("%s is a file: sync takes a folder", local)
	} else if err == nil {
		err = filepath.WalkDir(local, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(local, path)
			if err != nil {
				return err
			}
			localFiles[filepath.ToSlash(rel)] = syncEntry{size: info.Size(), path: path}
			return nil
		})
		if err != nil {
			return err
		}
	} else if isS3URL(src) {
		// Downloading into a folder that does not exist yet: it will.
	} else {
		return err
	}
	from, to := localFiles, remoteFiles
	if isS3URL(src) {
		from, to = remoteFiles, localFiles
	}
	var send, remove []string
	for rel, a := range from {
		b, ok := to[rel]
		if !ok || a.size != b.size || differs(a, b) {
			send = append(send, rel)
		}
	}
	if *del {
		for rel := range to {
			if _, ok := from[rel]; !ok {
				remove = append(remove, rel)
			}
		}
	}
	sort.Strings(send)
	sort.Strings(remove)
	if *dry {
		if !*f.json {
			for _, rel := range send {
				fmt.Fprintf(e.stdout, "(dry run) %s %s\n", map[bool]string{true: "download", false: "upload"}[isS3URL(src)], rel)
			}
		}
	} else if err := cp.each(ctx, len(send), func(ctx context.Context, i int) error {
		rel := send[i]
		if isS3URL(src) {
			return cp.download(ctx, s3Path{p.bucket, p.key + rel}, filepath.Join(local, filepath.FromSlash(rel)))
		}
		return cp.uploadFile(ctx, localFiles[rel].path, s3Path{p.bucket, p.key + rel})
	}); err != nil {
		return err
	}
	for _, rel := range remove {
		switch {
		case *dry:
			if !*f.json {
				fmt.Fprintf(e.stdout, "(dry run) delete %s\n", rel)
			}
		case isS3URL(src):
			if err := os.Remove(filepath.Join(local, filepath.FromSlash(rel))); err != nil {
				return err
			}
			if !*f.json {
				fmt.Fprintf(e.stdout, "delete: %s\n", filepath.Join(local, filepath.FromSlash(rel)))
			}
		default:
			key := s3Path{p.bucket, p.key + rel}
			if err := c.DeleteObject(ctx, key.bucket, key.key); err != nil {
				return explain(err, key)
			}
			if !*f.json {
				fmt.Fprintf(e.stdout, "delete: %s\n", key)
			}
		}
	}
	if *f.json {
		return printJSON(e.stdout, map[string]any{"transfers": nonNil(cp.done), "deleted": nonNil(remove), "dry_run": *dry})
	}
	if len(send) == 0 && len(remove) == 0 {
		fmt.Fprintf(e.stdout, "%s and %s already hold the same files (%d)\n", src, dst, len(from))
	} else if !*dry {
		verb := "uploaded"
		if isS3URL(src) {
			verb = "downloaded"
		}
		fmt.Fprintf(e.stdout, "%d %s, %d deleted, %d already the same\n", len(send), verb, len(remove), len(from)-len(send))
	}
	return nil
}

// syncEntry is a file on one side of a sync.
type syncEntry struct {
	size int64
	etag string // the object's, remote side only
	path string // the file's, local side only
}

// differs reports whether a local file and an object of the same size
// differ: when the object's ETag is a plain MD5 (not a multipart one), by
// the file's MD5.
func differs(a, b syncEntry) bool {
	local, remote := a, b
	if a.path == "" {
		local, remote = b, a
	}
	if len(remote.etag) != 32 || local.path == "" {
		return false // a multipart ETag: size alone decides
	}
	f, err := os.Open(local.path)
	if err != nil {
		return true
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return true
	}
	return hex.EncodeToString(h.Sum(nil)) != strings.ToLower(remote.etag)
}
