package ledgernet

import "github.com/prometheus/client_golang/prometheus"

// The service's metrics, read from Stats at each scrape.
var (
	descPeers = prometheus.NewDesc("lattice_node_peers", "Connected peers.", nil, nil)
	descNet   = prometheus.NewDesc("lattice_node_network_events_total",
		"Network events since start: gossip_blocks, gossip_votes, invalid_messages, held_future_blocks, synced_blocks, served_blocks, intake_dropped, publish_dropped, unchecked_evicted, confirmations, forks_resolved.",
		[]string{"event"}, nil)
	descUnchecked      = prometheus.NewDesc("lattice_node_unchecked_blocks", "Blocks waiting for a block they need.", nil, nil)
	descUncheckedBytes = prometheus.NewDesc("lattice_node_unchecked_bytes", "Bytes of the blocks waiting for a block they need.", nil, nil)
	descElections      = prometheus.NewDesc("lattice_node_active_elections", "Elections running.", nil, nil)
)

// Describe implements prometheus.Collector.
func (s *Service) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPeers, descNet, descUnchecked, descUncheckedBytes, descElections} {
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
	for event, v := range map[string]uint64{
		"gossip_blocks": st.GossipBlocks, "gossip_votes": st.GossipVotes, "invalid_messages": st.Invalid,
		"held_future_blocks": st.Held, "synced_blocks": st.Synced, "served_blocks": st.Served,
		"intake_dropped": st.IntakeDropped, "publish_dropped": st.PublishDropped, "unchecked_evicted": st.UncheckedEvicted,
		"confirmations": st.Confirmations, "forks_resolved": st.ForksResolved,
	} {
		ch <- prometheus.MustNewConstMetric(descNet, prometheus.CounterValue, float64(v), event)
	}
}
