package s3api

import (
	"encoding/xml"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// FuzzParseLifecycle checks that a LifecycleConfiguration document either
// is refused with an S3 error or gives rules that keep S3's rules (at most
// 1000, ids unique and at most 255 bytes, each with an action, positive
// day counts, valid tags, consistent sizes, text the store keeps as is),
// and that the rules read back (as GetBucketLifecycleConfiguration writes
// them) parse to the same rules.
func FuzzParseLifecycle(f *testing.F) {
	for _, doc := range []string{
		`<LifecycleConfiguration><Rule><ID>a</ID><Filter><Prefix>tmp/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>7</Days></Expiration></Rule></LifecycleConfiguration>`,
		`<LifecycleConfiguration><Rule><Prefix>x</Prefix><Status>Disabled</Status><Expiration><Date>2030-01-01T00:00:00.000Z</Date></Expiration></Rule></LifecycleConfiguration>`,
		`<LifecycleConfiguration><Rule><Filter><And><Prefix>p</Prefix><Tag><Key>k</Key><Value>v</Value></Tag><ObjectSizeGreaterThan>1</ObjectSizeGreaterThan></And></Filter><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule></LifecycleConfiguration>`,
		`<LifecycleConfiguration><Rule><Filter></Filter><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule></LifecycleConfiguration>`,
		`<LifecycleConfiguration><Rule><Filter><Tag><Key>k</Key><Value></Value></Tag></Filter><Status>Enabled</Status><Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition></Rule></LifecycleConfiguration>`,
		`<LifecycleConfiguration><Rule><Filter><And><Prefix></Prefix></And></Filter><Status>Enabled</Status><Expiration><Days>0</Days></Expiration></Rule></LifecycleConfiguration>`,
	} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		rules, err := parseLifecycle(doc)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("parseLifecycle(%q): %v, not an S3 error", doc, err)
			}
			return
		}
		if len(rules) == 0 || len(rules) > cloudstore.MaxRules {
			t.Fatalf("parseLifecycle(%q): %d rules", doc, len(rules))
		}
		ids := map[string]bool{}
		text := func(what, s string) {
			if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
				t.Fatalf("parseLifecycle(%q): %s %q is not text the store keeps", doc, what, s)
			}
		}
		for _, r := range rules {
			text("id", r.ID)
			text("prefix", r.Prefix)
			if r.ID != "" && ids[r.ID] || len(r.ID) > cloudstore.MaxRuleID {
				t.Fatalf("parseLifecycle(%q): id %q repeated or too long", doc, r.ID)
			}
			ids[r.ID] = true
			if r.ExpireDays == 0 && r.ExpireDate.IsZero() && r.ExpiredObjectDeleteMarker == nil && r.NoncurrentDays == 0 && r.AbortDays == 0 {
				t.Fatalf("parseLifecycle(%q): a rule with no action: %+v", doc, r)
			}
			for _, d := range []int{r.ExpireDays, r.NoncurrentDays, r.AbortDays} {
				if d < 0 || d > cloudstore.MaxExpireDays {
					t.Fatalf("parseLifecycle(%q): days %d", doc, d)
				}
			}
			for k, v := range r.Tags {
				if err := checkTag(k, v); err != nil {
					t.Fatalf("parseLifecycle(%q): tag %q=%q: %v", doc, k, v, err)
				}
			}
			if r.SizeGreaterThan != nil && r.SizeLessThan != nil && *r.SizeGreaterThan >= *r.SizeLessThan {
				t.Fatalf("parseLifecycle(%q): sizes crossed", doc)
			}
		}
		back := lifecycleXML{}
		for _, r := range rules {
			back.Rules = append(back.Rules, ruleDoc(r))
		}
		data, err := xml.Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseLifecycle(data)
		if err != nil || !reflect.DeepEqual(again, rules) {
			t.Fatalf("parseLifecycle(%q) = %+v, read back as %s and parsed to %+v, %v", doc, rules, data, again, err)
		}
	})
}
