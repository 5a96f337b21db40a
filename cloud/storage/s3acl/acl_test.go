package s3acl_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/latticenet/lattice/cloud/storage/s3acl"
)

func user(id string, p s3acl.Permission) s3acl.Grant {
	return s3acl.Grant{Grantee: s3acl.Grantee{Type: s3acl.TypeUser, ID: id}, Permission: p}
}

func group(uri string, p s3acl.Permission) s3acl.Grant {
	return s3acl.Grant{Grantee: s3acl.Grantee{Type: s3acl.TypeGroup, URI: uri}, Permission: p}
}

func TestCanned(t *testing.T) {
	for _, tc := range []struct {
		name, owner, bucketOwner string
		want                     []s3acl.Grant
	}{
		{"private", "bob", "alice", []s3acl.Grant{user("bob", s3acl.FullControl)}},
		{"public-read", "alice", "alice", []s3acl.Grant{user("alice", s3acl.FullControl), group(s3acl.AllUsers, s3acl.Read)}},
		{"public-read-write", "alice", "alice", []s3acl.Grant{user("alice", s3acl.FullControl), group(s3acl.AllUsers, s3acl.Read), group(s3acl.AllUsers, s3acl.Write)}},
		{"authenticated-read", "alice", "alice", []s3acl.Grant{user("alice", s3acl.FullControl), group(s3acl.AuthenticatedUsers, s3acl.Read)}},
		{"bucket-owner-read", "bob", "alice", []s3acl.Grant{user("bob", s3acl.FullControl), user("alice", s3acl.Read)}},
		{"bucket-owner-read", "alice", "alice", []s3acl.Grant{user("alice", s3acl.FullControl)}},
		{"bucket-owner-full-control", "bob", "alice", []s3acl.Grant{user("bob", s3acl.FullControl), user("alice", s3acl.FullControl)}},
		{"bucket-owner-full-control", "alice", "alice", []s3acl.Grant{user("alice", s3acl.FullControl)}},
		{"log-delivery-write", "alice", "alice", []s3acl.Grant{user("alice", s3acl.FullControl), group(s3acl.LogDelivery, s3acl.Write), group(s3acl.LogDelivery, s3acl.ReadACP)}},
		{"aws-exec-read", "alice", "alice", []s3acl.Grant{user("alice", s3acl.FullControl)}},
	} {
		got, err := s3acl.Canned(tc.name, tc.owner, tc.bucketOwner)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Canned(%q, %q, %q) = %v, %v; want %v", tc.name, tc.owner, tc.bucketOwner, got, err, tc.want)
		}
	}
	if _, err := s3acl.Canned("public", "a", "a"); !errors.Is(err, s3acl.ErrInvalidArgument) {
		t.Errorf("Canned(public) = %v, want ErrInvalidArgument", err)
	}
}

func TestParseGrantHeader(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  []s3acl.Grant
		err   error
	}{
		{`id="bob"`, []s3acl.Grant{user("bob", s3acl.Read)}, nil},
		{`id=bob, id="carol"`, []s3acl.Grant{user("bob", s3acl.Read), user("carol", s3acl.Read)}, nil},
		{`uri="http://acs.amazonaws.com/groups/global/AllUsers"`, []s3acl.Grant{group(s3acl.AllUsers, s3acl.Read)}, nil},
		{`ID="bob",URI="http://acs.amazonaws.com/groups/global/AuthenticatedUsers"`, []s3acl.Grant{user("bob", s3acl.Read), group(s3acl.AuthenticatedUsers, s3acl.Read)}, nil},
		{`emailAddress="bob@example.com"`, nil, s3acl.ErrUnresolvableEmail},
		{`bob`, nil, s3acl.ErrInvalidArgument},
		{`arn="x"`, nil, s3acl.ErrInvalidArgument},
		{`id=""`, nil, s3acl.ErrInvalidArgument},
		{`id="bob smith"`, nil, s3acl.ErrInvalidArgument},
		{`uri="http://acs.amazonaws.com/groups/global/Everyone"`, nil, s3acl.ErrInvalidArgument},
	} {
		got, err := s3acl.ParseGrantHeader(s3acl.Read, tc.value)
		if !errors.Is(err, tc.err) || tc.err == nil && !slices.Equal(got, tc.want) {
			t.Errorf("ParseGrantHeader(%q) = %v, %v; want %v, %v", tc.value, got, err, tc.want, tc.err)
		}
	}
}

func TestParsePolicy(t *testing.T) {
	body, err := os.ReadFile("testdata/policy.xml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := s3acl.ParsePolicy(body)
	if err != nil {
		t.Fatal(err)
	}
	want := []s3acl.Grant{user("alice", s3acl.FullControl), user("bob", s3acl.Read), group(s3acl.AuthenticatedUsers, s3acl.ReadACP)}
	if p.Owner != "alice" || !slices.Equal(p.Grants, want) {
		t.Fatalf("ParsePolicy = %+v, want owner alice and %v", p, want)
	}
	// What Document writes, ParsePolicy reads back the same.
	out, err := xml.Marshal(s3acl.Document("alice", want))
	if err != nil {
		t.Fatal(err)
	}
	if back, err := s3acl.ParsePolicy(out); err != nil || back.Owner != "alice" || !slices.Equal(back.Grants, want) {
		t.Fatalf("round trip of %s = %+v, %v", out, back, err)
	}

	grant := func(grantee, perm string) []byte {
		return []byte(`<AccessControlPolicy><AccessControlList><Grant>` + grantee + perm + `</Grant></AccessControlList></AccessControlPolicy>`)
	}
	const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`
	for _, tc := range []struct {
		name string
		body []byte
		err  error
	}{
		{"not XML", []byte("<AccessControlPolicy"), s3acl.ErrMalformed},
		{"another document", []byte("<Policy/>"), s3acl.ErrMalformed},
		{"no permission", grant(`<Grantee `+xsi+` xsi:type="CanonicalUser"><ID>bob</ID></Grantee>`, ""), s3acl.ErrMalformed},
		{"no grantee", grant("", "<Permission>READ</Permission>"), s3acl.ErrMalformed},
		{"no type", grant(`<Grantee><ID>bob</ID></Grantee>`, "<Permission>READ</Permission>"), s3acl.ErrMalformed},
		{"unknown type", grant(`<Grantee `+xsi+` xsi:type="Role"><ID>bob</ID></Grantee>`, "<Permission>READ</Permission>"), s3acl.ErrInvalidArgument},
		{"unknown permission", grant(`<Grantee `+xsi+` xsi:type="CanonicalUser"><ID>bob</ID></Grantee>`, "<Permission>DELETE</Permission>"), s3acl.ErrInvalidArgument},
		{"e-mail", grant(`<Grantee `+xsi+` xsi:type="AmazonCustomerByEmail"><EmailAddress>b@example.com</EmailAddress></Grantee>`, "<Permission>READ</Permission>"), s3acl.ErrUnresolvableEmail},
		{"owner without id", []byte(`<AccessControlPolicy><Owner></Owner></AccessControlPolicy>`), s3acl.ErrMalformed},
		{"too large", append([]byte("<AccessControlPolicy>"), bytes.Repeat([]byte(" "), s3acl.MaxPolicySize)...), s3acl.ErrMalformed},
	} {
		if _, err := s3acl.ParsePolicy(tc.body); !errors.Is(err, tc.err) {
			t.Errorf("%s: ParsePolicy = %v, want %v", tc.name, err, tc.err)
		}
	}
}

func TestAllows(t *testing.T) {
	grants := []s3acl.Grant{user("alice", s3acl.FullControl), user("bob", s3acl.Read), group(s3acl.AuthenticatedUsers, s3acl.ReadACP),
		group(s3acl.LogDelivery, s3acl.Write)}
	for _, tc := range []struct {
		requester string
		p         s3acl.Permission
		want      bool
	}{
		{"alice", s3acl.Write, true}, // FULL_CONTROL is every permission
		{"alice", s3acl.WriteACP, true},
		{"bob", s3acl.Read, true},
		{"bob", s3acl.Write, false},
		{"bob", s3acl.ReadACP, true}, // as an authenticated user
		{"carol", s3acl.ReadACP, true},
		{"carol", s3acl.Read, false},
		{"", s3acl.ReadACP, false}, // anonymous is not authenticated
		{"", s3acl.Write, false},   // LogDelivery is nobody here
	} {
		if got := s3acl.Allows(grants, tc.requester, tc.p); got != tc.want {
			t.Errorf("Allows(%q, %s) = %v, want %v", tc.requester, tc.p, got, tc.want)
		}
	}
	public := append(slices.Clone(grants), group(s3acl.AllUsers, s3acl.Read))
	if !s3acl.Allows(public, "", s3acl.Read) || s3acl.Allows(public, "", s3acl.Write) {
		t.Error("AllUsers READ: anonymous reads only")
	}
	if s3acl.Public(grants[:2]) || !s3acl.Public(grants) || !s3acl.Public(public) {
		t.Error("Public: AuthenticatedUsers and AllUsers grants are public, accounts' are not")
	}
	if s3acl.GrantsOthers(grants[:1], "alice") || !s3acl.GrantsOthers(grants[:2], "alice") || !s3acl.GrantsOthers(grants[2:3], "alice") {
		t.Error("GrantsOthers: only the owner's grants are not others'")
	}
}

// FuzzParsePolicy: any bytes parse or fail with one of the package's
// errors, never panic, and what parses is only grants Allows can judge.
func FuzzParsePolicy(f *testing.F) {
	body, err := os.ReadFile("testdata/policy.xml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body)
	f.Add([]byte(`<AccessControlPolicy><AccessControlList/></AccessControlPolicy>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := s3acl.ParsePolicy(body)
		if err != nil {
			var e *s3acl.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *s3acl.Error", err)
			}
			return
		}
		if len(p.Grants) > s3acl.MaxGrants {
			t.Fatalf("%d grants parsed", len(p.Grants))
		}
		for _, g := range p.Grants {
			if g.Grantee.Type != s3acl.TypeUser && g.Grantee.Type != s3acl.TypeGroup {
				t.Fatalf("grantee type %q parsed", g.Grantee.Type)
			}
		}
	})
}

// FuzzParseGrantHeader: any header value parses or fails with one of the
// package's errors.
func FuzzParseGrantHeader(f *testing.F) {
	f.Add(`id="bob", uri="http://acs.amazonaws.com/groups/global/AllUsers"`)
	f.Add(`emailAddress="a@example.com"`)
	f.Fuzz(func(t *testing.T, v string) {
		if _, err := s3acl.ParseGrantHeader(s3acl.Write, v); err != nil {
			var e *s3acl.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *s3acl.Error", err)
			}
		}
	})
}
