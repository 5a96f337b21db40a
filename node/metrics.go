package node

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latticenet/lattice/ledger"
)

// Metrics are the engine's Prometheus metrics. A nil *Metrics records
// nothing.
type Metrics struct {
	blocks *prometheus.CounterVec
	commit prometheus.Histogram
	group  prometheus.Histogram
}

// NewMetrics registers the engine's metrics with reg:
//
//	lattice_node_blocks_total{type,result}  blocks submitted (by clients or peers), by outcome:
//	                                        applied, duplicate, fork, refused (a rule or check), failed (storage)
//	lattice_node_commit_duration_seconds    one group commit, from its write to its fsync's end
//	lattice_node_commit_blocks              requests decided in one group commit
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		blocks: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "lattice", Subsystem: "node", Name: "blocks_total",
			Help: "Blocks submitted to the engine, by clients or peers, by type and outcome (applied, duplicate, fork, refused, failed)."},
			[]string{"type", "result"}),
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "lattice", Subsystem: "node", Name: "commit_duration_seconds",
			Help:    "Time of one group commit, from writing its batch to the end of its fsync.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1}}),
		group: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "lattice", Subsystem: "node", Name: "commit_blocks",
			Help:    "Requests (blocks, confirmations, resolutions) decided in one group commit.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}}),
	}
	reg.MustRegister(m.blocks, m.commit, m.group)
	return m
}

// block counts one block's outcome.
func (m *Metrics) block(b *ledger.Block, res Result, fork bool, err error) {
	if m == nil || b == nil {
		return
	}
	result := "applied"
	switch {
	case err == nil && res.Duplicate:
		result = "duplicate"
	case err == nil:
	case fork:
		result = "fork"
	case ledger.IsRule(err): // the pure core's checks and rules
		result = "refused"
	default: // storage failed, the engine closed, the caller gave up
		result = "failed"
	}
	m.blocks.WithLabelValues(b.Type.String(), result).Inc()
}

func (m *Metrics) committed(started time.Time, requests int) {
	if m == nil {
		return
	}
	m.commit.Observe(time.Since(started).Seconds())
	m.group.Observe(float64(requests))
}

// The ledger's size, read at each scrape.
var (
	descLedgerBlocks = prometheus.NewDesc("lattice_node_ledger_blocks", "Blocks in the ledger, the genesis block included.", nil, nil)
	descLedgerDisk   = prometheus.NewDesc("lattice_node_ledger_disk_bytes", "Bytes the ledger database takes on disk.", nil, nil)
	descFailed       = prometheus.NewDesc("lattice_node_failed", "1 once a write or fsync failed and the engine accepts no more blocks.", nil, nil)
)

// ledgerCollector reports the ledger's size.
type ledgerCollector struct{ n *Node }

func (c ledgerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLedgerBlocks
	ch <- descLedgerDisk
	ch <- descFailed
}

func (c ledgerCollector) Collect(ch chan<- prometheus.Metric) {
	failed := 0.0
	if c.n.Engine.Err() != nil {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(descLedgerBlocks, prometheus.GaugeValue, float64(c.n.Store.LastSeq()))
	ch <- prometheus.MustNewConstMetric(descLedgerDisk, prometheus.GaugeValue, float64(c.n.Store.DiskUsage()))
	ch <- prometheus.MustNewConstMetric(descFailed, prometheus.GaugeValue, failed)
}
