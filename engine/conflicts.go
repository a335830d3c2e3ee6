package engine

// Conflicts of interest (docs/behaviour.md#on-the-floor): a judge who knows a team is
// never assigned its project. A judge declares one by skipping with reason conflict;
// admins import them from a CSV and remove them. The assignment excludes a judge's
// conflicted projects like its skipped ones (newPicker marks both).

func init() {
	register(
		func() Command { return &ConflictsAdd{} },
		func() Command { return &ConflictRemove{} },
	)
	reindexHooks = append(reindexHooks, func(s *State) { s.indexConflicts() })
}

// Where a conflict came from.
const (
	ConflictByJudge = "judge"
	ConflictByAdmin = "admin"
)

// Conflict says that a judge must not judge a project.
type Conflict struct {
	Judge   ID     `json:"judge"`
	Project ID     `json:"project"`
	Source  string `json:"source"`
	Time    int64  `json:"time"`
}

// indexConflicts rebuilds the judge -> projects index of the conflicts.
func (s *State) indexConflicts() {
	s.conflicted = map[ID][]ID{}
	for _, cf := range s.Conflicts {
		s.conflicted[cf.Judge] = append(s.conflicted[cf.Judge], cf.Project)
	}
}

// hasConflict reports whether judge j has a conflict with project p.
func (s *State) hasConflict(j, p ID) bool {
	return containsID(s.conflicted[j], p)
}

// addConflict records a conflict (unless there is one already) and takes the project
// away from the judge if it is its current one. It reports whether it added one.
func (s *State) addConflict(c *Ctx, j *Judge, p *Project, source string) bool {
	if s.hasConflict(j.ID, p.ID) {
		return false
	}
	s.Conflicts = append(s.Conflicts, Conflict{Judge: j.ID, Project: p.ID, Source: source, Time: c.Time})
	s.conflicted[j.ID] = append(s.conflicted[j.ID], p.ID)
	if j.Current == p.ID {
		j.Current, j.CurrentSince = ZeroID, 0
		s.jd().release(p.ID, j.ID)
		c.emit(Event{Type: EvJudge, To: ToJudge, Judge: j.ID, Data: s.judgeEvent(j, "conflict of interest")})
	}
	c.changed("judge", j.ID)
	return true
}

// ConflictPair is one conflict to add; Row is its row in the admin's CSV, for errors.
type ConflictPair struct {
	Row     int `json:"row"`
	Judge   ID  `json:"judge"`
	Project ID  `json:"project"`
}

// ConflictsAdd adds conflicts of interest from an admin's import (POST
// /api/admin/conflicts/csv): all or none. The result is a ConflictsAdded: the number
// added (pairs already known are left as they are) and the pairs whose judge already
// judged the project (docs/behaviour.md#a-conflict-found-after-the-judgement).
type ConflictsAdd struct {
	Pairs []ConflictPair `json:"pairs"`
}

// Kind implements Command.
func (*ConflictsAdd) Kind() string { return "conflicts.add" }

func (cmd *ConflictsAdd) apply(s *State, c *Ctx) (any, error) {
	for _, pr := range cmd.Pairs {
		if _, ok := s.Judges[pr.Judge]; !ok {
			return nil, invalidf("row %d: no such judge", pr.Row)
		}
		if _, ok := s.Projects[pr.Project]; !ok {
			return nil, invalidf("row %d: no such project", pr.Row)
		}
	}
	n := 0
	for _, pr := range cmd.Pairs {
		if s.addConflict(c, s.Judges[pr.Judge], s.Projects[pr.Project], ConflictByAdmin) {
			n++
		}
	}
	judged := s.judgedConflicts(cmd.Pairs)
	if len(judged) > 0 {
		c.logf("imported %d conflicts of interest; %d of the imported pairs were already judged by that judge", n, len(judged))
	} else {
		c.logf("imported %d conflicts of interest", n)
	}
	return ConflictsAdded{Added: n, Judged: judged}, nil
}

// ConflictRemove removes a conflict of interest (DELETE
// /api/admin/conflicts/:judge/:project): the judge may be assigned the project again.
type ConflictRemove struct {
	Judge   ID `json:"judge"`
	Project ID `json:"project"`
}

// Kind implements Command.
func (*ConflictRemove) Kind() string { return "conflicts.remove" }

func (cmd *ConflictRemove) apply(s *State, c *Ctx) (any, error) {
	i := -1
	for k, cf := range s.Conflicts {
		if cf.Judge == cmd.Judge && cf.Project == cmd.Project {
			i = k
			break
		}
	}
	if i < 0 {
		return nil, notFoundf("no such conflict")
	}
	s.Conflicts = append(s.Conflicts[:i:i], s.Conflicts[i+1:]...)
	s.indexConflicts()
	name, pname := cmd.Judge.String(), cmd.Project.String()
	if j, ok := s.Judges[cmd.Judge]; ok {
		name = j.Name
	}
	if p, ok := s.Projects[cmd.Project]; ok {
		pname = p.Name
	}
	c.logf("removed the conflict of interest of judge %s with project %s", name, pname)
	c.changed("judge", cmd.Judge)
	return nil, nil
}

// ConflictView is one conflict as GET /api/admin/conflicts lists it.
type ConflictView struct {
	JudgeID     ID     `json:"judge_id"`
	JudgeName   string `json:"judge_name"`
	ProjectID   ID     `json:"project_id"`
	ProjectName string `json:"project_name"`
	Source      string `json:"source"`
	// Judged: the judge has a finished view of the project that still counts
	// (docs/behaviour.md#a-conflict-found-after-the-judgement).
	Judged bool `json:"judged"`
}

// ConflictsView lists the conflicts of judges and projects that still exist, oldest
// first.
func (s *State) ConflictsView() []ConflictView {
	out := []ConflictView{}
	for _, cf := range s.Conflicts {
		j, ok := s.Judges[cf.Judge]
		p, ok2 := s.Projects[cf.Project]
		if !ok || !ok2 {
			continue
		}
		out = append(out, ConflictView{JudgeID: j.ID, JudgeName: j.Name, ProjectID: p.ID, ProjectName: p.Name, Source: cf.Source,
			Judged: j.seenIndex(p.ID) >= 0})
	}
	return out
}

// ConflictCount is how many projects (that still exist) judge id has a conflict with.
func (s *State) ConflictCount(id ID) int {
	n := 0
	for _, p := range s.conflicted[id] {
		if _, ok := s.Projects[p]; ok {
			n++
		}
	}
	return n
}
