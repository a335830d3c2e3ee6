package engine

// A conflict of interest recorded after the judge already judged the project
// (docs/behaviour.md#a-conflict-found-after-the-judgement): the import says which pairs
// these are, and the organiser keeps the judgement or takes it out with
// ConflictDropJudgement.

func init() {
	register(func() Command { return &ConflictDropJudgement{} })
}

// JudgedConflict is a conflict of interest whose judge has a finished view of the
// project that still counts in the scores.
type JudgedConflict struct {
	JudgeID     ID     `json:"judge_id"`
	JudgeName   string `json:"judge_name"`
	ProjectID   ID     `json:"project_id"`
	ProjectName string `json:"project_name"`
}

// ConflictsAdded is the result of ConflictsAdd: how many conflicts were new, and the
// imported pairs whose judge already judged the project (each pair once, in row order).
type ConflictsAdded struct {
	Added  int              `json:"added"`
	Judged []JudgedConflict `json:"judged"`
}

// judgedConflicts lists the pairs whose judge has a finished view of the project.
func (s *State) judgedConflicts(pairs []ConflictPair) []JudgedConflict {
	out := []JudgedConflict{}
	seen := map[[2]ID]bool{}
	for _, pr := range pairs {
		k := [2]ID{pr.Judge, pr.Project}
		j, p := s.Judges[pr.Judge], s.Projects[pr.Project]
		if seen[k] || j == nil || p == nil || j.seenIndex(p.ID) < 0 {
			continue
		}
		seen[k] = true
		out = append(out, JudgedConflict{JudgeID: j.ID, JudgeName: j.Name, ProjectID: p.ID, ProjectName: p.Name})
	}
	return out
}

// ConflictDropJudgement takes a judge's finished view of a project it has a conflict of
// interest with out of the judging data (DELETE
// /api/admin/conflicts/:judge/:project/judgement): the view leaves the judge's seen
// list (its star and notes with it) and ranking, the project's seen (or
// track_seen[track]) and the judge's seen go down by one, as deleting the judge does
// for all its views. The conflict stays, so the judge is not sent there again.
type ConflictDropJudgement struct {
	Judge   ID `json:"judge"`
	Project ID `json:"project"`
}

// Kind implements Command.
func (*ConflictDropJudgement) Kind() string { return "conflicts.drop-judgement" }

func (cmd *ConflictDropJudgement) apply(s *State, c *Ctx) (any, error) {
	j, ok := s.Judges[cmd.Judge]
	if !ok {
		return nil, notFoundf("judge not found")
	}
	p, ok := s.Projects[cmd.Project]
	if !ok {
		return nil, notFoundf("project not found")
	}
	if !s.hasConflict(j.ID, p.ID) {
		return nil, conflictf("judge %s has no conflict of interest with project %s: only a conflicted judgement can be removed", j.Name, p.Name)
	}
	i := j.seenIndex(p.ID)
	if i < 0 {
		return nil, conflictf("judge %s has no judgement of project %s to remove", j.Name, p.Name)
	}
	// Fresh arrays: captures may share the old ones (copyOnWrite).
	j.SeenProjects = append(append(make([]SeenProject, 0, len(j.SeenProjects)), j.SeenProjects[:i]...), j.SeenProjects[i+1:]...)
	j.Rankings = removeID(append([]ID{}, j.Rankings...), p.ID)
	j.Seen = max(j.Seen-1, 0)
	if s.IsGeneral(j) {
		p.Seen = max(p.Seen-1, 0)
	} else if n := p.TrackSeen[j.Track]; n > 1 {
		p.TrackSeen[j.Track] = n - 1
	} else {
		delete(p.TrackSeen, j.Track)
	}
	if up, ok := s.Undo[j.ID]; ok && up.Project == p.ID {
		delete(s.Undo, j.ID) // nothing left to take back
	}
	x := s.jd()
	x.pairsDirty = true
	x.scores.judgeChanged(j.ID, true)
	c.logf("removed the judgement of project %s (table %d) by judge %s (conflict of interest)", p.Name, p.Location, j.Name)
	c.changed("judge", j.ID)
	c.changed("project", p.ID)
	return nil, nil
}
