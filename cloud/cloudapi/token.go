package cloudapi

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// A presigned token lets whoever holds its URL make one request method on
// one object until a time:
//
//	token   = base64url(payload) "." base64url(HMAC-SHA256(key, payload))
//	payload = JSON of claims
//
// base64url is unpadded (RFC 4648 §5) and decoded strictly, so each token
// has exactly one spelling. The key is derived from the platform's secret
// key, so tokens outlive restarts.

// claims is what a token grants.
type claims struct {
	V       int    `json:"v"` // tokenVersion
	Account string `json:"a"`
	KeyID   string `json:"i"` // the API key that presigned it; revoking it voids the token
	Bucket  string `json:"b"`
	Key     string `json:"k"`
	Method  string `json:"m"` // GET or PUT
	Expires int64  `json:"e"` // Unix seconds; valid while now is before it
}

const (
	tokenVersion = 1
	// maxToken bounds the text verifyToken reads: claims with a
	// 1024-byte key and every other field at its largest fit in well
	// under it.
	maxToken = 8 << 10
)

var (
	errTokenInvalid = errors.New("cloudapi: malformed or tampered token")
	errTokenExpired = errors.New("cloudapi: token expired")
)

var b64 = base64.RawURLEncoding.Strict()

func tokenMAC(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return m.Sum(nil)
}

// signToken makes the token of c under key.
func signToken(key []byte, c claims) string {
	c.V = tokenVersion
	payload, err := json.Marshal(c)
	if err != nil {
		panic("cloudapi: claims do not marshal: " + err.Error())
	}
	return b64.EncodeToString(payload) + "." + b64.EncodeToString(tokenMAC(key, payload))
}

// verifyToken checks token's signature under key, then its expiry at now,
// and returns its claims. A token that is not one signed with key is
// errTokenInvalid; a genuine one past its time wraps errTokenExpired.
func verifyToken(key []byte, token string, now time.Time) (claims, error) {
	if len(token) > maxToken {
		return claims{}, errTokenInvalid
	}
	// The decoder skips CR and LF; a token has none.
	for i := 0; i < len(token); i++ {
		if c := token[i]; !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return claims{}, errTokenInvalid
		}
	}
	p, m, ok := strings.Cut(token, ".")
	if !ok {
		return claims{}, errTokenInvalid
	}
	payload, err := b64.DecodeString(p)
	if err != nil {
		return claims{}, errTokenInvalid
	}
	mac, err := b64.DecodeString(m)
	if err != nil || !hmac.Equal(mac, tokenMAC(key, payload)) {
		return claims{}, errTokenInvalid
	}
	// Only the key's holder can have written the payload, but it is read
	// as strictly as if it were not.
	var c claims
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return claims{}, errTokenInvalid
	}
	if _, err := dec.Token(); err != io.EOF {
		return claims{}, errTokenInvalid
	}
	if c.V != tokenVersion || c.Account == "" || c.Bucket == "" || c.Key == "" || (c.Method != "GET" && c.Method != "PUT") {
		return claims{}, errTokenInvalid
	}
	if exp := time.Unix(c.Expires, 0); !now.Before(exp) {
		return claims{}, fmt.Errorf("%w at %s", errTokenExpired, exp.UTC().Format(time.RFC3339))
	}
	return c, nil
}
