package s3api

import (
	"encoding/xml"
	"net/http"
	"net/url"
)

// Tools read a bucket's configurations before they act (rclone its
// versioning, mc its object lock and versions).
// This endpoint keeps none of them, so it answers those reads as S3 does
// for a bucket that has none: an empty document where S3 gives one, the
// specific 404 where S3 gives that. Writing a configuration stays 501
// NotImplemented: the endpoint never pretends to keep what it does not.

// emptyConfig is a bucket configuration read that S3 answers with an
// empty document when nothing is configured.
type emptyConfig struct {
	root  string // the document's element
	inner string // raw XML inside it, if any
}

var emptyConfigs = map[string]emptyConfig{
	"logging":           {root: "BucketLoggingStatus"},
	"notification":      {root: "NotificationConfiguration"},
	"accelerate":        {root: "AccelerateConfiguration"},
	"requestPayment":    {root: "RequestPaymentConfiguration", inner: "<Payer>BucketOwner</Payer>"},
	"ownershipControls": {root: "OwnershipControls", inner: "<Rule><ObjectOwnership>BucketOwnerEnforced</ObjectOwnership></Rule>"},
}

// missingConfigs are the bucket configuration reads S3 answers with a 404
// of their own when nothing is configured.
var missingConfigs = map[string]*Error{
	"object-lock":       s3err(http.StatusNotFound, "ObjectLockConfigurationNotFoundError", "Object Lock configuration does not exist for this bucket"),
	"policy":            s3err(http.StatusNotFound, "NoSuchBucketPolicy", "The bucket policy does not exist"),
	"policyStatus":      s3err(http.StatusNotFound, "NoSuchBucketPolicy", "The bucket policy does not exist"),
	"cors":              s3err(http.StatusNotFound, "NoSuchCORSConfiguration", "The CORS configuration does not exist"),
	"encryption":        s3err(http.StatusNotFound, "ServerSideEncryptionConfigurationNotFoundError", "The server side encryption configuration was not found"),
	"website":           s3err(http.StatusNotFound, "NoSuchWebsiteConfiguration", "The specified bucket does not have a website configuration"),
	"replication":       s3err(http.StatusNotFound, "ReplicationConfigurationNotFoundError", "The replication configuration was not found"),
	"publicAccessBlock": s3err(http.StatusNotFound, "NoSuchPublicAccessBlockConfiguration", "The public access block configuration was not found"),
}

// probeRoute returns the operation answering a GET of a configuration
// this endpoint does not keep, if q asks for one.
func probeRoute(r *request, q url.Values) (operation, bool) {
	if r.Method != http.MethodGet {
		return operation{}, false
	}
	if r.key != "" {
		if q.Has("acl") {
			return operation{name: "GetObjectAcl", read: true, run: (*Server).acl}, true
		}
		return operation{}, false
	}
	if q.Has("versions") {
		return operation{name: "ListObjectVersions", read: true, run: (*Server).listObjectVersions}, true
	}
	if q.Has("acl") {
		return operation{name: "GetBucketAcl", read: true, run: (*Server).acl}, true
	}
	for sub, c := range emptyConfigs {
		if q.Has(sub) {
			return operation{name: "GetBucket:" + sub, read: true, run: func(s *Server, w http.ResponseWriter, r *request) error {
				if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
					return err
				}
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusOK)
				_, err := w.Write([]byte(xml.Header + "<" + c.root + ` xmlns="` + xmlns + `">` + c.inner + "</" + c.root + ">"))
				return err
			}}, true
		}
	}
	for sub, e := range missingConfigs {
		if q.Has(sub) {
			return operation{name: "GetBucket:" + sub, read: true, run: func(s *Server, _ http.ResponseWriter, r *request) error {
				if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
					return err
				}
				return e
			}}, true
		}
	}
	return operation{}, false
}

// acl answers GetBucketAcl and GetObjectAcl with the grants that hold:
// the owner's FULL_CONTROL, and everyone's READ of a public bucket.
func (s *Server) acl(w http.ResponseWriter, r *request) error {
	b, err := s.st.Bucket(r.account, r.bucket)
	if err != nil {
		return err
	}
	if r.key != "" {
		if _, err := s.st.Object(r.account, r.bucket, r.key); err != nil {
			return err
		}
	}
	type grantee struct {
		XMLNSXsi    string `xml:"xmlns:xsi,attr"`
		Type        string `xml:"xsi:type,attr"`
		ID          string `xml:",omitempty"`
		DisplayName string `xml:",omitempty"`
		URI         string `xml:",omitempty"`
	}
	type grant struct {
		Grantee    grantee
		Permission string
	}
	type result struct {
		XMLName xml.Name `xml:"AccessControlPolicy"`
		Xmlns   string   `xml:"xmlns,attr"`
		Owner   owner
		Grants  []grant `xml:"AccessControlList>Grant"`
	}
	const xsi = "http://www.w3.org/2001/XMLSchema-instance"
	own := ownerOf(r.account)
	res := result{Xmlns: xmlns, Owner: own, Grants: []grant{{grantee{xsi, "CanonicalUser", own.ID, own.DisplayName, ""}, "FULL_CONTROL"}}}
	if b.Public {
		res.Grants = append(res.Grants, grant{grantee{XMLNSXsi: xsi, Type: "Group", URI: "http://acs.amazonaws.com/groups/global/AllUsers"}, "READ"})
	}
	writeXML(w, http.StatusOK, res)
	return nil
}
