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

// SetMaxRefused bounds the accounts an election loop remembers
// for want of room, until the returned func restores it. Tests that call
// it must not run in parallel.
func SetMaxRefused(n int) (restore func()) {
	was := maxRefused
	maxRefused = n
	return func() { maxRefused = was }
}

// SetFeedBuffer sets the changes the election loop's subscription to the
// ledger holds before it lags, for services started until the returned
// func restores it. Tests that call it must not run in parallel.
func SetFeedBuffer(n int) (restore func()) {
	was := feedBuffer
	feedBuffer = n
	return func() { feedBuffer = was }
}
