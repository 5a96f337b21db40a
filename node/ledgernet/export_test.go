package ledgernet

// EncodeBlocks lets external tests build blocks messages.
var EncodeBlocks = encodeBlocks

// RequestBlocks and RequestVotes let external tests put requests to a
// peer of their own making; a broken answer fails with ErrBadAnswer, and
// a vote answer holds at most MaxVoteFrames frames.
var (
	RequestBlocks = (*Service).requestBlocks
	RequestVotes  = (*Service).requestVotes
	ErrBadAnswer  = errBadAnswer
)

const MaxVoteFrames = maxVoteFrames
