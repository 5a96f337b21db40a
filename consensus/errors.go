package consensus

import "errors"

// Errors callers tell apart with errors.Is. Errors about a vote's bytes or
// shape wrap ErrMalformedVote, with a detail saying what is wrong.
var (
	ErrMalformedVote    = errors.New("consensus: malformed vote")
	ErrBadVoteSignature = errors.New("consensus: bad vote signature")
)
