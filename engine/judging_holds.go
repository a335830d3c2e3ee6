package engine

import "sort"

// Who is looking at what, as the assignment index keeps it: each project's holders,
// and a queue of the assignments by age, so that the busy window (an assignment makes
// its project busy for twice the judging timer) is checked without a scan.

// hold records that j now looks at p.
func (x *judgingData) hold(s *State, p ID, j *Judge) {
	if k, ok := x.slotOf[p]; ok {
		x.holders[k] = append(x.holders[k], holder{judge: j.ID, since: j.CurrentSince, track: s.trackOf(j)})
		x.setHeld(k, true)
		if n := len(x.holdQ); n > x.holdHead && x.holdQ[n-1].since > j.CurrentSince {
			x.holdSorted = false
		}
		x.holdQ = append(x.holdQ, holdRec{since: j.CurrentSince, judge: j.ID, slot: k})
		x.nHolds++
		if len(x.holdQ)-x.holdHead > 2*x.nHolds+1024 || x.holdHead > 1024 && 2*x.holdHead > len(x.holdQ) {
			x.compactHolds()
		}
	}
}

// validHold reports whether r is still a current assignment.
func (x *judgingData) validHold(r holdRec) bool {
	for _, h := range x.holders[r.slot] {
		if h.judge == r.judge && h.since == r.since {
			return true
		}
	}
	return false
}

// compactHolds drops released assignments from the hold queue, keeping the order.
func (x *judgingData) compactHolds() {
	q := x.holdQ[:0]
	for _, r := range x.holdQ[x.holdHead:] {
		if x.validHold(r) {
			q = append(q, r)
		}
	}
	x.holdQ, x.holdHead = q, 0
}

// oldestHold returns the time of the oldest assignment still held (ok false: none).
func (x *judgingData) oldestHold() (int64, bool) {
	if !x.holdSorted {
		q := x.holdQ[x.holdHead:]
		sort.SliceStable(q, func(a, b int) bool { return q[a].since < q[b].since })
		x.holdSorted = true
	}
	for x.holdHead < len(x.holdQ) {
		if r := x.holdQ[x.holdHead]; x.validHold(r) {
			return r.since, true
		}
		x.holdHead++
	}
	x.holdQ, x.holdHead = x.holdQ[:0], 0
	return 0, false
}

// anyStale reports whether some assignment is older than the busy window (and so no
// longer makes its project busy).
func (x *judgingData) anyStale(now, window int64) bool {
	if window <= 0 {
		return false
	}
	oldest, ok := x.oldestHold()
	return ok && now-oldest > window
}

// release records that judge no longer looks at p.
func (x *judgingData) release(p, judge ID) {
	k, ok := x.slotOf[p]
	if !ok {
		return
	}
	hs := x.holders[k]
	for i := range hs {
		if hs[i].judge == judge {
			x.holders[k] = append(hs[:i], hs[i+1:]...)
			x.nHolds--
			break
		}
	}
	if len(x.holders[k]) == 0 {
		x.setHeld(k, false)
	}
}

// busy reports whether someone is looking at slot k's project: an assignment counts
// while it is at most window ms old (window 0: always).
func (x *judgingData) busy(k int32, now, window int64) bool {
	if !x.slots[k].has(slotHeld) {
		return false
	}
	for _, h := range x.holders[k] {
		if window <= 0 || now-h.since <= window {
			return true
		}
	}
	return false
}

// viewing counts the judges of track t looking at slot k's project.
func (x *judgingData) viewing(k int32, t string, now, window int64) int {
	n := 0
	for _, h := range x.holders[k] {
		if h.track == t && (window <= 0 || now-h.since <= window) {
			n++
		}
	}
	return n
}
