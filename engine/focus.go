package engine

// Focus assignment (docs/behaviour.md#focus-assignment, assignment_mode "focus"): once a judge's candidates
// all have min_views, the next view goes where it most sharpens the results. With
// assignment_goal "podium" (the default) a project's need is boundaryWeight × p(1−p)
// for its place in the top focus_top plus top3Weight × the same for the top 3 (p_top
// and p_top3 of the last journaled ratings), highest for a project on the edge of the
// top, near 0 for a sure winner or a sure loser, plus coverageWeight × the rating's
// variance, so that a project nobody has seen yet (sd 1.5) is seen before most others;
// with "field" it is the rating's variance, so views go wherever the ranking is least
// certain. The judge gets
// the candidate with the highest need less focusWalkCost per table walked; ties go to
// the nearest table, then the command's random stream.

import (
	"cmp"
	"slices"
)

// focusWalkCost is the need given up per table walked: walking across 100 tables is
// worth a 0.3 higher need (chosen with the simulation, docs/behaviour.md#simulation).
const focusWalkCost = 0.003

// legacySpreadWeight is the variance's weight in the need of events begun before
// assignment_goal (focusNeed).
const legacySpreadWeight = 0.35

// coverageWeight is the variance's weight in the "podium" need (chosen with the
// simulation with min_views 0, docs/behaviour.md#focus-assignment).
const coverageWeight = 0.2

// boundaryWeight and top3Weight weigh the membership uncertainty of the top focus_top
// and of the top 3 in the "podium" need of rule FocusNeedBoundary: the views go to the
// edge of the top focus_top first (chosen with the simulation,
// docs/behaviour.md#why-the-edge-of-the-top).
const (
	boundaryWeight = 2.0
	top3Weight     = 0.5
)

// State.FocusNeed rules of focus mode: FocusNeedCoverage (an event begun since the
// "podium" need carries coverageWeight × variance), FocusNeedBoundary (an event begun
// since that need leans on the edge of the top focus_top) and FocusNeedFree (an event
// begun since coverage ends at the judge's free candidates: see coverageHeld).
const (
	FocusNeedCoverage = 1
	FocusNeedBoundary = 2
	FocusNeedFree     = 3
)

// coverageHeld reports whether a judge whose free candidates all have min_views is
// still kept to coverage (nearest table at the fewest views) because a project another
// judge holds is below min_views: so in events begun before FocusNeedFree, whose
// journals replay to the same assignments. Since then such a judge gets its focus pick:
// the held project is being seen anyway, and the views at the end of coverage (about
// one per judge, each judge holding one of the last unseen projects for its whole
// visit) go to the edge of the top (docs/behaviour.md#why-the-edge-of-the-top).
func (x *judgingData) coverageHeld() bool { return x.focusRule < FocusNeedFree }

// focusNeed is the need of a project with rating r under assignment_goal goal and
// State.FocusNeed rule: for "field" the rating's variance alone (every uncertain place
// in the ranking counts, not only membership of the top); for "podium" the membership
// uncertainty of the top and the top 3 plus coverageWeight × variance, the top's
// weighed boundaryWeight and the top 3's top3Weight (rule FocusNeedBoundary). Events
// begun before keep their build's need, so that their journals replay to the same
// assignments: rule FocusNeedCoverage both weighed 1, rule 0 also without the variance;
// for "" (an event begun before the goal existed) both weighed 1 plus
// legacySpreadWeight × variance.
func focusNeed(r ProjectRating, goal string, rule int) float64 {
	inTop, in3 := r.PTop*(1-r.PTop), r.PTop3*(1-r.PTop3)
	top := inTop + in3
	switch {
	case goal == GoalField:
		return r.SD * r.SD
	case goal == "":
		return top + legacySpreadWeight*r.SD*r.SD
	case rule >= FocusNeedBoundary:
		return boundaryWeight*inTop + top3Weight*in3 + coverageWeight*r.SD*r.SD
	case rule >= FocusNeedCoverage:
		return top + coverageWeight*r.SD*r.SD
	}
	return top
}

// refreshFocus recomputes the slots' needs and their order, highest first (after a
// rebuild of the index or a ratings command), and the runs of equal needs in that order
// (focusPick handles a run at a time).
func (x *judgingData) refreshFocus() {
	n := len(x.proj)
	if cap(x.focus) < n {
		x.focus = make([]float64, n)
		x.focusOrder = make([]int32, n)
		x.focusRun = make([]int32, n)
	}
	x.focus, x.focusOrder, x.focusRun = x.focus[:n], x.focusOrder[:n], x.focusRun[:n]
	for k, p := range x.proj {
		x.focus[k] = focusNeed(p.Ratings, x.focusGoal, x.focusRule)
		x.focusOrder[k] = int32(k)
	}
	slices.SortFunc(x.focusOrder, func(a, b int32) int {
		if c := cmp.Compare(x.focus[b], x.focus[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	// Runs by ==, so that a NaN need (never expected) is a run of its own.
	for i := n - 1; i >= 0; i-- {
		if i+1 < n && x.focus[x.focusOrder[i]] == x.focus[x.focusOrder[i+1]] {
			x.focusRun[i] = x.focusRun[i+1]
		} else {
			x.focusRun[i] = int32(i + 1)
		}
	}
}

// focusBest collects the best candidates by (need less walk, then distance).
type focusBest struct {
	score float64
	dist  int32
	ties  []int32
}

func (b *focusBest) offer(k int32, score float64, dist int32) {
	if len(b.ties) > 0 {
		if score < b.score || score == b.score && dist > b.dist {
			return
		}
		if score == b.score && dist == b.dist {
			b.ties = append(b.ties, k)
			return
		}
	}
	b.score, b.dist = score, dist
	b.ties = append(b.ties[:0], k)
}

func (x *judgingData) distFrom(k, last int32) int32 {
	if last < 0 {
		return 0
	}
	d := x.slots[k].loc - last
	if d < 0 {
		d = -d
	}
	return d
}

// focusRunScan is the longest run of equal needs that focusPick scans whole; a longer one
// is searched from the judge's table outwards.
const focusRunScan = 16

// focusPick is focus mode's step 9 on the fast path: among the free candidates (not
// excluded by epoch ep, active, not busy), the best by need less walk. Slots are visited
// by need, highest first, a run of equal needs at a time, and the visit stops once no
// later slot can win. nil when no candidate is free.
//
// Before the first ratings fit, or while judges never rank, every project has the same
// need: one run holds them all. A long run is therefore not scanned whole: only its
// free slots nearest the judge's table are offered (focusNearest). The result is the
// project the plain scan of every slot (the code before runs) chooses, with the same
// random numbers drawn, which journal replay relies on:
//   - The break test: the plain scan stops at the first slot with need < best.score.
//     Every score offered is need − focusWalkCost·d ≤ need (d ≥ 0), so if the test fails
//     at a run's first slot, best.score stays ≤ need for the rest of the run (an offer
//     from the run cannot raise it above need), and the test fails for all of the run:
//     testing once per run is the same.
//   - Within a run all slots share need, and the floating-point score
//     need − focusWalkCost·d is non-increasing in d (rounding is monotone; for the
//     needs that occur, finite and at most 0.625 + 0.35·SD² (SD ≤ 1.5), it is strictly
//     decreasing). offer ranks by (score, then smaller dist): a slot at a larger d has
//     a lower score, or an equal score and a larger dist, so it is strictly worse than
//     any free slot of the run at the smallest d and is never among the best nor a tie.
//     Leaving it out changes nothing: offer keeps exactly the candidates equal to the
//     best so far, whatever the order they come in.
//   - pickTie sorts the ties by slot before drawing, so the order in which the nearest
//     ones (left and right of the table) are offered does not matter.
//
// With last < 0 every distance is 0 and all free slots of a run tie, so runs are
// scanned whole, as are short ones.
func (x *judgingData) focusPick(ep uint32, last int32, now, window int64, stale bool, r *Rand) *Project {
	best := focusBest{ties: x.ties[:0]}
	defer func() { x.ties = best.ties[:0] }()
	order := x.focusOrder
	for i := 0; i < len(order); {
		run := order[i:x.focusRun[i]]
		i += len(run)
		need := x.focus[run[0]]
		if len(best.ties) > 0 && need < best.score {
			break
		}
		if last >= 0 && len(run) > focusRunScan {
			x.focusNearest(&best, run, need, ep, last, now, window, stale)
			continue
		}
		for _, k := range run {
			if x.focusFree(k, ep, now, window, stale) {
				d := x.distFrom(k, last)
				best.offer(k, need-focusWalkCost*float64(d), d)
			}
		}
	}
	if len(best.ties) == 0 {
		return nil
	}
	return x.pickTie(best.ties, r)
}

// focusFree reports whether slot k is a free candidate: active, not excluded by epoch
// ep, and not held, or (stale) held only by assignments older than the busy window.
func (x *judgingData) focusFree(k int32, ep uint32, now, window int64, stale bool) bool {
	sl := &x.slots[k]
	if sl.flags&slotActive == 0 || x.excluded(k, ep) {
		return false
	}
	return sl.flags&slotHeld == 0 || stale && !x.busy(k, now, window)
}

// focusNearest offers the free slots of run (slots of equal need) nearest table last
// (≥ 0): the first free one on each side of the table, plus any free ones at the same
// table, those of the nearer side only unless both sides are equally near.
//
// A run lists its slots in ascending slot index (refreshFocus breaks ties of need by
// slot), and the slots are in table order (sync builds them from ProjectsByLocation,
// sorted by location; setSlot copies a location only from the judging flow, which never
// moves a project; any other command rebuilds the index), so the run's locations are
// ascending too (non-decreasing: equal locations are kept apart by nothing but creation
// order) and the judge's table is found by binary search.
func (x *judgingData) focusNearest(best *focusBest, run []int32, need float64, ep uint32, last int32, now, window int64, stale bool) {
	lo, hi := 0, len(run) // first position at or beyond table last
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.slots[run[m]].loc < last {
			lo = m + 1
		} else {
			hi = m
		}
	}
	right, left := lo, lo-1
	for right < len(run) && !x.focusFree(run[right], ep, now, window, stale) {
		right++
	}
	for left >= 0 && !x.focusFree(run[left], ep, now, window, stale) {
		left--
	}
	dr, dl := int32(-1), int32(-1)
	if right < len(run) {
		dr = x.slots[run[right]].loc - last
	}
	if left >= 0 {
		dl = last - x.slots[run[left]].loc
	}
	if dr >= 0 && (dl < 0 || dr <= dl) {
		score, loc := need-focusWalkCost*float64(dr), x.slots[run[right]].loc
		for ; right < len(run) && x.slots[run[right]].loc == loc; right++ {
			if k := run[right]; x.focusFree(k, ep, now, window, stale) {
				best.offer(k, score, dr)
			}
		}
	}
	if dl >= 0 && (dr < 0 || dl <= dr) {
		score, loc := need-focusWalkCost*float64(dl), x.slots[run[left]].loc
		for ; left >= 0 && x.slots[run[left]].loc == loc; left-- {
			if k := run[left]; x.focusFree(k, ep, now, window, stale) {
				best.offer(k, score, dl)
			}
		}
	}
}

// focusAmong is focus mode's step 9 on a candidate list (groups, prioritized projects
// or only busy candidates left).
func (x *judgingData) focusAmong(list []int32, last int32, r *Rand) *Project {
	best := focusBest{ties: x.ties2[:0]}
	defer func() { x.ties2 = best.ties[:0] }()
	for _, k := range list {
		d := x.distFrom(k, last)
		best.offer(k, x.focus[k]-focusWalkCost*float64(d), d)
	}
	return x.pickTie(best.ties, r)
}

// heldBelow reports whether a project held by some judge, and not excluded for this one
// (epoch ep), has fewer than minViews views.
func (x *judgingData) heldBelow(ep uint32, minViews int32) bool {
	for lvl := 0; lvl < len(x.lvHeld) && int32(lvl) < minViews; lvl++ {
		for _, k := range x.lvHeld[lvl] {
			if !x.excluded(k, ep) {
				return true
			}
		}
	}
	return false
}
