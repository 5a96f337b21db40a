package s3api

import (
	"encoding/xml"
	"net/http"
	"net/url"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3policy"
)

// Block Public Access: PutPublicAccessBlock, GetPublicAccessBlock and
// DeletePublicAccessBlock (?publicAccessBlock on a bucket), kept in the
// store (cloudstore.PublicAccessBlock) and applied wherever anyone could
// be given access:
//
//   - BlockPublicAcls: PutBucketAcl, PutObjectAcl and object writes that
//     ask for public-read are 403 AccessDenied, and so is the REST API's
//     public toggle turned on.
//   - IgnorePublicAcls: the bucket's public toggle gives no anonymous
//     read, here or in the REST API and the CDN (the store's
//     PublicBucket).
//   - BlockPublicPolicy: PutBucketPolicy of a public policy is 403
//     AccessDenied.
//   - RestrictPublicBuckets: a public policy grants anonymous requests
//     nothing; its Deny still refuses.
//
// New buckets have none, as MinIO's and Ceph's, and S3's before April
// 2023 (docs/s3.md says why).

var (
	errNoPublicAccessBlock = s3err(http.StatusNotFound, "NoSuchPublicAccessBlockConfiguration", "The public access block configuration was not found")
	errBlockedACL          = s3err(http.StatusForbidden, "AccessDenied",
		"Access Denied: the Block Public Access settings of the bucket or of its owner's account block public ACLs (BlockPublicAcls)")
	errBlockedPolicy = s3err(http.StatusForbidden, "AccessDenied",
		"Access Denied: the Block Public Access settings of the bucket or of its owner's account block public policies (BlockPublicPolicy)")
)

// publicAccessBlockXML is S3's PublicAccessBlockConfiguration.
type publicAccessBlockXML struct {
	XMLName               xml.Name `xml:"PublicAccessBlockConfiguration"`
	Xmlns                 string   `xml:"xmlns,attr,omitempty"`
	BlockPublicAcls       *xmlBool `xml:"BlockPublicAcls"`
	IgnorePublicAcls      *xmlBool `xml:"IgnorePublicAcls"`
	BlockPublicPolicy     *xmlBool `xml:"BlockPublicPolicy"`
	RestrictPublicBuckets *xmlBool `xml:"RestrictPublicBuckets"`
}

// xmlBool is an XML boolean as S3 reads them: true or false, nothing
// else (encoding/xml would also take 1, 0, True, ...).
type xmlBool bool

func (b *xmlBool) UnmarshalText(text []byte) error {
	switch string(text) {
	case "true":
		*b = true
	case "false":
		*b = false
	default:
		return errMalformedXML
	}
	return nil
}

func (b xmlBool) MarshalText() ([]byte, error) {
	if b {
		return []byte("true"), nil
	}
	return []byte("false"), nil
}

func ptr(b bool) *xmlBool { x := xmlBool(b); return &x }

// publicAccessRoute returns the operation of a ?publicAccessBlock
// request, if r is one.
func publicAccessRoute(r *request, q url.Values) (operation, bool) {
	if !q.Has("publicAccessBlock") {
		return operation{}, false
	}
	if r.key != "" {
		return notImplemented("Unsupported:publicAccessBlock"), true
	}
	switch r.Method {
	case http.MethodGet:
		return operation{name: "GetPublicAccessBlock", read: true, run: (*Server).getPublicAccessBlock}, true
	case http.MethodPut:
		return operation{name: "PutPublicAccessBlock", write: true, run: (*Server).putPublicAccessBlock}, true
	case http.MethodDelete:
		return operation{name: "DeletePublicAccessBlock", write: true, run: (*Server).deletePublicAccessBlock}, true
	}
	return methodNotAllowed("PublicAccessBlock"), true
}

func (s *Server) getPublicAccessBlock(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	b, err := s.st.BucketPublicAccessBlock(r.bucket)
	if err != nil {
		return err
	}
	return writePublicAccessBlock(w, b, xmlns)
}

// writePublicAccessBlock answers settings b in namespace ns, or
// NoSuchPublicAccessBlockConfiguration when there are none.
func writePublicAccessBlock(w http.ResponseWriter, b *cloudstore.PublicAccessBlock, ns string) error {
	if b == nil {
		return errNoPublicAccessBlock
	}
	writeXML(w, http.StatusOK, publicAccessBlockXML{Xmlns: ns, BlockPublicAcls: ptr(b.BlockPublicAcls),
		IgnorePublicAcls: ptr(b.IgnorePublicAcls), BlockPublicPolicy: ptr(b.BlockPublicPolicy), RestrictPublicBuckets: ptr(b.RestrictPublicBuckets)})
	return nil
}

// readPublicAccessBlock reads a PutPublicAccessBlock's body.
func readPublicAccessBlock(r *request) (*cloudstore.PublicAccessBlock, error) {
	body, err := readBody(r.body, 64<<10)
	if err != nil {
		return nil, err
	}
	var doc publicAccessBlockXML
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, errMalformedXML
	}
	flag := func(p *xmlBool) bool { return p != nil && bool(*p) } // an element left out is false, as in S3
	return &cloudstore.PublicAccessBlock{BlockPublicAcls: flag(doc.BlockPublicAcls), IgnorePublicAcls: flag(doc.IgnorePublicAcls),
		BlockPublicPolicy: flag(doc.BlockPublicPolicy), RestrictPublicBuckets: flag(doc.RestrictPublicBuckets)}, nil
}

func (s *Server) putPublicAccessBlock(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	b, err := readPublicAccessBlock(r)
	if err != nil {
		return err
	}
	if err := s.st.SetPublicAccessBlock(r.account, r.bucket, b); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deletePublicAccessBlock(w http.ResponseWriter, r *request) error {
	if err := s.st.SetPublicAccessBlock(r.account, r.bucket, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// publicAccess is the Block Public Access settings of bucket as the
// authorisation of requests applies them: none when the bucket has none.
// Settings that cannot be read are an error, never taken for none.
func (s *Server) publicAccess(bucket string) (cloudstore.PublicAccessBlock, error) {
	b, err := s.st.PublicAccessBlock(bucket)
	if err != nil || b == nil {
		return cloudstore.PublicAccessBlock{}, err
	}
	return *b, nil
}

// blockPublicACL refuses a request asking for a public ACL on a bucket
// whose settings block them.
func (s *Server) blockPublicACL(r *request, public bool) error {
	if !public {
		return nil
	}
	bpa, err := s.publicAccess(r.bucket)
	if err != nil {
		return err
	}
	if bpa.BlockPublicAcls {
		return errBlockedACL
	}
	return nil
}

// anonymousDecision is what p decides for an anonymous request pr to a
// bucket with settings bpa: under RestrictPublicBuckets a public policy
// grants anonymous requests nothing (None), while its Deny still holds.
func anonymousDecision(p *s3policy.Policy, pr s3policy.Request, bpa cloudstore.PublicAccessBlock) s3policy.Decision {
	d := p.Evaluate(pr)
	if d == s3policy.Allowed && bpa.RestrictPublicBuckets && p.Public() {
		return s3policy.None
	}
	return d
}
