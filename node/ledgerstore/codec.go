package ledgerstore

import (
	"encoding/binary"
	"fmt"

	"github.com/latticenet/lattice/ledger"
)

// Key prefixes. Every key starts with one byte naming its table; see
// docs/operations.md for the layout.
const (
	pAccount  = 'a' // a | address -> account record
	pBlock    = 'b' // b | hash -> entry record
	pChain    = 'c' // c | address | height(8) -> hash
	pRecent   = 'r' // r | seq(8) -> hash
	pPending  = 'p' // p | destination | send hash -> pending record
	pReceiver = 's' // s | send hash -> receive hash
	pConflict = 'x' // x | address | previous -> conflict record
	pFork     = 'f' // f | hash -> binary block refused as a fork
	pMeta     = 'm' // m | name -> value
	pWeight   = 'w' // w | representative -> amount(16): native balance other accounts delegate to it
	pConfirm  = 'k' // k | address -> height(8) | hash: the account's confirmed (cemented) prefix
	pCert     = 'v' // v | hash -> the certificate of a confirmed block (opaque to the store)
	pVote     = 'q' // q | vote digest -> a vote a certificate names (opaque to the store)
	pCWeight  = 'y' // y | representative -> amount(16): its weight in the confirmed ledger
	pSigned   = 'z' // z | address | previous -> SignedVotes: what this node's representatives signed there
	pState    = 't' // t | len(table)(1) | table | key -> value: a block type's own state (ledger.StateChange)
)

// stateKey is the key of a block type's state value.
func stateKey(table, key string) []byte {
	k := append([]byte{pState, byte(len(table))}, table...)
	return append(k, key...)
}

// stateID names a state value in the batch's memory.
type stateID struct{ table, key string }

// formatVersion is the layout of records this code reads and writes. It is
// stored at Init; Open refuses a store of another version rather than
// misreading it. Version 2 added the representative to account records and
// the weight and confirmation tables; version 3 stores certificates as vote
// digests, with the votes once each in their own table; version 4 keeps in
// the weight table only what accounts delegate to another representative.
const formatVersion = 4

func key(prefix byte, parts ...[]byte) []byte {
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	k := make([]byte, 1, n)
	k[0] = prefix
	for _, p := range parts {
		k = append(k, p...)
	}
	return k
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func appendAmount(dst []byte, a ledger.Amount) []byte {
	hi, lo := a.Parts()
	dst = binary.BigEndian.AppendUint64(dst, hi)
	return binary.BigEndian.AppendUint64(dst, lo)
}

// appendAccount encodes an account state: address, frontier, height,
// balances, timestamp, claimed flag, last claim and representative, then
// the keyset (u16 threshold, u16 count, keys; zeros when not multisig).
func appendAccount(dst []byte, a *ledger.Account) []byte {
	dst = append(dst, a.Address[:]...)
	dst = append(dst, a.Frontier[:]...)
	dst = binary.BigEndian.AppendUint64(dst, a.Height)
	dst = appendAmount(dst, a.Balances[0])
	dst = appendAmount(dst, a.Balances[1])
	dst = binary.BigEndian.AppendUint64(dst, uint64(a.Timestamp))
	claimed := byte(0)
	if a.Claimed {
		claimed = 1
	}
	dst = append(dst, claimed)
	dst = binary.BigEndian.AppendUint64(dst, uint64(a.LastClaim))
	dst = append(dst, a.Representative[:]...)
	return ledger.AppendKeyset(dst, a.Keyset)
}

func decodeAmount(v []byte) (ledger.Amount, error) {
	d := dec{b: v}
	a := d.amount()
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("ledgerstore: corrupt amount")
	}
	return a, d.err
}

// dec reads fixed-width fields; a short read sets err.
type dec struct {
	b   []byte
	err error
}

func (d *dec) next(n int) []byte {
	if d.err != nil || len(d.b) < n {
		d.err = fmt.Errorf("ledgerstore: corrupt record")
		return make([]byte, n)
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}
func (d *dec) u16() uint16 { return binary.BigEndian.Uint16(d.next(2)) }
func (d *dec) u64() uint64 { return binary.BigEndian.Uint64(d.next(8)) }
func (d *dec) amount() ledger.Amount {
	hi := d.u64()
	return ledger.AmountFromParts(hi, d.u64())
}

func (d *dec) account() ledger.Account {
	var a ledger.Account
	copy(a.Address[:], d.next(32))
	copy(a.Frontier[:], d.next(32))
	a.Height = d.u64()
	a.Balances[0] = d.amount()
	a.Balances[1] = d.amount()
	a.Timestamp = int64(d.u64())
	a.Claimed = d.next(1)[0] == 1
	a.LastClaim = int64(d.u64())
	copy(a.Representative[:], d.next(32))
	threshold, n := int(d.u16()), int(d.u16())
	if n > ledger.MaxKeys {
		d.err = fmt.Errorf("ledgerstore: corrupt keyset")
		return a
	}
	if n > 0 {
		ks := ledger.Keyset{Threshold: threshold, Keys: make([]ledger.Address, n)}
		for i := range ks.Keys {
			copy(ks.Keys[i][:], d.next(32))
		}
		a.Keyset = &ks
	}
	return a
}

func decodeAccount(b []byte) (ledger.Account, error) {
	d := dec{b: b}
	a := d.account()
	return a, d.err
}

// entry record: height(8) | seq(8) | account-after | block binary.
func encodeEntry(e *ledger.Entry, seq uint64) []byte {
	dst := make([]byte, 0, 512)
	dst = binary.BigEndian.AppendUint64(dst, e.Height)
	dst = binary.BigEndian.AppendUint64(dst, seq)
	dst = appendAccount(dst, &e.After)
	return e.Block.AppendBinary(dst)
}

func decodeEntry(b []byte) (*ledger.Entry, uint64, error) {
	d := dec{b: b}
	e := &ledger.Entry{Height: d.u64()}
	seq := d.u64()
	e.After = d.account()
	if d.err != nil {
		return nil, 0, d.err
	}
	e.Block = new(ledger.Block)
	if err := e.Block.UnmarshalBinary(d.b); err != nil {
		return nil, 0, fmt.Errorf("ledgerstore: corrupt block: %w", err)
	}
	return e, seq, nil
}

// pending record: source(32) | amount(16) | asset(1); destination and send
// hash are in the key.
func encodePending(p *ledger.Pending) []byte {
	dst := make([]byte, 0, 49)
	dst = append(dst, p.Source[:]...)
	dst = appendAmount(dst, p.Amount)
	return append(dst, byte(p.Asset))
}

func decodePending(k, v []byte) (ledger.Pending, error) {
	var p ledger.Pending
	if len(k) != 65 {
		return p, fmt.Errorf("ledgerstore: corrupt pending key")
	}
	copy(p.Destination[:], k[1:33])
	copy(p.Send[:], k[33:65])
	d := dec{b: v}
	copy(p.Source[:], d.next(32))
	p.Amount = d.amount()
	p.Asset = ledger.Asset(d.next(1)[0])
	return p, d.err
}

// conflict record: detected_at ms(8) | count(2) | hashes.
func encodeConflict(c *Conflict) []byte {
	dst := binary.BigEndian.AppendUint64(nil, uint64(c.DetectedAt))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(c.Blocks)))
	for _, h := range c.Blocks {
		dst = append(dst, h[:]...)
	}
	return dst
}

func decodeConflict(k, v []byte) (Conflict, error) {
	var c Conflict
	if len(k) != 65 {
		return c, fmt.Errorf("ledgerstore: corrupt conflict key")
	}
	copy(c.Account[:], k[1:33])
	copy(c.Previous[:], k[33:65])
	d := dec{b: v}
	c.DetectedAt = int64(d.u64())
	n := int(d.u16())
	for range n {
		var h ledger.Hash
		copy(h[:], d.next(32))
		c.Blocks = append(c.Blocks, h)
	}
	return c, d.err
}
