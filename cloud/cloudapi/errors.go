package cloudapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/kms"
)

// Error is an API error: an HTTP status, a machine-readable code from
// decisions.md and a message for people. Handlers return one (or an error
// wrapping a store sentinel); writeError turns it into the envelope
// {"error": {"code": ..., "message": ...}}.
type Error struct {
	Status     int
	Code       string
	Message    string
	RetryAfter time.Duration // for rate_limited
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func validation(format string, args ...any) *Error {
	return &Error{http.StatusBadRequest, "validation_error", fmt.Sprintf(format, args...), 0}
}

func notFound(what string) *Error {
	return &Error{http.StatusNotFound, "not_found", what + " not found", 0}
}

var (
	errUnavailable  = &Error{http.StatusServiceUnavailable, "unavailable", "the platform's disk is full or failing: it serves reads but takes no writes until an operator frees space and restarts it", 0}
	errUnauthorized = &Error{http.StatusUnauthorized, "unauthorized", "missing or invalid API key: send Authorization: Bearer lat_live_...", 0}
	errForbidden    = &Error{http.StatusForbidden, "forbidden", "this endpoint needs an admin API key", 0}
)

// apiError maps any error to an *Error; unknown errors are internal.
func apiError(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, cloudstore.ErrNotFound), errors.Is(err, accounts.ErrNotFound):
		return notFound("resource")
	case errors.Is(err, accounts.ErrUnauthorized):
		return errUnauthorized
	case errors.Is(err, accounts.ErrInvalid):
		return validation("%s", strings.TrimPrefix(err.Error(), "accounts: invalid: "))
	case errors.Is(err, cloudstore.ErrQuota), errors.Is(err, kms.ErrLimit):
		return &Error{http.StatusForbidden, "quota_exceeded", strings.TrimPrefix(strings.TrimPrefix(err.Error(), "cloudstore: "), "kms: "), 0}
	case errors.Is(err, cloudstore.ErrNotEmpty):
		return &Error{http.StatusConflict, "bucket_not_empty", "the bucket still holds objects; delete them first", 0}
	case errors.Is(err, cloudstore.ErrObjectLocked):
		// S3 Object Lock: a retention or a legal hold, set over S3.
		return &Error{http.StatusForbidden, "forbidden", strings.TrimPrefix(err.Error(), "cloudstore: ") + "; it can be deleted once that ends (S3's x-amz-bypass-governance-retention lifts GOVERNANCE retention)", 0}
	case errors.Is(err, cloudstore.ErrLockedVersioning):
		return &Error{http.StatusConflict, "conflict", "the bucket has S3 Object Lock: its versioning stays enabled", 0}
	case errors.Is(err, cloudstore.ErrExists):
		return &Error{http.StatusConflict, "conflict", "the name is already taken", 0}
	case errors.Is(err, cloudstore.ErrKeyRequired):
		// An SSE-C object: only its client's key, given over S3, reads it.
		return &Error{http.StatusBadRequest, "customer_key_required",
			"the object is encrypted with a customer-provided key (SSE-C): read or copy it over the S3 endpoint, giving the key", 0}
	case errors.Is(err, kms.ErrDisabled):
		// An SSE-KMS object whose key, or a bucket whose default key, is
		// disabled: its owner enables it again.
		return &Error{http.StatusBadRequest, "kms_key_disabled",
			"the SSE-KMS key of the object or of the bucket's default encryption is disabled: enable it (lattice s3 kms enable KEY)", 0}
	case errors.Is(err, kms.ErrNotFound):
		return validation("the bucket's default SSE-KMS key does not exist")
	case errors.Is(err, cloudstore.ErrNotGranted):
		// Another account owns the object (the bucket's ACLs enabled)
		// and its ACL grants the bucket's owner no READ.
		return &Error{http.StatusForbidden, "forbidden", strings.Replace(err.Error(), "cloudstore: ", "", 1) + " (its writer can grant it: x-amz-acl bucket-owner-read; or set the bucket's object ownership to BucketOwnerEnforced to own every object)", 0}
	case errors.Is(err, cloudstore.ErrKMSAccess):
		return &Error{http.StatusForbidden, "forbidden", "the object is encrypted with a key of another account's key service (SSE-KMS), which only that account's keys open", 0}
	case errors.Is(err, cloudstore.ErrNoKMS):
		return validation("the object or the bucket's default encryption needs SSE-KMS, and this platform has no key service")
	case errors.Is(err, cloudstore.ErrUnavailable), errors.Is(err, accounts.ErrUnavailable), errors.Is(err, syscall.ENOSPC):
		return errUnavailable
	}
	return &Error{http.StatusInternalServerError, "internal_error", "internal error", 0}
}

type envelope struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, e *Error) {
	if e.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="lattice"`)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
	}
	var env envelope
	env.Error.Code, env.Error.Message = e.Code, e.Message
	writeJSON(w, e.Status, env)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":{"code":"internal_error","message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}
