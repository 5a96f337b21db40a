package ledger

import (
	"crypto/ed25519"

	"github.com/latticenet/lattice/signature"
)

// NewGenesis returns the genesis block of a network: a receive block whose
// source is all zeros (the mint), crediting supply base units of Native to
// the key's account. It is signed and its hash set; it needs no work.
func NewGenesis(priv ed25519.PrivateKey, supply Amount, timestamp int64) *Block {
	return NewGenesisWithRepresentative(priv, supply, timestamp, ZeroAddress)
}

// NewGenesisWithRepresentative is NewGenesis naming rep as the
// representative of the whole supply: the network's first voter, until
// the supply spreads. A zero rep names none (the genesis account
// represents itself).
func NewGenesisWithRepresentative(priv ed25519.PrivateKey, supply Amount, timestamp int64, rep Address) *Block {
	b := &Block{
		Type:           TypeReceive,
		Balance:        supply,
		Asset:          Native,
		Timestamp:      timestamp,
		Amount:         supply,
		Representative: rep,
	}
	copy(b.Account[:], priv.Public().(ed25519.PublicKey))
	b.Seal()
	b.Sign(priv)
	return b
}

// CheckGenesis validates a genesis block: the only block whose source is the
// mint. It is accepted once, when a node's ledger is created, and never
// through Check and Apply.
func CheckGenesis(b *Block) error {
	switch {
	case b.Type != TypeReceive || b.Asset != Native:
		return ruleErr(ErrMalformed, "genesis must be a receive block of native")
	case !b.Previous.IsZero() || !b.Source.IsZero():
		return ruleErr(ErrMalformed, "genesis previous and source must be all zeros")
	case b.Amount.IsZero() || b.Amount != b.Balance:
		return ruleErr(ErrMalformed, "genesis amount must equal its balance, the supply")
	case b.Account.IsZero() || b.Timestamp <= 0:
		return ruleErr(ErrMalformed, "genesis needs an account and a positive timestamp")
	case len(b.Signatures) > 0:
		return ruleErr(ErrMalformed, "genesis carries no multisig signatures")
	}
	have := b.present()
	for f := range numFields {
		if have[f] && f != fAmount {
			return ruleErr(ErrMalformed, "genesis must not carry %s", fieldNames[f])
		}
	}
	if h := b.ComputeHash(); h != b.Hash {
		return ruleErr(ErrBadHash, "block says %s, contents hash to %s", b.Hash, h)
	}
	if !signature.Verify(b.Account.PublicKey(), b.Hash[:], b.Signature[:]) {
		return ruleErr(ErrBadSignature, "genesis signature does not verify")
	}
	return nil
}

// GenesisDelta returns the Delta that starts a ledger with genesis block b,
// which must have passed CheckGenesis.
func GenesisDelta(b *Block) *Delta {
	acct := Account{Address: b.Account, Frontier: b.Hash, Height: 1, Timestamp: b.Timestamp, Representative: b.Representative}
	acct.setBalance(Native, b.Balance)
	return &Delta{Add: &Entry{Block: b, Height: 1, After: acct}, Account: acct}
}

// IsGenesis reports whether b has the shape of a genesis block (a receive
// from the mint).
func IsGenesis(b *Block) bool {
	return b.Type == TypeReceive && b.Source.IsZero() && b.Previous.IsZero()
}
