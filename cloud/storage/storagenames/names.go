// Package storagenames holds the naming rules of the cloud's storage,
// free of I/O: bucket names (S3's rules), account names and object keys.
// The store enforces them; clients check names with them before they ask.
package storagenames

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// ValidBucketName applies S3's bucket naming rules to a new bucket's name:
// 3 to 63 characters of lowercase letters, digits, hyphens and dots; a
// letter or digit at each end and on each side of every dot; no two
// adjacent dots; not an IPv4 address; none of the prefixes and suffixes S3
// reserves.
func ValidBucketName(name string) error {
	if err := ExistingBucketName(name); err != nil {
		return err
	}
	if strings.Contains(name, "-.") || strings.Contains(name, ".-") {
		// Each dot-separated label is a DNS label in virtual-hosted
		// names, and must begin and end with a letter or digit.
		return fmt.Errorf("bucket name %q must not hold a hyphen next to a dot", name)
	}
	return nil
}

// ExistingBucketName checks a name that may belong to an existing bucket:
// ValidBucketName's rules as they were when the first buckets were made,
// which allowed a hyphen next to a dot. Lookups use it, so that tightening
// the rules for new buckets leaves no old bucket unreachable.
func ExistingBucketName(name string) error {
	if len(name) < 3 || len(name) > 63 {
		return fmt.Errorf("bucket name %q must be 3 to 63 characters long", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return fmt.Errorf("bucket name %q may hold only lowercase letters, digits, hyphens and dots", name)
		}
	}
	if !isAlnum(name[0]) || !isAlnum(name[len(name)-1]) {
		return fmt.Errorf("bucket name %q must begin and end with a letter or digit", name)
	}
	if strings.Contains(name, "..") {
		return fmt.Errorf("bucket name %q must not hold two adjacent dots", name)
	}
	if _, err := netip.ParseAddr(name); err == nil || looksLikeIPv4(name) {
		return fmt.Errorf("bucket name %q must not be formatted as an IP address", name)
	}
	for _, p := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(name, p) {
			return fmt.Errorf("bucket name %q must not begin with %q", name, p)
		}
	}
	for _, suf := range []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(name, suf) {
			return fmt.Errorf("bucket name %q must not end with %q", name, suf)
		}
	}
	return nil
}

// looksLikeIPv4 reports four dot-separated groups of digits, whatever
// their values (01.2.3.4 and 999.1.1.1 included).
func looksLikeIPv4(name string) bool {
	parts := strings.Split(name, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// ValidAccountName allows 1 to 64 characters of letters, digits, '-', '_'
// and '.'.
func ValidAccountName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("account name must be 1 to 64 characters long")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(isAlnum(c) || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("account name %q may hold only letters, digits, '-', '_' and '.'", name)
		}
	}
	return nil
}

// MaxKeyLen bounds an object key: bytes of UTF-8, as in S3.
const MaxKeyLen = 1024

// ErrInvalidKey matches (with errors.Is) every error of ValidObjectKey.
var ErrInvalidKey = errors.New("cloudstore: invalid object key")

// keyError is a key-rule violation; its text is the rule, for people.
type keyError string

func (e keyError) Error() string      { return string(e) }
func (keyError) Is(target error) bool { return target == ErrInvalidKey }

// ValidKeyPrefix checks a prefix of object keys (a lifecycle rule's):
// empty, or what a key may begin with (at most MaxKeyLen bytes of valid
// UTF-8, without control characters), so that it matches keys and
// survives S3's XML, which cannot carry control characters.
func ValidKeyPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if err := ValidObjectKey(prefix); err != nil {
		return keyError(strings.Replace(err.Error(), "object key", "prefix", 1))
	}
	return nil
}

// ValidObjectKey checks an object key: 1 to MaxKeyLen bytes of valid
// UTF-8, without NUL or other control characters.
func ValidObjectKey(key string) error {
	if key == "" || len(key) > MaxKeyLen {
		return keyError(fmt.Sprintf("object key must be 1 to %d bytes long", MaxKeyLen))
	}
	if !utf8.ValidString(key) {
		return keyError("object key must be valid UTF-8")
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f {
			return keyError("object key must not hold control characters")
		}
	}
	return nil
}
