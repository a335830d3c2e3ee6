package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// focusPickRef is focusPick as it was before runs of equal needs were searched from the
// judge's table: every slot in need order, stopping once no later slot can win. The new
// focusPick must choose the same project and draw the same random numbers (journal
// replay re-runs assignments).
func (x *judgingData) focusPickRef(ep uint32, last int32, now, window int64, stale bool, r *Rand) *Project {
	best := focusBest{ties: x.ties[:0]}
	defer func() { x.ties = best.ties[:0] }()
	for _, k := range x.focusOrder {
		need := x.focus[k]
		if len(best.ties) > 0 && need < best.score {
			break
		}
		sl := &x.slots[k]
		if sl.flags&slotActive == 0 || x.mark[k] == ep {
			continue
		}
		if sl.flags&slotHeld != 0 && (!stale || x.busy(k, now, window)) {
			continue
		}
		d := x.distFrom(k, last)
		best.offer(k, need-focusWalkCost*float64(d), d)
	}
	if len(best.ties) == 0 {
		return nil
	}
	return x.pickTie(best.ties, r)
}

// focusCase is a random index for focusPick: n slots in table order (some tables shared,
// gaps between tables), needs drawn from a few values so that runs of equal needs are
// long, some slots hidden, excluded or held (by recent or old assignments).
type focusCase struct {
	x      *judgingData
	ep     uint32
	last   int32
	now    int64
	window int64
	stale  bool
}

func newFocusCase(rnd *rand.Rand) focusCase {
	n := 1 + rnd.IntN(300)
	if rnd.IntN(4) == 0 {
		n = 1 + rnd.IntN(40)
	}
	x := newJudgingData(new(uint64))
	x.slots = make([]slot, n)
	x.proj = make([]*Project, n)
	x.holders = make([][]holder, n)
	x.mark = make([]uint32, n)
	// A few distinct ratings; with one of them, every need is equal.
	kinds := 1 + rnd.IntN(4)
	ratings := make([]ProjectRating, kinds)
	for i := range ratings {
		vals := []float64{0, 0.1, 0.25, 0.5, 0.75, 0.9, 1}
		ratings[i] = ProjectRating{PTop: vals[rnd.IntN(len(vals))], PTop3: vals[rnd.IntN(len(vals))], SD: vals[rnd.IntN(len(vals))] * 3}
	}
	pHidden, pMark, pHeld := rnd.Float64()*0.2, rnd.Float64()*0.9, rnd.Float64()*0.5
	if rnd.IntN(3) == 0 {
		pMark = 0.5 // a judge who has seen half
	}
	const now, window = 1_000_000, 10_000
	loc := int32(rnd.IntN(3))
	for k := range n {
		if rnd.IntN(5) != 0 { // else shares the previous table
			loc += 1 + int32(rnd.IntN(3)*rnd.IntN(2))
		}
		sl := &x.slots[k]
		sl.loc = loc
		if rnd.Float64() >= pHidden {
			sl.flags |= slotActive
		}
		if rnd.Float64() < pMark {
			x.mark[k] = 7
		} else if rnd.IntN(10) == 0 {
			x.mark[k] = 6 // an older epoch: not excluded
		}
		if rnd.Float64() < pHeld {
			sl.flags |= slotHeld
			for range 1 + rnd.IntN(2) {
				since := int64(now - rnd.IntN(2*window))
				x.holders[k] = append(x.holders[k], holder{since: since})
			}
		}
		x.proj[k] = &Project{Location: int(loc), Ratings: ratings[rnd.IntN(kinds)]}
	}
	x.refreshFocus()
	c := focusCase{x: x, ep: 7, now: now, window: window, stale: rnd.IntN(2) == 0}
	switch rnd.IntN(5) {
	case 0:
		c.last = -1
	case 1: // beyond either end
		if rnd.IntN(2) == 0 {
			c.last = 0
		} else {
			c.last = loc + 1 + int32(rnd.IntN(5))
		}
	default:
		c.last = int32(rnd.IntN(int(loc) + 2))
	}
	return c
}

func (c focusCase) pick(ref bool, seed uint64) (*Project, uint64) {
	r := NewRand(seed)
	var p *Project
	if ref {
		p = c.x.focusPickRef(c.ep, c.last, c.now, c.window, c.stale, r)
	} else {
		p = c.x.focusPick(c.ep, c.last, c.now, c.window, c.stale, r)
	}
	return p, r.Uint64()
}

// TestFocusPickMatchesScan compares focusPick with the plain scan on random indexes: the
// same project and the same random numbers drawn.
func TestFocusPickMatchesScan(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	const cases = 20_000
	long, ties := 0, 0
	for i := range cases {
		c := newFocusCase(rnd)
		for j := 0; j < len(c.x.focusOrder); j = int(c.x.focusRun[j]) {
			if int(c.x.focusRun[j])-j > focusRunScan {
				long++
				break
			}
		}
		seed := rnd.Uint64()
		want, wantNext := c.pick(true, seed)
		got, gotNext := c.pick(false, seed)
		if got != want || gotNext != wantNext {
			t.Fatalf("case %d (n %d, last %d, stale %v): focusPick chose %v (next random %x), the scan %v (%x)",
				i, len(c.x.slots), c.last, c.stale, slotName(c.x, got), gotNext, slotName(c.x, want), wantNext)
		}
		if want != nil && NewRand(seed).Uint64() != wantNext {
			ties++ // a random number was drawn: several candidates tied
		}
	}
	t.Logf("%d cases, %d with a run longer than %d, %d with ties drawn", cases, long, focusRunScan, ties)
	// The cases must exercise the search of long runs and draws among ties.
	if long < cases/2 || ties < cases/20 {
		t.Fatalf("weak cases: %d with a long run, %d with ties drawn", long, ties)
	}
}

func slotName(x *judgingData, p *Project) string {
	for k, q := range x.proj {
		if q == p {
			return fmt.Sprintf("slot %d (table %d)", k, x.slots[k].loc)
		}
	}
	return "none"
}

// BenchmarkFocusPickEqualNeeds2k: 2,000 projects with equal needs (no ratings fit yet,
// or judges who never rank), a judge standing at table 1,000 who has seen half of them:
// every other one ("alternate"), or the 1,000 around its table ("around", the worst case
// of the search outwards); nothing held. "ref" is the plain scan of every slot.
func BenchmarkFocusPickEqualNeeds2k(b *testing.B) {
	const n = 2000
	for _, seen := range []string{"alternate", "around"} {
		x := newJudgingData(new(uint64))
		x.slots = make([]slot, n)
		x.proj = make([]*Project, n)
		x.holders = make([][]holder, n)
		x.mark = make([]uint32, n)
		for k := range n {
			x.slots[k] = slot{loc: int32(k + 1), flags: slotActive}
			x.proj[k] = &Project{Location: k + 1, Ratings: ProjectRating{SD: RatingPriorSD}}
			if seen == "alternate" && k%2 == 0 || seen == "around" && k >= 500 && k < 1500 {
				x.mark[k] = 1
			}
		}
		x.refreshFocus()
		for _, ref := range []bool{true, false} {
			name := seen + map[bool]string{true: "/ref", false: "/new"}[ref]
			b.Run(name, func(b *testing.B) {
				r := NewRand(1)
				for b.Loop() {
					var p *Project
					if ref {
						p = x.focusPickRef(1, 1000, 0, 0, false, r)
					} else {
						p = x.focusPick(1, 1000, 0, 0, false, r)
					}
					if p == nil {
						b.Fatal("no project")
					}
				}
			})
		}
	}
}

// TestFocusNeedOfEarlierEvents: a new event's "podium" need leans on the edge of the top
// (2 × the top's membership uncertainty, 0.5 × the top 3's) and carries coverage (0.2 ×
// variance); an event whose state predates that keeps its build's need, so its journal
// replays to the same assignments: focus_need 1 (both weighed 1) whatever options it
// sets, none (a snapshot without focus_need: no variance either) until the organiser
// sets assignment_goal, which then brings focus_need 1 (docs/behaviour.md#focus-assignment).
func TestFocusNeedOfEarlierEvents(t *testing.T) {
	r := ProjectRating{PTop: 0.5, PTop3: 0.1, SD: 1}
	top := 0.5*0.5 + 0.1*0.9
	for _, rule := range []int{FocusNeedBoundary, FocusNeedFree} {
		if got, want := focusNeed(r, GoalPodium, rule), 2*0.25+0.5*0.09+coverageWeight; math.Abs(got-want) > 1e-12 {
			t.Fatalf("podium need of focus_need %d %v, want %v", rule, got, want)
		}
	}
	if got := focusNeed(r, GoalPodium, FocusNeedCoverage); got != top+coverageWeight {
		t.Fatalf("podium need of focus_need 1 %v, want %v", got, top+coverageWeight)
	}
	if got := focusNeed(r, GoalPodium, 0); got != top {
		t.Fatalf("earlier podium need %v, want %v", got, top)
	}
	if got := focusNeed(r, "", FocusNeedCoverage); got != top+legacySpreadWeight {
		t.Fatalf("need of an event begun before assignment_goal %v, want %v", got, top+legacySpreadWeight)
	}

	e := New()
	if e.s.FocusNeed != FocusNeedFree || e.s.Options.MinViews != DefaultMinViews || DefaultMinViews != 1 {
		t.Fatalf("new event: focus_need %d, min_views %d", e.s.FocusNeed, e.s.Options.MinViews)
	}
	var raw map[string]any
	if err := json.Unmarshal(snapshot(t, e), &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw, "focus_need")
	old, _ := json.Marshal(raw)
	earlier := New()
	if err := earlier.Restore(old); err != nil {
		t.Fatal(err)
	}
	if earlier.s.FocusNeed != 0 {
		t.Fatalf("an earlier event's focus_need %d, want 0", earlier.s.FocusNeed)
	}
	// Another option leaves it; choosing the goal brings today's need.
	if _, err := run(t, earlier, 1, &SetOptions{FocusTop: ip(12)}); err != nil {
		t.Fatal(err)
	}
	if earlier.s.FocusNeed != 0 {
		t.Fatal("focus_top changed the need's rule")
	}
	if _, err := run(t, earlier, 2, &SetOptions{AssignmentGoal: sp(GoalPodium)}); err != nil {
		t.Fatal(err)
	}
	if earlier.s.FocusNeed != FocusNeedCoverage {
		t.Fatalf("after assignment_goal: focus_need %d", earlier.s.FocusNeed)
	}
	// An event begun with focus_need 1 keeps it when the goal is set; a new one keeps 3.
	if _, err := run(t, earlier, 3, &SetOptions{AssignmentGoal: sp(GoalField)}); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, e, 1, &SetOptions{AssignmentGoal: sp(GoalPodium)}); err != nil {
		t.Fatal(err)
	}
	if earlier.s.FocusNeed != FocusNeedCoverage || e.s.FocusNeed != FocusNeedFree {
		t.Fatalf("goal set again: focus_need %d (begun with 1), %d (new)", earlier.s.FocusNeed, e.s.FocusNeed)
	}
}

// TestCoverageEndsAtFreeCandidates: once every free candidate of a judge has min_views
// while another judge still holds an unseen project, a new event (focus_need 3) sends
// the judge to the highest need among the fewest views, not to the nearest table as an
// event begun before does (focus_need 2), and never past the fewest views; the fast
// path and the full scan agree (docs/behaviour.md#focus-assignment).
func TestCoverageEndsAtFreeCandidates(t *testing.T) {
	for _, c := range []struct{ rule, want int }{{FocusNeedFree, 4}, {FocusNeedBoundary, 2}} {
		s, ps := tiny(t, 1, 2, 3, 4, 5)
		s.FocusNeed = c.rule
		for i, p := range ps {
			p.Seen = []int{0, 1, 1, 1, 2}[i]
			p.Ratings = ProjectRating{SD: 1}
		}
		ps[3].Ratings.PTop = 0.5                           // the edge of the top: need 0.7
		ps[4].Ratings.PTop, ps[4].Ratings.PTop3 = 0.5, 0.5 // higher still, but seen twice
		j, other := addTestJudge(s, 1, ""), addTestJudge(s, 2, "")
		hold(other, ps[0], 1)
		j.LastLocation = 2
		for _, noFast := range []bool{true, false} {
			edited(s)
			s.jd().noFast = noFast
			if got := s.pickNext(j, ctxAt(s, 10, 7)); got != ps[c.want-1] {
				t.Fatalf("focus_need %d (scan %v): table %d, want %d", c.rule, noFast, got.Location, c.want)
			}
		}
	}
}
