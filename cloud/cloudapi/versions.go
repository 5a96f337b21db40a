package cloudapi

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// Object versions over the REST API (docs/cloud-api.md, "Versions"): the
// store keeps them as S3 does (cloudstore/versions.go); these endpoints
// switch versioning, list versions, and read and delete one by id.

// setVersioning answers PUT .../versioning {"status": "Enabled"|"Suspended"}
// with the bucket.
func (s *Server) setVersioning(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	name, err := bucketName(r)
	if err != nil {
		return err
	}
	var req struct {
		Status *string `json:"status"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if req.Status == nil {
		return validation("status is required: %s or %s", cloudstore.VersioningEnabled, cloudstore.VersioningSuspended)
	}
	if st := *req.Status; st != cloudstore.VersioningEnabled && st != cloudstore.VersioningSuspended {
		return validation("status must be %s or %s, got %q (a bucket that has kept versions cannot go back to never versioned)",
			cloudstore.VersioningEnabled, cloudstore.VersioningSuspended, st)
	}
	if err := s.st.SetVersioning(key.Account, name, *req.Status); err != nil {
		return bucketErr(err)
	}
	b, err := s.st.Bucket(key.Account, name)
	if err != nil {
		return bucketErr(err)
	}
	writeJSON(w, http.StatusOK, bucketJSON(b))
	return nil
}

func versionJSON(v cloudstore.ListedVersion) cloudwire.ObjectVersion {
	out := cloudwire.ObjectVersion{Key: v.Key, VersionID: v.VersionName(), IsLatest: v.IsLatest, DeleteMarker: v.DeleteMarker,
		LastModified: v.LastModified.Format(time.RFC3339Nano)}
	if !v.DeleteMarker {
		out.Size, out.ETag, out.ContentType = v.Size, v.ETag, v.ContentType
	}
	return out
}

// listVersions answers GET .../versions?prefix&delimiter&key_marker&
// version_id_marker with pages of per_page (or limit) entries: versions,
// delete markers and common prefixes, as listObjects pages objects.
func (s *Server) listVersions(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	page, size, err := pageSize(r, cloudwire.DefaultPerPage, cloudwire.MaxPerPage)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	keyMarker, idMarker := q.Get("key_marker"), q.Get("version_id_marker")
	if q.Has("version_id_marker") {
		if keyMarker == "" {
			return validation("version_id_marker needs key_marker: it names a version of that key")
		}
		if err := cloudstore.CheckVersionID(idMarker); err != nil {
			return validation("version_id_marker %q is no version id: want null or 24 lower-case hex digits", idMarker)
		}
	}
	l, total, err := s.versionPage(key.Account, bucket, q.Get("prefix"), q.Get("delimiter"), keyMarker, idMarker, (page-1)*size, size)
	if err != nil {
		return bucketErr(err)
	}
	out := cloudwire.VersionList{Data: []cloudwire.ObjectVersion{}, Prefixes: []string{}, NextKeyMarker: l.NextKeyMarker,
		NextVersionIDMarker: l.NextVersionIDMarker, Meta: cloudwire.Meta{Total: total, Page: page, PerPage: size}}
	for _, v := range l.Versions {
		out.Data = append(out.Data, versionJSON(v))
	}
	out.Prefixes = append(out.Prefixes, l.Prefixes...)
	writeJSON(w, http.StatusOK, out)
	return nil
}

// versionChunk bounds the entries one store listing holds while a page is
// skipped to or the entries after it are counted; a variable for the
// tests, which lower it.
var versionChunk = 1000

// versionPage lists the entries after the markers: it skips skip of them,
// keeps the next n, and counts them all, as the store's ListPage does for
// objects. The store lists versions by markers only, so skipping and
// counting walk them a chunk at a time, each chunk from its own snapshot.
func (s *Server) versionPage(account, bucket, prefix, delim, keyMarker, idMarker string, skip, n int) (cloudstore.VersionListing, int, error) {
	total := 0
	// walk lists up to max entries after the markers and moves the
	// markers past them; done says nothing follows.
	walk := func(max int) (l cloudstore.VersionListing, done bool, err error) {
		l, err = s.st.ListVersions(account, bucket, prefix, delim, keyMarker, idMarker, max)
		if err != nil {
			return l, false, err
		}
		total += len(l.Versions) + len(l.Prefixes)
		keyMarker, idMarker = l.NextKeyMarker, l.NextVersionIDMarker
		return l, keyMarker == "", nil
	}
	for skip > 0 {
		c := min(skip, versionChunk)
		_, done, err := walk(c)
		if err != nil {
			return cloudstore.VersionListing{}, 0, err
		}
		if done {
			return cloudstore.VersionListing{}, total, nil
		}
		skip -= c
	}
	l, done, err := walk(n)
	for err == nil && !done {
		_, done, err = walk(versionChunk)
	}
	return l, total, err
}

// downloadVersion answers a download with version_id: that version's
// body. Only the owner's API key reads versions: a presigned URL is for
// the current object, and a public bucket shows its current objects only,
// as S3's public-read grants GetObject but not GetObjectVersion (a version
// may be what the owner deleted).
func (s *Server) downloadVersion(w http.ResponseWriter, r *http.Request, c caller, id string) error {
	switch {
	case c.token != nil:
		return &Error{http.StatusForbidden, "forbidden", "a presigned URL reads the current object only; reading a version (version_id) needs the owner's API key", 0}
	case c.anonymous:
		return &Error{http.StatusUnauthorized, "unauthorized", "reading a version (version_id) needs the owner's API key: send Authorization: Bearer lat_live_...", 0}
	}
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	if err := checkVersionID(id); err != nil {
		return err
	}
	bk, err := s.st.Bucket(c.key.Account, bucket)
	if err != nil {
		return bucketErr(err)
	}
	s.extendDeadlines(w)
	objKey := r.PathValue("key")
	obj, body, err := s.st.OpenObjectVersion(r.Context(), c.key.Account, bucket, objKey, id, nil)
	if err != nil {
		return versionErr(err, objKey, id)
	}
	defer body.Close()
	if !cloudstore.OwnerMayRead(bk, obj) {
		return cloudstore.ErrNotGranted // as for the current object (ownerReads)
	}
	serveObject(w, r, obj, body)
	return nil
}

// deleteVersion answers DELETE .../objects/{key...}?version_id=ID: that
// version, or delete marker, goes for good (cloudstore.DeleteVersion).
// The store, as S3, takes the delete of a version that is not there for
// done; this API answers 404, as it does for an object that is not there.
func (s *Server) deleteVersion(w http.ResponseWriter, r *http.Request, account, bucket, id string) error {
	if err := checkVersionID(id); err != nil {
		return err
	}
	if _, err := s.st.Bucket(account, bucket); err != nil {
		return bucketErr(err)
	}
	objKey := r.PathValue("key")
	if _, err := s.st.ObjectVersion(account, bucket, objKey, id); err != nil {
		return versionErr(err, objKey, id)
	}
	if _, err := s.st.DeleteVersion(account, bucket, objKey, id); err != nil {
		return bucketErr(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// checkVersionID validates a version_id parameter.
func checkVersionID(id string) error {
	if err := cloudstore.CheckVersionID(id); err != nil {
		return validation("version_id %q is no version id: want null or 24 lower-case hex digits, as the versions listing gives them", id)
	}
	return nil
}

// versionErr answers the store's errors for a version of key: a delete
// marker, or a version that is not there, is 404 saying which.
func versionErr(err error, key, id string) error {
	var dm *cloudstore.DeleteMarkerError
	switch {
	case errors.As(err, &dm):
		return &Error{http.StatusNotFound, "not_found", fmt.Sprintf("version %s of %q is a delete marker, which has no body", id, key), 0}
	case errors.Is(err, cloudstore.ErrNotFound):
		return &Error{http.StatusNotFound, "not_found", fmt.Sprintf("object %q has no version %s", key, id), 0}
	}
	return err
}
