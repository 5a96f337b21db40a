package cloudapi

import (
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

func keyJSON(k accounts.Key) cloudwire.APIKey {
	out := cloudwire.APIKey{ID: k.ID, Account: k.Account, Name: k.Name, Admin: k.Admin, Prefix: k.Prefix,
		CreatedAt: k.CreatedAt.Format(time.RFC3339Nano), Revoked: k.Revoked}
	if k.Revoked {
		out.RevokedAt = k.RevokedAt.Format(time.RFC3339Nano)
	}
	return out
}

func (s *Server) createKey(w http.ResponseWriter, r *http.Request, _ accounts.Key) error {
	var req struct {
		Account string `json:"account"`
		Name    string `json:"name"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if err := storagenames.ValidAccountName(req.Account); err != nil {
		return validation("%v", err)
	}
	if err := checkKeyName(req.Name); err != nil {
		return err
	}
	k, secret, err := s.acc.CreateKey(req.Account, req.Name, false, s.opts.Now())
	if err != nil {
		return err
	}
	out := keyJSON(k)
	out.Secret = secret
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request, _ accounts.Key) error {
	account := r.URL.Query().Get("account")
	if account != "" {
		if err := storagenames.ValidAccountName(account); err != nil {
			return validation("%v", err)
		}
	}
	keys, err := s.acc.Keys(account)
	if err != nil {
		return err
	}
	all := make([]cloudwire.APIKey, len(keys))
	for i, k := range keys {
		all[i] = keyJSON(k)
	}
	page, err := pageOf(r, all)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request, caller accounts.Key) error {
	id := r.PathValue("id")
	if id == caller.ID {
		return validation("an admin key cannot revoke itself; use another admin key")
	}
	k, err := s.acc.RevokeKey(id, s.opts.Now())
	if err != nil {
		if apiError(err).Code == "not_found" {
			return notFound("API key")
		}
		return err
	}
	writeJSON(w, http.StatusOK, keyJSON(k))
	return nil
}

// maxKeyName bounds an API or S3 key's name, a label, in characters.
const maxKeyName = 100

// checkKeyName refuses a key name of more than maxKeyName characters
// (not bytes: a name in another script is as long as one in ASCII).
func checkKeyName(name string) error {
	if utf8.RuneCountInString(name) > maxKeyName {
		return validation("name must be at most %d characters", maxKeyName)
	}
	return nil
}
