package ledger

import (
	"errors"
	"fmt"
)

// Kinds of rule violation. Every error Check, Apply and Rollback return for
// a bad block is a *RuleError whose Kind is one of these, so callers can tell
// them apart with errors.Is; any other error comes from the View.
var (
	ErrMalformed           = errors.New("malformed block")
	ErrBadHash             = errors.New("hash does not match block contents")
	ErrBadSignature        = errors.New("bad signature")
	ErrInsufficientWork    = errors.New("insufficient proof of work")
	ErrTimestamp           = errors.New("bad timestamp")
	ErrGapPrevious         = errors.New("previous block not found")
	ErrWrongPrevious       = errors.New("wrong previous")
	ErrFork                = errors.New("fork")
	ErrGapSource           = errors.New("source block not found")
	ErrBadSource           = errors.New("source is not a send to this account")
	ErrAlreadyReceived     = errors.New("source already received")
	ErrInsufficientBalance = errors.New("insufficient balance")
	ErrBadBalance          = errors.New("wrong balance")
	ErrBadAmount           = errors.New("wrong amount")
	ErrClaimTooSoon        = errors.New("faucet claim rate-limited")
	ErrUnauthorized        = errors.New("not authorised")
	ErrNotMultisig         = errors.New("account is not multisig")
	ErrUnknownAccount      = errors.New("account not found")
	ErrUnsupported         = errors.New("block type not accepted yet")
	ErrHasDependents       = errors.New("block has dependents")
	ErrGapState            = errors.New("state-chain block not known yet")
	ErrAttestation         = errors.New("bad attestations")
	ErrLeaseTiming         = errors.New("not the lease's time")
	ErrWrongLease          = errors.New("not this lease's block")
	ErrLeaseTerms          = errors.New("no lease at these terms")
)

// DependentError is a rollback refused because another block rests on the
// one rolled back: Block must go first. Its Kind is ErrHasDependents.
type DependentError struct {
	RuleError
	Block Hash
}

func dependent(h Hash, format string, args ...any) *DependentError {
	return &DependentError{RuleError: *ruleErr(ErrHasDependents, format, args...), Block: h}
}

// RuleError is a block's violation of a ledger rule: Kind says which rule,
// Detail says how, in words a person can act on.
type RuleError struct {
	Kind   error
	Detail string
}

func (e *RuleError) Error() string {
	if e.Detail == "" {
		return "ledger: " + e.Kind.Error()
	}
	return "ledger: " + e.Kind.Error() + ": " + e.Detail
}

// Unwrap returns Kind, so errors.Is(err, ErrFork) and friends work.
func (e *RuleError) Unwrap() error { return e.Kind }

func ruleErr(kind error, format string, args ...any) *RuleError {
	return &RuleError{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// ForkError is returned by Apply for a valid block whose previous is already
// followed by another block of the same account. The ledger keeps Existing;
// the caller records the conflict and, when consensus says so, rolls the
// existing branch back with Rollback and applies Block instead.
type ForkError struct {
	Account  Address
	Previous Hash
	Existing Hash
	Block    *Block
}

func (e *ForkError) Error() string {
	return fmt.Sprintf("ledger: fork: previous %s of account %s is already followed by block %s",
		e.Previous, e.Account, e.Existing)
}

// Unwrap makes errors.Is(err, ErrFork) true.
func (e *ForkError) Unwrap() error { return ErrFork }

// IsRule reports whether err is a rule violation (a bad block) rather than a
// failure to read the ledger.
func IsRule(err error) bool {
	var re *RuleError
	var fe *ForkError
	var de *DependentError
	return errors.As(err, &re) || errors.As(err, &fe) || errors.As(err, &de)
}
