package s3api

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// routedOperations routes a request of every method to a bucket and to an
// object with each subresource S3 has (and none), and returns the
// operations they reach.
func routedOperations() []operation {
	subs := []string{"", "acl", "attributes", "cors", "delete", "encryption", "legal-hold", "lifecycle", "list-type=2", "location",
		"logging", "notification", "accelerate", "object-lock", "ownershipControls", "partNumber=1&uploadId=u", "policy", "policyStatus",
		"publicAccessBlock", "replication", "requestPayment", "retention", "tagging", "uploadId=u", "uploads", "versioning",
		"versions", "website"}
	seen := map[string]operation{}
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPost, http.MethodDelete} {
		for _, key := range []string{"", "k"} {
			for _, sub := range subs {
				target := "/b/" + key
				if sub != "" {
					target += "?" + sub
				}
				r := &request{Request: httptest.NewRequest(m, target, nil), bucket: "b", key: key}
				if sub == "" && m == http.MethodPut && key != "" {
					r.Header.Set("x-amz-copy-source", "/b/src")
				}
				o := route(r)
				seen[o.name] = o
			}
		}
	}
	var out []operation
	for _, o := range seen {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b operation) int { return strings.Compare(a.name, b.name) })
	return out
}

// refusal reports whether o only refuses (405, 501, a malformed
// request): its run answers an error without touching the server or the
// request, where a real operation's would need both.
func refusal(o operation) (refuses bool) {
	defer func() {
		if recover() != nil {
			refuses = false
		}
	}()
	return o.run(nil, nil, nil) != nil
}

// TestEveryOperationHasAPolicyAction: every operation a request can reach
// has the policy action S3 asks of it, so that a bucket policy's Deny
// applies to it (an operation without one is not subject to policies),
// but for those no bucket policy governs and the refusals.
func TestEveryOperationHasAPolicyAction(t *testing.T) {
	unpoliced := map[string]bool{"CreateBucket": true} // the bucket does not exist yet
	seen := map[string]bool{}
	for _, o := range routedOperations() {
		seen[o.name] = true
		if _, ok := actions[o.name]; !ok && !unpoliced[o.name] && !refusal(o) {
			t.Errorf("%s has no policy action: a bucket policy's Deny would not apply to it", o.name)
		}
	}
	// The matrix reaches what it should (a guard against a route change
	// that leaves it testing nothing).
	for _, name := range []string{"PutBucketLifecycleConfiguration", "DeleteBucketLifecycle", "PutObjectRetention", "CopyObject", "UploadPart"} {
		if !seen[name] {
			t.Errorf("no request of the matrix reaches %s", name)
		}
	}
}
