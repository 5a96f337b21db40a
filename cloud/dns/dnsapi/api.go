// Package dnsapi serves the DNS endpoints of the cloud platform's REST API
// (zones and their records) through cloudapi's Handle, over a dnsstore.
// Handlers are thin: they decode, call the store, and map its errors.
package dnsapi

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/dns/dnsstore"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

// Register adds the DNS routes to api.
func Register(api *cloudapi.Server, st *dnsstore.Store) {
	h := &handlers{api: api, st: st}
	api.Handle("GET /api/dns/zones", h.listZones)
	api.Handle("POST /api/dns/zones", h.createZone)
	api.Handle("GET /api/dns/zones/{id}", h.getZone)
	api.Handle("DELETE /api/dns/zones/{id}", h.deleteZone)
	api.Handle("GET /api/dns/zones/{id}/records", h.listRecords)
	api.Handle("POST /api/dns/zones/{id}/records", h.addRecord)
	api.Handle("GET /api/dns/zones/{id}/records/{recordId}", h.getRecord)
	api.Handle("PUT /api/dns/zones/{id}/records/{recordId}", h.putRecord)
	api.Handle("DELETE /api/dns/zones/{id}/records/{recordId}", h.deleteRecord)
}

type handlers struct {
	api *cloudapi.Server
	st  *dnsstore.Store
}

func zoneJSON(z dnsstore.Summary) dnszone.ZoneInfo {
	return dnszone.ZoneInfo{ID: z.ID, Name: z.Name, Serial: z.Serial, Nameservers: z.Nameservers, Records: z.Records,
		CreatedAt: z.CreatedAt.Format(time.RFC3339), UpdatedAt: z.UpdatedAt.Format(time.RFC3339)}
}

func (h *handlers) listZones(w http.ResponseWriter, r *http.Request, account string) error {
	out := []dnszone.ZoneInfo{}
	for _, z := range h.st.Summaries(account) {
		out = append(out, zoneJSON(z))
	}
	page, err := cloudapi.Page(r, out)
	if err != nil {
		return err
	}
	cloudapi.WriteJSON(w, http.StatusOK, page)
	return nil
}

func (h *handlers) createZone(w http.ResponseWriter, r *http.Request, account string) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := h.api.Decode(w, r, &in); err != nil {
		return err
	}
	z, err := h.st.CreateZone(account, in.Name)
	if err != nil {
		return apiError(err, "zone")
	}
	sm, err := h.st.Summary(account, z.ID)
	if err != nil {
		return apiError(err, "zone") // deleted meanwhile
	}
	cloudapi.WriteJSON(w, http.StatusCreated, zoneJSON(sm))
	return nil
}

func (h *handlers) getZone(w http.ResponseWriter, r *http.Request, account string) error {
	sm, err := h.st.Summary(account, r.PathValue("id"))
	if err != nil {
		return apiError(err, "zone")
	}
	cloudapi.WriteJSON(w, http.StatusOK, zoneJSON(sm))
	return nil
}

func (h *handlers) deleteZone(w http.ResponseWriter, r *http.Request, account string) error {
	if err := h.st.DeleteZone(account, r.PathValue("id")); err != nil {
		return apiError(err, "zone")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listRecords lists a zone's records; name (relative, "@" or full) and
// type filter them.
func (h *handlers) listRecords(w http.ResponseWriter, r *http.Request, account string) error {
	id := r.PathValue("id")
	z, _, err := h.st.Zone(account, id)
	if err != nil {
		return apiError(err, "zone")
	}
	records, err := h.st.Records(account, id)
	if err != nil {
		return apiError(err, "zone")
	}
	q := r.URL.Query()
	var name, typ string
	if q.Has("name") {
		if name, err = dnszone.OwnerName(z.Name, q.Get("name")); err != nil {
			return apiError(err, "zone")
		}
	}
	if q.Has("type") {
		typ = strings.ToUpper(q.Get("type"))
		if !known(typ) {
			return cloudapi.Validation("type %q is not one of %s", q.Get("type"), strings.Join(dnszone.Types, ", "))
		}
	}
	out := records[:0]
	for _, rec := range records {
		if (name == "" || rec.Name == name) && (typ == "" || rec.Type == typ) {
			out = append(out, rec)
		}
	}
	page, err := cloudapi.Page(r, out)
	if err != nil {
		return err
	}
	cloudapi.WriteJSON(w, http.StatusOK, page)
	return nil
}

func known(typ string) bool {
	for _, t := range dnszone.Types {
		if t == typ {
			return true
		}
	}
	return false
}

func (h *handlers) addRecord(w http.ResponseWriter, r *http.Request, account string) error {
	var in dnszone.Input
	if err := h.api.Decode(w, r, &in); err != nil {
		return err
	}
	rec, err := h.st.AddRecord(account, r.PathValue("id"), in)
	if err != nil {
		return apiError(err, "zone")
	}
	cloudapi.WriteJSON(w, http.StatusCreated, rec)
	return nil
}

func (h *handlers) getRecord(w http.ResponseWriter, r *http.Request, account string) error {
	rec, err := h.st.Record(account, r.PathValue("id"), r.PathValue("recordId"))
	if err != nil {
		return apiError(err, "record")
	}
	cloudapi.WriteJSON(w, http.StatusOK, rec)
	return nil
}

// putRecord replaces a record whole: a field left out takes its default,
// as on creation.
func (h *handlers) putRecord(w http.ResponseWriter, r *http.Request, account string) error {
	var in dnszone.Input
	if err := h.api.Decode(w, r, &in); err != nil {
		return err
	}
	rec, err := h.st.UpdateRecord(account, r.PathValue("id"), r.PathValue("recordId"), in)
	if err != nil {
		return apiError(err, "record")
	}
	cloudapi.WriteJSON(w, http.StatusOK, rec)
	return nil
}

func (h *handlers) deleteRecord(w http.ResponseWriter, r *http.Request, account string) error {
	if err := h.st.DeleteRecord(account, r.PathValue("id"), r.PathValue("recordId")); err != nil {
		return apiError(err, "record")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// apiError maps the store's errors to the API's.
func apiError(err error, what string) error {
	switch {
	case errors.Is(err, dnszone.ErrInvalid):
		return cloudapi.Validation("%s", strings.TrimPrefix(err.Error(), dnszone.ErrInvalid.Error()+": "))
	case errors.Is(err, dnsstore.ErrNotFound):
		msg := err.Error()
		if strings.HasPrefix(msg, "zone ") {
			return cloudapi.NotFound("zone")
		}
		return cloudapi.NotFound(what)
	case errors.Is(err, dnsstore.ErrExists):
		return cloudapi.Conflict(strings.TrimSuffix(err.Error(), ": "+dnsstore.ErrExists.Error()) + ": the zone name is taken (by this or another account)")
	case errors.Is(err, dnsstore.ErrLimit):
		return cloudapi.Validation("%s", strings.TrimPrefix(err.Error(), dnsstore.ErrLimit.Error()+": "))
	case errors.Is(err, dnsstore.ErrUnavailable):
		return cloudapi.Unavailable()
	}
	return err
}
