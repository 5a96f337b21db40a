// Package netlab runs real `lattice node` processes on a network the test
// controls: each node in its own Linux network namespace, with a TAP
// device whose frames the test process switches in user space. The
// switch can partition the nodes, cut one direction of a link, delay
// frames with jitter (so that they reorder) and lose them; SetLinkUp
// takes a node's device down in its own namespace, as a flapping cable
// would. A monitor namespace on the same switch, never cut or impaired,
// is where the test reaches every node's HTTP API from (Lab.HTTPClient):
// the root namespace gets no address and no route.
//
// On top of a Lab, a Cluster starts a ledger network from a genesis file,
// shares the voting weight among the nodes' own keys, and offers what
// partition tests need: sends and forks submitted through chosen nodes,
// snapshots of every node's ledger through its API, the checks that no
// two nodes ever confirm different blocks at one place of a chain
// (ConflictingConfirmations, Watch) and that the network ends with one
// ledger (Cluster.WaitOneLedger), and latency figures.
//
// A Lab needs root and /dev/net/tun; without them New skips the test,
// unless CI=true, where it fails. This kernel has no netem qdisc, hence
// the switch in user space. Everything a Lab creates is removed by the
// test's cleanup: processes are stopped (SIGTERM, then SIGKILL after a
// deadline), the switch is closed and the namespaces are deleted.
package netlab
