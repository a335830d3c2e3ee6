package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestClusterFamilies(t *testing.T) {
	m := New()
	c := m.Cluster()
	if m.Cluster() != c {
		t.Fatal("Cluster registered twice")
	}
	c.RaftState("leader")
	c.LeaderChanged()
	c.RaftIndexes(10, 15)
	c.Forwarded("ok")
	want := []string{"podium_raft_state", "podium_raft_leader_changes_total", "podium_raft_applied_index",
		"podium_raft_commit_lag", "podium_raft_forwarded_total"}
	n, err := testutil.GatherAndCount(m.reg, want...)
	if err != nil {
		t.Fatal(err)
	}
	// 4 states + 1 + 1 + 1 + 3 outcomes
	if n != 10 {
		t.Fatalf("got %d series, want 10", n)
	}
	if v := testutil.ToFloat64(c.commitLag); v != 5 {
		t.Fatalf("commit lag %v", v)
	}
	if v := testutil.ToFloat64(c.state.WithLabelValues("leader")); v != 1 {
		t.Fatalf("leader state %v", v)
	}
}
