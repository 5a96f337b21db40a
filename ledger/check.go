package ledger

import (
	"strings"

	"github.com/latticenet/lattice/signature"
)

// Faucet rules: a claim mints FaucetAmount base units of Stable, at most once
// per ClaimInterval milliseconds of block time per account.
const (
	FaucetAmount  = 100_000_000
	ClaimInterval = 86_400_000
)

// Lease limits from the API description.
const (
	MinVCPUs    = 1
	MinMemoryMB = 512
	MinDiskGB   = 5
	MinDuration = 60
	MaxDuration = 31_536_000
)

// Params are a network's rules that are not fixed by the protocol.
type Params struct {
	Work Work
}

// A ParamSource says which Params hold at a point of the ledger, the one
// a View shows. The genesis file fixes them today (Fixed); governance will
// change them at state-chain indexes, and its source will read them from
// the ledger's state (View.State), so that every node checks a block
// against the parameters in force where the ledger stands.
type ParamSource interface {
	ParamsAt(v View) (Params, error)
}

// Fixed is a ParamSource whose Params never change.
type Fixed Params

// ParamsAt implements ParamSource.
func (f Fixed) ParamsAt(View) (Params, error) { return Params(f), nil }

// field names one optional block field, for the per-type presence rules.
type field uint8

const (
	fDestination field = iota
	fAmount
	fSource
	fLeaseResources // vcpus, memory_mb, disk_gb, duration
	fAccessPubKey
	fCertificateHash
	fAttestations
	fKeyset
	fStateChainIndex
	numFields
)

var fieldNames = [numFields]string{"destination", "amount", "source", "vcpus/memory_mb/disk_gb/duration",
	"access_pub_key", "certificate_hash", "attestations", "keyset", "statechain_index"}

// required lists, per block type, the optional fields it must carry; every
// other optional field must be absent. representative is allowed on every type.
var required = map[BlockType][]field{
	TypeSend:           {fDestination, fAmount},
	TypeReceive:        {fSource, fAmount},
	TypeClaim:          {fAmount},
	TypeLease:          {fDestination, fAmount, fLeaseResources, fAccessPubKey},
	TypeLeaseAccept:    {fSource, fAmount, fCertificateHash, fAttestations},
	TypeLeaseSettle:    {fSource}, // attestations and amount as its kind says (section 24)
	TypeMultisigOpen:   {fKeyset},
	TypeMultisigUpdate: {fKeyset},
}

// optionalFields lists, per block type, the optional fields it may carry
// or leave out, as a bit set: the rules decide. A lease's state-chain
// index may be 0, the state chain's first block.
var optionalFields = map[BlockType]uint16{
	TypeLease:       1 << fStateChainIndex,
	TypeLeaseSettle: 1<<fAmount | 1<<fAttestations,
}

func (b *Block) present() [numFields]bool {
	return [numFields]bool{
		fDestination:     !b.Destination.IsZero(),
		fAmount:          !b.Amount.IsZero(),
		fSource:          !b.Source.IsZero(),
		fLeaseResources:  b.VCPUs != 0 || b.MemoryMB != 0 || b.DiskGB != 0 || b.Duration != 0,
		fAccessPubKey:    !b.AccessPubKey.IsZero(),
		fCertificateHash: !b.CertificateHash.IsZero(),
		fAttestations:    len(b.Attestations) > 0,
		fKeyset:          b.Keyset != nil,
		fStateChainIndex: b.StateChainIndex != 0,
	}
}

// Check applies every rule that depends on the block alone: shape, hash,
// proof of work and signatures. It is safe to call concurrently and is where
// the expensive ed25519 verification happens, so callers run it in parallel
// before Apply. Apply assumes Check passed.
func (p Params) Check(b *Block) error {
	if err := p.checkUnsigned(b); err != nil {
		return err
	}
	ss := signers(b)
	for i := range ss {
		if !signature.Verify(ss[i].key[:], b.Hash[:], ss[i].sig[:]) {
			return badSignature(b, i)
		}
	}
	return nil
}

// CheckAll is Check for many blocks at once, answering errs[i] for
// blocks[i] exactly as Check would: it verifies the signatures of the
// blocks that pass the other checks as one batch, which costs about half as
// much per signature as verifying them one by one (see package signature).
// Like Check, it is safe to call concurrently.
func (p Params) CheckAll(blocks []*Block) []error {
	errs := make([]error, len(blocks))
	type owner struct{ block, signer int }
	var batch signature.Batch
	var owners []owner
	for i, b := range blocks {
		if errs[i] = p.checkUnsigned(b); errs[i] != nil {
			continue
		}
		ss := signers(b)
		for j := range ss {
			batch.Add(ss[j].key[:], b.Hash[:], ss[j].sig[:])
			owners = append(owners, owner{i, j})
		}
	}
	for k, ok := range batch.Verify() {
		if o := owners[k]; !ok && errs[o.block] == nil {
			errs[o.block] = badSignature(blocks[o.block], o.signer)
		}
	}
	return errs
}

// checkUnsigned is Check without verifying signatures: shape (including
// which signatures a block must carry), hash and work.
func (p Params) checkUnsigned(b *Block) error {
	if err := checkShape(b); err != nil {
		return err
	}
	if h := b.ComputeHash(); h != b.Hash {
		return ruleErr(ErrBadHash, "block says %s, contents hash to %s", b.Hash, h)
	}
	if t := p.Work.For(b.Type); !t.Met(b.Hash, b.PowNonce) {
		return ruleErr(ErrInsufficientWork, "pow_nonce %d does not meet the %s threshold %s for %s blocks",
			b.PowNonce, workClass(b.Type), t, b.Type)
	}
	return checkSignatureShape(b)
}

func workClass(t BlockType) string {
	if t.SendLike() {
		return "send"
	}
	return "receive"
}

func checkShape(b *Block) error {
	if !b.Type.Valid() {
		return ruleErr(ErrMalformed, "unknown block type %d", b.Type)
	}
	if b.Account.IsZero() {
		return ruleErr(ErrMalformed, "account is required")
	}
	if !b.Asset.Valid() {
		return ruleErr(ErrMalformed, "asset must be native or stable")
	}
	if b.Timestamp <= 0 {
		return ruleErr(ErrMalformed, "timestamp must be a positive Unix time in milliseconds")
	}
	have := b.present()
	var missing, extra []string
	var want [numFields]bool
	for _, f := range required[b.Type] {
		want[f] = true
	}
	optional := optionalFields[b.Type]
	for f := range numFields {
		if optional&(1<<f) != 0 {
			continue
		}
		switch {
		case want[f] && !have[f]:
			missing = append(missing, fieldNames[f])
		case !want[f] && have[f]:
			extra = append(extra, fieldNames[f])
		}
	}
	if len(missing) > 0 {
		return ruleErr(ErrMalformed, "%s block requires %s", b.Type, strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		return ruleErr(ErrMalformed, "%s block must not carry %s", b.Type, strings.Join(extra, ", "))
	}
	if len(b.Attestations) > MaxAttestations {
		return ruleErr(ErrMalformed, "at most %d attestations, got %d", MaxAttestations, len(b.Attestations))
	}
	if len(b.Signatures) > MaxKeys {
		return ruleErr(ErrMalformed, "at most %d signatures, got %d", MaxKeys, len(b.Signatures))
	}
	if b.Keyset != nil {
		if err := b.Keyset.Validate(); err != nil {
			return ruleErr(ErrMalformed, "%v", err)
		}
	}
	if check := typeRules[b.Type].Check; check != nil {
		return check(b)
	}
	return nil
}

func checkSend(b *Block) error {
	if b.Destination == b.Account {
		return ruleErr(ErrMalformed, "send destination must differ from the account")
	}
	return nil
}

func checkClaim(b *Block) error {
	if b.Asset != Stable {
		return ruleErr(ErrMalformed, "claim asset must be stable")
	}
	if b.Amount != NewAmount(FaucetAmount) {
		return ruleErr(ErrBadAmount, "a claim mints exactly %d base units, block says %s", FaucetAmount, b.Amount)
	}
	return nil
}

func checkMultisigOpen(b *Block) error {
	if !b.Previous.IsZero() {
		return ruleErr(ErrMalformed, "multisig_open must be the account's first block (previous all zeros)")
	}
	if !b.Balance.IsZero() {
		return ruleErr(ErrBadBalance, "multisig_open balance must be 0")
	}
	if want := MultisigAddress(*b.Keyset); b.Account != want {
		return ruleErr(ErrMalformed, "multisig account must be %s, derived from the keyset", want)
	}
	if len(b.Signatures) == 0 {
		return ruleErr(ErrUnauthorized, "multisig_open needs signatures from the keyset")
	}
	return meetsThreshold(b, *b.Keyset)
}

func checkLeaseResources(b *Block) error {
	switch {
	case b.VCPUs < MinVCPUs:
		return ruleErr(ErrMalformed, "vcpus must be at least %d", MinVCPUs)
	case b.MemoryMB < MinMemoryMB:
		return ruleErr(ErrMalformed, "memory_mb must be at least %d", MinMemoryMB)
	case b.DiskGB < MinDiskGB:
		return ruleErr(ErrMalformed, "disk_gb must be at least %d", MinDiskGB)
	case b.Duration < MinDuration || b.Duration > MaxDuration:
		return ruleErr(ErrMalformed, "duration must be between %d and %d seconds", MinDuration, MaxDuration)
	}
	return nil
}

// signer is one signature a block carries, with the key it must verify under.
type signer struct {
	key Address
	sig Signature
}

// signers lists the signatures of b, which has passed checkSignatureShape:
// its single signature by its account, or each multisig signature by its key.
func signers(b *Block) []signer {
	if b.Type == TypeLeaseSettle {
		return nil
	}
	if len(b.Signatures) == 0 {
		return []signer{{b.Account, b.Signature}}
	}
	out := make([]signer, len(b.Signatures))
	for i, s := range b.Signatures {
		out[i] = signer{s.PublicKey, s.Signature}
	}
	return out
}

// badSignature is the error for b's i-th signer's signature not verifying.
func badSignature(b *Block, i int) error {
	if len(b.Signatures) == 0 {
		return ruleErr(ErrBadSignature, "signature does not verify under account %s", b.Account)
	}
	return ruleErr(ErrBadSignature, "signature %d does not verify under key %s", i, b.Signatures[i].PublicKey)
}

// checkSignatureShape checks which signatures b carries: a single
// signature, or multisig signatures by distinct keys. Verifying them is
// Check's business; which keys may sign is Apply's (it needs the account's
// keyset), except for multisig_open, which checkShape covers.
func checkSignatureShape(b *Block) error {
	if b.Type == TypeLeaseSettle {
		return nil // checkLeaseSettle: never signed
	}
	if len(b.Signatures) == 0 {
		if b.Signature.IsZero() {
			return ruleErr(ErrBadSignature, "signature is required")
		}
		return nil
	}
	if !b.Signature.IsZero() {
		return ruleErr(ErrMalformed, "a block carries either signature or signatures, not both")
	}
	for i, s := range b.Signatures {
		for _, o := range b.Signatures[:i] {
			if o.PublicKey == s.PublicKey {
				return ruleErr(ErrMalformed, "key %s signs twice", s.PublicKey)
			}
		}
	}
	return nil
}

// meetsThreshold checks that b's signatures come from members of k and are
// at least k.Threshold in number. The signatures themselves are verified by
// Check.
func meetsThreshold(b *Block, k Keyset) error {
	for _, s := range b.Signatures {
		if !k.Contains(s.PublicKey) {
			return ruleErr(ErrUnauthorized, "key %s is not in the account's keyset", s.PublicKey)
		}
	}
	if len(b.Signatures) < k.Threshold {
		return ruleErr(ErrUnauthorized, "%d of the keyset's keys signed; its threshold is %d", len(b.Signatures), k.Threshold)
	}
	return nil
}
