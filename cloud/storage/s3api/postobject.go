package s3api

import (
	"encoding/xml"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3policy"
	"github.com/latticenet/lattice/cloud/storage/sigv2"
	"github.com/latticenet/lattice/cloud/storage/sigv4"
)

// POST Object: an HTML form uploads a file to POST /BUCKET as
// multipart/form-data. The form's fields come first (key, policy, its
// signature, Content-Type, x-amz-meta-*, ...), then the file; fields
// after the file are ignored. The signed policy authenticates the
// request and bounds what the form may hold.

// maxPreData bounds the bytes of a form before its file's data, as S3
// bounds its fields (20 KB of values), headers and boundaries included.
const maxPreData = 64 << 10

var (
	errMalformedPOST = s3err(http.StatusBadRequest, "MalformedPOSTRequest", "The body of your POST request is not well-formed multipart/form-data.")
	errPreData       = s3err(http.StatusBadRequest, "MaxPostPreDataLengthExceededError", "Your POST request fields preceding the upload file were too large.")
	errNoFile        = s3err(http.StatusBadRequest, "InvalidArgument", "POST requires exactly one file upload per request.")
	errNoKey         = s3err(http.StatusBadRequest, "InvalidArgument", "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.")
	errAnonymousPOST = s3err(http.StatusForbidden, "AccessDenied", "Access Denied: sign the form's policy with an S3 key, or have the bucket's policy allow everyone s3:PutObject of the key")
)

// isPostForm reports whether r is a form upload: POST with a
// multipart/form-data body.
func isPostForm(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return r.Method == http.MethodPost && err == nil && mt == "multipart/form-data"
}

// postForm is a form upload, read up to its file.
type postForm struct {
	fields   map[string]string // by lower-case name
	filename string            // the file's name, for ${filename}
	file     io.Reader         // the file's data, not yet read
}

// capped reads at most left bytes, then fails with errPreData; lifting
// the cap (left < 0) lets the rest through.
type capped struct {
	r    io.Reader
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left < 0 {
		return c.r.Read(p)
	}
	if c.left == 0 {
		return 0, errPreData
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// readPostForm reads a form's fields from body, whose Content-Type is
// contentType, up to the part named file, whose data it leaves unread.
func readPostForm(body io.Reader, contentType string) (*postForm, error) {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil || params["boundary"] == "" {
		return nil, errMalformedPOST
	}
	c := &capped{r: body, left: maxPreData}
	mr := multipart.NewReader(c, params["boundary"])
	f := &postForm{fields: map[string]string{}}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, errPreData) {
			return nil, errPreData
		}
		if err == io.EOF {
			return nil, errNoFile
		}
		if err != nil {
			return nil, errMalformedPOST
		}
		name := strings.ToLower(part.FormName())
		if name == "" {
			return nil, errMalformedPOST
		}
		if name == "file" {
			c.left = -1
			f.filename, f.file = part.FileName(), part
			return f, nil
		}
		v, err := io.ReadAll(part)
		if errors.Is(err, errPreData) {
			return nil, errPreData
		}
		if err != nil {
			return nil, errMalformedPOST
		}
		if _, dup := f.fields[name]; dup {
			return nil, s3err(http.StatusBadRequest, "InvalidArgument", "The form field "+name+" is given more than once.")
		}
		f.fields[name] = string(v)
	}
}

// verifyPost reads the form of a POST Object request and checks the
// signature of its policy, Version 4 (x-amz-signature) or 2 (signature).
// The policy's conditions are checked by postObject.
func (s *Server) verifyPost(req *request) (*sigv4.Auth, error) {
	form, err := readPostForm(req.Body, req.Header.Get("Content-Type"))
	if err != nil {
		return nil, err
	}
	req.form = form
	f := form.fields
	_, v4 := f["x-amz-signature"]
	_, v2 := f["signature"]
	req.v2 = v2 // for the access log
	switch {
	case v4 && v2:
		return nil, errOneAuth
	case !v4 && !v2:
		return nil, errAnonymousPOST
	case f["policy"] == "":
		return nil, s3err(http.StatusBadRequest, "InvalidArgument", "Bucket POST must contain a field named 'policy' when it is signed.")
	case v4:
		if f["x-amz-algorithm"] != "AWS4-HMAC-SHA256" {
			return nil, s3err(http.StatusBadRequest, "InvalidArgument", "x-amz-algorithm must be AWS4-HMAC-SHA256.")
		}
		return sigv4.VerifyPolicy(f["policy"], f["x-amz-credential"], f["x-amz-date"], f["x-amz-signature"], s.lookup)
	}
	if f["awsaccesskeyid"] == "" {
		return nil, s3err(http.StatusBadRequest, "InvalidArgument", "Bucket POST signed with Signature Version 2 must contain a field named 'AWSAccessKeyId'.")
	}
	a, err := sigv2.VerifyPolicy(f["policy"], f["awsaccesskeyid"], f["signature"], s.lookup)
	if err != nil {
		return nil, err
	}
	return &sigv4.Auth{AccessKeyID: a.AccessKeyID, Region: s.opts.Region, PayloadHash: sigv4.UnsignedPayload}, nil
}

// postKey is the key a form names (its ${filename} replaced).
func postKey(form *postForm) (string, error) {
	key, ok := form.fields["key"]
	if !ok {
		return "", errNoKey
	}
	if key = strings.ReplaceAll(key, "${filename}", form.filename); key == "" {
		return "", errNoKey
	}
	return key, nil
}

// authorizeAnonymousPost admits a form with no signature when the
// bucket's policy allows everyone s3:PutObject of the key it names (and
// denies nothing), as S3 does.
func (s *Server) authorizeAnonymousPost(req *request, o operation) error {
	key, err := postKey(req.form)
	if err != nil {
		return err
	}
	bk, p, err := s.bucketPolicy(req.bucket)
	if err != nil || p == nil {
		return errAnonymousPOST
	}
	bpa, err := s.publicAccess(req.bucket)
	if err != nil {
		return errAnonymousPOST
	}
	actions := []string{"s3:PutObject"}
	if _, ok := req.form.fields["tagging"]; ok {
		actions = append(actions, "s3:PutObjectTagging") // the tags it sets, as S3 asks
	}
	actions = append(actions, lockActions(req, o)...) // and the lock it asks for
	for _, a := range actions {
		pr := policyRequest(req, a, s3policy.Resource(req.bucket, key))
		if addRequestTags(&pr, p, req) != nil || anonymousDecision(p, pr, bpa) != s3policy.Allowed {
			return errAnonymousPOST
		}
	}
	req.account = bk.Account
	req.body, req.size = req.form.file, -1
	return nil
}

// sizeChecked passes a form's file through, failing it (rather than
// ending it) when it is outside the policy's content-length-range.
type sizeChecked struct {
	r        io.Reader
	n        int64
	min, max int64 // max -1 for no bound
}

func (s *sizeChecked) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	if s.max >= 0 && s.n > s.max {
		return n, s3err(http.StatusBadRequest, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size (the policy's content-length-range).")
	}
	if err == io.EOF && s.n < s.min {
		return n, s3err(http.StatusBadRequest, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size (the policy's content-length-range).")
	}
	return n, err
}

// postObject stores the file of a form upload whose policy holds.
func (s *Server) postObject(w http.ResponseWriter, r *request) error {
	f := r.form.fields
	// An anonymous form, admitted by the bucket's policy, may have no
	// policy of its own; one it has is held to, as a signed one is.
	p, err := &postPolicy{maxSize: -1}, error(nil)
	if r.auth != nil || f["policy"] != "" {
		if p, err = parsePostPolicy(f["policy"]); err != nil {
			return err
		}
		if err := p.check(f, r.bucket, s.opts.Now()); err != nil {
			return err
		}
	}
	key, err := postKey(r.form)
	if err != nil {
		return err
	}
	if err := validKey(key); err != nil {
		return err
	}
	r.key = key
	// Encryption comes from the form's fields, which the policy covers,
	// never from the request's own headers, which it does not.
	for name := range r.Header {
		if l := strings.ToLower(name); strings.HasPrefix(l, "x-amz-server-side-encryption") || l == "x-amz-acl" || strings.HasPrefix(l, "x-amz-grant-") {
			r.Header.Del(name)
		}
	}
	h := http.Header{}
	for name, v := range f {
		switch {
		case strings.HasPrefix(name, "x-amz-server-side-encryption"):
			// Read below as a PUT's headers would be (writeEncryption).
			r.Header.Set(name, v)
		case strings.HasPrefix(name, "x-amz-checksum-"):
			return s3err(http.StatusNotImplemented, "NotImplemented", "The form field "+name+" is not supported by this endpoint; send the form without it.")
		case strings.HasPrefix(name, "x-amz-object-lock-"):
			// Read below (lockHeaders reads a form's fields, never the
			// request's headers, which its policy does not cover).
		case name == "acl":
			r.Header.Set("X-Amz-Acl", v) // read below as a PUT's x-amz-acl would be (objectACL)
		case name == "x-amz-storage-class":
			if err := checkStorageClass(v); err != nil {
				return err
			}
		case name == "content-type" || strings.HasPrefix(name, "x-amz-meta-") || name == "x-amz-website-redirect-location":
			h.Set(name, v)
		default:
			for _, stored := range storedHeaders {
				if strings.EqualFold(name, stored) {
					h.Set(name, v)
				}
			}
		}
	}
	o, err := s.putOptions(h)
	if err != nil {
		return err
	}
	if o.Owner, o.ACL, err = s.objectACL(r); err != nil {
		return err
	}
	if o.Lock, err = lockHeaders(r); err != nil {
		return err
	}
	if v, ok := f["tagging"]; ok {
		if o.Tags, err = parseTagging([]byte(v), cloudstore.MaxObjectTags); err != nil {
			return err
		}
	}
	o.Max = s.opts.MaxObjectSize
	var keyMD5 string
	if o.Encrypt, keyMD5, err = s.writeEncryption(r); err != nil {
		return err
	}
	obj, err := s.st.Put(r.Context(), r.account, r.bucket, key, &sizeChecked{r: r.body, min: p.minSize, max: p.maxSize}, o)
	if errors.Is(err, cloudstore.ErrNotFound) {
		return errNoSuchBucket
	}
	if err != nil {
		return bodyError(err)
	}
	etag := `"` + obj.ETag + `"`
	w.Header().Set("ETag", etag)
	s.setEncryptionHeaders(w.Header(), obj.Encryption, keyMD5)
	w.Header().Set("Location", postLocation(r, key))
	redirect, ok := f["success_action_redirect"]
	if !ok {
		redirect = f["redirect"]
	}
	if u, err := url.Parse(redirect); redirect != "" && err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		q := u.Query()
		q.Set("bucket", r.bucket)
		q.Set("key", key)
		q.Set("etag", etag)
		u.RawQuery = q.Encode()
		w.Header().Set("Location", u.String())
		w.WriteHeader(http.StatusSeeOther)
		return nil
	}
	switch f["success_action_status"] {
	case "200":
		w.WriteHeader(http.StatusOK)
	case "201":
		type result struct {
			XMLName  xml.Name `xml:"PostResponse"`
			Location string
			Bucket   string
			Key      string
			ETag     string
		}
		writeXML(w, http.StatusCreated, result{Location: postLocation(r, key), Bucket: r.bucket, Key: key, ETag: etag})
	default:
		// S3's default, also for a value it does not know.
		w.WriteHeader(http.StatusNoContent)
	}
	return nil
}

// postLocation is the absolute URL of a form upload's object.
func postLocation(r *request, key string) string {
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	path := "/" + key
	if !r.vhost {
		path = "/" + r.bucket + path
	}
	return (&url.URL{Scheme: scheme, Host: r.Host, Path: path}).String()
}
