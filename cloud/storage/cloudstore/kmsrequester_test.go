package cloudstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
)

// TestKMSRequester: under a request's KMSRequester the store opens and
// makes data keys with that account's KMS keys alone. Another account's
// request is ErrKMSAccess, an anonymous one ErrKMSAnonymous (which is an
// ErrKMSAccess), on reads, copies, writes and uploads, and nothing is
// written; an SSE-S3 object reads for all; the store's own work (a
// context without a requester) uses any key.
func TestKMSRequester(t *testing.T) {
	b := newSecretStore(t)
	if _, err := b.OpenKMS(bytes.Repeat([]byte{3}, 32), nil); err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	owner, other, anon := KMSRequester(bg, "acme"), KMSRequester(bg, "zeta"), KMSRequester(bg, "")
	put := func(ctx context.Context, key, mode string) error {
		_, err := b.Put(ctx, "acme", "pics", key, bytes.NewReader([]byte("body of "+key)), PutOptions{Max: 1000, Now: t0, Encrypt: &SSE{Mode: mode}})
		return err
	}
	for key, mode := range map[string]string{"kms": SSEKMS, "dsse": SSEDSSE, "s3": SSES3} {
		if err := put(owner, key, mode); err != nil {
			t.Fatalf("the owner's %s put: %v", mode, err)
		}
	}
	read := func(ctx context.Context, key string) error {
		_, body, err := b.OpenObject(ctx, "acme", "pics", key)
		if err != nil {
			return err
		}
		defer body.Close()
		got, err := io.ReadAll(body)
		if err == nil && string(got) != "body of "+key {
			t.Errorf("%s read as %q", key, got)
		}
		return err
	}
	absent := func(key string) {
		t.Helper()
		if _, err := b.Object("acme", "pics", key); !errors.Is(err, ErrNotFound) {
			t.Errorf("a refused write made %s: %v", key, err)
		}
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want error // for the KMS objects
	}{
		{"the owner", owner, nil},
		{"the store itself", bg, nil},
		{"another account", other, ErrKMSAccess},
		{"anonymous", anon, ErrKMSAnonymous},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := read(tc.ctx, "s3"); err != nil {
				t.Errorf("SSE-S3 read: %v", err)
			}
			for _, key := range []string{"kms", "dsse"} {
				if err := read(tc.ctx, key); !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
					t.Errorf("%s read: %v, want %v", key, err, tc.want)
				}
				if _, _, err := b.OpenObjectVersion(tc.ctx, "acme", "pics", key, "", nil); !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
					t.Errorf("%s version read: %v, want %v", key, err, tc.want)
				}
			}
			if tc.want == nil {
				return
			}
			if !errors.Is(tc.want, ErrKMSAccess) {
				t.Errorf("%v is not an ErrKMSAccess", tc.want)
			}
			for _, mode := range []string{SSEKMS, SSEDSSE} {
				if err := put(tc.ctx, "put-"+mode, mode); !errors.Is(err, tc.want) {
					t.Errorf("%s put: %v, want %v", mode, err, tc.want)
				}
				absent("put-" + mode)
				if _, err := b.CreateUpload(tc.ctx, "acme", "pics", "up-"+mode, PutOptions{Encrypt: &SSE{Mode: mode}}); !errors.Is(err, tc.want) {
					t.Errorf("%s upload: %v, want %v", mode, err, tc.want)
				}
			}
			_, err := b.Copy(tc.ctx, "acme", "pics", "kms", "pics", "copy", t0, CopyOptions{Encrypt: &SSE{Mode: SSES3}})
			if !errors.Is(err, tc.want) {
				t.Errorf("a copy of the KMS object: %v, want %v", err, tc.want)
			}
			absent("copy")
			if ups, err := b.Uploads("acme", "pics", "", "", "", "", 100); err != nil || len(ups.Uploads) != 0 {
				t.Errorf("refused uploads were started: %+v, %v", ups, err)
			}
		})
	}
	// An SSE-S3 copy of an SSE-S3 object, and SSE-S3 writes, are anyone's
	// the bucket admits.
	if _, err := b.Copy(other, "acme", "pics", "s3", "pics", "copy-s3", t0, CopyOptions{Encrypt: &SSE{Mode: SSES3}}); err != nil {
		t.Errorf("another account's copy of the SSE-S3 object: %v", err)
	}
	if err := put(anon, "anon-s3", SSES3); err != nil {
		t.Errorf("an anonymous SSE-S3 put: %v", err)
	}
}
