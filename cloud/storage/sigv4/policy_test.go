package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestVerifyPolicy checks POST policy signatures, the good one computed
// here step by step as S3 documents it.
func TestVerifyPolicy(t *testing.T) {
	const policy = "eyJleHBpcmF0aW9uIjoiMjAzMC0wMS0wMVQwMDowMDowMFoiLCJjb25kaXRpb25zIjpbXX0="
	mac := func(key []byte, s string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
	k := mac(mac(mac(mac([]byte("AWS4"+exampleSecret), "20130524"), "us-east-1"), "s3"), "aws4_request")
	good := hex.EncodeToString(mac(k, policy))
	cred := exampleID + "/20130524/us-east-1/s3/aws4_request"
	tests := []struct {
		name, credential, date, signature, want string
	}{
		{"good", cred, "20130524T000000Z", good, ""},
		{"other policy's signature", cred, "20130524T000000Z", hex.EncodeToString(mac(k, policy+"x")), "SignatureDoesNotMatch"},
		{"unknown key", "NOBODY/20130524/us-east-1/s3/aws4_request", "20130524T000000Z", good, "InvalidAccessKeyId"},
		{"date not the credential's", cred, "20130525T000000Z", good, "InvalidArgument"},
		{"bad date", cred, "2013-05-24", good, "InvalidArgument"},
		{"bad credential", exampleID + "/20130524/us-east-1/s3", "20130524T000000Z", good, "InvalidArgument"},
		{"another service", exampleID + "/20130524/us-east-1/ec2/aws4_request", "20130524T000000Z", good, "InvalidArgument"},
	}
	for _, tt := range tests {
		a, err := VerifyPolicy(policy, tt.credential, tt.date, tt.signature, lookup)
		if got := code(err); got != tt.want {
			t.Errorf("%s: VerifyPolicy = %v, want code %q", tt.name, err, tt.want)
		}
		if err == nil && (a.AccessKeyID != exampleID || a.Region != "us-east-1" || a.PayloadHash != UnsignedPayload) {
			t.Errorf("%s: VerifyPolicy = %+v", tt.name, a)
		}
	}
}
