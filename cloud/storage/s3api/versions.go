package s3api

import (
	"encoding/xml"
	"errors"
	"net/http"
	"net/url"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

var (
	errInvalidVersion = s3err(http.StatusBadRequest, "InvalidArgument", "Invalid version id specified")
	errNoSuchVersion  = s3err(http.StatusNotFound, "NoSuchVersion", "The specified version does not exist.")
)

// versionRoute returns the operation of a request for ?versioning on a
// bucket, if r is one.
func versionRoute(r *request, q url.Values) (operation, bool) {
	if r.key != "" || !q.Has("versioning") {
		return operation{}, false
	}
	switch r.Method {
	case http.MethodGet:
		return operation{name: "GetBucketVersioning", read: true, run: (*Server).getBucketVersioning}, true
	case http.MethodPut:
		return operation{name: "PutBucketVersioning", write: true, run: (*Server).putBucketVersioning}, true
	}
	return methodNotAllowed("BucketVersioning"), true
}

type versioningXML struct {
	XMLName   xml.Name `xml:"VersioningConfiguration"`
	Xmlns     string   `xml:"xmlns,attr,omitempty"`
	Status    string   `xml:",omitempty"`
	MfaDelete string   `xml:",omitempty"`
}

// getBucketVersioning answers the bucket's state: no Status at all for a
// bucket never versioned, as S3 answers.
func (s *Server) getBucketVersioning(w http.ResponseWriter, r *request) error {
	bk, err := s.st.Bucket(r.account, r.bucket)
	if err != nil {
		return err
	}
	writeXML(w, http.StatusOK, versioningXML{Xmlns: xmlns, Status: bk.Versioning})
	return nil
}

func (s *Server) putBucketVersioning(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	data, err := readBody(r.body, 64<<10)
	if err != nil {
		return err
	}
	var doc versioningXML
	if err := xml.Unmarshal(data, &doc); err != nil {
		return errMalformedXML
	}
	switch doc.MfaDelete {
	case "", "Disabled":
	case "Enabled":
		return s3err(http.StatusNotImplemented, "NotImplemented", "MFA delete is not supported by this endpoint.")
	default:
		return errMalformedXML
	}
	switch doc.Status {
	case cloudstore.VersioningEnabled, cloudstore.VersioningSuspended:
	case "":
		// S3 takes a document without a Status as no change.
		w.WriteHeader(http.StatusOK)
		return nil
	default:
		return errMalformedXML
	}
	if err := s.st.SetVersioning(r.account, r.bucket, doc.Status); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// versionParam reads the versionId query parameter of r: "" when there is
// none.
func versionParam(r *request) (string, error) {
	q := r.URL.Query()
	if !q.Has("versionId") {
		return "", nil
	}
	id := q.Get("versionId")
	if cloudstore.CheckVersionID(id) != nil {
		return "", errInvalidVersion
	}
	return id, nil
}

// setVersionHeader names obj's version in x-amz-version-id, as S3 does in
// a bucket that keeps versions ("null" for the null version).
func setVersionHeader(h http.Header, obj cloudstore.Object) {
	if obj.Versioned || obj.VersionID != "" {
		h.Set("X-Amz-Version-Id", obj.VersionName())
	}
}

// lookupError answers a failed read of r's key, of version id if not "":
// a delete marker is 404 NoSuchKey (the latest version) or 405 (a marker
// asked for by id) with x-amz-delete-marker, as in S3; a missing version
// of an existing bucket is NoSuchVersion.
func (s *Server) lookupError(w http.ResponseWriter, r *request, bucket, id string, err error) error {
	var dm *cloudstore.DeleteMarkerError
	switch {
	case errors.As(err, &dm):
		w.Header().Set("X-Amz-Delete-Marker", "true")
		w.Header().Set("X-Amz-Version-Id", cloudstore.Object{VersionID: dm.VersionID}.VersionName())
		if id != "" {
			return s3err(http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.")
		}
		return errNoSuchKey
	case errors.Is(err, cloudstore.ErrBadVersion):
		return errInvalidVersion
	case errors.Is(err, cloudstore.ErrNotFound):
		if _, berr := s.st.Bucket(r.account, bucket); berr != nil {
			return errNoSuchBucket
		}
		if id != "" {
			return errNoSuchVersion
		}
		return errNoSuchKey
	}
	return err
}

// listObjectVersions answers ListObjectVersions: versions and delete
// markers in key order, each key's newest first, with S3's key and
// version-id markers.
func (s *Server) listObjectVersions(w http.ResponseWriter, r *request) error {
	q := r.URL.Query()
	p, err := parseListParams(q)
	if err != nil {
		return err
	}
	keyMarker, versionMarker := q.Get("key-marker"), q.Get("version-id-marker")
	if versionMarker != "" {
		if keyMarker == "" {
			return s3err(http.StatusBadRequest, "InvalidArgument", "A version-id marker cannot be specified without a key marker.")
		}
		if cloudstore.CheckVersionID(versionMarker) != nil {
			return errInvalidVersion
		}
	}
	res := listVersionsXML{Xmlns: xmlns, Name: r.bucket, Prefix: p.name(p.prefix), KeyMarker: p.name(keyMarker),
		VersionIDMarker: versionMarker, MaxKeys: p.maxKeys, Delimiter: p.name(p.delimiter), EncodingType: p.encoding}
	if p.maxKeys == 0 {
		if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
			return err
		}
		writeXML(w, http.StatusOK, res)
		return nil
	}
	l, err := s.st.ListVersions(r.account, r.bucket, p.prefix, p.delimiter, keyMarker, versionMarker, p.maxKeys)
	if err != nil {
		return err
	}
	for _, v := range l.Versions {
		own := ownerOf(r.ownerOf(v.Object))
		if v.DeleteMarker {
			res.Entries = append(res.Entries, deleteMarkerXML{Key: p.name(v.Key), VersionID: v.VersionName(), IsLatest: v.IsLatest,
				LastModified: s3Time(v.LastModified), Owner: own})
			continue
		}
		res.Entries = append(res.Entries, versionXML{Key: p.name(v.Key), VersionID: v.VersionName(), IsLatest: v.IsLatest,
			LastModified: s3Time(v.LastModified), ETag: `"` + v.ETag + `"`, Size: v.Size, Owner: own, StorageClass: "STANDARD"})
	}
	for _, cp := range l.Prefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{p.name(cp)})
	}
	if l.NextKeyMarker != "" {
		res.IsTruncated = true
		res.NextKeyMarker, res.NextVersionIDMarker = p.name(l.NextKeyMarker), l.NextVersionIDMarker
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

type listVersionsXML struct {
	XMLName             xml.Name `xml:"ListVersionsResult"`
	Xmlns               string   `xml:"xmlns,attr"`
	Name                string
	Prefix              string
	KeyMarker           string
	VersionIDMarker     string `xml:"VersionIdMarker"`
	NextKeyMarker       string `xml:",omitempty"`
	NextVersionIDMarker string `xml:"NextVersionIdMarker,omitempty"`
	MaxKeys             int
	Delimiter           string `xml:",omitempty"`
	IsTruncated         bool
	// Entries are versionXML and deleteMarkerXML, in the listing's
	// order: S3 interleaves the two elements.
	Entries        []any
	CommonPrefixes []commonPrefix
	EncodingType   string `xml:",omitempty"`
}

type versionXML struct {
	XMLName      xml.Name `xml:"Version"`
	Key          string
	VersionID    string `xml:"VersionId"`
	IsLatest     bool
	LastModified string
	ETag         string
	Size         int64
	Owner        owner
	StorageClass string
}

type deleteMarkerXML struct {
	XMLName      xml.Name `xml:"DeleteMarker"`
	Key          string
	VersionID    string `xml:"VersionId"`
	IsLatest     bool
	LastModified string
	Owner        owner
}
