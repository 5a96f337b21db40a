// Package consensus is open representative voting, as in Nano: signed votes
// of representatives, and the tally of a node's elections between blocks that
// compete for the same place in an account's chain.
//
// Like package ledger, it is a pure core: no goroutines, no I/O, no network
// and no wall clock. The node verifies votes, passes times in as Unix
// milliseconds, asks the ledger for representatives' weights, and acts on
// what the tally says (cementing a confirmed block, storing its certificate,
// rolling back a losing fork). See docs/protocol.md, "Votes and
// confirmation".
package consensus
