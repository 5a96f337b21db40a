package nodeapi

import (
	"fmt"
	"net/http"
	"net/url"
)

// queryParams parses r's query string for a handler that reads the
// parameters names, answering 400 itself when it does not parse
// (url.Values from r.URL.Query would drop a malformed pair silently, so
// GET /blocks/recent?limit=%zz would take the default), when one of
// names is given twice (which one did the client mean?), or when one of
// names is given with an empty value (?since= is not the absence of
// since: every parameter the node reads needs a value). Parameters
// other than names are left to the handler: most ignore them.
func queryParams(w http.ResponseWriter, r *http.Request, names ...string) (url.Values, bool) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeError(w, http.StatusBadRequest, "malformed query string: "+err.Error())
		return nil, false
	}
	for _, name := range names {
		switch vs := q[name]; {
		case len(vs) > 1:
			writeError(w, http.StatusBadRequest, fmt.Sprintf("the query parameter %s is given %d times: give it once", name, len(vs)))
			return nil, false
		case len(vs) == 1 && vs[0] == "":
			writeError(w, http.StatusBadRequest, fmt.Sprintf("the query parameter %s is empty: give it a value, or leave it out", name))
			return nil, false
		}
	}
	return q, true
}
