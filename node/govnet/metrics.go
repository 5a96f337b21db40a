package govnet

import "github.com/prometheus/client_golang/prometheus"

// The service's metrics, read at each scrape.
var (
	descIndex     = prometheus.NewDesc("lattice_statechain_index", "Index of the state chain's tip on this node.", nil, nil)
	descConflicts = prometheus.NewDesc("lattice_statechain_conflicts", "Conflicts recorded (two blocks signed for one index), resolved or not.", nil, nil)
	descHalted    = prometheus.NewDesc("lattice_statechain_halted", "1 while an unresolved conflict halts governance changes on this node.", nil, nil)
)

// Describe implements prometheus.Collector.
func (s *Service) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descIndex, descConflicts, descHalted} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (s *Service) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	index, conflicts, halted := float64(s.state.Index()), float64(len(s.conflicts)), 0.0
	if s.haltedAt() != nil {
		halted = 1
	}
	s.mu.Unlock()
	for _, m := range []struct {
		d *prometheus.Desc
		v float64
	}{{descIndex, index}, {descConflicts, conflicts}, {descHalted, halted}} {
		ch <- prometheus.MustNewConstMetric(m.d, prometheus.GaugeValue, m.v)
	}
}
