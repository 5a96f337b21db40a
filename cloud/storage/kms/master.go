package kms

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"

	"github.com/latticenet/lattice/internal/run/durablefile"
)

// ParseMasterKey reads a master key as an operator writes one: 32 raw
// bytes, or their standard base64 (44 characters; surrounding white
// space is ignored), such as `openssl rand -base64 32` prints.
func ParseMasterKey(data []byte) ([]byte, error) {
	if len(data) == 32 {
		return bytes.Clone(data), nil
	}
	k, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(data)))
	if err != nil || len(k) != 32 {
		return nil, errors.New("kms: a master key is 32 bytes, raw or in base64 (openssl rand -base64 32)")
	}
	return k, nil
}

// LoadMasterKey reads the master key in path. With create, a path that
// does not exist gets a new random key (base64, mode 0600, synced) first.
func LoadMasterKey(path string, create bool) ([]byte, error) {
	if _, err := ParseMasterKey([]byte(path)); err == nil {
		// Never echoed: it may be the key itself, given where its file's
		// name belongs.
		return nil, errors.New("kms: the master key's file name has the form of a key: give the key itself in LATTICE_KMS_MASTER_KEY, or its file's path")
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && create {
		k := make([]byte, 32)
		rand.Read(k)
		if err := durablefile.Create(path, []byte(base64.StdEncoding.EncodeToString(k)+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("kms: %w", err)
		}
		return k, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kms: master key: %w", err)
	}
	k, err := ParseMasterKey(data)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return k, nil
}
