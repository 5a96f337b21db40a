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
	if r.key == "" {
		switch {
		case r.Method == http.MethodPut && q.Has("requestPayment"):
			return operation{name: "PutBucketRequestPayment", write: true, run: (*Server).putRequestPayment}, true
		case r.Method == http.MethodPut && q.Has("notification"):
			return operation{name: "PutBucketNotificationConfiguration", write: true, run: (*Server).putNotification}, true
		case r.Method == http.MethodPut && q.Has("accelerate"):
			return operation{name: "PutBucketAccelerateConfiguration", write: true, run: (*Server).putAccelerate}, true
		case r.Method == http.MethodDelete && q.Has("replication"):
			return operation{name: "DeleteBucketReplication", write: true, run: (*Server).deleteReplication}, true
		}
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
	var doc struct {
		XMLName xml.Name `xml:"RequestPaymentConfiguration"`
		Payer   string
	}
	if err := s.readProbeDoc(r, &doc); err != nil {
		return err
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

// Writes of the configurations not kept that ask for what already holds
// are taken, and change nothing, as PutBucketRequestPayment of
// BucketOwner is: an empty notification configuration (a bucket here
// sends no event notifications), Transfer Acceleration Suspended (never
// enabled here), and deleting a replication configuration (there is
// none). Tools that write back what they read, or clean up what they
// never set (Terraform, mc event rm), then work; asking for more is 501.

// putNotification is PutBucketNotificationConfiguration: 200 for a
// configuration without any destination, 501 for one with one.
func (s *Server) putNotification(w http.ResponseWriter, r *request) error {
	var doc struct {
		XMLName      xml.Name `xml:"NotificationConfiguration"`
		Destinations []struct {
			XMLName xml.Name
		} `xml:",any"`
	}
	if err := s.readProbeDoc(r, &doc); err != nil {
		return err
	}
	if len(doc.Destinations) > 0 {
		return s3err(http.StatusNotImplemented, "NotImplemented", "A header or query you provided implies functionality that is not implemented: event notifications ("+
			doc.Destinations[0].XMLName.Local+") are not supported by this endpoint; an empty NotificationConfiguration, which is what holds, is. docs/s3.md lists what is.")
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// putAccelerate is PutBucketAccelerateConfiguration: 200 for Suspended,
// 501 for Enabled.
func (s *Server) putAccelerate(w http.ResponseWriter, r *request) error {
	var doc struct {
		XMLName xml.Name `xml:"AccelerateConfiguration"`
		Status  string
	}
	if err := s.readProbeDoc(r, &doc); err != nil {
		return err
	}
	switch doc.Status {
	case "Suspended":
		w.WriteHeader(http.StatusOK)
		return nil
	case "Enabled":
		return s3err(http.StatusNotImplemented, "NotImplemented", "Transfer Acceleration is not supported: there is one endpoint here (Status Suspended, which is what holds, is taken).")
	}
	return errMalformedXML
}

// deleteReplication is DeleteBucketReplication: 204, there being no
// replication configuration to delete.
func (s *Server) deleteReplication(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// readProbeDoc reads the body of a write of a configuration not kept
// into doc, once r's bucket is found: 400 MalformedXML when it is not
// that document.
func (s *Server) readProbeDoc(r *request, doc any) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	body, err := readBody(r.body, 64<<10)
	if err != nil {
		return err
	}
	if err := xml.Unmarshal(body, doc); err != nil {
		return errMalformedXML
	}
	return nil
}
