package engine

// Focus assignment (SPEC §5 step 9, assignment_mode "focus"): once a judge's candidates
// all have min_views, the next view goes where it most sharpens the top of the results.
// A project's need is p(1−p) for its place in the top focus_top plus the same for the
// top 3 (p_top and p_top3 of the last journaled ratings), highest for a project whose
// membership is a coin toss, near 0 for a sure winner or a sure loser, plus a little
// for any rating that is still uncertain (its variance). The judge gets
// the candidate with the highest need less focusWalkCost per table walked; ties go to
// the nearest table, then the command's random stream.

import (
	"cmp"
	"slices"
)

// focusWalkCost is the need given up per table walked: walking across 100 tables is
// worth a 0.3 higher need. focusSpreadWeight adds a little need for any uncertain
// rating, so that the whole ranking (Spearman ρ) keeps improving too. Both were chosen
// with the simulation (README, "Picking the winners").
const (
	focusWalkCost     = 0.003
	focusSpreadWeight = 0.35
)

// focusNeed is the need of a project with rating r.
func focusNeed(r ProjectRating) float64 {
	return r.PTop*(1-r.PTop) + r.PTop3*(1-r.PTop3) + focusSpreadWeight*r.SD*r.SD
}

// refreshFocus recomputes the slots' needs and their order, highest first (after a
// rebuild of the index or a ratings command).
func (x *judgingData) refreshFocus() {
	n := len(x.proj)
	if cap(x.focus) < n {
		x.focus = make([]float64, n)
		x.focusOrder = make([]int32, n)
	}
	x.focus, x.focusOrder = x.focus[:n], x.focusOrder[:n]
	for k, p := range x.proj {
		x.focus[k] = focusNeed(p.Ratings)
		x.focusOrder[k] = int32(k)
	}
	slices.SortFunc(x.focusOrder, func(a, b int32) int {
		if c := cmp.Compare(x.focus[b], x.focus[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
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

// focusPick is focus mode's step 9 on the fast path: among the free candidates (not
// excluded by epoch ep, active, not busy), the best by need less walk. Slots are visited
// by need, highest first, and the visit stops once no later slot can win. nil when no
// candidate is free.
func (x *judgingData) focusPick(ep uint32, last int32, now, window int64, stale bool, r *Rand) *Project {
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
			if x.mark[k] != ep {
				return true
			}
		}
	}
	return false
}
