package cloudapi

import (
	"net/http"
	"strconv"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

// pageOf parses page and per_page and cuts the page out of all.
func pageOf[T any](r *http.Request, all []T) (cloudwire.List[T], error) {
	page, err := intParam(r, "page", 1, 1, 1<<30)
	if err != nil {
		return cloudwire.List[T]{}, err
	}
	per, err := intParam(r, "per_page", cloudwire.DefaultPerPage, 1, cloudwire.MaxPerPage)
	if err != nil {
		return cloudwire.List[T]{}, err
	}
	out := cloudwire.List[T]{Data: []T{}, Meta: cloudwire.Meta{Total: len(all), Page: page, PerPage: per}}
	if start := (page - 1) * per; start < len(all) {
		out.Data = all[start:min(start+per, len(all))]
	}
	return out, nil
}

func intParam(r *http.Request, name string, def, lo, hi int) (int, error) {
	q := r.URL.Query()
	if !q.Has(name) {
		return def, nil
	}
	v, err := strconv.Atoi(q.Get(name))
	if err != nil || v < lo || v > hi {
		return 0, validation("%s must be an integer from %d to %d, got %q", name, lo, hi, q.Get(name))
	}
	return v, nil
}
