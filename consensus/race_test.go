//go:build race

package consensus_test

// raceEnabled: the race detector makes the simulation ten times slower;
// it runs fewer seeds then (the race detector looks for data races, which
// the pure tally has none of, not for more seeds).
const raceEnabled = true
