package engine

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

// CheckProject validates one project's fields.
func CheckProject(p *NewProject) *Error {
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
	return nil
}

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
			Location:      loc,
			Group:         s.Options.GroupOfTable(loc),
			TrackSeen:     map[string]int{},
			Active:        true,
			LastActivity:  0,
			Created:       s.Applied + 1,
		}
		s.Projects[p.ID] = p
		s.locIndex[loc] = p.ID
		res.IDs = append(res.IDs, p.ID)
		c.emit(Event{Type: EvExpo, To: ToEveryone, Data: ExpoEvent{Action: "upsert", Project: p.Public()}})
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
