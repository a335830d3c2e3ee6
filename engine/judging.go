package engine

import (
	"bytes"
	"strconv"
)

// The judge's own commands of docs/behaviour.md#judging-flow: next, skip, finish, rank, star, notes, welcome.

func init() {
	register(
		func() Command { return &JudgeNext{} },
		func() Command { return &JudgeSkip{} },
		func() Command { return &JudgeFinish{} },
		func() Command { return &JudgeRank{} },
		func() Command { return &JudgeStar{} },
		func() Command { return &JudgeNotes{} },
		func() Command { return &JudgeWelcome{} },
	)
}

// Skip reasons a judge may give, and the reason of the flag the system writes when it
// hides a project after absent flags.
const (
	SkipBusy         = "busy"
	SkipAbsent       = "absent"
	SkipCannotDemo   = "cannot-demo"
	SkipTooComplex   = "too-complex"
	SkipOffensive    = "offensive"
	SkipConflict     = "conflict" // "I know this team" (docs/behaviour.md#on-the-floor)
	FlagHiddenAbsent = "hidden-absent"
)

// AbsentLimit is how many judges must flag a project absent before it is hidden.
const AbsentLimit = 3

// ValidSkipReason reports whether r is a reason a judge may skip with.
func ValidSkipReason(r string) bool {
	switch r {
	case SkipBusy, SkipAbsent, SkipCannotDemo, SkipTooComplex, SkipOffensive, SkipConflict:
		return true
	}
	return false
}

// judgeFor returns the command's judge (401 when it no longer exists).
func (s *State) judgeFor(id ID) (*Judge, error) {
	j, ok := s.Judges[id]
	if !ok {
		return nil, unauthorizedf("judge not found")
	}
	return j, nil
}

// seenIndex returns the position of project p in j's seen list, or -1. A project the
// judge's seen filter rules out is not looked for (the writer's only: the filter is
// built on first use).
func (j *Judge) seenIndex(p ID) int {
	if !j.mayHaveSeen(p) {
		return -1
	}
	for i := range j.SeenProjects {
		if j.SeenProjects[i].ProjectID == p {
			return i
		}
	}
	return -1
}

// currentProject returns the judge's current project, if it still exists.
func (s *State) currentProject(j *Judge) (*Project, bool) {
	if j.Current.IsZero() {
		return nil, false
	}
	p, ok := s.Projects[j.Current]
	return p, ok
}

// JudgeNext assigns the judge its next project (POST /api/judge/next). The result is a
// NextResult.
type JudgeNext struct {
	Judge ID `json:"judge"`
	// Got is the project the command assigned, set when it applies: its journal record
	// then carries the outcome, and replaying it assigns that project again without
	// running the assignment (docs/behaviour.md#recovery-at-memory-speed). Unset when
	// the assignment also moved the judge to another group (replay runs it then).
	Got *ID `json:"got,omitempty"`
	// Upcoming is the answer's upcoming list, set when it applies: the judge keeps it
	// (Judge.Upcoming), and replay takes it from the record instead of listing again.
	Upcoming []ID `json:"upcoming,omitempty"`
}

// Kind implements Command.
func (*JudgeNext) Kind() string { return "judging.next" }

func (cmd *JudgeNext) apply(s *State, c *Ctx) (any, error) {
	j, err := s.judgeFor(cmd.Judge)
	if err != nil {
		return nil, err
	}
	var res NextResult
	if p, ok := s.recordedNext(j, cmd.Got); ok {
		s.jd().syncLive(s, c)
		s.assignTo(j, p, c)
		res = NextResult{ProjectID: p.ID, Upcoming: cmd.Upcoming} // the record's list
	} else {
		s.flushFit() // the assignment reads the ratings (ratings_replay.go)
		group, had := j.Group, j.Current
		res = s.nextFor(j, c)
		cmd.Got = nil
		if id := res.ProjectID; !id.IsZero() && id != had && j.Group == group {
			cmd.Got = &id
		}
		if !c.quiet { // a replay's result goes nowhere: it reads the record's list
			if !res.ProjectID.IsZero() {
				res.Upcoming = s.upcomingFor(j, c)
			}
			cmd.Upcoming = res.Upcoming
		}
	}
	// The judge keeps the list: the projects it may visit offline
	// (docs/behaviour.md#offered-projects-only).
	j.Upcoming = cmd.Upcoming
	s.jd().keep(s)
	return res, nil
}

// recordedNext returns the project a replayed next assigned (JudgeNext.Got) when it
// applies as nextFor would reach its pick: the judge has no current project and may
// be given one, and the project is there.
func (s *State) recordedNext(j *Judge, got *ID) (*Project, bool) {
	if got == nil || !j.Current.IsZero() || s.nextBlocked(j) != "" {
		return nil, false
	}
	p, ok := s.Projects[*got]
	return p, ok
}

// JudgeSkip skips the judge's current project with a reason, writes a flag, and hands
// out the next project when the clock runs (POST /api/judge/skip).
type JudgeSkip struct {
	Judge  ID     `json:"judge"`
	Reason string `json:"reason"`
}

// Kind implements Command.
func (*JudgeSkip) Kind() string { return "judging.skip" }

func (cmd *JudgeSkip) apply(s *State, c *Ctx) (any, error) {
	j, err := s.judgeFor(cmd.Judge)
	if err != nil {
		return nil, err
	}
	if !ValidSkipReason(cmd.Reason) {
		return nil, invalidf("reason must be one of busy, absent, cannot-demo, too-complex, offensive, conflict")
	}
	p, ok := s.currentProject(j)
	if !ok {
		return nil, conflictf("no current project")
	}
	x := s.jd()
	x.sync(s)

	j.Current = ZeroID
	j.CurrentSince = 0
	j.LastActivity = c.Time
	x.release(p.ID, j.ID)
	if cmd.Reason == SkipConflict {
		// A conflict, not a skip: it excludes the project until an admin removes it,
		// and its flag counts against nothing (docs/behaviour.md#on-the-floor).
		s.addConflict(c, j, p, ConflictByJudge)
	} else {
		j.Skipped[p.ID] = cmd.Reason == SkipBusy
		x.skipsChanged(j)
	}
	if cmd.Reason != SkipBusy && cmd.Reason != SkipAbsent && cmd.Reason != SkipConflict && !containsID(j.Flagged, p.ID) {
		j.Flagged = append(j.Flagged, p.ID)
	}
	s.addFlag(c, Flag{ProjectID: p.ID, JudgeID: j.ID, ProjectName: p.Name, ProjectLocation: p.Location, JudgeName: j.Name, Reason: cmd.Reason})
	c.logProject("skipped", p, ": ", cmd.Reason)
	if cmd.Reason == SkipAbsent {
		s.maybeHideAbsent(p, c)
	}
	c.changed("judge", j.ID)
	if j.Active && s.Options.Clock.Running && !s.Options.Deliberation {
		s.nextFor(j, c)
	}
	x.keep(s)
	return nil, nil
}

// addFlag writes a flag and tells admins.
func (s *State) addFlag(c *Ctx, f Flag) {
	f.ID = c.newFlagID(s)
	f.Time = c.Time
	s.Flags = append(s.Flags, f)
	c.emit(Event{Type: EvFlag, To: ToAdmins, Data: f})
}

// newFlagID returns an id no flag, judge or project uses. An id starts with the second
// it was made in, and flags are kept in the order they were written (command times never
// go back), so only the flags of the same second or later can hold the new id: the scan
// goes back from the newest and stops at the first older second.
func (c *Ctx) newFlagID(s *State) ID {
	for {
		id := c.newID()
		dup := false
		for i := len(s.Flags) - 1; i >= 0; i-- {
			fid := &s.Flags[i].ID
			if bytes.Compare(fid[:4], id[:4]) < 0 {
				break
			}
			if *fid == id {
				dup = true
				break
			}
		}
		if !dup {
			return id
		}
	}
}

// maybeHideAbsent hides p once judges of AbsentLimit different judges flagged it absent
// (flags not dismissed), replacing those flags by one hidden-absent flag.
func (s *State) maybeHideAbsent(p *Project, c *Ctx) {
	if !p.Active {
		return
	}
	judges := map[ID]bool{}
	for _, f := range s.Flags {
		if f.ProjectID == p.ID && f.Reason == SkipAbsent {
			judges[f.JudgeID] = true
		}
	}
	if len(judges) < AbsentLimit {
		return
	}
	kept := s.Flags[:0]
	for _, f := range s.Flags {
		if f.ProjectID == p.ID && f.Reason == SkipAbsent {
			continue
		}
		kept = append(kept, f)
	}
	s.Flags = kept
	p.Active = false
	x := s.jd()
	x.refresh(p)
	s.addFlag(c, Flag{ProjectID: p.ID, JudgeID: ZeroID, ProjectName: p.Name, ProjectLocation: p.Location, JudgeName: "system", Reason: FlagHiddenAbsent})
	c.logf("project %s (table %d) hidden: flagged absent by %d judges", p.Name, p.Location, len(judges))
	c.emit(Event{Type: EvExpo, To: ToEveryone, Data: ExpoEvent{Action: "remove", Project: p.Public()}})
	c.changed("project", p.ID)
	// Judges still on the hidden project are released and told.
	for _, id := range s.releaseJudgesOn(c, map[ID]bool{p.ID: true}, "project hidden") {
		x.release(p.ID, id)
		c.changed("judge", id)
	}
}

// JudgeFinish records the judge's view of its current project (POST /api/judge/finish).
type JudgeFinish struct {
	Judge   ID     `json:"judge"`
	Notes   string `json:"notes"`
	Starred bool   `json:"starred"`
	// Project names the project judged (a visit made offline); zero: the current one
	// (docs/behaviour.md#on-the-floor).
	Project ID `json:"project,omitzero"`
	// Feedback is for the team (docs/behaviour.md#after-judging).
	Feedback string `json:"feedback,omitempty"`
}

// Kind implements Command.
func (*JudgeFinish) Kind() string { return "judging.finish" }

func (cmd *JudgeFinish) apply(s *State, c *Ctx) (any, error) {
	j, err := s.judgeFor(cmd.Judge)
	if err != nil {
		return nil, err
	}
	s.notePoints(j)
	if err := checkText("notes", cmd.Notes); err != nil {
		return nil, err
	}
	if err := checkFeedback(cmd.Feedback); err != nil {
		return nil, err
	}
	p, ok := s.currentProject(j)
	if !ok && cmd.Project.IsZero() {
		return nil, conflictf("no current project")
	}
	if s.Options.Deliberation {
		return nil, conflictf("deliberation is on")
	}
	x, o := s.jd(), &s.Options
	if o.MultiGroup {
		x.sync(s) // the group switch below counts the group's projects in the index
	} else {
		x.syncLive(s, c)
	}
	if !cmd.Project.IsZero() && (!ok || p.ID != cmd.Project) {
		if ok {
			return nil, conflictf("you were sent to project %s (table %d) meanwhile: finish or skip it first", p.Name, p.Location)
		}
		if p, err = s.offlineVisit(j, cmd.Project); err != nil {
			return nil, err
		}
		s.visitOffline(j, p, c) // the visit counts as if it had been assigned
	}
	if x.judged(s, j, p.ID) {
		return nil, conflictf("project already judged")
	}
	s.keepUndoPoint(j, p, c)

	j.SeenProjects = append(j.SeenProjects, SeenProject{
		ProjectID: p.ID, Starred: cmd.Starred, Notes: cmd.Notes, Name: p.Name,
		Location: p.Location, Description: p.Description, Feedback: cmd.Feedback,
	})
	j.addSeen(p.ID)
	j.Seen++
	general := s.IsGeneral(j)
	if general {
		p.Seen++
	} else {
		p.TrackSeen[j.Track]++
	}
	if x.busySkips(s, j) > 0 {
		for id, busy := range j.Skipped {
			if busy {
				delete(j.Skipped, id)
			}
		}
		x.skipsChanged(j)
	}
	j.Current = ZeroID
	j.CurrentSince = 0
	j.LastActivity = c.Time
	p.LastActivity = c.Time
	x.release(p.ID, j.ID)
	x.refresh(p)
	if o.AssignmentMode == ModeSpread {
		x.addSeen(j.ID, x.numFor(p.ID))
	} else {
		// Only spread mode reads the pair counts; they are brought up to date from the
		// seen lists when it next does (reconcilePairs).
		x.pairsDirty = true
	}
	x.scores.judgeChanged(j.ID, true)
	c.logProject("finished", p)

	if general && o.MultiGroup && o.SwitchingMode == "auto" && o.NumGroups > 0 {
		j.GroupSeen++
		inGroup := 0
		for k := range x.slots {
			if x.slots[k].has(slotActive) && int(x.slots[k].group) == j.Group {
				inGroup++
			}
		}
		if inGroup == 0 || float64(j.GroupSeen)/float64(inGroup) >= o.AutoSwitchProp {
			j.Group = (((j.Group + 1) % o.NumGroups) + o.NumGroups) % o.NumGroups
			j.GroupSeen = 0
			c.logf("switched to group %d", j.Group)
			c.emit(Event{Type: EvJudge, To: ToJudge, Judge: j.ID, Data: s.judgeEvent(j, "group switched")})
		}
	}
	c.changed("judge", j.ID)
	c.changed("project", p.ID)
	x.keep(s)
	return nil, nil
}

// JudgeRank replaces the judge's ranking (POST /api/judge/rank).
type JudgeRank struct {
	Judge   ID   `json:"judge"`
	Ranking []ID `json:"ranking"`
}

// Kind implements Command.
func (*JudgeRank) Kind() string { return "judging.rank" }

func (cmd *JudgeRank) apply(s *State, c *Ctx) (any, error) {
	j, err := s.judgeFor(cmd.Judge)
	if err != nil {
		return nil, err
	}
	s.notePoints(j)
	var dup map[ID]bool // a short ranking is checked without it
	if len(cmd.Ranking) > 32 {
		dup = make(map[ID]bool, len(cmd.Ranking))
	}
	for i, id := range cmd.Ranking {
		if dup == nil && containsID(cmd.Ranking[:i], id) || dup[id] {
			return nil, invalidf("project %s is ranked twice", id)
		}
		if dup != nil {
			dup[id] = true
		}
		if j.seenIndex(id) < 0 {
			return nil, invalidf("project %s is not among the judge's judged projects", id)
		}
	}
	if s.Options.Deliberation {
		return nil, conflictf("deliberation is on")
	}
	j.Rankings = append([]ID{}, cmd.Ranking...)
	j.LastActivity = c.Time
	s.jd().scores.judgeChanged(j.ID, true)
	c.logText("submitted a ranking of ", strconv.Itoa(len(cmd.Ranking)), " projects")
	c.changed("judge", j.ID)
	s.jd().keep(s)
	return nil, nil
}

// JudgeStar stars or unstars one of the judge's judged projects (PUT /api/judge/star/:id).
type JudgeStar struct {
	Judge   ID   `json:"judge"`
	Project ID   `json:"project"`
	Starred bool `json:"starred"`
}

// Kind implements Command.
func (*JudgeStar) Kind() string { return "judging.star" }

func (cmd *JudgeStar) apply(s *State, c *Ctx) (any, error) {
	j, err := s.judgeFor(cmd.Judge)
	if err != nil {
		return nil, err
	}
	i := j.seenIndex(cmd.Project)
	if i < 0 {
		return nil, notFoundf("project not among the judge's judged projects")
	}
	if s.Options.Deliberation {
		return nil, conflictf("deliberation is on")
	}
	s.ownSeen(j)
	j.SeenProjects[i].Starred = cmd.Starred
	j.LastActivity = c.Time
	s.jd().scores.judgeChanged(j.ID, false)
	if cmd.Starred {
		c.logText("starred project ", j.SeenProjects[i].Name)
	} else {
		c.logText("unstarred project ", j.SeenProjects[i].Name)
	}
	c.changed("judge", j.ID)
	s.jd().keep(s)
	return nil, nil
}

// JudgeNotes replaces the judge's notes on one judged project (PUT /api/judge/notes/:id).
// Notes stay editable during deliberation.
type JudgeNotes struct {
	Judge   ID     `json:"judge"`
	Project ID     `json:"project"`
	Notes   string `json:"notes"`
}

// Kind implements Command.
func (*JudgeNotes) Kind() string { return "judging.notes" }

func (cmd *JudgeNotes) apply(s *State, c *Ctx) (any, error) {
	j, err := s.judgeFor(cmd.Judge)
	if err != nil {
		return nil, err
	}
	if err := checkText("notes", cmd.Notes); err != nil {
		return nil, err
	}
	i := j.seenIndex(cmd.Project)
	if i < 0 {
		return nil, notFoundf("project not among the judge's judged projects")
	}
	s.ownSeen(j)
	j.SeenProjects[i].Notes = cmd.Notes
	j.LastActivity = c.Time
	c.logText("edited notes on project ", j.SeenProjects[i].Name)
	c.changed("judge", j.ID)
	s.jd().keep(s)
	return nil, nil
}

// JudgeWelcome records that the judge read the welcome message (PUT/POST
// /api/judge/welcome).
type JudgeWelcome struct {
	Judge ID `json:"judge"`
}

// Kind implements Command.
func (*JudgeWelcome) Kind() string { return "judging.welcome" }

func (cmd *JudgeWelcome) apply(s *State, c *Ctx) (any, error) {
	j, err := s.judgeFor(cmd.Judge)
	if err != nil {
		return nil, err
	}
	j.ReadWelcome = true
	c.logf("read the welcome message")
	c.changed("judge", j.ID)
	s.jd().keep(s)
	return nil, nil
}

// ProjectCount is GET /api/project/count: the active projects judge id could ever be
// assigned (its track's projects for a track judge).
func (s *State) ProjectCount(id ID) int {
	j, ok := s.Judges[id]
	if !ok {
		return 0
	}
	track := s.trackOf(j)
	n := 0
	for _, p := range s.Projects {
		if p.Active && (track == "" || containsString(p.ChallengeList, track)) {
			n++
		}
	}
	return n
}

// flaggedFromFlags rebuilds a judge's Flagged list from the flags it wrote, for state
// saved before the list existed: its skips with a flagging reason, oldest first, of
// projects it still skips.
func (s *State) flaggedFromFlags(j *Judge) []ID {
	out := []ID{}
	for i := range s.Flags {
		f := &s.Flags[i]
		if f.JudgeID != j.ID || f.Reason == SkipBusy || f.Reason == SkipAbsent || f.Reason == FlagHiddenAbsent {
			continue
		}
		if busy, ok := j.Skipped[f.ProjectID]; ok && !busy && !containsID(out, f.ProjectID) {
			out = append(out, f.ProjectID)
		}
	}
	return out
}

func containsID(list []ID, id ID) bool {
	for _, v := range list {
		if v == id {
			return true
		}
	}
	return false
}

// removeID returns list without id (in place).
func removeID(list []ID, id ID) []ID {
	out := list[:0]
	for _, v := range list {
		if v != id {
			out = append(out, v)
		}
	}
	return out
}
