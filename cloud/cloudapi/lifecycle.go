package cloudapi

import (
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

// ruleJSON writes a rule. A rule made over S3 carries what the REST fields
// cannot say in s3; its prefix and expire_days keep their meaning, but its
// days end at the next midnight UTC, as S3 counts them.
func ruleJSON(r cloudstore.Rule) cloudwire.LifecycleRule {
	out := cloudwire.LifecycleRule{ID: r.ID, Prefix: r.Prefix, ExpireDays: r.ExpireDays, CreatedAt: r.CreatedAt.Format(time.RFC3339Nano)}
	if !r.S3 {
		return out
	}
	s3 := &cloudwire.LifecycleRuleS3{Status: "Enabled", Tags: r.Tags, ObjectSizeGreaterThan: r.SizeGreaterThan, ObjectSizeLessThan: r.SizeLessThan,
		ExpiredObjectDeleteMarker: r.ExpiredObjectDeleteMarker != nil && *r.ExpiredObjectDeleteMarker,
		NoncurrentDays:            r.NoncurrentDays, NewerNoncurrentVersions: r.NewerNoncurrentVersions, AbortIncompleteUploadDays: r.AbortDays}
	if r.Disabled {
		s3.Status = "Disabled"
	}
	if !r.ExpireDate.IsZero() {
		s3.ExpirationDate = r.ExpireDate.UTC().Format(time.RFC3339)
	}
	out.S3 = s3
	return out
}

func (s *Server) listRules(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	rules, err := s.st.Rules(key.Account, bucket)
	if err != nil {
		return bucketErr(err)
	}
	all := make([]cloudwire.LifecycleRule, len(rules))
	for i, rl := range rules {
		all[i] = ruleJSON(rl)
	}
	page, err := pageOf(r, all)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) addRule(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	var req struct {
		Prefix     string          `json:"prefix"`
		ExpireDays json.RawMessage `json:"expire_days"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	days, err := wholeNumber("expire_days", req.ExpireDays, 1, cloudstore.MaxExpireDays)
	if err != nil {
		return err
	}
	if err := storagenames.ValidKeyPrefix(req.Prefix); err != nil {
		return validation("%v", err)
	}
	rl, err := s.st.AddRule(key.Account, bucket, req.Prefix, int(days), s.opts.Now())
	if errors.Is(err, cloudstore.ErrRules) {
		return validation("%s", strings.TrimPrefix(err.Error(), cloudstore.ErrRules.Error()+": "))
	}
	if err != nil {
		return bucketErr(err)
	}
	writeJSON(w, http.StatusCreated, ruleJSON(rl))
	return nil
}

func (s *Server) deleteRule(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	if err := s.st.DeleteRule(key.Account, bucket, r.PathValue("ruleId")); err != nil {
		if apiError(err).Code == "not_found" {
			return notFound("lifecycle rule")
		}
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// wholeNumber reads a required JSON number whose value is a whole number
// from lo to hi, written as JSON allows it: 7, 7.0, 7e0 and 70e-1 are
// all seven (Python's json writes a float 7 as 7.0); "7", 7.5,
// 7.0000000000000001 and null are refused. The value is judged on the
// decimal text, exactly (a float64 would round 7.0000000000000001 to 7).
func wholeNumber(field string, raw json.RawMessage, lo, hi int64) (int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, validation("%s is required", field)
	}
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, validation("%s must be a number, got %s", field, raw)
	}
	// Bounded before big.Rat expands an exponent: 1e999999999 would
	// take a gigabyte.
	if _, exp, found := strings.Cut(strings.ToLower(string(raw)), "e"); len(raw) > 64 || found && len(strings.TrimLeft(exp, "+-0")) > 3 {
		return 0, validation("%s must be from %d to %d, got %s", field, lo, hi, raw)
	}
	v, ok := new(big.Rat).SetString(string(raw))
	switch {
	case !ok:
		return 0, validation("%s must be a number, got %s", field, raw)
	case !v.IsInt():
		return 0, validation("%s must be a whole number, got %s", field, raw)
	case v.Cmp(big.NewRat(lo, 1)) < 0 || v.Cmp(big.NewRat(hi, 1)) > 0:
		return 0, validation("%s must be from %d to %d, got %s", field, lo, hi, raw)
	}
	return v.Num().Int64(), nil
}
