package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	raftStates       = []string{"leader", "follower", "candidate", "shutdown"}
	forwardOutcomes  = []string{"ok", "retry", "error"}
	clusterMetricsOf = map[*Metrics]*ClusterMetrics{}
	clusterMu        sync.Mutex
)

// ClusterMetrics are the raft families of docs/behaviour.md#cluster; it implements
// persist.ClusterObserver.
type ClusterMetrics struct {
	state         *prometheus.GaugeVec
	leaderChanges prometheus.Counter
	applied       prometheus.Gauge
	commitLag     prometheus.Gauge
	forwarded     *prometheus.CounterVec
}

// Cluster registers the raft families (once) and returns their observer. Only cluster
// nodes call it, so a single node shows none of them.
func (m *Metrics) Cluster() *ClusterMetrics {
	clusterMu.Lock()
	defer clusterMu.Unlock()
	if c, ok := clusterMetricsOf[m]; ok {
		return c
	}
	c := &ClusterMetrics{
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "podium_raft_state", Help: "1 for this node's current raft state (leader|follower|candidate|shutdown), 0 for the others.",
		}, []string{"state"}),
		leaderChanges: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "podium_raft_leader_changes_total", Help: "Leader changes this node has observed.",
		}),
		applied: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "podium_raft_applied_index", Help: "Raft index of the last entry applied to this node's state.",
		}),
		commitLag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "podium_raft_commit_lag", Help: "Committed raft entries this node has not applied yet.",
		}),
		forwarded: newCounterVec("podium_raft_forwarded_total",
			"Changes forwarded to the leader, by outcome (ok|retry|error).", "outcome", forwardOutcomes),
	}
	for _, s := range raftStates {
		c.state.WithLabelValues(s)
	}
	m.reg.MustRegister(c.state, c.leaderChanges, c.applied, c.commitLag, c.forwarded)
	clusterMetricsOf[m] = c
	return c
}

// RaftState sets the current state.
func (c *ClusterMetrics) RaftState(state string) {
	for _, s := range raftStates {
		v := 0.0
		if s == state {
			v = 1
		}
		c.state.WithLabelValues(s).Set(v)
	}
}

// LeaderChanged counts a leader change.
func (c *ClusterMetrics) LeaderChanged() { c.leaderChanges.Inc() }

// RaftIndexes sets the applied index and the commit lag.
func (c *ClusterMetrics) RaftIndexes(applied, commit uint64) {
	c.applied.Set(float64(applied))
	lag := 0.0
	if commit > applied {
		lag = float64(commit - applied)
	}
	c.commitLag.Set(lag)
}

// Forwarded counts a change forwarded to the leader.
func (c *ClusterMetrics) Forwarded(outcome string) { c.forwarded.WithLabelValues(outcome).Inc() }
