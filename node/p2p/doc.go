// Package p2p is the ledger node's peer-to-peer host: its identity,
// transports, peer discovery and persistence, gossip topics and stream
// protocols, each with limits.
//
// It knows nothing about blocks: it moves bytes. Every protocol id and
// topic it uses is "/lattice/<Network>/<name>", where Network is the
// node's network name (the genesis hash in hex), so two networks never
// mix: their gossip protocols, topics, stream protocols and DHTs differ,
// and a peer that speaks none of our network's protocols is disconnected
// once identify has told us so.
//
// A Host is built by New and owns every goroutine it starts; Close stops
// them, waits for them and saves the known peers.
//
// Resources are bounded on every axis an outside peer controls:
//   - libp2p's resource manager caps memory, file descriptors,
//     connections and streams (Config.MaxMemory, Config.MaxFDs);
//   - the connection manager trims connections back to LowPeers when
//     HighPeers is passed;
//   - GossipSub peer scoring penalises invalid messages and graylists
//     peers that send many, and a peer whose messages our validators
//     reject RejectLimit times within RejectWindow is disconnected and
//     refused for BanDuration;
//   - streams get a deadline (see Host.Handle and Host.Open).
package p2p
