package engine

// Undo of a finish (docs/behaviour.md#on-the-floor): for UndoWindow after its last
// finish a judge may take it back. The project becomes current again, the views the
// finish counted are taken back, and the visit leaves the judge's seen list (with its
// star), its ranking and so Copeland and the ratings; the notes go back to the judge
// as the draft.

func init() {
	register(func() Command { return &JudgeUndo{} })
}

// UndoWindow is how long (ms, command time) after a finish it may be undone.
const UndoWindow = 60 * 1000

// UndoPoint is what a judge's last finish changed, kept until it is undone or the
// judge finishes again.
type UndoPoint struct {
	Project   ID     `json:"project"`
	Time      int64  `json:"time"`
	General   bool   `json:"general"` // the view counted in the project's seen (else track_seen[Track])
	Track     string `json:"track"`
	Group     int    `json:"group"` // the judge's group and group_seen before the finish
	GroupSeen int    `json:"group_seen"`
}

// keepUndoPoint records the finish of p by j that is about to apply.
func (s *State) keepUndoPoint(j *Judge, p *Project, c *Ctx) {
	if s.Undo == nil { // sized for every judge: growing it one judge at a time rehashes it often
		s.Undo = make(map[ID]UndoPoint, len(s.Judges))
	}
	s.Undo[j.ID] = UndoPoint{Project: p.ID, Time: c.Time, General: s.IsGeneral(j), Track: j.Track,
		Group: j.Group, GroupSeen: j.GroupSeen}
}

// UndoResult is the answer of POST /api/judge/undo: the project current again, and the
// notes and star of the visit taken back (the judge's draft).
type UndoResult struct {
	ProjectID ID
	Notes     string
	Starred   bool
}

// AppendJSON appends {"ok":1,"project_id":...,"notes":...,"starred":...}.
func (r UndoResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"ok":1,"project_id":`...)
	b = appendID(b, r.ProjectID)
	b = appendJSONString(append(b, `,"notes":`...), r.Notes)
	if r.Starred {
		return append(b, `,"starred":true}`...)
	}
	return append(b, `,"starred":false}`...)
}

// JudgeUndo takes back the judge's last finish (POST /api/judge/undo).
type JudgeUndo struct {
	Judge ID `json:"judge"`
}

// Kind implements Command.
func (*JudgeUndo) Kind() string { return "judging.undo" }

func (cmd *JudgeUndo) apply(s *State, c *Ctx) (any, error) {
	j, err := s.judgeFor(cmd.Judge)
	if err != nil {
		return nil, err
	}
	if s.Options.Deliberation {
		return nil, conflictf("deliberation is on")
	}
	up, ok := s.Undo[j.ID]
	if !ok {
		return nil, conflictf("nothing to undo")
	}
	if c.Time-up.Time > UndoWindow {
		return nil, conflictf("too late to undo: a visit can be taken back for 60 seconds after submitting it")
	}
	p, ok := s.Projects[up.Project]
	i := j.seenIndex(up.Project)
	if !ok || i < 0 {
		return nil, conflictf("nothing to undo")
	}
	if !p.Active {
		return nil, conflictf("project %s was hidden meanwhile", p.Name)
	}
	if s.hasConflict(j.ID, p.ID) {
		return nil, conflictf("you have a conflict of interest with project %s", p.Name)
	}
	sp := j.SeenProjects[i]
	// Fresh arrays: captures may share the old ones (copyOnWrite).
	j.SeenProjects = append(append(make([]SeenProject, 0, len(j.SeenProjects)), j.SeenProjects[:i]...), j.SeenProjects[i+1:]...)
	j.Rankings = removeID(append([]ID{}, j.Rankings...), p.ID)
	j.Seen = max(j.Seen-1, 0)
	if up.General {
		p.Seen = max(p.Seen-1, 0)
	} else if p.TrackSeen[up.Track] > 0 {
		p.TrackSeen[up.Track]--
	}
	j.Group, j.GroupSeen = up.Group, up.GroupSeen
	delete(s.Undo, j.ID)
	if !j.Current.IsZero() {
		c.changed("project", j.Current) // released: the index is rebuilt (no keep below)
	}
	j.Current, j.CurrentSince = p.ID, c.Time
	j.LastLocation, j.LastActivity, p.LastActivity = p.Location, c.Time, c.Time
	x := s.jd()
	x.pairsDirty = true
	x.scores.judgeChanged(j.ID, true)
	c.logProject("took back the visit of", p)
	c.changed("judge", j.ID)
	c.changed("project", p.ID)
	return UndoResult{ProjectID: p.ID, Notes: sp.Notes, Starred: sp.Starred}, nil
}
