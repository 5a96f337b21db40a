package cloudapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

func bucketJSON(b cloudstore.Bucket) cloudwire.Bucket {
	out := cloudwire.Bucket{Name: b.Name, Notes: b.Notes, IsPublic: b.Public, ObjectCount: b.Objects, SizeBytes: b.Bytes,
		CreatedAt: b.CreatedAt.Format(time.RFC3339Nano), UpdatedAt: b.UpdatedAt.Format(time.RFC3339Nano)}
	if b.Versioning != "" {
		out.Versioning = b.Versioning
		out.NoncurrentVersionCount, out.NoncurrentSizeBytes = &b.Versions, &b.VersionBytes
	}
	return out
}

func (s *Server) listBuckets(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bs, err := s.st.Buckets(key.Account)
	if err != nil {
		return err
	}
	all := make([]cloudwire.Bucket, len(bs))
	for i, b := range bs {
		all[i] = bucketJSON(b)
	}
	page, err := pageOf(r, all)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) createBucket(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	var req struct {
		Name  string `json:"name"`
		Notes string `json:"notes"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if err := storagenames.ValidBucketName(req.Name); err != nil {
		return validation("%v", err)
	}
	if len(req.Notes) > cloudwire.MaxNotes {
		return validation("notes must be at most %d bytes", cloudwire.MaxNotes)
	}
	b, err := s.st.CreateBucket(key.Account, req.Name, req.Notes, s.opts.Now())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, bucketJSON(b))
	return nil
}

// bucketName validates the path's bucket name; a name that cannot exist
// is simply not found.
func bucketName(r *http.Request) (string, error) {
	name := r.PathValue("name")
	if storagenames.ExistingBucketName(name) != nil {
		return "", notFound("bucket")
	}
	return name, nil
}

func (s *Server) getBucket(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	name, err := bucketName(r)
	if err != nil {
		return err
	}
	b, err := s.st.Bucket(key.Account, name)
	if err != nil {
		return bucketErr(err)
	}
	writeJSON(w, http.StatusOK, bucketJSON(b))
	return nil
}

func (s *Server) patchBucket(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	name, err := bucketName(r)
	if err != nil {
		return err
	}
	var req struct {
		Notes *string `json:"notes"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if req.Notes == nil {
		return validation("notes is required")
	}
	if len(*req.Notes) > cloudwire.MaxNotes {
		return validation("notes must be at most %d bytes", cloudwire.MaxNotes)
	}
	b, err := s.st.UpdateBucket(key.Account, name, s.opts.Now(), func(b *cloudstore.Bucket) { b.Notes = *req.Notes })
	if err != nil {
		return bucketErr(err)
	}
	writeJSON(w, http.StatusOK, bucketJSON(b))
	return nil
}

func (s *Server) setPublic(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	name, err := bucketName(r)
	if err != nil {
		return err
	}
	var req struct {
		IsPublic *bool `json:"is_public"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if req.IsPublic == nil {
		return validation("is_public is required")
	}
	blocked := &Error{http.StatusConflict, "conflict", "the Block Public Access settings of the bucket or of the account block making it public (BlockPublicAcls): " +
		"remove them over S3 first (the bucket's DeletePublicAccessBlock, or S3 Control's for the account's)", 0}
	if *req.IsPublic {
		// The bucket's Block Public Access settings (set over S3) forbid
		// it, as they forbid a public-read ACL, on a bucket public already
		// too. The store checks again with the write.
		if _, err := s.st.Bucket(key.Account, name); err != nil {
			return bucketErr(err)
		}
		if bpa, err := s.st.PublicAccessBlock(name); err != nil {
			return bucketErr(err)
		} else if bpa != nil && bpa.BlockPublicAcls {
			return blocked
		}
	}
	b, err := s.st.UpdateBucket(key.Account, name, s.opts.Now(), func(b *cloudstore.Bucket) { b.Public = *req.IsPublic })
	if errors.Is(err, cloudstore.ErrPublicAccessBlocked) {
		return blocked
	}
	if err != nil {
		return bucketErr(err)
	}
	writeJSON(w, http.StatusOK, bucketJSON(b))
	return nil
}

func (s *Server) deleteBucket(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	name, err := bucketName(r)
	if err != nil {
		return err
	}
	if err := s.st.DeleteBucket(key.Account, name); err != nil {
		return bucketErr(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func bucketErr(err error) error {
	if e := apiError(err); e.Code == "not_found" {
		return notFound("bucket")
	}
	return err
}
