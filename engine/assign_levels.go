package engine

// The assignment's fast path (step 9 without a scan of every project), for a general
// judge when groups are off and nothing is prioritized: the active projects are kept
// by views level, and the least viewed level with a free candidate holds the answer.

import "slices"

// Fast path limits (the defaults of judgingData.bigLevel and maxWalk): levels with more
// projects than bigLevel are searched by walking outwards from the judge's table, for at
// most maxWalk tables.
const (
	defaultBigLevel = 512
	defaultMaxWalk  = 2048
)

// pickByLevel is step 9 for a general judge when groups are off and nothing is
// prioritized, without scanning every project. The active projects are kept by views
// level; the levels are tried from the least viewed up, and the first level with a free
// candidate holds the answer the full scan would give (same candidates, same key: pair
// sum at or above min_views, then table distance; equals in table order, drawn with the
// same random number). A small level is enumerated; a big one is first searched by
// walking outwards from the judge's last table for the nearest free candidate with a
// pair sum of 0, which is then certainly the best. It returns nil when no project is
// free (step 5 then keeps busy ones: the caller scans).
//
// In focus mode, the first level with a free candidate at or above min_views means
// every free candidate has its views: focusPick chooses among all of them.
func (x *judgingData) pickByLevel(ep uint32, sums func() uint32, focus bool, minViews, last int32, now, window int64, r *Rand) *Project {
	// While no assignment is older than the busy window, a held project is busy, so
	// only the levels' free lists need looking at.
	sp := uint32(0)
	sumOf := func(k int32) int32 {
		if sp != 0 && x.sumMark[k] == sp {
			return x.sum[k]
		}
		return 0
	}
	stale := x.anyStale(now, window) // else every held project is busy
	for lvl := range x.levelCount {
		free, held := x.lvFree[lvl], x.lvHeld[lvl]
		if len(free) == 0 && (!stale || len(held) == 0) {
			continue
		}
		v := int32(lvl)
		compare := v >= minViews
		if compare && focus {
			// Coverage first: while a candidate someone else holds is below min_views,
			// views keep to the fewest (this level): by need (see coverageHeld), or in
			// an event begun before FocusNeedFree the nearest table.
			if !x.heldBelow(ep, minViews) {
				if p := x.focusPick(ep, last, now, window, stale, r); p != nil {
					return p
				}
				continue
			}
			if !x.coverageHeld() {
				if p := x.focusLevel(lvl, ep, last, now, window, stale, r); p != nil {
					return p
				}
				continue
			}
			compare = false
		}
		if compare {
			sp = sums()
		}
		if len(free) > x.bigLevel && last >= 0 {
			if p := x.walk(ep, sp, v, compare, last, now, window, r); p != nil {
				return p
			}
		}
		best := choice{ties: x.ties[:0]}
		offer := func(k int32) {
			var sum, dist int32
			if compare {
				sum = sumOf(k)
			}
			if last >= 0 {
				dist = x.slots[k].loc - last
				if dist < 0 {
					dist = -dist
				}
			}
			best.offer(k, v, sum, dist)
		}
		for _, k := range free {
			if !x.excluded(k, ep) {
				offer(k)
			}
		}
		if stale {
			for _, k := range held {
				if !x.excluded(k, ep) && !x.busy(k, now, window) {
					offer(k)
				}
			}
		}
		x.ties = best.ties[:0]
		if len(best.ties) > 0 {
			return x.pickTie(best.ties, r)
		}
	}
	return nil
}

// pickTie draws one of equally good candidates, listed in table order as the scan does.
func (x *judgingData) pickTie(ties []int32, r *Rand) *Project {
	slices.Sort(ties) // a first assignment can tie every project: no quadratic sort
	if len(ties) == 1 {
		return x.proj[ties[0]]
	}
	return x.proj[ties[r.Intn(len(ties))]]
}

// walk looks outwards from table last for the nearest free, not excluded project at
// level v (with a pair sum of 0 when compare), collecting equally near ones. nil when
// none is found within x.maxWalk tables.
func (x *judgingData) walk(ep, sp uint32, v int32, compare bool, last int32, now, window int64, r *Rand) *Project {
	n := len(x.slots)
	lo, hi := 0, n // first slot at or beyond the last table (slots are in table order)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.slots[m].loc < last {
			lo = m + 1
		} else {
			hi = m
		}
	}
	right, left := lo, lo-1
	ties := x.ties2[:0]
	defer func() { x.ties2 = ties[:0] }()
	found := int32(-1)
	complete := false
	for steps := 0; ; steps++ {
		if left < 0 && right >= n {
			complete = true
			break
		}
		if steps == x.maxWalk {
			break
		}
		var k int
		var d int32
		if right >= n || left >= 0 && last-x.slots[left].loc <= x.slots[right].loc-last {
			k, d = left, last-x.slots[left].loc
			left--
		} else {
			k, d = right, x.slots[right].loc-last
			right++
		}
		if found >= 0 && d > found {
			complete = true
			break
		}
		sl := &x.slots[k]
		if sl.seen != v || sl.flags&slotActive == 0 || x.excluded(int32(k), ep) {
			continue
		}
		if compare && sp != 0 && x.sumMark[k] == sp && x.sum[k] != 0 {
			continue
		}
		if sl.flags&slotHeld != 0 && x.busy(int32(k), now, window) {
			continue
		}
		found = d
		ties = append(ties, int32(k))
	}
	if found < 0 || !complete {
		return nil
	}
	return x.pickTie(ties, r)
}

// focusLevel is focus mode's pick among the free candidates of level lvl (the fewest
// views), not excluded by epoch ep: the highest need less the walk. nil when none.
func (x *judgingData) focusLevel(lvl int, ep uint32, last int32, now, window int64, stale bool, r *Rand) *Project {
	list := x.cands[:0]
	defer func() { x.cands = list[:0] }()
	for _, k := range x.lvFree[lvl] {
		if !x.excluded(k, ep) {
			list = append(list, k)
		}
	}
	if stale {
		for _, k := range x.lvHeld[lvl] {
			if !x.excluded(k, ep) && !x.busy(k, now, window) {
				list = append(list, k)
			}
		}
	}
	if len(list) == 0 {
		return nil
	}
	return x.focusAmong(list, last, r)
}
