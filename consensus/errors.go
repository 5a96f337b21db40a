package consensus

import "errors"

// Errors callers tell apart with errors.Is. Errors about a vote's bytes or
// shape wrap ErrMalformedVote, with a detail saying what is wrong.
var (
	ErrMalformedVote    = errors.New("consensus: malformed vote")
	ErrBadVoteSignature = errors.New("consensus: bad vote signature")
)

// Errors of the tally.
var (
	ErrInvalidParams      = errors.New("consensus: invalid params")
	ErrTooManyElections   = errors.New("consensus: too many elections")
	ErrTooManyContenders  = errors.New("consensus: too many contenders")
	ErrContenderElsewhere = errors.New("consensus: hash already contends for another root")
)
