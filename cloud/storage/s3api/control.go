package s3api

import (
	"net/http"
	"strings"
)

// S3 Control, the part of it kept here: an account's own Block Public
// Access settings (GetPublicAccessBlock, PutPublicAccessBlock and
// DeletePublicAccessBlock of S3 Control, on
// /v20180820/configuration/publicAccessBlock with x-amz-account-id), which
// hold for every bucket the account owns besides each bucket's own
// settings, the most restrictive of the two (cloudstore's
// PublicAccessBlock). S3 Control has a host of its own in AWS
// (ACCOUNT.s3-control.REGION.amazonaws.com); here it shares the S3
// endpoint, told apart by its x-amz-account-id header, which no S3 request
// carries, and its path.

const (
	controlPrefix = "/v20180820/"
	controlPAB    = controlPrefix + "configuration/publicAccessBlock"
	controlXMLNS  = "http://awss3control.amazonaws.com/doc/2018-08-20/"
)

// isControl reports whether r is an S3 Control request.
func isControl(r *http.Request) bool {
	return r.Header.Get("X-Amz-Account-Id") != "" && strings.HasPrefix(r.URL.Path, controlPrefix)
}

// controlRoute picks the operation of an S3 Control request.
func controlRoute(r *request) operation {
	if r.URL.Path != controlPAB {
		return refused("Unsupported:s3control", s3err(http.StatusNotImplemented, "NotImplemented",
			"Of S3 Control only the account's Block Public Access settings (/v20180820/configuration/publicAccessBlock) are supported here."))
	}
	switch r.Method {
	case http.MethodGet:
		return operation{name: "GetAccountPublicAccessBlock", read: true, run: (*Server).getAccountPublicAccessBlock}
	case http.MethodPut:
		return operation{name: "PutAccountPublicAccessBlock", write: true, run: (*Server).putAccountPublicAccessBlock}
	case http.MethodDelete:
		return operation{name: "DeleteAccountPublicAccessBlock", write: true, run: (*Server).deleteAccountPublicAccessBlock}
	}
	return methodNotAllowed("AccountPublicAccessBlock")
}

// controlAccount checks that an S3 Control request acts on the account of
// its key, with a key of the whole account: settings that hold for every
// bucket are not for a key scoped to one.
func controlAccount(r *request) error {
	if r.Header.Get("X-Amz-Account-Id") != r.requester {
		return s3err(http.StatusForbidden, "AccessDenied", "Access Denied: x-amz-account-id names another account than the key's")
	}
	if r.s3key.BucketScope != "*" {
		return s3err(http.StatusForbidden, "AccessDenied", "Access Denied: this S3 key is scoped to bucket "+r.s3key.BucketScope+
			"; an account's settings need a key of the whole account")
	}
	return nil
}

func (s *Server) getAccountPublicAccessBlock(w http.ResponseWriter, r *request) error {
	if err := controlAccount(r); err != nil {
		return err
	}
	b, err := s.st.AccountPublicAccessBlock(r.requester)
	if err != nil {
		return err
	}
	return writePublicAccessBlock(w, b, controlXMLNS)
}

func (s *Server) putAccountPublicAccessBlock(w http.ResponseWriter, r *request) error {
	if err := controlAccount(r); err != nil {
		return err
	}
	b, err := readPublicAccessBlock(r)
	if err != nil {
		return err
	}
	if err := s.st.SetAccountPublicAccessBlock(r.requester, b); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteAccountPublicAccessBlock(w http.ResponseWriter, r *request) error {
	if err := controlAccount(r); err != nil {
		return err
	}
	if err := s.st.SetAccountPublicAccessBlock(r.requester, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK) // S3 Control's answer; a bucket's DeletePublicAccessBlock is 204
	return nil
}
