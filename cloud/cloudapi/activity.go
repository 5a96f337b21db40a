package cloudapi

import (
	"net/http"
	"time"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// Limits of the activity and metrics endpoints.
const (
	// limit is the API description's name for these lists' page size;
	// it takes per_page's bounds, as decisions.md sets for every list.
	DefaultEventLimit = cloudwire.DefaultPerPage
	MaxEventLimit     = cloudwire.MaxPerPage
	DefaultTopLimit   = cloudwire.DefaultPerPage
	MaxTopLimit       = cloudwire.MaxPerPage
	DefaultHours      = 24
	MaxHours          = 720 // cloudstore.MetricsRetention
)

func eventJSON(e cloudstore.Event) cloudwire.Event {
	out := cloudwire.Event{ID: e.ID, Type: e.Type, Time: e.Time.Format(time.RFC3339Nano), SourceKey: e.SourceKey,
		SourceBucket: e.SourceBucket, RuleID: e.RuleID}
	switch e.Type {
	case cloudstore.EventObjectCreated, cloudstore.EventObjectCopied, cloudstore.EventObjectDeleted, cloudstore.EventObjectExpired:
		out.Key, out.Size = &e.Key, &e.Size
	case cloudstore.EventRuleAdded, cloudstore.EventRuleRemoved:
		out.Prefix, out.ExpireDays = &e.Prefix, e.ExpireDays
	}
	return out
}

// pageSize reads the page and the page size of a list whose API
// description names its size limit: limit (1 to maxLimit, default def) or,
// as every list takes, per_page (1 to MaxPerPage); not both.
func pageSize(r *http.Request, def, maxLimit int) (page, size int, err error) {
	q := r.URL.Query()
	if q.Has("limit") && q.Has("per_page") {
		return 0, 0, validation("give limit or per_page, not both")
	}
	if page, err = intParam(r, "page", 1, 1, 1<<20); err != nil {
		return 0, 0, err
	}
	if q.Has("per_page") {
		size, err = intParam(r, "per_page", def, 1, cloudwire.MaxPerPage)
	} else {
		size, err = intParam(r, "limit", def, 1, maxLimit)
	}
	return page, size, err
}

// events answers GET .../events: the bucket's activity, newest first.
func (s *Server) events(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	page, size, err := pageSize(r, DefaultEventLimit, MaxEventLimit)
	if err != nil {
		return err
	}
	evs, total, err := s.st.Events(key.Account, bucket, (page-1)*size, size)
	if err != nil {
		return bucketErr(err)
	}
	out := cloudwire.List[cloudwire.Event]{Data: make([]cloudwire.Event, len(evs)), Meta: cloudwire.Meta{Total: total, Page: page, PerPage: size}}
	for i, e := range evs {
		out.Data[i] = eventJSON(e)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func requestsJSON(r cloudstore.Requests) cloudwire.Requests {
	return cloudwire.Requests{Get: r.Get, Put: r.Put, Delete: r.Delete, List: r.List, Other: r.Other, Total: r.Total()}
}

// window reads hours and returns the metrics of its hours: the current
// hour and the hours-1 before it.
func (s *Server) window(r *http.Request, account, bucket string) (hours int, from, to time.Time, hs []cloudstore.HourMetrics, err error) {
	if hours, err = intParam(r, "hours", DefaultHours, 1, MaxHours); err != nil {
		return 0, time.Time{}, time.Time{}, nil, err
	}
	to = s.opts.Now().UTC()
	from = to.Truncate(time.Hour).Add(-time.Duration(hours-1) * time.Hour)
	hs, err = s.st.Metrics(account, bucket, from, to)
	return hours, from, to, hs, bucketErr(err)
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	hours, from, to, hs, err := s.window(r, key.Account, bucket)
	if err != nil {
		return err
	}
	out := cloudwire.Metrics{Bucket: bucket, Hours: hours, From: from.Format(time.RFC3339), To: to.Format(time.RFC3339Nano), Hourly: make([]cloudwire.HourMetrics, len(hs))}
	for i, h := range hs {
		out.Hourly[i] = cloudwire.HourMetrics{Hour: h.Hour.Format(time.RFC3339), Requests: requestsJSON(h.Requests),
			BytesIn: h.BytesIn, BytesOut: h.BytesOut, Errors: h.Errors}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) metricsSummary(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	hours, from, to, hs, err := s.window(r, key.Account, bucket)
	if err != nil {
		return err
	}
	var sum cloudstore.HourMetrics
	for _, h := range hs {
		sum.Add(h)
	}
	bk, err := s.st.Bucket(key.Account, bucket)
	if err != nil {
		return bucketErr(err)
	}
	writeJSON(w, http.StatusOK, cloudwire.MetricsSummary{Bucket: bucket, Hours: hours, From: from.Format(time.RFC3339), To: to.Format(time.RFC3339Nano),
		Requests: requestsJSON(sum.Requests), BytesIn: sum.BytesIn, BytesOut: sum.BytesOut, Errors: sum.Errors,
		ObjectCount: bk.Objects, SizeBytes: bk.Bytes})
	return nil
}

func (s *Server) topObjects(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	page, size, err := pageSize(r, DefaultTopLimit, MaxTopLimit)
	if err != nil {
		return err
	}
	top, total, err := s.st.TopObjects(key.Account, bucket, page*size)
	if err != nil {
		return bucketErr(err)
	}
	out := cloudwire.List[cloudwire.TopObject]{Data: []cloudwire.TopObject{}, Meta: cloudwire.Meta{Total: total, Page: page, PerPage: size}}
	for _, o := range top[min((page-1)*size, len(top)):] {
		out.Data = append(out.Data, cloudwire.TopObject{Key: o.Key, Requests: o.Requests, BytesIn: o.BytesIn, BytesOut: o.BytesOut,
			LastAccess: o.LastAccess.Format(time.RFC3339Nano)})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) fileTypes(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	fts, err := s.st.FileTypes(key.Account, bucket)
	if err != nil {
		return bucketErr(err)
	}
	all := make([]cloudwire.FileType, len(fts))
	for i, ft := range fts {
		all[i] = cloudwire.FileType{Extension: ft.Extension, ObjectCount: ft.Objects, SizeBytes: ft.Bytes}
	}
	page, err := pageOf(r, all)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}
