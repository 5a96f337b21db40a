package s3api

import (
	"net/http"
	"net/url"
	"strings"
)

// operation is one S3 operation: what it needs of the key, and its
// handler.
type operation struct {
	name        string
	read, write bool
	run         func(s *Server, w http.ResponseWriter, r *request) error
	// also lists buckets besides the addressed one that the operation
	// touches (a copy's source), for the scope check.
	also func(r *request) []string
	// transfer operations move object bodies and may take up to the
	// endpoint's Timeout rather than the server's default deadlines.
	transfer bool
}

// buckets are the buckets op touches in r.
func (o operation) buckets(r *request) []string {
	var out []string
	if r.bucket != "" {
		out = append(out, r.bucket)
	}
	if o.also != nil {
		out = append(out, o.also(r)...)
	}
	return out
}

// unsupported are the S3 subresources this endpoint does not implement;
// a request naming one answers NotImplemented rather than being taken
// for a plain GET or PUT.
var unsupported = []string{
	"notification", "replication", "object-lock", "retention", "legal-hold", "torrent",
	"restore", "select", "accelerate", "requestPayment",
	"intelligent-tiering", "inventory", "analytics", "metrics", "attributes", "uploadPartCopy",
	"metadataTable", "metadataConfiguration", "renameObject", "session"}

// writeParams are the query parameters a write (PUT, POST, DELETE) may
// carry; any other names a subresource this endpoint does not know, and
// is refused rather than taken for a plain write.
var writeParams = map[string]bool{"partNumber": true, "uploadId": true, "uploads": true, "delete": true, "x-id": true, "versionId": true,
	"x-amz-tagging": true, "X-Amz-Tagging": true, // a presigned upload's tags (requestTags)
	"X-Amz-Algorithm": true, "X-Amz-Credential": true, "X-Amz-Date": true, "X-Amz-Expires": true,
	"X-Amz-SignedHeaders": true, "X-Amz-Signature": true, "X-Amz-Content-Sha256": true, "X-Amz-Security-Token": true}

// v2Params are the query parameters of a Signature Version 2 presigned
// URL (package sigv2).
var v2Params = map[string]bool{"AWSAccessKeyId": true, "Expires": true, "Signature": true}

// features name what some subresources ask for, for the message that
// refuses them.
var features = map[string]string{
	"notification": "event notifications",
	"replication":  "replication", "torrent": "BitTorrent", "select": "S3 Select (SelectObjectContent)",
	"restore": "restoring archived objects (every object here is STANDARD)", "accelerate": "Transfer Acceleration",
	"intelligent-tiering": "Intelligent-Tiering", "inventory": "S3 Inventory", "analytics": "Storage Class Analysis",
	"metrics": "CloudWatch request metrics",
}

// bucketConfigs are the bucket configurations kept here whose
// subresource on an object is refused.
var bucketConfigs = map[string]bool{"cors": true, "website": true, "lifecycle": true, "policy": true, "ownershipControls": true, "logging": true, "publicAccessBlock": true,
	"object-lock": true}

// objectConfigs are the object settings kept here whose subresource on a
// bucket is refused.
var objectConfigs = map[string]bool{"retention": true, "legal-hold": true}

// notImplemented is an operation refused 501 NotImplemented. For
// "Unsupported:SUB" the message names the subresource (and what it is
// for), so that a tool's user sees what is missing rather than S3's
// generic text.
func notImplemented(name string) operation {
	err := errNotImplemented
	if sub, ok := strings.CutPrefix(name, "Unsupported:"); ok {
		what := "?" + sub + " is not supported by this endpoint"
		switch f, ok := features[sub]; {
		case ok:
			what = f + " (?" + sub + ") is not supported by this endpoint"
		case bucketConfigs[sub]:
			what = "?" + sub + " is a bucket's configuration; it is not supported on an object"
		case objectConfigs[sub]:
			what = "?" + sub + " is an object's Object Lock setting; it is not supported on a bucket"
		case sub == "attributes":
			what = "?attributes is GetObjectAttributes, a GET of an object; it is not supported otherwise"
		}
		err = s3err(http.StatusNotImplemented, "NotImplemented", "A header or query you provided implies functionality that is not implemented: "+
			what+". docs/s3.md lists what is.")
	}
	return operation{name: name, run: func(*Server, http.ResponseWriter, *request) error { return err }}
}

// refused is an operation that answers err, once the request is
// authenticated.
func refused(name string, err error) operation {
	return operation{name: name, run: func(*Server, http.ResponseWriter, *request) error { return err }}
}

func methodNotAllowed(name string) operation {
	return operation{name: name, run: func(*Server, http.ResponseWriter, *request) error {
		return s3err(http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.")
	}}
}

// route picks the operation of a request from its method, whether it
// addresses the service, a bucket or an object, and its subresources.
func route(r *request) operation {
	if isControl(r.Request) {
		return controlRoute(r)
	}
	q := r.URL.Query()
	if r.bucket != "" {
		if o, ok := corsRoute(r, q); ok {
			return o
		}
		if o, ok := websiteRoute(r, q); ok {
			return o
		}
		if o, ok := taggingRoute(r, q); ok {
			return o
		}
		if o, ok := versionRoute(r, q); ok {
			return o
		}
		if o, ok := encryptionRoute(r, q); ok {
			return o
		}
		if o, ok := lifecycleRoute(r, q); ok {
			return o
		}
		if o, ok := policyRoute(r, q); ok {
			return o
		}
		if o, ok := aclRoute(r, q); ok {
			return o
		}
		if o, ok := loggingRoute(r, q); ok {
			return o
		}
		if o, ok := publicAccessRoute(r, q); ok {
			return o
		}
		if o, ok := objectLockRoute(r, q); ok {
			return o
		}
		if o, ok := probeRoute(r, q); ok {
			return o
		}
	}
	for _, sub := range unsupported {
		if q.Has(sub) && !(sub == "attributes" && r.key != "" && r.Method == http.MethodGet) {
			return notImplemented("Unsupported:" + sub)
		}
	}
	if r.bucket == "" && r.key != "" {
		// A path such as //bucket/key: an empty bucket name, not the
		// service.
		return refused("InvalidURI", s3err(http.StatusBadRequest, "InvalidURI", "Couldn't parse the specified URI: the bucket name in the path is empty."))
	}
	m := r.Method
	if m != http.MethodGet && m != http.MethodHead {
		for name := range q {
			if !writeParams[name] && !(presignedQuery(q) && queryHeader(name)) && !v2Params[name] {
				return notImplemented("Unsupported:" + name)
			}
		}
	}
	switch {
	case r.bucket == "":
		if m == http.MethodGet {
			return operation{name: "ListBuckets", read: true, run: (*Server).listBuckets}
		}
		return methodNotAllowed("Service")
	case r.key == "" && isPostForm(r.Request) && !q.Has("delete"):
		return operation{name: "PostObject", write: true, transfer: true, run: (*Server).postObject}
	case r.key == "":
		return bucketRoute(m, q)
	}
	return objectRoute(r, m, q)
}

func bucketRoute(m string, q url.Values) operation {
	switch m {
	case http.MethodGet:
		switch {
		case q.Has("location"):
			return operation{name: "GetBucketLocation", read: true, run: (*Server).bucketLocation}
		case q.Has("uploads"):
			return operation{name: "ListMultipartUploads", read: true, run: (*Server).listUploads}
		case q.Get("list-type") == "2":
			return operation{name: "ListObjectsV2", read: true, run: (*Server).listObjectsV2}
		}
		return operation{name: "ListObjects", read: true, run: (*Server).listObjectsV1}
	case http.MethodHead:
		return operation{name: "HeadBucket", read: true, run: (*Server).headBucket}
	case http.MethodPut:
		return operation{name: "CreateBucket", write: true, run: (*Server).createBucket}
	case http.MethodDelete:
		return operation{name: "DeleteBucket", write: true, run: (*Server).deleteBucket}
	case http.MethodPost:
		if q.Has("delete") {
			return operation{name: "DeleteObjects", write: true, run: (*Server).deleteObjects}
		}
	}
	return methodNotAllowed("Bucket")
}

func objectRoute(r *request, m string, q url.Values) operation {
	switch m {
	case http.MethodGet:
		switch {
		case q.Has("uploadId"):
			return operation{name: "ListParts", read: true, run: (*Server).listParts}
		case q.Has("attributes"):
			return operation{name: "GetObjectAttributes", read: true, run: (*Server).getObjectAttributes}
		}
		return operation{name: "GetObject", read: true, transfer: true, run: (*Server).getObject}
	case http.MethodHead:
		return operation{name: "HeadObject", read: true, run: (*Server).getObject}
	case http.MethodPut:
		copySource := r.Header.Get("X-Amz-Copy-Source") != ""
		switch {
		case q.Has("partNumber") && q.Has("uploadId") && copySource:
			return operation{name: "UploadPartCopy", read: true, write: true, transfer: true, run: (*Server).uploadPartCopy, also: copySourceBucket}
		case q.Has("partNumber") && q.Has("uploadId"):
			return operation{name: "UploadPart", write: true, transfer: true, run: (*Server).uploadPart}
		case copySource:
			return operation{name: "CopyObject", read: true, write: true, run: (*Server).copyObject, also: copySourceBucket}
		}
		return operation{name: "PutObject", write: true, transfer: true, run: (*Server).putObject}
	case http.MethodDelete:
		if q.Has("uploadId") {
			return operation{name: "AbortMultipartUpload", write: true, run: (*Server).abortUpload}
		}
		return operation{name: "DeleteObject", write: true, run: (*Server).deleteObject}
	case http.MethodPost:
		switch {
		case q.Has("uploads"):
			return operation{name: "CreateMultipartUpload", write: true, run: (*Server).createUpload}
		case q.Has("uploadId"):
			return operation{name: "CompleteMultipartUpload", write: true, transfer: true, run: (*Server).completeUpload}
		}
	}
	return methodNotAllowed("Object")
}
