package ledgernet

import (
	"math/big"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latticenet/lattice/ledger"
)

// The service's metrics, read from Stats at each scrape.
var (
	descPeers = prometheus.NewDesc("lattice_node_peers", "Connected peers.", nil, nil)
	descNet   = prometheus.NewDesc("lattice_node_network_events_total",
		"Network events since start: gossip_blocks, gossip_votes, invalid_messages, held_future_blocks, synced_blocks, served_blocks, intake_dropped, publish_dropped, unchecked_evicted, unchecked_dropped, confirmations, forks_resolved, equivocations, conflicting_confirmations, elections_refused, feed_lags.",
		[]string{"event"}, nil)
	descUnchecked      = prometheus.NewDesc("lattice_node_unchecked_blocks", "Blocks waiting for a block they need.", nil, nil)
	descUncheckedBytes = prometheus.NewDesc("lattice_node_unchecked_bytes", "Bytes of the blocks waiting for a block they need.", nil, nil)
	descElections      = prometheus.NewDesc("lattice_node_active_elections", "Elections running.", nil, nil)
	descQuorumOK       = prometheus.NewDesc("lattice_node_quorum_reachable",
		"1 when the representatives this node hears online hold a quorum (more than two thirds of the supply), 0 when this side of the network can confirm nothing.", nil, nil)
	descWeight = prometheus.NewDesc("lattice_node_weight",
		"Weights of the quorum rule, in base units: total (the supply), quorum, online.", []string{"kind"}, nil)
)

// Describe implements prometheus.Collector.
func (s *Service) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPeers, descNet, descUnchecked, descUncheckedBytes, descElections, descQuorumOK, descWeight} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: one Stats read per scrape.
func (s *Service) Collect(ch chan<- prometheus.Metric) {
	st := s.Stats()
	gauge := func(d *prometheus.Desc, v int) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	gauge(descPeers, st.Peers)
	gauge(descUnchecked, st.Unchecked)
	gauge(descUncheckedBytes, st.UncheckedBytes)
	gauge(descElections, st.Elections)
	ok := 0
	if st.Quorum.Reachable {
		ok = 1
	}
	gauge(descQuorumOK, ok)
	for kind, w := range map[string]ledger.Amount{"total": st.Quorum.Total, "quorum": st.Quorum.Quorum, "online": st.Quorum.Online} {
		f, _ := new(big.Float).SetString(w.String())
		v, _ := f.Float64()
		ch <- prometheus.MustNewConstMetric(descWeight, prometheus.GaugeValue, v, kind)
	}
	for event, v := range map[string]uint64{
		"gossip_blocks": st.GossipBlocks, "gossip_votes": st.GossipVotes, "invalid_messages": st.Invalid,
		"held_future_blocks": st.Held, "synced_blocks": st.Synced, "served_blocks": st.Served,
		"intake_dropped": st.IntakeDropped, "publish_dropped": st.PublishDropped, "unchecked_evicted": st.UncheckedEvicted,
		"confirmations": st.Confirmations, "forks_resolved": st.ForksResolved,
		"unchecked_dropped": st.UncheckedDropped, "equivocations": st.Equivocations, "conflicting_confirmations": st.Splits,
		"elections_refused": st.ElectionsRefused, "feed_lags": st.FeedLags,
	} {
		ch <- prometheus.MustNewConstMetric(descNet, prometheus.CounterValue, float64(v), event)
	}
}
