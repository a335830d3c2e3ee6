package metrics

import (
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"podium/engine"
)

var (
	descProjects = prometheus.NewDesc("podium_projects", "Projects by state (active|hidden).", []string{"state"}, nil)
	descJudges   = prometheus.NewDesc("podium_judges", "Judges by state (active|hidden).", []string{"state"}, nil)
	descFlags    = prometheus.NewDesc("podium_flags", "Flags by reason.", []string{"reason"}, nil)
	descClock    = prometheus.NewDesc("podium_clock_running", "1 while the judging clock runs.", nil, nil)
	descDelib    = prometheus.NewDesc("podium_deliberation", "1 while deliberation is on.", nil, nil)
	descViews    = prometheus.NewDesc("podium_views", "Finished project views recorded (every judge's seen projects).", nil, nil)
)

// stateCollector reads the judging state at scrape time (one short read lock).
type stateCollector struct {
	mu   sync.Mutex
	read func(fn func(s *engine.State))
}

// stateCounts is what a scrape copies out of the state.
type stateCounts struct {
	projects, judges [2]int // active, hidden
	flags            map[string]int
	clock, delib     bool
	views            int
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descProjects
	ch <- descJudges
	ch <- descFlags
	ch <- descClock
	ch <- descDelib
	ch <- descViews
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	read := c.read
	c.mu.Unlock()
	n := stateCounts{flags: make(map[string]int, len(FlagReasons))}
	for _, r := range FlagReasons {
		n.flags[r] = 0
	}
	if read != nil {
		read(func(s *engine.State) {
			for _, p := range s.Projects {
				n.projects[hiddenIndex(p.Active)]++
			}
			for _, j := range s.Judges {
				n.judges[hiddenIndex(j.Active)]++
				n.views += len(j.SeenProjects)
			}
			for i := range s.Flags {
				n.flags[s.Flags[i].Reason]++
			}
			n.clock = s.Options.Clock.Running
			n.delib = s.Options.Deliberation
		})
	}
	for i, st := range itemStates {
		ch <- prometheus.MustNewConstMetric(descProjects, prometheus.GaugeValue, float64(n.projects[i]), st)
		ch <- prometheus.MustNewConstMetric(descJudges, prometheus.GaugeValue, float64(n.judges[i]), st)
	}
	reasons := make([]string, 0, len(n.flags))
	for r := range n.flags {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		ch <- prometheus.MustNewConstMetric(descFlags, prometheus.GaugeValue, float64(n.flags[r]), r)
	}
	ch <- prometheus.MustNewConstMetric(descClock, prometheus.GaugeValue, boolValue(n.clock))
	ch <- prometheus.MustNewConstMetric(descDelib, prometheus.GaugeValue, boolValue(n.delib))
	ch <- prometheus.MustNewConstMetric(descViews, prometheus.GaugeValue, float64(n.views))
}

func hiddenIndex(active bool) int {
	if active {
		return 0
	}
	return 1
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
