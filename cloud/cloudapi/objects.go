package cloudapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

// MaxObjectSize bounds an object uploaded through the REST API.
const MaxObjectSize = 5 << 30

func objectJSON(o cloudstore.Object) cloudwire.ObjectInfo {
	return cloudwire.ObjectInfo{Key: o.Key, Size: o.Size, ETag: o.ETag, ContentType: o.ContentType,
		LastModified: o.LastModified.Format(time.RFC3339Nano)}
}

// objectErr maps the store's object errors that apiError does not know.
func objectErr(err error) error {
	switch {
	case errors.Is(err, cloudstore.ErrTooLarge):
		return &Error{http.StatusRequestEntityTooLarge, "payload_too_large", fmt.Sprintf("an object may hold at most %d bytes", int64(MaxObjectSize)), 0}
	case errors.Is(err, storagenames.ErrInvalidKey):
		return validation("%v", err)
	}
	return err
}

// upload answers POST .../upload: a multipart form of "file" parts (an
// optional "key" field names the object of a single file; an optional
// "prefix" field is put before every file name), or a raw body whose key
// is the "key" query parameter. Fields must come before the files.
func (s *Server) upload(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	if err := declaredSize(r, MaxObjectSize+1<<20); err != nil {
		return err
	}
	s.extendDeadlines(w)
	if _, err := s.st.Bucket(key.Account, bucket); err != nil {
		return bucketErr(err)
	}
	body := http.MaxBytesReader(w, r.Body, MaxObjectSize+1<<20)
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var stored []cloudwire.ObjectInfo
	put := func(objKey, ctype string, rd io.Reader) error {
		o, err := s.storeObject(r, key.Account, bucket, objKey, ctype, rd)
		if err != nil {
			return err
		}
		stored = append(stored, o)
		return nil
	}
	if mt == "multipart/form-data" {
		r.Body = body // bound the whole form, not only each part
		mr, err := r.MultipartReader()
		if err != nil {
			return formErr(err)
		}
		var name, prefix string
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return formErr(err)
			}
			switch p.FormName() {
			case "key", "prefix":
				v, err := io.ReadAll(io.LimitReader(p, cloudstore.MaxKeyLen+1))
				if err != nil {
					return formErr(err)
				}
				if p.FormName() == "key" {
					name = string(v)
				} else {
					prefix = string(v)
				}
			case "file":
				objKey := prefix + path.Base(p.FileName())
				if name != "" {
					if len(stored) > 0 {
						return validation("the key field names one file; this form holds more (the first was stored as %q)", stored[0].Key)
					}
					objKey = name
				}
				if p.FileName() == "" && name == "" {
					return validation("a file part needs a file name, or a key field")
				}
				if err := put(objKey, p.Header.Get("Content-Type"), p); err != nil {
					return err
				}
			default:
				return validation("unexpected form field %q: want key, prefix and file", p.FormName())
			}
		}
		if len(stored) == 0 {
			return validation("the form holds no file part")
		}
	} else {
		objKey := r.URL.Query().Get("key")
		if objKey == "" {
			return validation("a raw upload needs the key query parameter (or send a multipart form)")
		}
		if err := put(objKey, r.Header.Get("Content-Type"), body); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusCreated, map[string][]cloudwire.ObjectInfo{"objects": stored})
	return nil
}

// storeObject stores rd as objKey, of type ctype (octet-stream if "").
func (s *Server) storeObject(r *http.Request, account, bucket, objKey, ctype string, rd io.Reader) (cloudwire.ObjectInfo, error) {
	if err := cloudwire.ValidRESTKey(objKey); err != nil {
		return cloudwire.ObjectInfo{}, validation("%v", err)
	}
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	o, err := s.st.Put(r.Context(), account, bucket, objKey, rd, cloudstore.PutOptions{ContentType: ctype, Max: MaxObjectSize, Now: s.opts.Now()})
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return cloudwire.ObjectInfo{}, objectErr(cloudstore.ErrTooLarge)
		case isTimeout(err):
			return cloudwire.ObjectInfo{}, errBodyTimeout
		case errors.Is(err, cloudstore.ErrBody):
			return cloudwire.ObjectInfo{}, errBodyCut
		}
		return cloudwire.ObjectInfo{}, objectErr(bucketErr(err))
	}
	return objectJSON(o), nil
}

// putObject answers PUT .../objects/{key...}: the raw body is the object,
// its type the Content-Type. An extension of the API description, and
// where presigned upload URLs point.
func (s *Server) putObject(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	if err := callerOf(r).allowed(r, r.PathValue("name"), r.PathValue("key")); err != nil {
		return err
	}
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	if err := declaredSize(r, MaxObjectSize); err != nil {
		return err
	}
	s.extendDeadlines(w)
	o, err := s.storeObject(r, key.Account, bucket, r.PathValue("key"), r.Header.Get("Content-Type"), http.MaxBytesReader(w, r.Body, MaxObjectSize+1))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, o)
	return nil
}

func callerOf(r *http.Request) caller {
	c, _ := r.Context().Value(ctxKey{}).(caller)
	return c
}

// extendDeadlines lets a transfer run for TransferTimeout: the server's
// read and write timeouts are sized for ordinary requests.
//
// Writing may go on for answerGrace after reading must stop, so that a
// body that ran out of time is still told so (408), not cut off.
func (s *Server) extendDeadlines(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(s.opts.TransferTimeout)
	rc.SetReadDeadline(deadline)
	rc.SetWriteDeadline(deadline.Add(answerGrace))
}

// answerGrace is how long past a transfer's read deadline its answer may
// take to write.
const answerGrace = 10 * time.Second

// download answers GET .../download/{key...} with the body, honouring
// Range and the conditional headers (http.ServeContent). A public bucket's
// objects download for every caller, with an API key of any account or
// with none; without a key, a private or missing bucket is 401 alike.
func (s *Server) download(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	c, objKey := callerOf(r), r.PathValue("key")
	if err := c.allowed(r, r.PathValue("name"), objKey); err != nil {
		return err
	}
	if q := r.URL.Query(); q.Has("version_id") {
		return s.downloadVersion(w, r, c, q.Get("version_id"))
	}
	bucket, err := bucketName(r)
	if err != nil {
		if c.anonymous {
			return errUnauthorized
		}
		return err
	}
	account := key.Account
	// public is the bucket when the object is read through its public
	// toggle: anonymously, or by another account's key.
	var public *cloudstore.Bucket
	if c.anonymous {
		bk, err := s.st.PublicBucket(bucket)
		if errors.Is(err, cloudstore.ErrNotFound) {
			return errUnauthorized
		} else if err != nil {
			return err
		}
		account, public = bk.Account, &bk
	}
	s.extendDeadlines(w)
	obj, body, err := s.st.OpenObject(r.Context(), account, bucket, objKey)
	if errors.Is(err, cloudstore.ErrNotFound) && c.token == nil && !c.anonymous {
		if bk, perr := s.st.PublicBucket(bucket); perr == nil && bk.Account != account {
			public = &bk
			obj, body, err = s.st.OpenObject(r.Context(), bk.Account, bucket, objKey)
		}
	}
	if public != nil && errors.Is(err, cloudstore.ErrKMSAccess) {
		return kmsNotPublic(c.anonymous)
	}
	if err != nil {
		if apiError(err).Code == "not_found" {
			return notFound("object")
		}
		return err
	}
	defer body.Close()
	if public != nil && !cloudstore.ServedPublicly(*public, obj) {
		return notPublic(c.anonymous, obj)
	}
	if public == nil {
		if err := s.ownerReads(account, bucket, obj); err != nil {
			return err
		}
	}
	serveObject(w, r, obj, body)
	return nil
}

// ownerReads refuses obj of account's bucket when another account owns it
// and has not granted account READ (cloudstore.OwnerMayRead): the bucket's
// owner reads such an object nowhere, as at the S3 endpoint.
func (s *Server) ownerReads(account, bucket string, obj cloudstore.Object) error {
	if obj.Owner == "" || obj.Owner == account {
		return nil
	}
	bk, err := s.st.Bucket(account, bucket)
	if err != nil {
		return err
	}
	if !cloudstore.OwnerMayRead(bk, obj) {
		return cloudstore.ErrNotGranted
	}
	return nil
}

// notPublic is the refusal of an object that a public bucket's toggle
// does not serve (cloudstore.ServedPublicly): to an anonymous caller, as
// a private bucket's (401); to another account's key, as a missing
// object (404), the bucket not being its own.
func notPublic(anonymous bool, obj cloudstore.Object) error {
	switch {
	case obj.Encryption.UsesKMS():
		return kmsNotPublic(anonymous)
	case anonymous:
		return errUnauthorized
	}
	return notFound("object")
}

// kmsNotPublic is the refusal of a public bucket's SSE-KMS object to
// anyone but its owner: the store opens such an object only for its key's
// own account (cloudstore.KMSRequester), and the toggle never serves it.
func kmsNotPublic(anonymous bool) error {
	if anonymous {
		// As at the S3 endpoint: the key service's keys open data for
		// those who sign as the bucket's owner, never for everyone a
		// public bucket serves.
		return &Error{http.StatusUnauthorized, "unauthorized", "this object is encrypted with a key of the key service (SSE-KMS), " +
			"which an anonymous download never opens, the bucket being public or not: send Authorization: Bearer lat_live_...", 0}
	}
	return &Error{http.StatusForbidden, "forbidden", "this object of another account's public bucket is encrypted with a key of " +
		"the key service (SSE-KMS), which only its owner's keys open", 0}
}

// serveObject answers a download with obj's body.
func serveObject(w http.ResponseWriter, r *http.Request, obj cloudstore.Object, body cloudstore.Body) {
	w.Header().Set("ETag", `"`+obj.ETag+`"`)
	ctype := obj.ContentType
	if _, _, err := mime.ParseMediaType(ctype); err != nil {
		// A stored type that is no media type is not sent as one (an
		// invalid header); userContent makes the body an attachment.
		ctype = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ctype)
	userContent(w.Header(), obj.ContentType, obj.Key)
	http.ServeContent(w, r, "", obj.LastModified, body)
}

// userContent sets the headers of a body someone uploaded: browsers must
// take its Content-Type as it is (nosniff), and a type a browser would
// run (HTML, SVG, XML, JavaScript) is served as an attachment, so that a
// public bucket or a shared link cannot run a page with this origin's
// cookies and credentials.
func userContent(h http.Header, contentType, key string) {
	h.Set("X-Content-Type-Options", "nosniff")
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || activeType(mt) {
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(key)}))
	}
}

// activeType reports whether a browser would run content of media type
// mt rather than only show it.
func activeType(mt string) bool {
	switch mt {
	case "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml",
		"text/javascript", "application/javascript", "application/ecmascript", "text/ecmascript",
		"application/x-shockwave-flash", "application/pdf", "text/xsl", "multipart/x-mixed-replace":
		return true
	}
	return strings.HasSuffix(mt, "+xml")
}

// The REST API's answers to an upload body that could not be read.
var (
	errBodyTimeout = &Error{http.StatusRequestTimeout, "request_timeout", "the upload body did not arrive in time: the connection stalled, or the transfer took longer than its time limit", 0}
	errBodyCut     = &Error{http.StatusBadRequest, "validation_error", "the upload body could not be read to its end: the form or the connection was cut short", 0}
)

// isTimeout reports whether err is a read that ran out of time.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// formErr answers a failure to read a multipart form: a timeout or a cut
// connection as a body failure, never with the socket's addresses in the
// message; a malformed form as what it is.
func formErr(err error) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return objectErr(cloudstore.ErrTooLarge)
	case isTimeout(err):
		return errBodyTimeout
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errBodyCut
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return errBodyCut
	}
	return validation("malformed multipart form: %v", err)
}

// declaredSize refuses at once an upload whose Content-Length says it is
// larger than limit: the client learns it before it sends the body.
func declaredSize(r *http.Request, limit int64) error {
	if r.ContentLength > limit {
		return &Error{http.StatusRequestEntityTooLarge, "payload_too_large",
			fmt.Sprintf("the body declares %d bytes (Content-Length); an upload may carry at most %d", r.ContentLength, limit), 0}
	}
	return nil
}

// deleteObject answers DELETE .../objects/{key...}: in a bucket that keeps
// versions, the store makes a delete marker (also for a key with no
// current version, as S3 does); with version_id, that version goes.
func (s *Server) deleteObject(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	if q := r.URL.Query(); q.Has("version_id") {
		return s.deleteVersion(w, r, key.Account, bucket, q.Get("version_id"))
	}
	if _, err := s.st.Delete(key.Account, bucket, r.PathValue("key"), cloudstore.DeleteOptions{}); err != nil {
		if apiError(err).Code == "not_found" {
			return notFound("object")
		}
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) copyObject(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	var req struct {
		SourceKey string `json:"source_key"`
		DestKey   string `json:"dest_key"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	// The source is any key the bucket holds, S3's too (which the REST
	// API would not make, "a//b" say): only its absence is refused here.
	if req.SourceKey == "" {
		return validation("source_key is required")
	}
	if err := cloudwire.ValidRESTKey(req.DestKey); err != nil {
		return validation("dest_key: %v", err)
	}
	bk, err := s.st.Bucket(key.Account, bucket)
	if err != nil {
		return bucketErr(err)
	}
	// The copy is the bucket owner's: its source must be one the owner
	// may read.
	readable := func(obj cloudstore.Object) error {
		if !cloudstore.OwnerMayRead(bk, obj) {
			return cloudstore.ErrNotGranted
		}
		return nil
	}
	o, err := s.st.Copy(r.Context(), key.Account, bucket, req.SourceKey, bucket, req.DestKey, s.opts.Now(), cloudstore.CopyOptions{KeepEncryption: true, CheckSource: readable})
	if err != nil {
		if apiError(err).Code == "not_found" {
			return notFound("object")
		}
		return err
	}
	writeJSON(w, http.StatusCreated, objectJSON(o))
	return nil
}

// folder answers POST .../folders: a folder is an empty object whose key
// ends with "/".
func (s *Server) folder(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	var req struct {
		Path string `json:"path"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	p := strings.Trim(req.Path, "/")
	if p == "" {
		return validation("path is required")
	}
	if err := cloudwire.ValidRESTKey(p + "/"); err != nil {
		return validation("path: %v", err)
	}
	o, err := s.st.Put(r.Context(), key.Account, bucket, p+"/", strings.NewReader(""), cloudstore.PutOptions{ContentType: "application/x-directory", Now: s.opts.Now()})
	if err != nil {
		return objectErr(bucketErr(err))
	}
	writeJSON(w, http.StatusCreated, objectJSON(o))
	return nil
}

// listObjects answers GET .../objects?prefix&delimiter&marker with pages of
// per_page entries (objects and common prefixes). meta.total counts every
// entry after marker, so each listing walks their keys, though it decodes
// and keeps only the page; a per-prefix count would make large buckets
// cheap (not built yet).
func (s *Server) listObjects(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	page, err := intParam(r, "page", 1, 1, 1<<20)
	if err != nil {
		return err
	}
	per, err := intParam(r, "per_page", cloudwire.DefaultPerPage, 1, cloudwire.MaxPerPage)
	if err != nil {
		return err
	}
	prefix, delim, marker := q.Get("prefix"), q.Get("delimiter"), q.Get("marker")
	// Only the page is read into memory; the rest is counted for the total.
	l, total, err := s.st.ListPage(key.Account, bucket, prefix, delim, marker, (page-1)*per, per)
	if err != nil {
		return bucketErr(err)
	}
	out := cloudwire.ObjectList{Data: []cloudwire.ObjectInfo{}, Prefixes: []string{}, NextMarker: l.NextMarker, Meta: cloudwire.Meta{Total: total, Page: page, PerPage: per}}
	for _, o := range l.Objects {
		out.Data = append(out.Data, objectJSON(o))
	}
	out.Prefixes = append(out.Prefixes, l.Prefixes...)
	writeJSON(w, http.StatusOK, out)
	return nil
}
