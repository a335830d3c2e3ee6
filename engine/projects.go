package engine

import "slices"

func init() {
	register(func() Command { return &CreateProjects{} })
}

// NewProject is one project to create.
type NewProject struct {
	Name          string   `json:"name"`
	Description   string   `json:"description"`
	URL           string   `json:"url"`
	TryLink       string   `json:"try_link"`
	VideoLink     string   `json:"video_link"`
	ChallengeList []string `json:"challenge_list"`
	// ContactEmails are the team's addresses (docs/behaviour.md#after-judging).
	ContactEmails []string `json:"contact_emails,omitempty"`
}

// CreateProjects adds projects at the next free tables (max + 1, ...). Atomic.
type CreateProjects struct {
	Projects []NewProject `json:"projects"`
	// SkipIgnored skips projects in an ignored track (CSV imports) instead of refusing
	// them (POST /api/project/new).
	SkipIgnored bool `json:"skip_ignored"`
	// RowOffset numbers rows in error messages as in CreateJudges; Rows, when set, gives
	// each project's own row number instead (imports that skip rows).
	RowOffset int   `json:"row_offset"`
	Rows      []int `json:"rows,omitempty"`
}

// CreatedProjects is the result of CreateProjects.
type CreatedProjects struct {
	IDs     []ID
	Skipped int
}

// Kind implements Command.
func (*CreateProjects) Kind() string { return "project.create" }

func (cmd *CreateProjects) rowErr(i int, err *Error) error {
	row := 0
	if i < len(cmd.Rows) {
		row = cmd.Rows[i]
	} else if cmd.RowOffset != 0 {
		row = cmd.RowOffset + i
	}
	if row == 0 {
		return err
	}
	return &Error{Kind: err.Kind, Msg: "row " + itoa(row) + ": " + err.Msg}
}

// CheckProject validates one project's fields, after giving links typed without a
// scheme their "https://" (NormalizeURL).
func CheckProject(p *NewProject) *Error {
	p.URL, p.TryLink, p.VideoLink = NormalizeURL(p.URL), NormalizeURL(p.TryLink), NormalizeURL(p.VideoLink)
	if err := checkName("name", p.Name); err != nil {
		return err.(*Error)
	}
	if err := checkText("description", p.Description); err != nil {
		return err.(*Error)
	}
	for _, f := range []struct{ name, v string }{{"url", p.URL}, {"try_link", p.TryLink}, {"video_link", p.VideoLink}} {
		if err := checkURL(f.name, f.v); err != nil {
			return err.(*Error)
		}
	}
	for _, ch := range p.ChallengeList {
		if err := checkName("challenge", ch); err != nil {
			return err.(*Error)
		}
	}
	if len(p.ContactEmails) > MaxContactEmails {
		return invalidf("at most %d contact emails", MaxContactEmails)
	}
	for _, e := range p.ContactEmails {
		if err := checkEmail(e); err != nil {
			return invalidf("contact_emails: %s", err.(*Error).Msg)
		}
	}
	return nil
}

// MaxContactEmails is how many contact addresses a project may have.
const MaxContactEmails = 20

func (s *State) ignored(p *NewProject) (string, bool) {
	for _, ch := range p.ChallengeList {
		if containsString(s.Options.IgnoreTracks, ch) {
			return ch, true
		}
	}
	return "", false
}

func (cmd *CreateProjects) apply(s *State, c *Ctx) (any, error) {
	keep := make([]*NewProject, 0, len(cmd.Projects))
	skipped := 0
	for i := range cmd.Projects {
		p := &cmd.Projects[i]
		if p.ChallengeList == nil {
			p.ChallengeList = []string{}
		}
		if err := CheckProject(p); err != nil {
			return nil, cmd.rowErr(i, err)
		}
		if tr, ign := s.ignored(p); ign {
			if cmd.SkipIgnored {
				skipped++
				continue
			}
			return nil, cmd.rowErr(i, invalidf("project is in ignored track %q", tr))
		}
		keep = append(keep, p)
	}
	loc := s.maxLocation()
	res := CreatedProjects{IDs: make([]ID, 0, len(keep)), Skipped: skipped}
	for _, np := range keep {
		loc++
		p := &Project{
			ID:            c.newID(),
			Name:          np.Name,
			Description:   np.Description,
			URL:           np.URL,
			TryLink:       np.TryLink,
			VideoLink:     np.VideoLink,
			ChallengeList: append([]string{}, np.ChallengeList...),
			ContactEmails: cloneSlice(np.ContactEmails),
			Location:      loc,
			Group:         s.Options.GroupOfTable(loc),
			TrackSeen:     map[string]int{},
			Active:        true,
			LastActivity:  0,
			Created:       s.Applied + 1,
		}
		s.Projects[p.ID] = p
		s.locIndex[loc] = p.ID
		s.maxLoc = loc // maxLocation was called above: the cache is valid
		res.IDs = append(res.IDs, p.ID)
		c.emit(Event{Type: EvExpo, To: ToEveryone, Data: ExpoEvent{Action: "upsert", Project: p.Public()}})
	}
	if len(res.IDs) > 0 {
		s.ratingInputsChanged() // new active projects get a rank and p_top from the next fit
	}
	switch {
	case len(res.IDs) == 1:
		c.logf("added project %s at table %d", keep[0].Name, loc)
	default:
		c.logf("added %d projects (%d skipped)", len(res.IDs), skipped)
	}
	c.changed("project", res.IDs...)
	return res, nil
}

func init() {
	register(
		func() Command { return &UpdateProject{} },
		func() Command { return &DeleteProject{} },
		func() Command { return &HideProjects{} },
		func() Command { return &MoveProject{} },
		func() Command { return &PrioritizeProjects{} },
	)
}

// UpdateProject changes the fields of a project that are set (PUT /api/project/:id). A
// nil field is left as it is; the result is validated like a new project.
type UpdateProject struct {
	Project       ID        `json:"project"`
	Name          *string   `json:"name,omitempty"`
	Description   *string   `json:"description,omitempty"`
	URL           *string   `json:"url,omitempty"`
	TryLink       *string   `json:"try_link,omitempty"`
	VideoLink     *string   `json:"video_link,omitempty"`
	ChallengeList *[]string `json:"challenge_list,omitempty"`
	ContactEmails *[]string `json:"contact_emails,omitempty"`
}

// Kind implements Command.
func (*UpdateProject) Kind() string { return "project.update" }

func (cmd *UpdateProject) apply(s *State, c *Ctx) (any, error) {
	p, ok := s.Projects[cmd.Project]
	if !ok {
		return nil, notFoundf("project not found")
	}
	np := NewProject{
		Name: p.Name, Description: p.Description, URL: p.URL, TryLink: p.TryLink,
		VideoLink: p.VideoLink, ChallengeList: p.ChallengeList, ContactEmails: p.ContactEmails,
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&np.Name, cmd.Name)
	set(&np.Description, cmd.Description)
	set(&np.URL, cmd.URL)
	set(&np.TryLink, cmd.TryLink)
	set(&np.VideoLink, cmd.VideoLink)
	if cmd.ChallengeList != nil {
		np.ChallengeList = append([]string{}, *cmd.ChallengeList...)
	}
	if cmd.ContactEmails != nil {
		np.ContactEmails = append([]string{}, *cmd.ContactEmails...)
	}
	if err := CheckProject(&np); err != nil {
		return nil, err
	}
	if cmd.ChallengeList != nil {
		if tr, ign := s.ignored(&np); ign {
			return nil, invalidf("project is in ignored track %q", tr)
		}
	}
	// Validated: mutate.
	p.Name, p.Description, p.URL, p.TryLink, p.VideoLink = np.Name, np.Description, np.URL, np.TryLink, np.VideoLink
	if cmd.ContactEmails != nil {
		p.ContactEmails = np.ContactEmails
	}
	if cmd.ChallengeList != nil {
		p.ChallengeList = np.ChallengeList
		s.scoresChanged()
	}
	if cmd.Name != nil || cmd.Description != nil {
		s.syncSeenCopies(map[ID]*Project{p.ID: p})
	}
	c.logf("edited project %s (table %d)", p.Name, p.Location)
	emitExpoUpsert(c, p)
	c.changed("project", p.ID)
	return nil, nil
}

// DeleteProject removes a project from every judge (seen list, rankings, skips, current
// assignment), deletes its flags and frees its table.
type DeleteProject struct {
	Project ID `json:"project"`
}

// Kind implements Command.
func (*DeleteProject) Kind() string { return "project.delete" }

func (cmd *DeleteProject) apply(s *State, c *Ctx) (any, error) {
	p, ok := s.Projects[cmd.Project]
	if !ok {
		return nil, notFoundf("project not found")
	}
	pid := p.ID
	released := s.releaseJudgesOn(c, map[ID]bool{pid: true}, "project deleted")
	touched := append([]ID{}, released...)
	for _, j := range s.JudgesInOrder() {
		hit := false
		if _, ok := j.Skipped[pid]; ok {
			delete(j.Skipped, pid)
			j.Flagged = removeID(j.Flagged, pid)
			hit = true
		}
		if i := indexSeen(j.SeenProjects, pid); i >= 0 {
			j.SeenProjects = append(j.SeenProjects[:i:i], j.SeenProjects[i+1:]...) // a new array: see Judge.ownSeen
			if j.Seen > 0 {
				j.Seen--
			}
			hit = true
		}
		for i, id := range j.Rankings {
			if id == pid {
				j.Rankings = append(j.Rankings[:i:i], j.Rankings[i+1:]...) // a new array: see Judge.ownSeen
				hit = true
				break
			}
		}
		if hit {
			touched = append(touched, j.ID)
		}
	}
	s.Flags = slices.DeleteFunc(s.Flags, func(f Flag) bool { return f.ProjectID == pid })
	if s.locIndex[p.Location] == pid {
		delete(s.locIndex, p.Location)
		s.maxLocOK = false
	}
	delete(s.Projects, pid)
	delete(s.Mail, pid) // a team-link mail being sent finds its project gone and is not recorded
	s.forgetProject(pid)
	s.scoresChanged()
	c.logf("deleted project %s (table %d)", p.Name, p.Location)
	if p.Active {
		emitExpoRemove(c, p)
	}
	c.changed("project", pid)
	if len(touched) > 0 {
		c.changed("judge", sortedIDs(touched)...)
	}
	return nil, nil
}

func indexSeen(list []SeenProject, pid ID) int {
	for i := range list {
		if list[i].ProjectID == pid {
			return i
		}
	}
	return -1
}

// HideProjects hides (Hide = true) or unhides projects. A hidden project leaves the
// public listing and the judges currently on it are released. Any unknown id refuses
// the whole command.
type HideProjects struct {
	Projects []ID `json:"projects"`
	Hide     bool `json:"hide"`
}

// Kind implements Command.
func (*HideProjects) Kind() string { return "project.hide" }

func (cmd *HideProjects) apply(s *State, c *Ctx) (any, error) {
	ids, err := s.knownProjects(cmd.Projects)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	changed := make([]ID, 0, len(ids))
	hidden := map[ID]bool{}
	for _, id := range ids {
		p := s.Projects[id]
		if p.Active == !cmd.Hide {
			continue
		}
		p.Active = !cmd.Hide
		if cmd.Hide {
			hidden[id] = true
			emitExpoRemove(c, p)
		} else {
			emitExpoUpsert(c, p)
		}
		changed = append(changed, id)
	}
	var released []ID
	if len(hidden) > 0 {
		released = s.releaseJudgesOn(c, hidden, "project hidden")
	}
	if len(changed) > 0 {
		s.ratingInputsChanged()
	}
	s.logProjects(c, hideVerb(cmd.Hide), ids)
	c.changed("project", changed...)
	if len(released) > 0 {
		c.changed("judge", released...)
	}
	return nil, nil
}

// MaxLocation is the highest table number an admin can set (and the largest group
// size), far beyond any expo, so that table arithmetic (max + 1, group ranges) cannot
// overflow.
const MaxLocation = 1000000

// MoveProject moves a project to another table (which must be free); its group follows
// the table, and so do the judges' copies of it.
type MoveProject struct {
	Project  ID  `json:"project"`
	Location int `json:"location"`
}

// Kind implements Command.
func (*MoveProject) Kind() string { return "project.move" }

func (cmd *MoveProject) apply(s *State, c *Ctx) (any, error) {
	p, ok := s.Projects[cmd.Project]
	if !ok {
		return nil, notFoundf("project not found")
	}
	if cmd.Location < 1 || cmd.Location > MaxLocation {
		return nil, invalidf("location must be a table number from 1 to %d", MaxLocation)
	}
	if other, taken := s.locIndex[cmd.Location]; taken && other != p.ID {
		return nil, conflictf("table %d is taken by %s", cmd.Location, s.Projects[other].Name)
	}
	from := p.Location
	s.place(p, cmd.Location)
	s.syncSeenCopies(map[ID]*Project{p.ID: p})
	c.logf("moved project %s from table %d to table %d", p.Name, from, p.Location)
	emitExpoUpsert(c, p)
	c.changed("project", p.ID)
	return nil, nil
}

// PrioritizeProjects sets or clears the prioritized flag of projects. Any unknown id
// refuses the whole command.
type PrioritizeProjects struct {
	Projects   []ID `json:"projects"`
	Prioritize bool `json:"prioritize"`
}

// Kind implements Command.
func (*PrioritizeProjects) Kind() string { return "project.prioritize" }

func (cmd *PrioritizeProjects) apply(s *State, c *Ctx) (any, error) {
	ids, err := s.knownProjects(cmd.Projects)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	changed := make([]ID, 0, len(ids))
	for _, id := range ids {
		p := s.Projects[id]
		if p.Prioritized != cmd.Prioritize {
			p.Prioritized = cmd.Prioritize
			changed = append(changed, id)
		}
	}
	verb := "deprioritized"
	if cmd.Prioritize {
		verb = "prioritized"
	}
	s.logProjects(c, verb, ids)
	c.changed("project", changed...)
	return nil, nil
}
