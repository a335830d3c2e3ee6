package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	descReady    = prometheus.NewDesc("podium_ready", "1 while the server is ready: recovered, able to write and not shutting down (as GET /readyz).", nil, nil)
	descReadOnly = prometheus.NewDesc("podium_journal_readonly", "1 while changes are refused because the journal cannot be written (docs/behaviour.md#state-durability-and-recovery).", nil, nil)
	descRatings  = prometheus.NewDesc("podium_ratings_pending_changes", "Changes to the ratings' inputs (finishes, rankings, stars, projects added or hidden) that no stored ratings fit has seen yet; 0 = the ratings are current (docs/behaviour.md#ratings).", nil, nil)
)

// healthCollector reports readiness and the read-only state at scrape time.
type healthCollector struct {
	mu       sync.Mutex
	ready    func() bool
	readOnly func() bool
	pending  func() uint64
}

func (c *healthCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descReady
	ch <- descReadOnly
	ch <- descRatings
}

func (c *healthCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	ready, readOnly, pending := c.ready, c.readOnly, c.pending
	c.mu.Unlock()
	r, ro := false, false
	if ready != nil {
		r = ready()
	}
	if readOnly != nil {
		ro = readOnly()
	}
	ch <- prometheus.MustNewConstMetric(descReady, prometheus.GaugeValue, boolValue(r))
	ch <- prometheus.MustNewConstMetric(descReadOnly, prometheus.GaugeValue, boolValue(ro))
	var p uint64
	if pending != nil {
		p = pending()
	}
	ch <- prometheus.MustNewConstMetric(descRatings, prometheus.GaugeValue, float64(p))
}

// WatchRatings makes podium_ratings_pending_changes read pending at scrape time (pass
// worker.Ratings.Pending). Before it is called it reads 0.
func (m *Metrics) WatchRatings(pending func() uint64) {
	m.health.mu.Lock()
	m.health.pending = pending
	m.health.mu.Unlock()
}

// WatchHealth makes podium_ready and podium_journal_readonly read the store at scrape
// time: ready as /readyz answers (pass persist.Node.Ready), readOnly true while a
// journal write failure keeps the server read-only (persist.Node.Failure() != nil).
// Before it is called both read 0.
func (m *Metrics) WatchHealth(ready, readOnly func() bool) {
	m.health.mu.Lock()
	m.health.ready, m.health.readOnly = ready, readOnly
	m.health.mu.Unlock()
}
