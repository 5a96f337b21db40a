package s3api

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

func (s *Server) createUpload(w http.ResponseWriter, r *request) error {
	if err := validKey(r.key); err != nil {
		return err
	}
	if err := unkeptWriteHeaders(r.Header); err != nil {
		return err
	}
	o, err := s.putOptions(r.Header)
	if err != nil {
		return err
	}
	if o.Tags, err = requestTags(r); err != nil {
		return err
	}
	if o.Lock, err = lockHeaders(r); err != nil {
		return err
	}
	var keyMD5 string
	if o.Encrypt, keyMD5, err = s.writeEncryption(r); err != nil {
		return err
	}
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return errNoSuchBucket
	}
	if o.Owner, o.ACL, err = s.objectACL(r); err != nil {
		return err
	}
	if err := checkStorageClass(r.Header.Get("X-Amz-Storage-Class")); err != nil {
		return err
	}
	if o.ChecksumAlgorithm, o.ChecksumType, err = uploadChecksumSpec(r.Header); err != nil {
		return err
	}
	u, err := s.st.CreateUpload(r.Context(), r.account, r.bucket, r.key, o)
	if err != nil {
		return err
	}
	s.setEncryptionHeaders(w.Header(), u.Encryption, keyMD5)
	if u.ChecksumAlgorithm != "" {
		w.Header().Set("X-Amz-Checksum-Algorithm", strings.ToUpper(u.ChecksumAlgorithm))
		w.Header().Set("X-Amz-Checksum-Type", u.ChecksumType)
	}
	type result struct {
		XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
		Xmlns    string   `xml:"xmlns,attr"`
		Bucket   string
		Key      string
		UploadID string `xml:"UploadId"`
	}
	s.setAbortDate(w.Header(), r, u)
	writeXML(w, http.StatusOK, result{Xmlns: xmlns, Bucket: r.bucket, Key: r.key, UploadID: u.ID})
	return nil
}

// partNumber reads the partNumber of an UploadPart or UploadPartCopy.
func partNumber(q url.Values) (int, error) {
	n, err := strconv.Atoi(q.Get("partNumber"))
	if err != nil || n < 1 || n > cloudstore.MaxPartNumber {
		return 0, s3err(http.StatusBadRequest, "InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive")
	}
	return n, nil
}

func (s *Server) uploadPart(w http.ResponseWriter, r *request) error {
	q := r.URL.Query()
	n, err := partNumber(q)
	if err != nil {
		return err
	}
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return errNoSuchBucket
	}
	sum, err := uploadChecksum(r, "")
	if err != nil {
		return err
	}
	ck, keyMD5, err := customerKey(r, hSSEC)
	if err != nil {
		return err
	}
	body, err := s.uploadBody(r, cloudstore.MaxPartSize)
	if err != nil {
		return err
	}
	p, err := s.st.PutPart(r.Context(), r.account, r.bucket, r.key, q.Get("uploadId"), n, body,
		cloudstore.PartOptions{Now: s.opts.Now(), Checksum: sum, ChecksumAlgorithm: declaredChecksum(r), CustomerKey: ck})
	if err != nil {
		return bodyError(err)
	}
	s.setEncryptionHeaders(w.Header(), p.Encryption, keyMD5) // the upload's, as S3 answers
	w.Header().Set("ETag", `"`+p.ETag+`"`)
	setChecksumHeaders(w.Header(), p.Checksum)
	w.WriteHeader(http.StatusOK)
	return nil
}

var (
	errCopyRangeSyntax = s3err(http.StatusBadRequest, "InvalidArgument", "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy")
	errCopyTooLarge    = s3err(http.StatusBadRequest, "InvalidRequest", fmt.Sprintf("The specified copy source is larger than the maximum allowable size for a copy source: %d", int64(cloudstore.MaxPartSize)))
)

// copyRange parses x-amz-copy-source-range: unlike a GET's Range, only
// the explicit form bytes=first-last, first <= last.
func copyRange(v string) (first, last int64, err error) {
	spec, ok := strings.CutPrefix(strings.TrimSpace(v), "bytes=")
	a, b, found := strings.Cut(spec, "-")
	if !ok || !found || a == "" || b == "" || strings.ContainsAny(a+b, "+-") {
		return 0, 0, errCopyRangeSyntax
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || first > last {
		return 0, 0, errCopyRangeSyntax
	}
	return first, last, nil
}

// uploadPartCopy answers UploadPartCopy: part N of an upload made of an
// existing object, or of a byte range of it, that the requester may read
// (admitSource, sourceGate). The route checked the key's permission to
// read and write, and its scope over both buckets.
func (s *Server) uploadPartCopy(w http.ResponseWriter, r *request) error {
	q := r.URL.Query()
	n, err := partNumber(q)
	if err != nil {
		return err
	}
	srcBucket, srcKey, srcVersion, err := copySource(r)
	if err != nil {
		return err
	}
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return errNoSuchBucket
	}
	if _, err := s.st.Bucket(r.sourceAccount(), srcBucket); err != nil {
		return errNoSuchBucket
	}
	var source cloudstore.Object // as the copy read it
	ranged := r.Header.Get("X-Amz-Copy-Source-Range") != ""
	var first, last int64
	if ranged {
		if first, last, err = copyRange(r.Header.Get("X-Amz-Copy-Source-Range")); err != nil {
			return err
		}
	}
	gate, err := s.sourceGate(r)
	if err != nil {
		return err
	}
	check := sourceCheck(r, gate)
	span := func(src cloudstore.Object) (int64, int64, error) {
		if err := check(src); err != nil {
			return 0, 0, err // on the version copied, under its lock
		}
		source = src
		if err := checkConditions(r.Header, "X-Amz-Copy-Source-", `"`+src.ETag+`"`, src.LastModified); err != nil {
			return 0, 0, err
		}
		if !ranged {
			if src.Size > cloudstore.MaxPartSize {
				return 0, 0, errCopyTooLarge
			}
			return 0, src.Size, nil
		}
		if last >= src.Size {
			return 0, 0, s3err(http.StatusBadRequest, "InvalidArgument", fmt.Sprintf("Range specified is not valid for source object of size: %d", src.Size))
		}
		if last-first+1 > cloudstore.MaxPartSize {
			return 0, 0, errCopyTooLarge
		}
		return first, last - first + 1, nil
	}
	ps := cloudstore.PartSource{Bucket: srcBucket, Key: srcKey, Version: srcVersion, Account: r.sourceAccount()}
	if ps.CustomerKey, _, err = customerKey(r, hCopySSEC); err != nil {
		return err
	}
	var keyMD5 string
	if ps.TargetKey, keyMD5, err = customerKey(r, hSSEC); err != nil {
		return err
	}
	p, err := s.st.CopyPart(r.Context(), r.account, r.bucket, r.key, q.Get("uploadId"), n, ps, span, s.opts.Now())
	if errors.Is(err, cloudstore.ErrNoSuchUpload) {
		return err
	}
	if err != nil {
		return s.copySourceError(gate.lookupError(err), r.sourceAccount(), srcBucket, srcVersion)
	}
	setCopyVersionHeaders(w.Header(), source, srcVersion)
	s.setEncryptionHeaders(w.Header(), p.Encryption, keyMD5) // the upload's, whatever the source's
	writeCopyResult(w, "CopyPartResult", p.LastModified, p.ETag, p.Checksum)
	return nil
}

func (s *Server) completeUpload(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return errNoSuchBucket
	}
	data, err := readBody(r.body, 4<<20)
	if err != nil {
		return err
	}
	var req struct {
		Parts []struct {
			PartNumber int
			ETag       string
			checksumXML
		} `xml:"Part"`
	}
	if err := xml.Unmarshal(data, &req); err != nil {
		return errMalformedXML
	}
	list := make([]cloudstore.CompletedPart, len(req.Parts))
	for i, p := range req.Parts {
		list[i] = cloudstore.CompletedPart{Number: p.PartNumber, ETag: p.ETag}
		if list[i].Checksum, err = p.checksumXML.given(); err != nil {
			return err
		}
	}
	o := cloudstore.CompleteOptions{Now: s.opts.Now()}
	if o.If, err = writePreconditions(r.Header); err != nil {
		return err
	}
	id := r.URL.Query().Get("uploadId")
	if o.Checksum, err = completeChecksum(r.Header); err != nil {
		return err
	}
	if typ := r.Header.Get("X-Amz-Checksum-Type"); typ != "" || o.Checksum != nil {
		u, err := s.st.Upload(r.account, r.bucket, r.key, id)
		if err != nil {
			return err
		}
		if err := checkCompleteChecksum(u, typ, o.Checksum); err != nil {
			return err
		}
	}
	obj, err := s.st.CompleteUploadWith(r.Context(), r.account, r.bucket, r.key, id, list, o)
	if err != nil {
		return err
	}
	type result struct {
		XMLName  xml.Name `xml:"CompleteMultipartUploadResult"`
		Xmlns    string   `xml:"xmlns,attr"`
		Location string
		Bucket   string
		Key      string
		ETag     string
		checksumXML
	}
	res := result{Xmlns: xmlns, Location: objectURL(r), Bucket: r.bucket, Key: r.key, ETag: `"` + obj.ETag + `"`}
	setVersionHeader(w.Header(), obj)
	s.setEncryptionHeaders(w.Header(), obj.Encryption, "")
	s.setExpiration(w.Header(), r, obj)
	if c := objectChecksumXML(obj); c != nil {
		res.checksumXML = *c
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

// objectURL is the absolute URL of r's object, in the style (path or
// virtual-hosted) and with the scheme and host r came with.
func objectURL(r *request) string {
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	path := "/" + r.key
	if strings.HasPrefix(strings.TrimPrefix(r.URL.Path, "/"), r.bucket+"/") {
		path = "/" + r.bucket + path // path style
	}
	return (&url.URL{Scheme: scheme, Host: r.Host, Path: path}).String()
}

func (s *Server) abortUpload(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return errNoSuchBucket
	}
	if err := s.st.AbortUpload(r.account, r.bucket, r.key, r.URL.Query().Get("uploadId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func intParam(v string, def, limit int, name string) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, s3err(http.StatusBadRequest, "InvalidArgument", name+" must be a non-negative integer")
	}
	return min(n, limit), nil
}

func (s *Server) listParts(w http.ResponseWriter, r *request) error {
	q := r.URL.Query()
	maxParts, err := intParam(q.Get("max-parts"), 1000, 1000, "max-parts")
	if err != nil {
		return err
	}
	marker, err := intParam(q.Get("part-number-marker"), 0, cloudstore.MaxPartNumber, "part-number-marker")
	if err != nil {
		return err
	}
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return errNoSuchBucket
	}
	// The checksums kept are the plaintext's: of an SSE-C upload's parts,
	// they are shown only to a request giving its key (S3 asks for the
	// key when there are checksums); without one the parts are listed
	// without them.
	u, err := s.st.Upload(r.account, r.bucket, r.key, q.Get("uploadId"))
	if err != nil {
		return err
	}
	ck, _, err := customerKey(r, hSSEC)
	if err != nil {
		return err
	}
	sums := true
	if ck != nil || u.Encryption != nil && u.Encryption.Mode == cloudstore.SSEC {
		if err := s.st.CheckKey(r.Context(), cloudstore.Object{Encryption: u.Encryption}, ck); errors.Is(err, cloudstore.ErrKeyRequired) {
			sums = false
		} else if err != nil {
			return err
		}
	}
	parts, more, err := s.st.Parts(r.account, r.bucket, r.key, q.Get("uploadId"), marker, maxParts)
	if err != nil {
		return err
	}
	type part struct {
		PartNumber   int
		LastModified string
		ETag         string
		Size         int64
		checksumXML
	}
	type result struct {
		XMLName              xml.Name `xml:"ListPartsResult"`
		Xmlns                string   `xml:"xmlns,attr"`
		Bucket               string
		Key                  string
		UploadID             string `xml:"UploadId"`
		Initiator            owner
		Owner                owner
		StorageClass         string
		PartNumberMarker     int
		NextPartNumberMarker int
		MaxParts             int
		IsTruncated          bool
		Parts                []part `xml:"Part"`
		ChecksumAlgorithm    string `xml:",omitempty"`
		ChecksumType         string `xml:",omitempty"`
	}
	res := result{Xmlns: xmlns, Bucket: r.bucket, Key: r.key, UploadID: q.Get("uploadId"), Initiator: ownerOf(u.Writer()),
		Owner: ownerOf(u.Writer()), StorageClass: "STANDARD", PartNumberMarker: marker, MaxParts: maxParts, IsTruncated: more,
		ChecksumAlgorithm: strings.ToUpper(u.ChecksumAlgorithm), ChecksumType: u.ChecksumType}
	for _, p := range parts {
		var sum checksumXML
		if p.Checksum != nil && sums {
			sum = checksumOf(p.Checksum.Algorithm, p.Checksum.Value, "")
		}
		res.Parts = append(res.Parts, part{p.Number, s3Time(p.LastModified), `"` + p.ETag + `"`, p.Size, sum})
		res.NextPartNumberMarker = p.Number
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

func (s *Server) listUploads(w http.ResponseWriter, r *request) error {
	q := r.URL.Query()
	maxUploads, err := intParam(q.Get("max-uploads"), 1000, 1000, "max-uploads")
	if err != nil {
		return err
	}
	p := listParams{prefix: q.Get("prefix"), delimiter: q.Get("delimiter"), encoding: q.Get("encoding-type")}
	if p.encoding != "" && p.encoding != "url" {
		return s3err(http.StatusBadRequest, "InvalidArgument", "Invalid Encoding Method specified in Request")
	}
	l, err := s.st.Uploads(r.account, r.bucket, p.prefix, p.delimiter, q.Get("key-marker"), q.Get("upload-id-marker"), maxUploads)
	if err != nil {
		return err
	}
	type upload struct {
		Key          string
		UploadID     string `xml:"UploadId"`
		Initiator    owner
		Owner        owner
		StorageClass string
		Initiated    string
	}
	type result struct {
		XMLName            xml.Name `xml:"ListMultipartUploadsResult"`
		Xmlns              string   `xml:"xmlns,attr"`
		Bucket             string
		KeyMarker          string
		UploadIDMarker     string `xml:"UploadIdMarker"`
		NextKeyMarker      string
		NextUploadIDMarker string `xml:"NextUploadIdMarker"`
		Prefix             string
		Delimiter          string `xml:",omitempty"`
		MaxUploads         int
		IsTruncated        bool
		Uploads            []upload `xml:"Upload"`
		CommonPrefixes     []commonPrefix
		EncodingType       string `xml:",omitempty"`
	}
	res := result{Xmlns: xmlns, Bucket: r.bucket, KeyMarker: p.name(q.Get("key-marker")), UploadIDMarker: q.Get("upload-id-marker"),
		NextKeyMarker: p.name(l.NextKeyMarker), NextUploadIDMarker: l.NextIDMarker, Prefix: p.name(p.prefix), Delimiter: p.name(p.delimiter),
		MaxUploads: maxUploads, IsTruncated: l.Truncated, EncodingType: p.encoding}
	for _, u := range l.Uploads {
		res.Uploads = append(res.Uploads, upload{p.name(u.Key), u.ID, ownerOf(u.Writer()), ownerOf(u.Writer()), "STANDARD", s3Time(u.Initiated)})
	}
	for _, cp := range l.Prefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{p.name(cp)})
	}
	writeXML(w, http.StatusOK, res)
	return nil
}
