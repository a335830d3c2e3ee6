package engine

import "testing"

// TestHasSeenMatchesSeenList: the bitset behind hasSeen answers, for every slot, what
// a scan of the judge's seen list answers, as judges finish projects, across index
// rebuilds (a project created mid-way renumbers nothing it must not) and for slots
// beyond the last word of the bitset.
func TestHasSeenMatchesSeenList(t *testing.T) {
	r := newRig(t)
	r.projects(300)
	js := r.judges(3, "")
	r.must(Admin, &ClockUnpause{})
	check := func(step int) {
		x := r.e.s.jd()
		x.sync(r.e.s)
		for _, id := range js {
			j := r.judge(id)
			for pid, k := range x.slotOf {
				want := j.seenIndex(pid) >= 0
				if got := x.hasSeen(j, k); got != want {
					t.Fatalf("step %d: judge %s slot %d: hasSeen %v, seen list says %v", step, j.Name, k, got, want)
				}
			}
			if x.hasSeen(j, int32(len(x.slots)+200)) || x.hasSeen(j, -1) {
				t.Fatalf("step %d: a slot outside the index counts as seen", step)
			}
		}
	}
	check(0)
	for step := 1; step <= 240; step++ {
		j := js[step%len(js)]
		if res := r.next(j); res.ProjectID.IsZero() {
			t.Fatalf("step %d: no project left", step)
		}
		r.must(JudgeActor(j), &JudgeFinish{Judge: j})
		if step%50 == 0 {
			r.projects(1) // outside the judging flow: the index and its caches are rebuilt
		}
		if step%7 == 0 {
			check(step)
		}
	}
	check(241)
}
