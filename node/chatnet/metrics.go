package chatnet

import "github.com/prometheus/client_golang/prometheus"

// The service's metrics, read at each scrape.
var (
	descStored      = prometheus.NewDesc("lattice_chat_messages_stored", "Messages this node holds (the last event id).", nil, nil)
	descOutbox      = prometheus.NewDesc("lattice_chat_outbox_messages", "Messages waiting for delivery to their recipient's node.", nil, nil)
	descSubscribers = prometheus.NewDesc("lattice_chat_subscribers", "Open event-stream subscriptions.", nil, nil)
	descFailed      = prometheus.NewDesc("lattice_chat_store_failed", "1 once the chat store failed a write and accepts no more until restart.", nil, nil)
	descChatDisk    = prometheus.NewDesc("lattice_chat_store_disk_bytes", "Bytes the chat store takes on disk.", nil, nil)
	descDirectory   = prometheus.NewDesc("lattice_chat_directory_registrations", "Directory registrations this node holds (at most MaxRegistrations).", nil, nil)
)

// Describe implements prometheus.Collector.
func (s *Service) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descStored, descOutbox, descSubscribers, descFailed, descChatDisk, descDirectory} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (s *Service) Collect(ch chan<- prometheus.Metric) {
	failed := 0.0
	if s.Failed() {
		failed = 1
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	gauge(descStored, float64(s.st.lastSeq()))
	gauge(descOutbox, float64(s.Outbox()))
	gauge(descSubscribers, float64(s.Subscribers()))
	gauge(descFailed, failed)
	gauge(descDirectory, float64(s.st.registrationCount()))
	if s.enter() {
		gauge(descChatDisk, float64(s.st.db.Metrics().DiskSpaceUsage()))
		s.leave()
	}
}
