package cloudapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/storage/kms"
)

// The storage key service's keys (SSE-KMS): create, list, show, disable,
// enable and rotate. Keys are addressed by id or, when the name holds no
// '/', by name.

// keyService is the store's built-in key service, whose keys these routes
// manage; an external one is managed with its own tools.
func (s *Server) keyService() (*kms.Local, error) {
	if l, ok := s.st.KMS().(*kms.Local); ok {
		return l, nil
	}
	return nil, &Error{http.StatusNotImplemented, "not_implemented", "this platform's key service is not the built-in one: manage its keys with that service's own tools", 0}
}

func (s *Server) kmsKeyJSON(k kms.Key) cloudwire.KMSKey {
	out := cloudwire.KMSKey{ID: k.ID, ARN: kms.ARN(s.opts.Region, k.Account, k.ID), Name: k.Name, Description: k.Description,
		Enabled: k.Enabled, Versions: k.Versions, CreatedAt: k.CreatedAt.UTC().Format(time.RFC3339), Managed: k.Managed}
	if !k.RotatedAt.IsZero() {
		out.RotatedAt = k.RotatedAt.UTC().Format(time.RFC3339)
	}
	return out
}

// kmsError turns the key service's answers into the API's errors.
func kmsError(err error) error {
	switch {
	case errors.Is(err, kms.ErrNotFound):
		return notFound("key")
	case errors.Is(err, kms.ErrExists):
		return &Error{http.StatusConflict, "conflict", "a key of that name exists in this account", 0}
	case errors.Is(err, kms.ErrInvalidName), errors.Is(err, kms.ErrDisabled), errors.Is(err, kms.ErrManaged):
		return validation("%v", err)
	}
	return err
}

func (s *Server) listKMSKeys(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	l, err := s.keyService()
	if err != nil {
		return err
	}
	keys := l.List(r.Context(), key.Account)
	all := make([]cloudwire.KMSKey, len(keys))
	for i, k := range keys {
		all[i] = s.kmsKeyJSON(k)
	}
	page, err := pageOf(r, all)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) createKMSKey(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	l, err := s.keyService()
	if err != nil {
		return err
	}
	var req struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if err := kms.ValidName(req.Name); err != nil {
		return validation("name: %v", err)
	}
	if len(req.Description) > kms.MaxDescription {
		return validation("description must be at most %d bytes", kms.MaxDescription)
	}
	k, err := l.Create(r.Context(), key.Account, req.Name, req.Description)
	if err != nil {
		return kmsError(err)
	}
	writeJSON(w, http.StatusCreated, s.kmsKeyJSON(k))
	return nil
}

func (s *Server) getKMSKey(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	l, err := s.keyService()
	if err != nil {
		return err
	}
	k, err := l.Get(r.Context(), key.Account, r.PathValue("key"))
	if err != nil {
		return kmsError(err)
	}
	writeJSON(w, http.StatusOK, s.kmsKeyJSON(k))
	return nil
}

// changeKMSKey answers POST /api/storage/kms/keys/{key}/{action}: enable,
// disable or rotate.
func (s *Server) changeKMSKey(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	l, err := s.keyService()
	if err != nil {
		return err
	}
	ref := r.PathValue("key")
	var k kms.Key
	switch r.PathValue("action") {
	case "enable":
		k, err = l.SetEnabled(r.Context(), key.Account, ref, true)
	case "disable":
		k, err = l.SetEnabled(r.Context(), key.Account, ref, false)
	case "rotate":
		k, err = l.Rotate(r.Context(), key.Account, ref)
	default:
		return notFound("action " + r.PathValue("action"))
	}
	if err != nil {
		return kmsError(err)
	}
	writeJSON(w, http.StatusOK, s.kmsKeyJSON(k))
	return nil
}
