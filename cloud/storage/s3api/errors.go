package s3api

import (
	"encoding/xml"
	"errors"
	"net/http"
	"strings"
	"syscall"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/kms"
	"github.com/latticenet/lattice/cloud/storage/sigv4"
	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

// Error is an S3 error answer.
type Error struct {
	Status  int
	Code    string
	Message string
	// Region, if set, is the region the request should have been signed
	// for: S3's AuthorizationHeaderMalformed carries it, and SDKs (boto3)
	// read it to sign again for the right one.
	Region string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func s3err(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Message: msg}
}

var (
	errAccessDenied   = s3err(http.StatusForbidden, "AccessDenied", "Access Denied")
	errNoSuchBucket   = s3err(http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist")
	errNoSuchKey      = s3err(http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
	errNoSuchUpload   = s3err(http.StatusNotFound, "NoSuchUpload", "The specified multipart upload does not exist. The upload ID might be invalid, or the multipart upload might have been aborted or completed.")
	errMalformedXML   = s3err(http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema.")
	errNotImplemented = s3err(http.StatusNotImplemented, "NotImplemented", "A header or query you provided implies functionality that is not implemented.")
	errTooLarge       = s3err(http.StatusBadRequest, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed object size.")
	errPrecondition   = s3err(http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
	errBucketNotEmpty = s3err(http.StatusConflict, "BucketNotEmpty", "The bucket you tried to delete is not empty")
	errUnavailable    = s3err(http.StatusServiceUnavailable, "ServiceUnavailable", "The server's disk is full or failing: it serves reads but takes no writes until an operator frees space and restarts it.")
	errRequestTimeout = s3err(http.StatusBadRequest, "RequestTimeout", "Your socket connection to the server was not read from or written to within the timeout period.")
	errIncompleteBody = s3err(http.StatusBadRequest, "IncompleteBody", "You did not provide the number of bytes specified by the Content-Length HTTP header.")
)

// statusOf gives the HTTP status of the codes sigv4 reports.
var statusOf = map[string]int{
	"AccessDenied":                      http.StatusForbidden,
	"InvalidAccessKeyId":                http.StatusForbidden,
	"SignatureDoesNotMatch":             http.StatusForbidden,
	"RequestTimeTooSkewed":              http.StatusForbidden,
	"AuthorizationHeaderMalformed":      http.StatusBadRequest,
	"AuthorizationQueryParametersError": http.StatusBadRequest,
	"InvalidRequest":                    http.StatusBadRequest,
	"InvalidArgument":                   http.StatusBadRequest,
	"XAmzContentSHA256Mismatch":         http.StatusBadRequest,
	"BadDigest":                         http.StatusBadRequest,
	"IncompleteBody":                    http.StatusBadRequest,
	"MissingContentLength":              http.StatusLengthRequired,
}

// toError turns what a handler returned into the S3 error to answer.
// notFound is the error a bare cloudstore.ErrNotFound means here.
func toError(err error, notFound *Error) *Error {
	var e *Error
	var se *sigv4.Error
	if ce := checksumError(err); ce != nil {
		return ce
	}
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &se):
		status, ok := statusOf[se.Code]
		if !ok {
			status = http.StatusBadRequest
		}
		return s3err(status, se.Code, se.Message)
	case errors.Is(err, cloudstore.ErrNoSuchUpload):
		return errNoSuchUpload
	case errors.Is(err, cloudstore.ErrNotFound):
		return notFound
	case errors.Is(err, cloudstore.ErrNotEmpty):
		return errBucketNotEmpty
	case errors.Is(err, cloudstore.ErrQuota):
		return s3err(http.StatusBadRequest, "TooManyBuckets", "You have attempted to create more buckets than allowed: "+strings.TrimPrefix(err.Error(), "cloudstore: "))
	case errors.Is(err, cloudstore.ErrPublicAccessBlocked):
		// The store refuses to make a bucket public under BlockPublicAcls
		// (UpdateBucket); a policy's check returns errBlockedPolicy itself.
		return errBlockedACL
	case errors.Is(err, cloudstore.ErrTooLarge):
		return errTooLarge
	case errors.Is(err, cloudstore.ErrTooManyTags):
		return s3err(http.StatusBadRequest, "BadRequest", "The tag set has more tags than allowed: "+err.Error())
	case errors.Is(err, storagenames.ErrInvalidKey):
		return s3err(http.StatusBadRequest, "InvalidArgument", err.Error())
	case errors.Is(err, cloudstore.ErrInvalidPart):
		return s3err(http.StatusBadRequest, "InvalidPart", "One or more of the specified parts could not be found or its entity tag did not match: "+err.Error())
	case errors.Is(err, cloudstore.ErrPartOrder):
		return s3err(http.StatusBadRequest, "InvalidPartOrder", "The list of parts was not in ascending order. The parts list must be specified in order by part number.")
	case errors.Is(err, cloudstore.ErrPartTooSmall):
		return s3err(http.StatusBadRequest, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed object size: "+err.Error())
	case errors.Is(err, cloudstore.ErrNoParts), errors.Is(err, cloudstore.ErrBadPartNumber), errors.Is(err, cloudstore.ErrCopyRange):
		return s3err(http.StatusBadRequest, "InvalidArgument", err.Error())
	case errors.Is(err, cloudstore.ErrPrecondition):
		return errPrecondition
	case errors.Is(err, cloudstore.ErrObjectLocked):
		return s3err(http.StatusForbidden, "AccessDenied", "Access Denied because object protected by object lock: "+strings.TrimPrefix(err.Error(), cloudstore.ErrObjectLocked.Error()+": "))
	case errors.Is(err, cloudstore.ErrNoObjectLock):
		return errNoObjectLock
	case errors.Is(err, cloudstore.ErrLockedVersioning):
		return s3err(http.StatusConflict, "InvalidBucketState", "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.")
	case errors.Is(err, cloudstore.ErrLockNeedsVersioning):
		return s3err(http.StatusConflict, "InvalidBucketState", "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration")
	case errors.Is(err, cloudstore.ErrKeyRequired):
		return s3err(http.StatusBadRequest, "InvalidRequest", "The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.")
	case errors.Is(err, cloudstore.ErrWrongKey):
		return s3err(http.StatusForbidden, "AccessDenied", "Access Denied: the customer key given is not the one the object was encrypted with.")
	case errors.Is(err, cloudstore.ErrKeyNotApplicable):
		return s3err(http.StatusBadRequest, "InvalidRequest", "The encryption parameters are not applicable to this object.")
	case errors.Is(err, kms.ErrNotFound):
		return s3err(http.StatusBadRequest, "KMS.NotFoundException", "Invalid keyId: "+err.Error())
	case errors.Is(err, kms.ErrDisabled):
		return s3err(http.StatusBadRequest, "KMS.DisabledException", err.Error())
	case errors.Is(err, cloudstore.ErrNoKMS):
		return errKMS
	case errors.Is(err, cloudstore.ErrKMSAnonymous):
		return errKMSSigV2
	case errors.Is(err, cloudstore.ErrKMSAccess):
		return s3err(http.StatusForbidden, "AccessDenied", "Access Denied: this would use a KMS key of another account (SSE-KMS), and a key serves requests of its own account only; objects shared with other accounts are stored with SSE-S3")
	case errors.Is(err, cloudstore.ErrBadEncryption):
		return s3err(http.StatusBadRequest, "InvalidArgument", err.Error())
	case errors.Is(err, cloudstore.ErrBody):
		return errIncompleteBody
	case errors.Is(err, cloudstore.ErrUnavailable), errors.Is(err, syscall.ENOSPC):
		return errUnavailable
	}
	return s3err(http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
}

type errorBody struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string
	Message   string
	Resource  string
	Region    string `xml:",omitempty"`
	RequestID string `xml:"RequestId"`
}

// writeError answers e as S3 does: an XML body, none for HEAD.
func writeError(w http.ResponseWriter, r *http.Request, e *Error, requestID string) {
	if e.Region != "" {
		// For a HEAD, whose answer has no body, the only place it is.
		w.Header().Set("X-Amz-Bucket-Region", e.Region)
	}
	if e.Status == http.StatusNotModified || r.Method == http.MethodHead {
		w.WriteHeader(e.Status)
		return
	}
	body := errorBody{Code: e.Code, Message: e.Message, Resource: r.URL.Path, Region: e.Region, RequestID: requestID}
	if isControl(r) {
		// S3 Control wraps its errors, as the AWS query protocols do:
		// the SDKs read the code only there.
		type wrapped struct {
			XMLName   xml.Name `xml:"ErrorResponse"`
			Error     errorBody
			RequestID string `xml:"RequestId"`
		}
		body.RequestID = ""
		writeXML(w, e.Status, wrapped{Error: body, RequestID: requestID})
		return
	}
	writeXML(w, e.Status, body)
}

func writeXML(w http.ResponseWriter, status int, v any) {
	data, err := xml.Marshal(v)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte("<Error><Code>InternalError</Code></Error>")
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	w.Write([]byte(xml.Header))
	w.Write(data)
}
