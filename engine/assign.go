package engine

// The assignment algorithm of SPEC §5 (POST /api/judge/next), step by step.

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
}

// PeekNext answers `next` for judge id without changing anything when no command is
// needed (the judge has a current project, or cannot be given one: steps 1 and 2).
// final is false when an assignment must be attempted with the JudgeNext command.
func (s *State) PeekNext(id ID) (res NextResult, final bool) {
	j, ok := s.Judges[id]
	if !ok {
		return NextResult{}, false
	}
	if !j.Current.IsZero() {
		return NextResult{ProjectID: j.Current}, true
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
func (s *State) pickNext(j *Judge, c *Ctx) *Project {
	x := s.jd()
	x.sync(s)
	o := &s.Options
	now, window := c.Time, o.busyWindow()
	track := s.trackOf(j)

	// Step 3: active projects minus the judge's seen and skipped ones.
	ep := x.newEpoch()
	for _, sp := range j.SeenProjects {
		if k, ok := x.slotOf[sp.ProjectID]; ok {
			x.mark[k] = ep
		}
	}
	for id := range j.Skipped {
		if k, ok := x.slotOf[id]; ok {
			x.mark[k] = ep
		}
	}
	views := 0
	if track != "" {
		views = o.trackViews(track)
	}
	cands := x.cands[:0]
	for k := range x.slots {
		sl := &x.slots[k]
		if !sl.active || x.mark[k] == ep {
			continue
		}
		// Step 4: a track judge sees only its track's projects that still need views.
		if track != "" {
			if !containsString(sl.p.ChallengeList, track) {
				continue
			}
			if sl.p.TrackSeen[track]+sl.viewing(track, now, window) >= views {
				continue
			}
		}
		cands = append(cands, int32(k))
	}
	defer func() { x.cands = cands[:0] }()

	// Step 5: drop projects someone else is looking at, unless that leaves none.
	free := 0
	for _, k := range cands {
		if !x.slots[k].busy(now, window) {
			free++
		}
	}
	if free > 0 && free < len(cands) {
		n := 0
		for _, k := range cands {
			if !x.slots[k].busy(now, window) {
				cands[n] = k
				n++
			}
		}
		cands = cands[:n]
	}
	if len(cands) == 0 {
		return nil
	}

	// Step 6: a track judge walks along the tables.
	if track != "" {
		if j.LastLocation < 0 {
			return x.slots[cands[c.Rand.Intn(len(cands))]].p
		}
		for _, k := range cands {
			if x.slots[k].loc > j.LastLocation {
				return x.slots[k].p
			}
		}
		return x.slots[cands[0]].p
	}

	// Step 7: groups.
	if o.MultiGroup && o.NumGroups > 0 {
		n := o.NumGroups
		g := ((j.Group % n) + n) % n
		found := false
		for t := 0; t < n; t++ {
			grp := (g + t) % n
			m := 0
			for _, k := range cands {
				if x.slots[k].group == grp {
					m++
				}
			}
			if m == 0 {
				continue
			}
			keep := cands[:0]
			for _, k := range cands {
				if x.slots[k].group == grp {
					keep = append(keep, k)
				}
			}
			cands = keep
			if grp != j.Group {
				j.Group, j.GroupSeen = grp, 0
				c.logf("moved to group %d (no projects left in its group)", grp)
				c.emit(judgeEvent(j, "group-switch"))
				c.changed("judge", j.ID)
			}
			found = true
			break
		}
		if !found {
			return nil
		}
	}

	// Step 8: prioritized projects first, lowest table (cands are in table order).
	for _, k := range cands {
		if x.slots[k].prio {
			return x.slots[k].p
		}
	}

	// Step 9: fewest views.
	minSeen := x.slots[cands[0]].seen
	for _, k := range cands[1:] {
		if sn := x.slots[k].seen; sn < minSeen {
			minSeen = sn
		}
	}
	keep := cands[:0]
	for _, k := range cands {
		if x.slots[k].seen == minSeen {
			keep = append(keep, k)
		}
	}
	cands = keep
	if minSeen < o.MinViews {
		if j.LastLocation < 0 {
			return x.slots[cands[c.Rand.Intn(len(cands))]].p
		}
		return x.slots[x.nearest(cands, j.LastLocation, c.Rand)].p
	}
	// Least compared: pair-comparison counts summed over the judge's seen projects.
	x.reconcilePairs(s)
	sp := x.newEpoch()
	for _, seen := range j.SeenProjects {
		num, ok := x.numOf[seen.ProjectID]
		if !ok {
			continue
		}
		for _, pc := range x.nbrs[num] {
			if int(pc.other) >= len(x.slotByNum) {
				continue
			}
			k := x.slotByNum[pc.other]
			if k < 0 {
				continue
			}
			if x.sumMark[k] != sp {
				x.sumMark[k], x.sum[k] = sp, 0
			}
			x.sum[k] += pc.n
		}
	}
	sumOf := func(k int32) int32 {
		if x.sumMark[k] == sp {
			return x.sum[k]
		}
		return 0
	}
	best := sumOf(cands[0])
	for _, k := range cands[1:] {
		if v := sumOf(k); v < best {
			best = v
		}
	}
	keep = cands[:0]
	for _, k := range cands {
		if sumOf(k) == best {
			keep = append(keep, k)
		}
	}
	cands = keep
	if j.LastLocation < 0 {
		return x.slots[cands[c.Rand.Intn(len(cands))]].p
	}
	return x.slots[x.nearest(cands, j.LastLocation, c.Rand)].p
}

// nearest returns the candidate whose table is nearest to loc, a random one of the
// nearest when several are equally near.
func (x *judgingData) nearest(cands []int32, loc int, r *Rand) int32 {
	ties := x.ties[:0]
	best := -1
	for _, k := range cands {
		d := x.slots[k].loc - loc
		if d < 0 {
			d = -d
		}
		switch {
		case best < 0 || d < best:
			best = d
			ties = append(ties[:0], k)
		case d == best:
			ties = append(ties, k)
		}
	}
	x.ties = ties[:0]
	if len(ties) == 1 {
		return ties[0]
	}
	return ties[r.Intn(len(ties))]
}

// assignTo is step 10: j now looks at p.
func (s *State) assignTo(j *Judge, p *Project, c *Ctx) {
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
	c.logf("assigned project %s (table %d)", p.Name, p.Location)
	c.changed("judge", j.ID)
	c.changed("project", p.ID)
}

// judgeEvent is the "judge" websocket event telling j its assignment or group changed.
func judgeEvent(j *Judge, reason string) Event {
	ev := JudgeEvent{Group: j.Group, Reason: reason}
	if !j.Current.IsZero() {
		cur := j.Current
		ev.Current = &cur
	}
	return Event{Type: EvJudge, To: ToJudge, Judge: j.ID, Data: ev}
}
