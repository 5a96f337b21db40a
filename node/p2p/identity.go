package p2p

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/latticenet/lattice/internal/run/durablefile"
	"github.com/libp2p/go-libp2p/core/crypto"
)

// keyFile is the name, in Config.Dir, of the host's identity key.
const keyFile = "p2p-key"

// loadOrCreateKey reads the ed25519 identity key in dir, creating it (mode
// 0600) on first start. The key is never replaced: a file that does not
// hold an ed25519 key is an error, not a reason to make a new identity.
func loadOrCreateKey(dir string) (crypto.PrivKey, error) {
	path := filepath.Join(dir, keyFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key, _, gerr := crypto.GenerateEd25519Key(nil)
		if gerr != nil {
			return nil, fmt.Errorf("p2p: generate identity key: %w", gerr)
		}
		if data, err = crypto.MarshalPrivateKey(key); err != nil {
			return nil, fmt.Errorf("p2p: marshal identity key: %w", err)
		}
		err = durablefile.Create(path, data, 0o600)
		if errors.Is(err, fs.ErrExist) {
			// Another process created it first: use that one.
			data, err = os.ReadFile(path)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("p2p: identity key: %w", err)
	}
	// As for every key file lattice writes: another user who reads it
	// can be this node on the network (a provider's peer, whose ID a
	// lease's accept names, receives its consumers' tunnels).
	if st, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("p2p: identity key: %w", err)
	} else if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("p2p: identity key %s is accessible by others (mode %04o); run chmod 600 %s", path, perm, path)
	}
	key, err := crypto.UnmarshalPrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("p2p: identity key %s: %w", path, err)
	}
	if key.Type() != crypto.Ed25519 {
		return nil, fmt.Errorf("p2p: identity key %s: type %v, want ed25519", path, key.Type())
	}
	return key, nil
}
