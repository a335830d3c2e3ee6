package engine

func init() {
	register(func() Command { return &Reset{} })
}

// Reset types of POST /api/admin/reset.
const (
	ResetAll         = "all"
	ResetProjects    = "projects"
	ResetJudges      = "judges"
	ResetJudgingData = "judging-data"
	ResetRankings    = "rankings"
)

// ValidResetType reports whether t is one of the reset types.
func ValidResetType(t string) bool {
	switch t {
	case ResetAll, ResetProjects, ResetJudges, ResetJudgingData, ResetRankings:
		return true
	}
	return false
}

// Reset clears part of the judging state (docs/behaviour.md#resets). Public content, admin
// sessions and the audit log are never touched. The transport submits it with a
// backup of the state just before it.
type Reset struct {
	Type string `json:"type"`
	// TrackRule is the track judges' rule (State.TrackRule) a reset of everything
	// begins the new event with: TrackRuleCover from the admin route since that rule;
	// absent in journals written before it, whose resets keep the event's rule so that
	// they replay to the same assignments.
	TrackRule int `json:"track_rule,omitempty"`
}

// Kind implements Command.
func (*Reset) Kind() string { return "admin.reset" }

func (cmd *Reset) apply(s *State, c *Ctx) (any, error) {
	t := cmd.Type
	if t == "" {
		t = ResetAll
	}
	if !ValidResetType(t) {
		return nil, invalidf("unknown reset type %q (want all, projects, judges, judging-data or rankings)", cmd.Type)
	}
	switch t {
	case ResetAll:
		s.removeAllJudges(c) // first, so no judge is told its project went away
		s.removeAllProjects(c)
		s.Flags = []Flag{}
		s.Prizes = nil
		old := s.Options
		s.Options = DefaultOptions(s.OptionsID)
		s.Options.Ref = old.Ref
		if cmd.TrackRule > 0 {
			s.TrackRule = cmd.TrackRule
		}
		if old.Deliberation {
			c.emit(Event{Type: EvDeliberation, To: ToEveryone, Data: DeliberationEvent{On: false}})
		}
		s.emitClock(c)
		c.emit(Event{Type: EvGroupInfo, To: ToEveryone, Data: s.GroupInfoView()})
		s.bumpOptionsRef(c)
	case ResetProjects:
		s.clearJudgingData(c)
		s.removeAllProjects(c)
	case ResetJudges:
		s.clearJudgingData(c)
		s.removeAllJudges(c)
	case ResetJudgingData:
		s.clearJudgingData(c)
	case ResetRankings:
		ids := []ID{}
		for _, j := range s.JudgesInOrder() {
			if len(j.Rankings) > 0 {
				j.Rankings = []ID{}
				ids = append(ids, j.ID)
			}
		}
		c.changed("judge", ids...)
	}
	if t != ResetRankings && s.Outcome != nil { // the published results were of the data cleared
		s.Outcome = nil
		s.publicAt++
		c.emit(Event{Type: EvWinners, To: ToEveryone, Data: s.PublicWinners()})
	}
	s.reindex() // rebuild every derived index, including other files' hooks
	s.scoresChanged()
	c.logf("reset: %s", t)
	return nil, nil
}

// removeAllProjects deletes every project (and so every judge's current assignment).
func (s *State) removeAllProjects(c *Ctx) {
	ids := make([]ID, 0, len(s.Projects))
	for _, p := range s.ProjectsByLocation() {
		ids = append(ids, p.ID)
		if p.Active {
			emitExpoRemove(c, p)
		}
	}
	all := make(map[ID]bool, len(ids))
	for _, id := range ids {
		all[id] = true
	}
	s.releaseJudgesOn(c, all, "reset")
	for _, id := range ids {
		delete(s.Mail, id) // team-link mails
	}
	s.Projects = map[ID]*Project{}
	c.changed("project", ids...)
}

// removeAllJudges deletes every judge with its session.
func (s *State) removeAllJudges(c *Ctx) {
	ids := append([]ID{}, s.JudgeOrder...)
	s.Judges = map[ID]*Judge{}
	s.JudgeOrder = []ID{}
	for _, id := range ids {
		delete(s.Mail, id) // login-code mails; team-link mails stay with their projects
	}
	c.changed("judge", ids...)
}

// clearJudgingData clears views, seen counts, rankings, stars, notes, skips, flags and
// current assignments; judges and projects stay.
func (s *State) clearJudgingData(c *Ctx) {
	jids := make([]ID, 0, len(s.JudgeOrder))
	for _, j := range s.JudgesInOrder() {
		if !j.Current.IsZero() {
			j.Current, j.CurrentSince = ID{}, 0
			c.emit(Event{Type: EvJudge, To: ToJudge, Judge: j.ID, Data: s.judgeEvent(j, "reset")})
		}
		j.LastLocation = -1
		j.Seen, j.GroupSeen = 0, 0
		j.SeenProjects, j.seenBitsOK = []SeenProject{}, false
		j.Skipped = map[ID]bool{}
		j.Flagged = []ID{}
		j.Rankings = []ID{}
		jids = append(jids, j.ID)
	}
	pids := make([]ID, 0, len(s.Projects))
	for _, p := range s.ProjectsByLocation() {
		p.Seen = 0
		p.TrackSeen = map[string]int{}
		pids = append(pids, p.ID)
	}
	s.Flags = []Flag{}
	c.changed("judge", jids...)
	c.changed("project", pids...)
}
