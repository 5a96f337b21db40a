package cloudapi

// Unit tests of presigned tokens: what verifies, what is refused and why,
// and a fuzz target for the parser of the token text, which comes from
// anyone.

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

var (
	tokenKey   = []byte("0123456789abcdef0123456789abcdef")
	tokenNow   = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	goodClaims = claims{Account: "acme", KeyID: "key_1", Bucket: "pics", Key: "a/b.txt", Method: "GET", Expires: tokenNow.Add(time.Hour).Unix()}
)

func TestTokenRoundTrip(t *testing.T) {
	tok := signToken(tokenKey, goodClaims)
	if strings.ContainsAny(tok, "+/=") {
		t.Errorf("token %q is not unpadded base64url", tok)
	}
	c, err := verifyToken(tokenKey, tok, tokenNow)
	want := goodClaims
	want.V = tokenVersion
	if err != nil || c != want {
		t.Fatalf("verifyToken = %+v, %v; want %+v", c, err, want)
	}
	// Valid until the last instant before Expires.
	if _, err := verifyToken(tokenKey, tok, time.Unix(goodClaims.Expires, 0).Add(-time.Nanosecond)); err != nil {
		t.Errorf("just before expiry: %v", err)
	}
}

func TestTokenRefused(t *testing.T) {
	tok := signToken(tokenKey, goodClaims)
	payload, mac, _ := strings.Cut(tok, ".")
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	signRaw := func(p string) string { // a payload signed with the right key
		return base64.RawURLEncoding.EncodeToString([]byte(p)) + "." + base64.RawURLEncoding.EncodeToString(tokenMAC(tokenKey, []byte(p)))
	}
	tests := []struct {
		name, token string
		now         time.Time
		want        error
	}{
		{"expired", tok, time.Unix(goodClaims.Expires, 0), errTokenExpired},
		{"long expired", tok, tokenNow.Add(30 * 24 * time.Hour), errTokenExpired},
		{"empty", "", tokenNow, errTokenInvalid},
		{"no dot", payload + mac, tokenNow, errTokenInvalid},
		{"two dots", tok + ".x", tokenNow, errTokenInvalid},
		{"payload changed", flip(payload, 5) + "." + mac, tokenNow, errTokenInvalid},
		{"mac changed", payload + "." + flip(mac, 3), tokenNow, errTokenInvalid},
		{"mac cut", payload + "." + mac[:len(mac)-2], tokenNow, errTokenInvalid},
		{"padding added", payload + "." + mac + "=", tokenNow, errTokenInvalid},
		{"line break inside", payload[:4] + "\r\n" + payload[4:] + "." + mac, tokenNow, errTokenInvalid},
		{"other key", signToken([]byte("another key of thirty-two bytes!"), goodClaims), tokenNow, errTokenInvalid},
		{"too long", strings.Repeat("A", maxToken+1), tokenNow, errTokenInvalid},
		{"unknown field", signRaw(`{"v":1,"a":"acme","i":"k","b":"pics","k":"x","m":"GET","e":9999999999,"z":1}`), tokenNow, errTokenInvalid},
		{"data after", signRaw(`{"v":1,"a":"acme","i":"k","b":"pics","k":"x","m":"GET","e":9999999999} {}`), tokenNow, errTokenInvalid},
		{"other version", signRaw(`{"v":2,"a":"acme","i":"k","b":"pics","k":"x","m":"GET","e":9999999999}`), tokenNow, errTokenInvalid},
		{"no account", signRaw(`{"v":1,"i":"k","b":"pics","k":"x","m":"GET","e":9999999999}`), tokenNow, errTokenInvalid},
		{"other method", signRaw(`{"v":1,"a":"acme","i":"k","b":"pics","k":"x","m":"DELETE","e":9999999999}`), tokenNow, errTokenInvalid},
		{"not JSON", signRaw(`hello`), tokenNow, errTokenInvalid},
	}
	for _, tt := range tests {
		_, err := verifyToken(tokenKey, tt.token, tt.now)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: verifyToken error %v, want %v", tt.name, err, tt.want)
		}
	}
	_, err := verifyToken(tokenKey, tok, time.Unix(goodClaims.Expires, 0))
	if want := "expired at " + time.Unix(goodClaims.Expires, 0).UTC().Format(time.RFC3339); !strings.Contains(err.Error(), want) {
		t.Errorf("expiry error %q does not say %q", err, want)
	}
}

// FuzzVerifyToken: any text is refused or verified without panicking, and
// what verifies is exactly the token signToken makes of its claims: no
// second spelling of a token is accepted.
func FuzzVerifyToken(f *testing.F) {
	f.Add(signToken(tokenKey, goodClaims))
	put := goodClaims
	put.Method, put.Key = "PUT", strings.Repeat("k", 1024)
	f.Add(signToken(tokenKey, put))
	f.Add("")
	f.Add(".")
	f.Add("e30.AAAA")
	f.Fuzz(func(t *testing.T, token string) {
		c, err := verifyToken(tokenKey, token, tokenNow)
		if err != nil {
			if !errors.Is(err, errTokenInvalid) && !errors.Is(err, errTokenExpired) {
				t.Fatalf("verifyToken(%q): unexpected error %v", token, err)
			}
			return
		}
		if again := signToken(tokenKey, c); again != token {
			t.Fatalf("verifyToken accepted %q, which signs as %q", token, again)
		}
	})
}
