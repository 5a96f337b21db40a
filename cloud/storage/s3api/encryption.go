package s3api

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/kms"
	"github.com/latticenet/lattice/cloud/storage/s3policy"
)

// Server-side encryption headers, as S3 names them.
const (
	hSSE          = "X-Amz-Server-Side-Encryption"
	hSSEKMSKeyID  = "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id"
	hSSEContext   = "X-Amz-Server-Side-Encryption-Context"
	hSSEBucketKey = "X-Amz-Server-Side-Encryption-Bucket-Key-Enabled"
	// SSE-C's, for the object written or read; a copy's source has the
	// same under hCopySSEC.
	hSSEC     = "X-Amz-Server-Side-Encryption-Customer-"
	hCopySSEC = "X-Amz-Copy-Source-Server-Side-Encryption-Customer-"
)

var (
	errKMS = s3err(http.StatusNotImplemented, "NotImplemented",
		"SSE-KMS needs a key management service, and none is configured for this endpoint: use SSE-S3 (x-amz-server-side-encryption: AES256) or SSE-C.")
	errSSEValue = s3err(http.StatusBadRequest, "InvalidArgument",
		"The encryption method specified is not supported: x-amz-server-side-encryption takes AES256, aws:kms or aws:kms:dsse.")
	errKMSWithoutSSE = s3err(http.StatusBadRequest, "InvalidArgument",
		"Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms")
	errKMSContext = s3err(http.StatusBadRequest, "InvalidArgument",
		"The header 'x-amz-server-side-encryption-context' shall be Base64-encoded UTF-8 string holding JSON which represents a string-string map")
	errKMSSigV2 = s3err(http.StatusBadRequest, "InvalidArgument",
		"Requests specifying Server Side Encryption with AWS KMS managed keys require AWS Signature Version 4.")
)

// maxKMSContext bounds the encryption context a client gives (its
// base64 form), well inside a request header.
const maxKMSContext = 4 << 10

// kmsContext reads the client's encryption context of r (nil for none):
// base64 of a JSON object of strings, which may not rename the object
// (aws:s3:arn, when given, must be the object's own ARN).
func kmsContext(r *request) (map[string]string, error) {
	v := r.Header.Get(hSSEContext)
	if v == "" {
		return nil, nil
	}
	if len(v) > maxKMSContext {
		return nil, errKMSContext
	}
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil || !utf8.Valid(raw) {
		return nil, errKMSContext
	}
	var pairs map[string]string
	if err := json.Unmarshal(raw, &pairs); err != nil || pairs == nil {
		return nil, errKMSContext
	}
	if arn, ok := pairs["aws:s3:arn"]; ok && arn != s3policy.Resource(r.bucket, r.key) {
		return nil, s3err(http.StatusBadRequest, "InvalidArgument", "The encryption context's aws:s3:arn must be the object's ARN, "+s3policy.Resource(r.bucket, r.key))
	}
	return pairs, nil
}

// bucketKeyHeader reads x-amz-server-side-encryption-bucket-key-enabled.
func bucketKeyHeader(r *request) (bool, error) {
	switch v := r.Header.Get(hSSEBucketKey); strings.ToLower(v) {
	case "":
		return false, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	default:
		return false, s3err(http.StatusBadRequest, "InvalidArgument", "x-amz-server-side-encryption-bucket-key-enabled must be true or false, not "+v)
	}
}

// customerKey reads the SSE-C headers under prefix (hSSEC or hCopySSEC):
// the key (nil when there are none) and the base64 MD5 of the key the
// client sent, as S3 checks them.
func customerKey(r *request, prefix string) (key []byte, keyMD5 string, err error) {
	alg, k, sum := r.Header.Get(prefix+"Algorithm"), r.Header.Get(prefix+"Key"), r.Header.Get(prefix+"Key-Md5")
	if alg == "" && k == "" && sum == "" {
		return nil, "", nil
	}
	switch {
	case alg == "":
		return nil, "", s3err(http.StatusBadRequest, "InvalidArgument", "Requests specifying Server Side Encryption with Customer provided keys must provide a valid encryption algorithm.")
	case alg != "AES256":
		return nil, "", s3err(http.StatusBadRequest, "InvalidEncryptionAlgorithmError", "The Encryption request you specified is not valid. Supported value: AES256.")
	case k == "":
		return nil, "", s3err(http.StatusBadRequest, "InvalidArgument", "Requests specifying Server Side Encryption with Customer provided keys must provide an appropriate secret key.")
	case sum == "":
		return nil, "", s3err(http.StatusBadRequest, "InvalidArgument", "Requests specifying Server Side Encryption with Customer provided keys must provide the client calculated MD5 of the secret key.")
	}
	key, err = base64.StdEncoding.DecodeString(k)
	if err != nil || len(key) != 32 {
		return nil, "", s3err(http.StatusBadRequest, "InvalidArgument", "The secret key was invalid for the specified algorithm.")
	}
	got := md5.Sum(key)
	if base64.StdEncoding.EncodeToString(got[:]) != sum {
		return nil, "", s3err(http.StatusBadRequest, "InvalidArgument", "The calculated MD5 hash of the key did not match the hash that was provided.")
	}
	if !secureTransport(r) {
		return nil, "", s3err(http.StatusBadRequest, "InvalidRequest",
			"Requests specifying Server Side Encryption with Customer provided keys must be made over a secure connection (or from this host).")
	}
	return key, sum, nil
}

// secureTransport tells whether a customer's key may travel on r's
// connection: TLS, or loopback (this host, or a TLS proxy on it). S3
// refuses SSE-C over plain HTTP, where the key would cross the network
// in the clear.
func secureTransport(r *request) bool {
	if r.TLS != nil {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// writeEncryption reads how a write asks its object to be encrypted: nil
// for no request (the bucket's default applies), SSE-S3, SSE-KMS,
// DSSE-KMS or SSE-C.
func (s *Server) writeEncryption(r *request) (*cloudstore.SSE, string, error) {
	key, keyMD5, err := customerKey(r, hSSEC)
	if err != nil {
		return nil, "", err
	}
	mode := r.Header.Get(hSSE)
	kmsMode := mode == cloudstore.SSEKMS || mode == cloudstore.SSEDSSE
	switch {
	case kmsMode && key == nil:
		if s.st.KMS() == nil {
			return nil, "", errKMS
		}
		if r.v2 || r.auth == nil { // SigV2, or anonymous
			return nil, "", errKMSSigV2
		}
		pairs, err := kmsContext(r)
		if err != nil {
			return nil, "", err
		}
		bucketKey, err := bucketKeyHeader(r)
		if err != nil {
			return nil, "", err
		}
		// DSSE-KMS takes the bucket-key header; the store, as S3, applies none.
		return &cloudstore.SSE{Mode: mode, KMSKey: r.Header.Get(hSSEKMSKeyID), Context: pairs, BucketKey: bucketKey}, "", nil
	case !kmsMode && (r.Header.Get(hSSEKMSKeyID) != "" || r.Header.Get(hSSEContext) != ""):
		return nil, "", errKMSWithoutSSE
	case key != nil && mode != "":
		return nil, "", s3err(http.StatusBadRequest, "InvalidArgument", "Server Side Encryption with Customer provided key is incompatible with the encryption method specified")
	case key != nil:
		return &cloudstore.SSE{Mode: cloudstore.SSEC, CustomerKey: key}, keyMD5, nil
	case mode == "":
		return nil, "", nil
	case mode == cloudstore.SSES3:
		return &cloudstore.SSE{Mode: cloudstore.SSES3}, "", nil
	}
	return nil, "", errSSEValue
}

// readEncryption reads the SSE-C key of a read (GetObject, HeadObject),
// which is all a read may say of encryption: S3 refuses the SSE-S3 header
// on a read.
func readEncryption(r *request) ([]byte, string, error) {
	if r.Header.Get(hSSE) != "" || r.Header.Get(hSSEKMSKeyID) != "" {
		return nil, "", s3err(http.StatusBadRequest, "InvalidArgument", "x-amz-server-side-encryption is for writes: a read of an encrypted object needs no header (SSE-S3) or the customer key (SSE-C).")
	}
	return customerKey(r, hSSEC)
}

// setEncryptionHeaders answers how obj is encrypted, as S3 does: the
// algorithm for SSE-S3; for SSE-KMS and DSSE-KMS the algorithm, the key's
// ARN and whether a bucket key was asked for; for SSE-C the algorithm and
// the MD5 of the key the request gave.
func (s *Server) setEncryptionHeaders(h http.Header, enc *cloudstore.Encryption, keyMD5 string) {
	switch {
	case enc == nil:
	case enc.Mode == cloudstore.SSES3:
		h.Set(hSSE, cloudstore.SSES3)
	case enc.UsesKMS():
		h.Set(hSSE, enc.Mode)
		h.Set(hSSEKMSKeyID, kms.ARN(s.opts.Region, enc.KeyOwner, enc.KeyID))
		if enc.BucketKey {
			h.Set(hSSEBucketKey, "true")
		}
	case enc.Mode == cloudstore.SSEC:
		h.Set(hSSEC+"Algorithm", "AES256")
		if keyMD5 != "" {
			h.Set(hSSEC+"Key-Md5", keyMD5)
		}
	}
}

// encryptionRoute returns the operation of a request for ?encryption on
// a bucket, if r is one.
func encryptionRoute(r *request, q url.Values) (operation, bool) {
	if r.key != "" || !q.Has("encryption") {
		return operation{}, false
	}
	switch r.Method {
	case http.MethodGet:
		return operation{name: "GetBucketEncryption", read: true, run: (*Server).getBucketEncryption}, true
	case http.MethodPut:
		return operation{name: "PutBucketEncryption", write: true, run: (*Server).putBucketEncryption}, true
	case http.MethodDelete:
		return operation{name: "DeleteBucketEncryption", write: true, run: (*Server).deleteBucketEncryption}, true
	}
	return methodNotAllowed("BucketEncryption"), true
}

type encryptionConfigXML struct {
	XMLName xml.Name `xml:"ServerSideEncryptionConfiguration"`
	Xmlns   string   `xml:"xmlns,attr,omitempty"`
	Rules   []struct {
		Default *struct {
			SSEAlgorithm   string
			KMSMasterKeyID string `xml:",omitempty"`
		} `xml:"ApplyServerSideEncryptionByDefault"`
		BucketKeyEnabled *bool `xml:",omitempty"`
	} `xml:"Rule"`
}

var errNoEncryptionConfig = s3err(http.StatusNotFound, "ServerSideEncryptionConfigurationNotFoundError", "The server side encryption configuration was not found")

func (s *Server) getBucketEncryption(w http.ResponseWriter, r *request) error {
	bk, err := s.st.Bucket(r.account, r.bucket)
	if err != nil {
		return err
	}
	if bk.Encryption == "" {
		return errNoEncryptionConfig
	}
	type rule struct {
		SSEAlgorithm     string `xml:"ApplyServerSideEncryptionByDefault>SSEAlgorithm"`
		KMSMasterKeyID   string `xml:"ApplyServerSideEncryptionByDefault>KMSMasterKeyID,omitempty"`
		BucketKeyEnabled bool
	}
	ru := rule{SSEAlgorithm: bk.Encryption, BucketKeyEnabled: bk.BucketKey}
	if (bk.Encryption == cloudstore.SSEKMS || bk.Encryption == cloudstore.SSEDSSE) && bk.EncryptionKey != "" {
		ru.KMSMasterKeyID = kms.ARN(s.opts.Region, bk.Account, bk.EncryptionKey)
	}
	writeXML(w, http.StatusOK, struct {
		XMLName xml.Name `xml:"ServerSideEncryptionConfiguration"`
		Xmlns   string   `xml:"xmlns,attr"`
		Rule    rule
	}{Xmlns: xmlns, Rule: ru})
	return nil
}

func (s *Server) putBucketEncryption(w http.ResponseWriter, r *request) error {
	bk, err := s.st.Bucket(r.account, r.bucket)
	if err != nil {
		return err
	}
	// S3 requires the body's integrity to be checked here too.
	if r.Header.Get("Content-Md5") == "" && (r.sums == nil || len(r.sums.Algorithms()) == 0) {
		return s3err(http.StatusBadRequest, "InvalidRequest", "Missing required header for this request: Content-MD5 (or an x-amz-checksum-* header)")
	}
	data, err := readBody(r.body, 64<<10)
	if err != nil {
		return err
	}
	var doc encryptionConfigXML
	if err := xml.Unmarshal(data, &doc); err != nil || len(doc.Rules) != 1 || doc.Rules[0].Default == nil {
		return errMalformedXML
	}
	d := doc.Rules[0].Default
	conf := cloudstore.DefaultEncryption{Mode: d.SSEAlgorithm, BucketKey: doc.Rules[0].BucketKeyEnabled != nil && *doc.Rules[0].BucketKeyEnabled}
	switch d.SSEAlgorithm {
	case cloudstore.SSEKMS, cloudstore.SSEDSSE:
		if s.st.KMS() == nil {
			return errKMS
		}
		// The key is named as a write's header would; the configuration
		// keeps its id, so a name given to another key later changes
		// nothing. No key is the account's default key.
		if d.KMSMasterKeyID != "" {
			k, err := s.st.KMS().Resolve(r.Context(), bk.Account, d.KMSMasterKeyID)
			if err != nil {
				return err
			}
			conf.KMSKeyID = k.ID
		}
	case cloudstore.SSES3:
		if d.KMSMasterKeyID != "" {
			return s3err(http.StatusBadRequest, "InvalidArgument", "a KMSMasterKeyID is for SSEAlgorithm aws:kms, not AES256")
		}
	default:
		return errMalformedXML
	}
	if err := s.st.SetBucketEncryption(r.account, r.bucket, conf); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteBucketEncryption(w http.ResponseWriter, r *request) error {
	if err := s.st.SetBucketEncryption(r.account, r.bucket, cloudstore.DefaultEncryption{}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
