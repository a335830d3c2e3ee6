package engine

// Judging without a network (docs/behaviour.md#on-the-floor): next names a few more
// projects the judge would likely get (upcoming), and a finish may name the project
// judged while offline, or the phone say where the judge stands (JudgeAt), accepted
// when the server offered the project and the judge could be assigned it now
// (docs/behaviour.md#offered-projects-only).

func init() {
	register(func() Command { return &JudgeAt{} })
}

// maxUpcoming is how many upcoming projects next names.
const maxUpcoming = 2

// offlineVisit checks that j, with no current project, was offered project id (the
// upcoming list of its latest next) and could be assigned it now (steps 3, 4 and 7 of
// the assignment: active, not seen, skipped or conflicted, in the judge's track or
// group; views wanted and busy tables do not matter for a visit already made) and
// returns it, or a refusal a judge can read.
func (s *State) offlineVisit(j *Judge, id ID) (*Project, error) {
	p, ok := s.Projects[id]
	switch {
	case !ok:
		return nil, conflictf("this project is no longer in the event")
	case !containsID(j.Upcoming, id):
		return nil, conflictf("Podium did not send you to project %s (table %d): judge the projects the app shows you", p.Name, p.Location)
	case !p.Active:
		return nil, conflictf("project %s was hidden by the organisers", p.Name)
	case j.seenIndex(id) >= 0:
		return nil, conflictf("you already judged project %s", p.Name)
	}
	if _, skipped := j.Skipped[id]; skipped {
		return nil, conflictf("you skipped project %s", p.Name)
	}
	if s.hasConflict(j.ID, id) {
		return nil, conflictf("you have a conflict of interest with project %s", p.Name)
	}
	if t := s.trackOf(j); t != "" && !containsString(p.ChallengeList, t) {
		return nil, conflictf("project %s is not in your track %s", p.Name, t)
	}
	if o := &s.Options; s.trackOf(j) == "" && o.MultiGroup && o.NumGroups > 0 && p.Group != j.Group {
		return nil, conflictf("project %s is in another group than yours", p.Name)
	}
	return p, nil
}

// upcomingFor lists up to maxUpcoming projects j would likely be sent to after its
// current one: the assignment run again as if the current project (and each one listed
// before) were out of the judge's reach, with the command's random stream, without
// moving the judge to another group and without reserving anything.
func (s *State) upcomingFor(j *Judge, c *Ctx) []ID {
	x := s.jd()
	x.sync(s)
	k, ok := x.slotOf[j.Current]
	if !ok {
		return nil
	}
	x.peek, x.peekOut = true, append(x.peekOut[:0], k)
	defer func() { x.peek, x.peekOut = false, x.peekOut[:0] }()
	var out []ID
	for len(out) < maxUpcoming {
		p := s.pickNext(j, c)
		if p == nil {
			break
		}
		out = append(out, p.ID)
		x.peekOut = append(x.peekOut, x.slotOf[p.ID])
	}
	return out
}

// visitOffline makes p, a visit the judge began offline, its current project: an
// assignment in all but the audit line's words.
func (s *State) visitOffline(j *Judge, p *Project, c *Ctx) { s.assignAs(j, p, c, "visited offline") }

// JudgeAt tells the server which project the judge stands at, a visit begun offline
// at an upcoming project (POST /api/judge/at): it becomes the judge's current project
// as an assignment would, on the rules of a finish naming it.
type JudgeAt struct {
	Judge   ID `json:"judge"`
	Project ID `json:"project"`
}

// Kind implements Command.
func (*JudgeAt) Kind() string { return "judging.at" }

func (cmd *JudgeAt) apply(s *State, c *Ctx) (any, error) {
	j, err := s.judgeFor(cmd.Judge)
	if err != nil {
		return nil, err
	}
	if cur, ok := s.currentProject(j); ok {
		if cur.ID == cmd.Project {
			s.jd().keep(s)
			return nil, nil // already there: nothing to change
		}
		return nil, conflictf("you were sent to project %s (table %d) meanwhile: finish or skip it first", cur.Name, cur.Location)
	}
	if s.Options.Deliberation {
		return nil, conflictf("deliberation is on")
	}
	x := s.jd()
	x.syncLive(s, c)
	p, err := s.offlineVisit(j, cmd.Project)
	if err != nil {
		return nil, err
	}
	s.visitOffline(j, p, c)
	x.keep(s)
	return nil, nil
}
