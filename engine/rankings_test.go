package engine

import "testing"

// TestCrowdBTRefresh: a ranking makes the Crowd-BT values stale; Refresh computes them
// outside the lock and stores them, and a second Refresh finds nothing to do.
func TestCrowdBTRefresh(t *testing.T) {
	r := newRig(t)
	r.projects(3)
	js := r.judges(1, "")
	r.must(Admin, &ClockUnpause{})
	r.visits(js[0], 3)
	seen := r.judge(js[0]).SeenProjects
	best := seen[2].ProjectID
	r.must(JudgeActor(js[0]), &JudgeRank{Judge: js[0], Ranking: []ID{best, seen[0].ProjectID}})
	stale := func() (b bool) {
		r.e.Read(func(s *State) { b = s.crowdBTStale() })
		return b
	}
	if !stale() {
		t.Fatal("Crowd-BT not stale after a ranking")
	}
	var cb CrowdBT
	cb.Refresh(r.e)
	if stale() {
		t.Fatal("Crowd-BT still stale after Refresh")
	}
	cb.Refresh(r.e)
	var sc Score
	r.e.Read(func(s *State) { sc = s.ScoreOf(best) })
	if sc.Votes != 2 || sc.Mu <= 0 {
		t.Fatalf("the ranked first: %+v, want 2 votes and mu > 0", sc)
	}
}
