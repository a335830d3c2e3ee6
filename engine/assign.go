package engine

// The assignment algorithm of docs/behaviour.md#judging-flow (POST /api/judge/next), step by step.

// Reasons of a `next` that assigns nothing.
const (
	ReasonInactive     = "inactive"
	ReasonDeliberation = "deliberation"
	ReasonPaused       = "paused"
	ReasonDone         = "done"
)

// NextResult is the answer of POST /api/judge/next: a project or a reason.
type NextResult struct {
	ProjectID ID
	Reason    string
	// Upcoming lists up to 2 more projects the judge would likely get next (not
	// reserved: docs/behaviour.md#on-the-floor).
	Upcoming []ID
}

// PeekNext answers `next` for judge id without changing anything when no command is
// needed (the judge has no current project and cannot be given one: step 2). final is
// false when the JudgeNext command must answer (it also lists the upcoming projects).
func (s *State) PeekNext(id ID) (res NextResult, final bool) {
	j, ok := s.Judges[id]
	if !ok || !j.Current.IsZero() {
		return NextResult{}, false
	}
	if r := s.nextBlocked(j); r != "" {
		return NextResult{Reason: r}, true
	}
	return NextResult{}, false
}

// nextBlocked is step 2: why the judge cannot be given a project now ("" = it can).
func (s *State) nextBlocked(j *Judge) string {
	switch {
	case !j.Active:
		return ReasonInactive
	case s.Options.Deliberation:
		return ReasonDeliberation
	case !s.Options.Clock.Running:
		return ReasonPaused
	}
	return ""
}

// nextFor runs steps 1-10 for judge j.
func (s *State) nextFor(j *Judge, c *Ctx) NextResult {
	if !j.Current.IsZero() {
		return NextResult{ProjectID: j.Current}
	}
	if r := s.nextBlocked(j); r != "" {
		return NextResult{Reason: r}
	}
	p := s.pickNext(j, c)
	if p == nil {
		return NextResult{Reason: ReasonDone}
	}
	s.assignTo(j, p, c)
	return NextResult{ProjectID: p.ID}
}

// busyWindow is how long (ms) an assignment counts as busy; 0 means forever.
func (o *Options) busyWindow() int64 {
	if o.JudgingTimer <= 0 {
		return 0
	}
	return 2 * int64(o.JudgingTimer) * 1000
}

// trackViews returns the views wanted per project for track t (default 3).
func (o *Options) trackViews(t string) int {
	for i, name := range o.Tracks {
		if name == t && i < len(o.TrackViews) {
			return o.TrackViews[i]
		}
	}
	return 3
}

// pickNext chooses the judge's next project (steps 3-9), or nil when there is none. It
// may move a general judge to another group (step 7) but assigns nothing.
//
// For speed at 10,000 projects the common path (general judge, groups off) scans the
// projects once: it keeps the candidates and, for both the free candidates and all of
// them (step 5), the best ones by the step 9 order (views; then, at or above min_views,
// the pair-comparison sum; then table distance). Groups and track judges use the lists.
func (s *State) pickNext(j *Judge, c *Ctx) *Project {
	x := s.jd()
	x.sync(s)
	p := s.newPicker(j, c)
	defer func() { x.pickSeen = nil }()
	o := p.o
	general := p.track == ""

	// Fast path: a general judge, no groups, nothing prioritized.
	if general && !(o.MultiGroup && o.NumGroups > 0) && x.prioCount == 0 && !x.noFast {
		if pr := x.pickByLevel(p.ep, p.sums, p.focus, p.minViews, p.last, p.now, p.window, c.Rand); pr != nil {
			x.fastHits++
			return pr
		}
	}

	cs := candidates{all: x.cands[:0], free: x.free[:0], bestAll: choice{ties: x.ties[:0]}, bestFree: choice{ties: x.ties2[:0]}}
	defer func() {
		x.cands, x.free, x.ties, x.ties2 = cs.all[:0], cs.free[:0], cs.bestAll.ties[:0], cs.bestFree.ties[:0]
	}()
	p.scan(&cs)

	// Step 5: drop projects someone else is looking at, unless that leaves none.
	list, anyPrio, best := cs.all, cs.prioAll, &cs.bestAll
	if len(cs.free) > 0 {
		list, anyPrio, best = cs.free, cs.prioFree, &cs.bestFree
	}
	if len(list) == 0 {
		return nil
	}

	// Step 6: a track judge covers its track, then sharpens its prize.
	if !general {
		if p.s.TrackRule >= TrackRuleCover {
			return p.trackPick(cs.all)
		}
		return p.alongTables(list)
	}

	// Step 7: groups. The list shrinks to one group, so steps 8 and 9 are redone on it.
	if o.MultiGroup && o.NumGroups > 0 {
		var inGroup choice
		var found bool
		list, anyPrio, inGroup, found = p.oneGroup(list)
		if !found {
			return nil
		}
		best = &inGroup
	}

	// Step 8: prioritized projects first, lowest table (the list is in table order).
	if anyPrio {
		for _, k := range list {
			if x.slots[k].has(slotPrio) {
				return x.proj[k]
			}
		}
	}

	// Step 9: fewest views; below min_views the nearest table, else (focus mode) the
	// most uncertain place at the top less the walk, or (spread mode) the least
	// compared, then the nearest; equals drawn with the command's random stream.
	if p.focus && best.seen >= p.minViews && cs.bestAll.seen >= p.minViews {
		return x.focusAmong(list, p.last, c.Rand)
	}
	if p.focus && best.seen >= p.minViews && !x.coverageHeld() {
		// Coverage first, by need among the fewest views (see coverageHeld).
		fewest := list[:0:0]
		for _, k := range list {
			if x.slots[k].seen == best.seen {
				fewest = append(fewest, k)
			}
		}
		return x.focusAmong(fewest, p.last, c.Rand)
	}
	if len(best.ties) == 1 {
		return x.proj[best.ties[0]]
	}
	return x.proj[best.ties[c.Rand.Intn(len(best.ties))]]
}

// picker is one pickNext: the judge, the options in force, and the step 9 keys of a
// candidate, shared by the steps.
type picker struct {
	s           *State
	x           *judgingData
	o           *Options
	j           *Judge
	c           *Ctx
	ep          uint32 // marks the judge's skipped projects (step 3)
	now, window int64
	track       string // the judge's track; "" for a general judge
	views       int    // the views a track judge's projects need
	focus       bool   // a general judge in focus mode
	minViews    int32
	last        int32  // the judge's last table, -1 before its first
	sp          uint32 // the pair sums' epoch, once computed (see sums)
	spDone      bool
}

// newPicker starts a pick for j. Step 3: the candidates are the active projects minus
// the judge's seen, skipped and conflicted ones. Seen projects are excluded through the judge's
// bitset (no pass over a long seen list per assignment), which the caller must clear
// from x.pickSeen when done; skipped ones are marked with the pick's epoch.
func (s *State) newPicker(j *Judge, c *Ctx) picker {
	x := s.jd()
	o := &s.Options
	p := picker{s: s, x: x, o: o, j: j, c: c, now: c.Time, window: o.busyWindow(), track: s.trackOf(j),
		minViews: int32(o.MinViews), last: int32(j.LastLocation)}
	x.beginPick()
	p.ep = x.newEpoch()
	x.pickSeen = x.seenOf(j).bits
	skipped, _ := x.skipSlotsOf(j)
	for _, k := range skipped {
		x.mark[k] = p.ep
	}
	for _, id := range s.conflicted[j.ID] { // docs/behaviour.md#on-the-floor
		if k, ok := x.slotOf[id]; ok {
			x.mark[k] = p.ep
		}
	}
	for _, k := range x.peekOut {
		x.mark[k] = p.ep
	}
	if p.track != "" {
		p.views = o.trackViews(p.track)
	}
	p.focus = p.track == "" && o.AssignmentMode != ModeSpread
	return p
}

// sums returns the epoch of step 9's pair-comparison sums (spread mode only), for
// projects judged by the same judges as this judge's projects (every other project's
// sum is 0). They are computed on first use: below min_views and in focus mode nothing
// needs them.
func (p *picker) sums() uint32 {
	if !p.spDone {
		p.spDone = true
		if p.track == "" && !p.focus && len(p.j.SeenProjects) > 0 {
			p.sp = p.x.pairSums(p.s, p.j)
		}
	}
	return p.sp
}

// sumOf is slot k's pair-comparison sum.
func (p *picker) sumOf(k int32) int32 {
	if sp := p.sums(); sp != 0 && p.x.sumMark[k] == sp {
		return p.x.sum[k]
	}
	return 0
}

// distOf is slot k's distance from the judge's last table.
func (p *picker) distOf(k int32) int32 {
	if p.last < 0 {
		return 0 // no last location: equals are drawn at random
	}
	d := p.x.slots[k].loc - p.last
	if d < 0 {
		d = -d
	}
	return d
}

// candidates are the lists of steps 4 and 5: every candidate and the free ones, in
// table order, each with its best by step 9's order and whether one is prioritized.
type candidates struct {
	all, free         []int32
	bestAll, bestFree choice
	prioAll, prioFree bool
}

// scan lists the candidates in one pass over the projects.
func (p *picker) scan(cs *candidates) {
	x := p.x
	for k := range x.slots {
		sl := &x.slots[k]
		if sl.flags&slotActive == 0 || x.excluded(int32(k), p.ep) {
			continue
		}
		// Step 4: a track judge sees only its track's projects that still need views.
		if p.track != "" {
			pr := x.proj[k]
			if !containsString(pr.ChallengeList, p.track) {
				continue
			}
			if pr.TrackSeen[p.track]+x.viewing(int32(k), p.track, p.now, p.window) >= p.views {
				continue
			}
		}
		kk := int32(k)
		cs.all = append(cs.all, kk)
		prio := sl.flags&slotPrio != 0
		cs.prioAll = cs.prioAll || prio
		var sum int32
		if sl.seen >= p.minViews && !p.focus {
			sum = p.sumOf(kk)
		}
		dist := p.distOf(kk)
		cs.bestAll.offer(kk, sl.seen, sum, dist)
		if sl.flags&slotHeld == 0 || !x.busy(kk, p.now, p.window) {
			cs.free = append(cs.free, kk)
			cs.prioFree = cs.prioFree || prio
			cs.bestFree.offer(kk, sl.seen, sum, dist)
		}
	}
}

// alongTables is step 6: a track judge takes the next candidate after its last table
// (wrapping round to the first), or a random one before its first.
func (p *picker) alongTables(list []int32) *Project {
	x, j := p.x, p.j
	if j.LastLocation < 0 {
		return x.proj[list[p.c.Rand.Intn(len(list))]]
	}
	for _, k := range list {
		if int(x.slots[k].loc) > j.LastLocation {
			return x.proj[k]
		}
	}
	return x.proj[list[0]]
}

// oneGroup is step 7: it keeps the candidates of the judge's group, or of the next
// group that has any (moving the judge there), and redoes steps 8 and 9's keys on them.
// found is false when no group has a candidate.
func (p *picker) oneGroup(list []int32) (inGroup []int32, anyPrio bool, best choice, found bool) {
	x, j, c := p.x, p.j, p.c
	n := p.o.NumGroups
	g := ((j.Group % n) + n) % n
	tries := n
	if x.peek {
		tries = 1 // upcoming projects come from the judge's own group
	}
	for t := 0; t < tries && !found; t++ {
		grp := int32((g + t) % n)
		keep := list[:0:0]
		for _, k := range list {
			if x.slots[k].group == grp {
				keep = append(keep, k)
			}
		}
		if len(keep) == 0 {
			continue
		}
		list, found = keep, true
		if int(grp) != j.Group {
			j.Group, j.GroupSeen = int(grp), 0
			c.logf("moved to group %d (no projects left in its group)", grp)
			c.emit(Event{Type: EvJudge, To: ToJudge, Judge: j.ID, Data: p.s.judgeEvent(j, "group switched")})
			c.changed("judge", j.ID)
		}
	}
	if !found {
		return nil, false, choice{}, false
	}
	for _, k := range list {
		sl := &x.slots[k]
		anyPrio = anyPrio || sl.has(slotPrio)
		var sum int32
		if sl.seen >= p.minViews && !p.focus {
			sum = p.sumOf(k)
		}
		best.offer(k, sl.seen, sum, p.distOf(k))
	}
	return list, anyPrio, best, true
}

// choice collects the best candidates by (views, pair sum, table distance).
type choice struct {
	seen, sum, dist int32
	ties            []int32
}

func (b *choice) offer(k, seen, sum, dist int32) {
	if len(b.ties) > 0 {
		if seen != b.seen {
			if seen > b.seen {
				return
			}
		} else if sum != b.sum {
			if sum > b.sum {
				return
			}
		} else if dist != b.dist {
			if dist > b.dist {
				return
			}
		} else {
			b.ties = append(b.ties, k)
			return
		}
	}
	b.seen, b.sum, b.dist = seen, sum, dist
	b.ties = append(b.ties[:0], k)
}

// pairSums fills x.sum (valid where x.sumMark equals the returned epoch) with, for every
// project, how often it was judged by the same judges as the projects j has seen. Sparse
// rows are added slot by slot; dense rows (see pairRow) are first summed by project
// number in x.acc with a plain loop, then moved to the slots in one pass.
func (x *judgingData) pairSums(s *State, j *Judge) uint32 {
	x.reconcilePairs(s)
	sp := x.newEpoch()
	add := func(other, n int32) {
		if int(other) >= len(x.slotByNum) {
			return
		}
		k := x.slotByNum[other]
		if k < 0 {
			return
		}
		if x.sumMark[k] != sp {
			x.sumMark[k], x.sum[k] = sp, 0
		}
		x.sum[k] += n
	}
	anyDense := false
	for _, seen := range j.SeenProjects {
		num, ok := x.numOf[seen.ProjectID]
		if !ok {
			continue
		}
		row := &x.nbrs[num]
		if row.dense != nil {
			if !anyDense {
				anyDense = true
				x.acc = append(x.acc[:0], make([]int32, len(x.nbrs))...)
			}
			acc := x.acc[:len(row.dense)]
			for o, n := range row.dense {
				acc[o] += n
			}
			continue
		}
		for _, pc := range row.list {
			add(pc.other, pc.n)
		}
	}
	if anyDense {
		for o, n := range x.acc {
			if n != 0 {
				add(int32(o), n)
			}
		}
	}
	return sp
}

// assignTo is step 10: j now looks at p.
func (s *State) assignTo(j *Judge, p *Project, c *Ctx) { s.assignAs(j, p, c, "assigned") }

// assignAs is assignTo with the audit line's verb.
func (s *State) assignAs(j *Judge, p *Project, c *Ctx, verb string) {
	x := s.jd()
	j.Current = p.ID
	j.CurrentSince = c.Time
	j.LastLocation = p.Location
	j.LastActivity = c.Time
	p.LastActivity = c.Time
	if p.Prioritized {
		p.Prioritized = false // step 8: the flag clears on assignment
	}
	x.refresh(p)
	x.hold(s, p.ID, j)
	c.logProject(verb, p)
	c.changed("judge", j.ID)
	c.changed("project", p.ID)
}
