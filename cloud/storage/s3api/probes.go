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
	"notification":   {root: "NotificationConfiguration"},
	"accelerate":     {root: "AccelerateConfiguration"},
	"requestPayment": {root: "RequestPaymentConfiguration", inner: "<Payer>BucketOwner</Payer>"},
}

// missingConfigs are the bucket configuration reads S3 answers with a 404
// of their own when nothing is configured.
var missingConfigs = map[string]*Error{
	"replication": s3err(http.StatusNotFound, "ReplicationConfigurationNotFoundError", "The replication configuration was not found"),
}

// probeRoute returns the operation answering a GET of a configuration
// this endpoint does not keep, if q asks for one.
func probeRoute(r *request, q url.Values) (operation, bool) {
	if r.Method == http.MethodPut && r.key == "" && q.Has("requestPayment") {
		return operation{name: "PutBucketRequestPayment", write: true, run: (*Server).putRequestPayment}, true
	}
	if r.Method != http.MethodGet {
		return operation{}, false
	}
	if r.key != "" {
		return operation{}, false
	}
	if q.Has("versions") {
		return operation{name: "ListObjectVersions", read: true, run: (*Server).listObjectVersions}, true
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

// putRequestPayment is PutBucketRequestPayment. The bucket's owner pays
// for every request here, which is S3's BucketOwner: setting that (as
// s3cmd's payer command does without --requester-pays) is 200 and
// changes nothing, like PutBucketOwnershipControls of the one ownership
// kept. Requester Pays is 501: no request here is charged to its sender.
func (s *Server) putRequestPayment(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	body, err := readBody(r.body, 64<<10)
	if err != nil {
		return err
	}
	var doc struct {
		XMLName xml.Name `xml:"RequestPaymentConfiguration"`
		Payer   string
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		return errMalformedXML
	}
	switch doc.Payer {
	case "BucketOwner":
		w.WriteHeader(http.StatusOK)
		return nil
	case "Requester":
		return s3err(http.StatusNotImplemented, "NotImplemented", "Requester Pays is not supported: the bucket's owner pays for every request here (Payer BucketOwner).")
	}
	return errMalformedXML
}
