package apitest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3acl"
)

// SharedObjects are the objects ShareBucket writes, and whether a public
// bucket's toggle serves each to everyone (cloudstore.ServedPublicly).
// Each holds "secret " and its key.
var SharedObjects = map[string]bool{
	"plain":         true,  // the bucket owner's
	"sealed":        false, // the owner's, under its default SSE-KMS key
	"carol-private": false, // written by account carol, with a private ACL
	"carol-public":  true,  // written by carol, with a public-read ACL
}

// ShareBucket makes owner's bucket public with its ACLs enabled
// (ObjectWriter) and writes SharedObjects into it at now. The store needs
// a key service.
func ShareBucket(t testing.TB, st *cloudstore.Store, owner, bucket string, now time.Time) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.KMS().Resolve(ctx, owner, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateBucket(owner, bucket, now, func(b *cloudstore.Bucket) {
		b.Public, b.Ownership = true, cloudstore.OwnershipWriter
	}); err != nil {
		t.Fatal(err)
	}
	acl := func(canned string) []s3acl.Grant {
		g, err := s3acl.Canned(canned, "carol", owner)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	for key, o := range map[string]cloudstore.PutOptions{
		"plain":         {},
		"sealed":        {Encrypt: &cloudstore.SSE{Mode: cloudstore.SSEKMS}},
		"carol-private": {Owner: "carol", ACL: acl("private")},
		"carol-public":  {Owner: "carol", ACL: acl("public-read")},
	} {
		o.Max, o.Now = 1<<20, now
		if _, err := st.Put(ctx, owner, bucket, key, strings.NewReader("secret "+key), o); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
}
