package cloudapi

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// MaxZipKeys bounds a ZIP download (the API description's limit).
const MaxZipKeys = 100

// downloadZip answers POST .../download-zip {keys} with a ZIP archive of
// the objects, streamed as it is made. Every object is opened before the
// first byte is sent, so a missing key is a 404, and an object deleted
// meanwhile is still archived whole.
func (s *Server) downloadZip(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	var req struct {
		Keys []string `json:"keys"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if len(req.Keys) == 0 || len(req.Keys) > MaxZipKeys {
		return validation("keys must list 1 to %d object keys, got %d", MaxZipKeys, len(req.Keys))
	}
	seen := make(map[string]bool, len(req.Keys))
	for i, k := range req.Keys {
		if err := zipName(k); err != nil {
			return validation("keys[%d]: %v", i, err)
		}
		if seen[k] {
			return validation("keys[%d]: %q is listed twice", i, k)
		}
		seen[k] = true
	}
	bk, err := s.st.Bucket(key.Account, bucket)
	if err != nil {
		return bucketErr(err)
	}
	s.extendDeadlines(w)
	objs := make([]cloudstore.Object, 0, len(req.Keys))
	bodies := make([]cloudstore.Body, 0, len(req.Keys))
	defer func() {
		for _, b := range bodies {
			b.Close()
		}
	}()
	for _, k := range req.Keys {
		obj, body, err := s.st.OpenObject(r.Context(), key.Account, bucket, k)
		if errors.Is(err, cloudstore.ErrNotFound) {
			return notFound(fmt.Sprintf("object %q", k))
		} else if err != nil {
			return err
		}
		bodies = append(bodies, body)
		if !cloudstore.OwnerMayRead(bk, obj) {
			return fmt.Errorf("object %q: %w", k, cloudstore.ErrNotGranted)
		}
		objs = append(objs, obj)
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+bucket+`.zip"`) // bucket names need no escaping
	w.WriteHeader(http.StatusOK)
	zw := zip.NewWriter(w)
	for i, obj := range objs {
		h := &zip.FileHeader{Name: obj.Key, Method: zipMethod(obj.ContentType), Modified: obj.LastModified}
		if strings.HasSuffix(obj.Key, "/") {
			h.Method = zip.Store // a folder: a directory entry
		}
		fw, err := zw.CreateHeader(h)
		if err == nil && !strings.HasSuffix(obj.Key, "/") {
			_, err = io.Copy(fw, bodies[i])
		}
		if err != nil {
			// The status is sent: cut the connection, so the client sees
			// a broken transfer rather than a short archive.
			s.opts.Logger.Warn("zip download cut off", "request_id", w.Header().Get("X-Request-Id"), "bucket", bucket, "key", obj.Key, "err", err)
			panic(http.ErrAbortHandler)
		}
	}
	if err := zw.Close(); err != nil {
		panic(http.ErrAbortHandler)
	}
	return nil
}

// zipName checks that a key may name an archive entry: a key the REST API
// can address (no leading "/", no empty, "." or ".." segment), without a
// backslash (a folder separator on Windows) or a colon (C:/x is absolute
// there, C:x relative to another folder), and without a segment Windows
// reserves for devices (CON, NUL, COM1, ...). No entry can then land
// outside the folder it is extracted to, on any system.
func zipName(key string) error {
	if err := cloudwire.ValidRESTKey(key); err != nil {
		return err
	}
	if strings.ContainsAny(key, `\:`) {
		return fmt.Errorf("object key %q holds a backslash or a colon, which ZIP extractors on Windows read as a path outside the folder", key)
	}
	for _, seg := range strings.Split(key, "/") {
		if reservedOnWindows(seg) {
			return fmt.Errorf("object key %q has the segment %q, a device name on Windows", key, seg)
		}
	}
	return nil
}

// reservedOnWindows reports whether a file name is a Windows device name,
// with or without an extension.
func reservedOnWindows(name string) bool {
	base, _, _ := strings.Cut(strings.ToUpper(name), ".")
	base = strings.TrimRight(base, " ")
	switch base {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) && base[3] >= '1' && base[3] <= '9' {
		return true
	}
	return false
}

// zipMethod compresses types that compress well (text, JSON, XML,
// JavaScript, SVG) and stores the rest as they are: images, video,
// archives and most binaries are compressed already, and deflating them
// would cost CPU for nothing.
func zipMethod(contentType string) uint16 {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", mt == "application/xml", mt == "application/javascript",
		mt == "image/svg+xml", strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return zip.Deflate
	}
	return zip.Store
}
