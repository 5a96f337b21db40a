package cloudapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

func s3KeyJSON(k cloudstore.S3Key) cloudwire.S3Key {
	return cloudwire.S3Key{ID: k.AccessKeyID, AccessKeyID: k.AccessKeyID, Name: k.Name, Permissions: k.Permissions,
		BucketScope: k.BucketScope, CreatedAt: k.CreatedAt.Format(time.RFC3339Nano)}
}

func (s *Server) listS3Keys(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	keys, err := s.st.S3Keys(key.Account)
	if err != nil {
		return err
	}
	all := make([]cloudwire.S3Key, len(keys))
	for i, k := range keys {
		all[i] = s3KeyJSON(k)
	}
	page, err := pageOf(r, all)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) createS3Key(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	// Every field is optional, the body too; a field given is checked as
	// given: an empty scope is not "*", and an empty permissions not
	// readwrite (a client that computed an empty scope must not get a
	// key to every bucket).
	var req struct {
		Name        string          `json:"name"`
		Permissions json.RawMessage `json:"permissions"`
		BucketScope json.RawMessage `json:"bucketScope"`
	}
	if err := s.decodeOptional(w, r, &req); err != nil {
		return err
	}
	perms, err := optionalString("permissions", req.Permissions, cloudstore.PermReadWrite)
	if err != nil {
		return err
	}
	scope, err := optionalString("bucketScope", req.BucketScope, "*")
	if err != nil {
		return err
	}
	if err := checkKeyName(req.Name); err != nil {
		return err
	}
	if err := cloudstore.ValidS3Permissions(perms); err != nil {
		return validation("%v", err)
	}
	if err := cloudstore.ValidS3Scope(scope); err != nil {
		return validation("bucketScope must be \"*\" or a bucket name: %v", err)
	}
	k, secret, err := s.st.CreateS3Key(key.Account, req.Name, perms, scope, s.opts.Now())
	if err != nil {
		return err
	}
	out := s3KeyJSON(k)
	out.Secret = secret
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) deleteS3Key(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	if err := s.st.DeleteS3Key(key.Account, r.PathValue("id")); err != nil {
		if apiError(err).Code == "not_found" {
			return notFound("S3 key")
		}
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) usage(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bs, err := s.st.Buckets(key.Account)
	if err != nil {
		return err
	}
	u := cloudwire.Usage{BucketCount: len(bs), BucketsUsage: []cloudwire.BucketUsage{}}
	// Noncurrent versions are counted apart, not in the spec's totals,
	// which stay the sums of the buckets' object_count and size_bytes
	// (current objects, as listings show them).
	var noncurrent int64
	for _, b := range bs {
		u.TotalBytes += b.Bytes
		u.ObjectCount += b.Objects
		line := cloudwire.BucketUsage{Name: b.Name, ObjectCount: b.Objects, SizeBytes: b.Bytes}
		if b.Versioning != "" {
			line.NoncurrentSizeBytes = &b.VersionBytes
			noncurrent += b.VersionBytes
			u.NoncurrentSizeBytes = &noncurrent
		}
		u.BucketsUsage = append(u.BucketsUsage, line)
	}
	writeJSON(w, http.StatusOK, u)
	return nil
}

// optionalString reads an optional string field: left out, it is dflt;
// given, it is what was given, "" included, for the caller to judge; null
// is refused, not taken for left out (a client that computed a missing
// value must not get the default, which for a scope is every bucket).
func optionalString(field string, raw json.RawMessage, dflt string) (string, error) {
	switch {
	case raw == nil:
		return dflt, nil
	case string(raw) == "null":
		return "", validation("%s is null: give it a value, or leave it out for %q", field, dflt)
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", validation("%s: want a string, got %s", field, raw)
	}
	return v, nil
}
