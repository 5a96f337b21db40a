package wallet

import (
	"fmt"

	"github.com/latticenet/lattice/ledger"
)

// Head is what a wallet needs to know of an account's chain to extend it.
// The zero Head (apart from Account) is a new account.
type Head struct {
	Account   ledger.Address
	Frontier  ledger.Hash
	Balances  [2]ledger.Amount // indexed by Asset-1
	Timestamp int64            // of the frontier block
}

// HeadOf returns the Head of an account state.
func HeadOf(a ledger.Account) Head {
	return Head{Account: a.Address, Frontier: a.Frontier, Balances: a.Balances, Timestamp: a.Timestamp}
}

// Balance returns the head's balance of asset (zero for an invalid asset).
func (h Head) Balance(asset ledger.Asset) ledger.Amount {
	if !asset.Valid() {
		return ledger.Amount{}
	}
	return h.Balances[asset-1]
}

// stamp keeps a chain's timestamps non-decreasing even when the local clock
// is behind the frontier's.
func (h Head) stamp(now int64) int64 { return max(now, h.Timestamp) }

func (h Head) block(t ledger.BlockType, asset ledger.Asset, now int64) *ledger.Block {
	return &ledger.Block{Type: t, Account: h.Account, Previous: h.Frontier, Asset: asset,
		Balance: h.Balance(asset), Timestamp: h.stamp(now)}
}

// Send returns an unsigned, sealed send block of amount to dest.
func Send(h Head, dest ledger.Address, amount ledger.Amount, asset ledger.Asset, now int64) (*ledger.Block, error) {
	if !asset.Valid() {
		return nil, fmt.Errorf("wallet: invalid asset")
	}
	b := h.block(ledger.TypeSend, asset, now)
	bal, err := b.Balance.Sub(amount)
	if err != nil {
		return nil, fmt.Errorf("wallet: balance is %s %s, cannot send %s", b.Balance.Units(), asset, amount.Units())
	}
	b.Balance, b.Destination, b.Amount = bal, dest, amount
	b.Seal()
	return b, nil
}

// Receive returns an unsigned, sealed receive block taking p.
func Receive(h Head, p ledger.Pending, now int64) (*ledger.Block, error) {
	if !p.Asset.Valid() {
		return nil, fmt.Errorf("wallet: pending send %s has no valid asset", p.Send)
	}
	b := h.block(ledger.TypeReceive, p.Asset, now)
	bal, err := b.Balance.Add(p.Amount)
	if err != nil {
		return nil, fmt.Errorf("wallet: balance would overflow")
	}
	b.Balance, b.Source, b.Amount = bal, p.Send, p.Amount
	b.Seal()
	return b, nil
}

// Claim returns an unsigned, sealed faucet claim block.
func Claim(h Head, now int64) (*ledger.Block, error) {
	b := h.block(ledger.TypeClaim, ledger.Stable, now)
	amt := ledger.NewAmount(ledger.FaucetAmount)
	bal, err := b.Balance.Add(amt)
	if err != nil {
		return nil, fmt.Errorf("wallet: balance would overflow")
	}
	b.Balance, b.Amount = bal, amt
	b.Seal()
	return b, nil
}

// MultisigOpen returns the unsigned, sealed block opening the multisig
// account of k; every signer adds its signature with Block.AddSignature.
func MultisigOpen(k ledger.Keyset, now int64) *ledger.Block {
	ks := k.Clone()
	b := &ledger.Block{Type: ledger.TypeMultisigOpen, Account: ledger.MultisigAddress(k), Asset: ledger.Native,
		Timestamp: now, Keyset: &ks}
	b.Seal()
	return b
}

// MultisigUpdate returns the unsigned, sealed block replacing the keyset of
// a multisig account with k.
func MultisigUpdate(h Head, k ledger.Keyset, now int64) *ledger.Block {
	b := h.block(ledger.TypeMultisigUpdate, ledger.Native, now)
	ks := k.Clone()
	b.Keyset = &ks
	b.Seal()
	return b
}
