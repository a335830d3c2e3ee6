package engine

func init() {
	register(
		func() Command { return &MoveJudgesGroup{} },
		func() Command { return &SwapGroups{} },
		func() Command { return &ReassignJudges{} },
		func() Command { return &MoveProjectsGroup{} },
		func() Command { return &ReassignProjects{} },
		func() Command { return &BalanceGroups{} },
	)
}

func (s *State) checkGroup(g int) error {
	if g < 0 || g >= s.Options.NumGroups {
		return invalidf("group must be between 0 and %d", s.Options.NumGroups-1)
	}
	return nil
}

// MoveJudgesGroup puts judges in a group and resets their group_seen. Any unknown id
// refuses the whole command.
type MoveJudgesGroup struct {
	Judges []ID `json:"judges"`
	Group  int  `json:"group"`
}

// Kind implements Command.
func (*MoveJudgesGroup) Kind() string { return "judge.move_group" }

func (cmd *MoveJudgesGroup) apply(s *State, c *Ctx) (any, error) {
	ids, err := s.knownJudges(cmd.Judges)
	if err != nil {
		return nil, err
	}
	if err := s.checkGroup(cmd.Group); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	for _, id := range ids {
		j := s.Judges[id]
		moved := j.Group != cmd.Group
		j.Group, j.GroupSeen = cmd.Group, 0
		if moved {
			c.emit(Event{Type: EvJudge, To: ToJudge, Judge: j.ID, Data: s.judgeEvent(j, "moved by admin")})
		}
	}
	if len(ids) == 1 {
		c.logf("moved judge %s to group %d", s.Judges[ids[0]].Name, cmd.Group)
	} else {
		c.logf("moved %d judges to group %d", len(ids), cmd.Group)
	}
	c.changed("judge", ids...)
	return nil, nil
}

// SwapGroups moves every active general judge to the next group (a manual switch).
type SwapGroups struct{}

// Kind implements Command.
func (*SwapGroups) Kind() string { return "groups.swap" }

func (*SwapGroups) apply(s *State, c *Ctx) (any, error) {
	n := s.Options.NumGroups
	if n < 1 {
		n = 1
	}
	moved := []ID{}
	for _, j := range s.JudgesInOrder() {
		if !j.Active || !s.IsGeneral(j) {
			continue
		}
		j.Group, j.GroupSeen = (j.Group+1)%n, 0
		c.emit(Event{Type: EvJudge, To: ToJudge, Judge: j.ID, Data: s.judgeEvent(j, "groups swapped")})
		moved = append(moved, j.ID)
	}
	s.Options.ManualSwitches++
	s.bumpOptionsRef(c)
	c.logf("swapped groups: %d judges moved to their next group", len(moved))
	c.changed("judge", moved...)
	return nil, nil
}

// ReassignJudges spreads the general judges evenly over the groups: active ones first,
// round robin in creation order, then hidden ones the same way.
type ReassignJudges struct{}

// Kind implements Command.
func (*ReassignJudges) Kind() string { return "judge.reassign" }

func (*ReassignJudges) apply(s *State, c *Ctx) (any, error) {
	n := s.Options.NumGroups
	if n < 1 {
		n = 1
	}
	judges := s.JudgesInOrder()
	order := make([]*Judge, 0, len(judges))
	for _, active := range []bool{true, false} {
		for _, j := range judges {
			if j.Active == active && s.IsGeneral(j) {
				order = append(order, j)
			}
		}
	}
	moved := []ID{}
	for i, j := range order {
		g := i % n
		if j.Group == g {
			continue
		}
		j.Group, j.GroupSeen = g, 0
		c.emit(Event{Type: EvJudge, To: ToJudge, Judge: j.ID, Data: s.judgeEvent(j, "groups rebalanced")})
		moved = append(moved, j.ID)
	}
	c.logf("rebalanced %d general judges over %d groups (%d moved)", len(order), n, len(moved))
	c.changed("judge", moved...)
	return nil, nil
}

// groupTables returns the table range [first, last] of group g under the current group
// sizes; last is -1 when the range is open-ended (the last group).
func (s *State) groupTables(g int) (first, last int) {
	o := &s.Options
	if o.NumGroups <= 1 || len(o.GroupSizes) == 0 {
		return 1, -1
	}
	start := 1
	for i := 0; i < g && i < len(o.GroupSizes); i++ {
		start += o.GroupSizes[i]
	}
	if g >= len(o.GroupSizes)-1 {
		return start, -1
	}
	return start, start + o.GroupSizes[g] - 1
}

// MoveProjectsGroup moves projects to the next free tables of a group's table range
// (projects already in the group stay where they are). Any unknown id refuses the whole
// command; so does a group without enough free tables.
type MoveProjectsGroup struct {
	Projects []ID `json:"projects"`
	Group    int  `json:"group"`
}

// Kind implements Command.
func (*MoveProjectsGroup) Kind() string { return "project.move_group" }

func (cmd *MoveProjectsGroup) apply(s *State, c *Ctx) (any, error) {
	ids, err := s.knownProjects(cmd.Projects)
	if err != nil {
		return nil, err
	}
	if err := s.checkGroup(cmd.Group); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	// Projects outside the group move, in table order.
	want := make(map[ID]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	var move []*Project
	for _, p := range s.ProjectsByLocation() {
		if p.Group != cmd.Group && want[p.ID] {
			move = append(move, p)
		}
	}
	first, last := s.groupTables(cmd.Group)
	free := make([]int, 0, len(move))
	for t := first; len(free) < len(move) && (last < 0 || t <= last); t++ {
		if _, taken := s.locIndex[t]; !taken {
			free = append(free, t)
		}
	}
	if len(free) < len(move) {
		return nil, conflictf("group %d has %d free tables, %d needed", cmd.Group, len(free), len(move))
	}
	// Validated: mutate.
	changed := make(map[ID]*Project, len(move))
	for i, p := range move {
		s.place(p, free[i])
		changed[p.ID] = p
		emitExpoUpsert(c, p)
	}
	s.syncSeenCopies(changed)
	if len(ids) == 1 {
		p := s.Projects[ids[0]]
		c.logf("moved project %s to group %d (table %d)", p.Name, cmd.Group, p.Location)
	} else {
		c.logf("moved %d projects to group %d", len(ids), cmd.Group)
	}
	movedIDs := make([]ID, 0, len(move))
	for _, p := range move {
		movedIDs = append(movedIDs, p.ID)
	}
	c.changed("project", movedIDs...)
	return nil, nil
}

// ReassignProjects renumbers all projects 1..N in their current table order; groups
// follow the new tables.
type ReassignProjects struct{}

// Kind implements Command.
func (*ReassignProjects) Kind() string { return "project.reassign" }

func (*ReassignProjects) apply(s *State, c *Ctx) (any, error) {
	ps := s.ProjectsByLocation()
	s.locIndex = make(map[int]ID, len(ps))
	s.maxLocOK = false
	changed := map[ID]*Project{}
	ids := []ID{}
	for i, p := range ps {
		loc := i + 1
		oldLoc, oldGroup := p.Location, p.Group
		p.Location, p.Group = loc, s.Options.GroupOfTable(loc)
		s.locIndex[loc] = p.ID
		if p.Location != oldLoc || p.Group != oldGroup {
			changed[p.ID] = p
			ids = append(ids, p.ID)
			emitExpoUpsert(c, p)
		}
	}
	s.syncSeenCopies(changed)
	c.logf("renumbered %d projects to tables 1-%d (%d moved)", len(ps), len(ps), len(ids))
	c.changed("project", ids...)
	return nil, nil
}

// regroupProjects recomputes every project's group from its table under the current
// group options and tells expo screens about the listed ones whose group changed. It
// returns those projects in table order (nil when none changed).
func (s *State) regroupProjects(c *Ctx) []ID {
	var moved []ID
	for _, p := range s.ProjectsByLocation() {
		if g := s.Options.GroupOfTable(p.Location); g != p.Group {
			p.Group = g
			moved = append(moved, p.ID)
			emitExpoUpsert(c, p)
		}
	}
	return moved
}

// BalanceGroups splits the active projects, in table order, into num_groups groups whose
// sizes differ by at most one, by setting group_sizes; no table number changes.
type BalanceGroups struct{}

// Kind implements Command.
func (*BalanceGroups) Kind() string { return "project.balance_groups" }

func (*BalanceGroups) apply(s *State, c *Ctx) (any, error) {
	n := s.Options.NumGroups
	if n < 1 {
		return nil, conflictf("there are no groups to balance")
	}
	ps := s.ProjectsByLocation()
	var active []*Project
	for _, p := range ps {
		if p.Active {
			active = append(active, p)
		}
	}
	if len(active) == 0 {
		return nil, conflictf("there are no active projects to balance")
	}
	// Chunk k holds q or q+1 active projects; its range ends at the table of its last
	// project, so group_sizes[k] is the distance between consecutive chunk ends. Sizes
	// stay positive, as POST /api/admin/group-sizes requires.
	q, r := len(active)/n, len(active)%n
	sizes := make([]int, n)
	idx, prevEnd := 0, 0
	for k := 0; k < n; k++ {
		size := q
		if k < r {
			size++
		}
		end := prevEnd + 1 // an empty group (fewer projects than groups) keeps one table
		if size > 0 {
			idx += size
			end = active[idx-1].Location
		}
		sizes[k] = end - prevEnd
		prevEnd = end
	}
	s.Options.GroupSizes = sizes
	s.bumpOptionsRef(c)
	ids := s.regroupProjects(c)
	c.logf("balanced %d active projects over %d groups (group sizes %v)", len(active), n, sizes)
	c.changed("project", ids...)
	return nil, nil
}
