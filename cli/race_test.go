//go:build race

package cli

// raceEnabled: under the race detector a VM's guest agent (this test
// binary, instrumented) and every node run several times slower on TCG;
// TestComputeOnLeases then leases minimal VMs, which boot in seconds.
const raceEnabled = true
