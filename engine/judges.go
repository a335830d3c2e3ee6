package engine

import (
	"slices"
	"strings"
)

func init() {
	register(func() Command { return &CreateJudges{} })
}

// NewJudge is one judge to create.
type NewJudge struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Notes string `json:"notes"`
	Track string `json:"track"`
}

// CreateJudges adds judges (one from POST /api/judge/new, many from a CSV import or one
// from QR self-signup). The caller supplies crypto-random 8-digit candidate codes (at
// least one per judge, a few spare); the command takes the first ones not in use, so
// replay picks the same codes. Atomic: any bad judge refuses them all.
type CreateJudges struct {
	Judges []NewJudge `json:"judges"`
	Codes  []string   `json:"codes"`
	// RowOffset numbers rows in error messages (CSV imports: the spreadsheet row of the
	// first judge); 0 means errors are not numbered.
	RowOffset int `json:"row_offset"`
	// DuplicateIsConflict makes an email that is already in use a 409 instead of a 400.
	DuplicateIsConflict bool `json:"dup_conflict"`
	// Mail queues each new judge's login-code email (mail.go) in the same command, so
	// the mail is durable before the request is answered.
	Mail bool `json:"mail,omitempty"`
}

// CreatedJudge is the result for one created judge.
type CreatedJudge struct {
	ID    ID
	Code  string
	Name  string
	Email string
}

// Kind implements Command.
func (*CreateJudges) Kind() string { return "judge.create" }

func (cmd *CreateJudges) rowErr(i int, err error) error {
	if cmd.RowOffset == 0 {
		return err
	}
	e := err.(*Error)
	return &Error{Kind: e.Kind, Msg: "row " + itoa(cmd.RowOffset+i) + ": " + e.Msg}
}

func (cmd *CreateJudges) apply(s *State, c *Ctx) (any, error) {
	if len(cmd.Judges) == 0 {
		return nil, invalidf("no judges given")
	}
	emails := make(map[string]bool, len(s.Judges))
	for _, j := range s.Judges {
		emails[strings.ToLower(j.Email)] = true
	}
	for i, nj := range cmd.Judges {
		if err := checkName("name", nj.Name); err != nil {
			return nil, cmd.rowErr(i, err)
		}
		if err := checkEmail(nj.Email); err != nil {
			return nil, cmd.rowErr(i, err)
		}
		if err := checkText("notes", nj.Notes); err != nil {
			return nil, cmd.rowErr(i, err)
		}
		if nj.Track != "" && !containsString(s.Options.Tracks, nj.Track) {
			return nil, cmd.rowErr(i, invalidf("track %q does not exist", nj.Track))
		}
		key := strings.ToLower(nj.Email)
		if emails[key] {
			err := invalidf("a judge with email %s already exists", nj.Email)
			if cmd.DuplicateIsConflict {
				err.Kind = KindConflict
			}
			return nil, cmd.rowErr(i, err)
		}
		emails[key] = true
	}
	// Pick codes before mutating anything.
	codes := make([]string, 0, len(cmd.Judges))
	taken := map[string]bool{}
	for _, code := range cmd.Codes {
		if len(codes) == len(cmd.Judges) {
			break
		}
		if len(code) != 8 || taken[code] {
			continue
		}
		if _, used := s.codeIndex[code]; used {
			continue
		}
		taken[code] = true
		codes = append(codes, code)
	}
	if len(codes) < len(cmd.Judges) {
		return nil, conflictf("not enough unused login codes supplied")
	}
	out := make([]CreatedJudge, 0, len(cmd.Judges))
	ids := make([]ID, 0, len(cmd.Judges))
	groups := s.groupCounts(ZeroID) // kept up to date below: smallestGroup per judge is O(judges²)
	for i, nj := range cmd.Judges {
		j := &Judge{
			ID:           c.newID(),
			Code:         codes[i],
			Name:         nj.Name,
			Email:        nj.Email,
			Notes:        nj.Notes,
			Track:        nj.Track,
			Active:       true,
			LastLocation: -1,
			SeenProjects: []SeenProject{},
			Skipped:      map[ID]bool{},
			Flagged:      []ID{},
			Rankings:     []ID{},
		}
		if s.IsGeneral(j) {
			j.Group = leastOf(groups)
			if j.Group < len(groups) {
				groups[j.Group]++
			}
		}
		s.Judges[j.ID] = j
		s.JudgeOrder = append(s.JudgeOrder, j.ID)
		s.codeIndex[j.Code] = j.ID
		out = append(out, CreatedJudge{ID: j.ID, Code: j.Code, Name: j.Name, Email: j.Email})
		ids = append(ids, j.ID)
	}
	if cmd.Mail {
		s.queueMails(c, ids)
	}
	if len(out) == 1 {
		c.logf("added judge %s", out[0].Name)
	} else {
		c.logf("added %d judges", len(out))
	}
	c.changed("judge", ids...)
	return out, nil
}

// smallestGroup returns the group with the fewest active general judges (ties: lowest).
func (s *State) smallestGroup() int { return s.smallestGroupExcept(ZeroID) }

// smallestGroupExcept is smallestGroup not counting the judge skip.
func (s *State) smallestGroupExcept(skip ID) int { return leastOf(s.groupCounts(skip)) }

// groupCounts counts the active general judges of each group, not counting skip (nil
// when there are no groups).
func (s *State) groupCounts(skip ID) []int {
	n := s.Options.NumGroups
	if n < 1 {
		return nil
	}
	counts := make([]int, n)
	for _, j := range s.Judges {
		if j.ID != skip && j.Active && s.IsGeneral(j) && j.Group >= 0 && j.Group < n {
			counts[j.Group]++
		}
	}
	return counts
}

// leastOf returns the first group with the fewest judges (0 when there are no groups).
func leastOf(counts []int) int {
	best := 0
	for g := 1; g < len(counts); g++ {
		if counts[g] < counts[best] {
			best = g
		}
	}
	return best
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

func init() {
	register(
		func() Command { return &UpdateJudge{} },
		func() Command { return &DeleteJudge{} },
		func() Command { return &HideJudges{} },
	)
}

// UpdateJudge changes the fields of a judge that are set (PUT /api/judge/:id). A nil
// field is left as it is.
type UpdateJudge struct {
	Judge ID      `json:"judge"`
	Name  *string `json:"name,omitempty"`
	Email *string `json:"email,omitempty"`
	Notes *string `json:"notes,omitempty"`
	Track *string `json:"track,omitempty"`
}

// Kind implements Command.
func (*UpdateJudge) Kind() string { return "judge.update" }

func (cmd *UpdateJudge) apply(s *State, c *Ctx) (any, error) {
	j, ok := s.Judges[cmd.Judge]
	if !ok {
		return nil, notFoundf("judge not found")
	}
	if cmd.Name != nil {
		if err := checkName("name", *cmd.Name); err != nil {
			return nil, err
		}
	}
	if cmd.Email != nil {
		if err := checkEmail(*cmd.Email); err != nil {
			return nil, err
		}
		key := strings.ToLower(*cmd.Email)
		for _, o := range s.Judges {
			if o.ID != j.ID && strings.ToLower(o.Email) == key {
				return nil, conflictf("a judge with email %s already exists", *cmd.Email)
			}
		}
	}
	if cmd.Notes != nil {
		if err := checkText("notes", *cmd.Notes); err != nil {
			return nil, err
		}
	}
	if cmd.Track != nil && *cmd.Track != "" && !containsString(s.Options.Tracks, *cmd.Track) {
		return nil, invalidf("track %q does not exist", *cmd.Track)
	}
	// Validated: mutate.
	if cmd.Name != nil {
		j.Name = *cmd.Name
	}
	if cmd.Email != nil {
		j.Email = *cmd.Email
	}
	if cmd.Notes != nil {
		j.Notes = *cmd.Notes
	}
	if cmd.Track != nil && *cmd.Track != j.Track {
		wasGeneral := s.IsGeneral(j)
		j.Track = *cmd.Track
		if !wasGeneral && s.IsGeneral(j) {
			// A track judge that becomes general joins groups the way a new judge does.
			old := j.Group
			j.Group, j.GroupSeen = s.smallestGroupExcept(j.ID), 0
			if j.Group != old {
				c.emit(Event{Type: EvJudge, To: ToJudge, Judge: j.ID, Data: s.judgeEvent(j, "moved by admin")})
			}
		}
		s.scoresChanged()
	}
	c.logf("edited judge %s", j.Name)
	c.changed("judge", j.ID)
	return nil, nil
}

// DeleteJudge removes a judge with its flags and session, releases its current project
// and takes its finished views back out of the projects' view counts.
type DeleteJudge struct {
	Judge ID `json:"judge"`
}

// Kind implements Command.
func (*DeleteJudge) Kind() string { return "judge.delete" }

func (cmd *DeleteJudge) apply(s *State, c *Ctx) (any, error) {
	j, ok := s.Judges[cmd.Judge]
	if !ok {
		return nil, notFoundf("judge not found")
	}
	general := s.IsGeneral(j)
	touched := make([]ID, 0, len(j.SeenProjects))
	for _, sp := range j.SeenProjects {
		p, ok := s.Projects[sp.ProjectID]
		if !ok {
			continue
		}
		if general {
			if p.Seen > 0 {
				p.Seen--
			}
		} else if n := p.TrackSeen[j.Track]; n > 1 {
			p.TrackSeen[j.Track] = n - 1
		} else {
			delete(p.TrackSeen, j.Track)
		}
		touched = append(touched, p.ID)
	}
	s.Flags = slices.DeleteFunc(s.Flags, func(f Flag) bool { return f.JudgeID == j.ID })
	if j.TokenHash != "" && s.tokenIndex[j.TokenHash] == j.ID {
		s.delToken(j.TokenHash)
	}
	if s.codeIndex[j.Code] == j.ID {
		delete(s.codeIndex, j.Code)
	}
	delete(s.Judges, j.ID)
	delete(s.Mail, j.ID) // a mail being sent finds its judge gone and is not recorded
	for i, id := range s.JudgeOrder {
		if id == j.ID {
			s.JudgeOrder = append(s.JudgeOrder[:i], s.JudgeOrder[i+1:]...)
			break
		}
	}
	j.Current, j.CurrentSince = ZeroID, 0
	s.forgetJudge(j)
	s.scoresChanged()
	c.logf("deleted judge %s", j.Name)
	c.emit(Event{Type: EvJudge, To: ToJudge, Judge: j.ID, Data: JudgeEvent{Group: j.Group, Reason: "judge deleted"}})
	c.changed("judge", j.ID)
	if len(touched) > 0 {
		c.changed("project", sortedIDs(touched)...)
	}
	return nil, nil
}

// HideJudges hides (Hide = true) or unhides judges. A hidden judge gets no projects: its
// current one is released, and its rankings and stars leave every score. Any unknown id
// refuses the whole command.
type HideJudges struct {
	Judges []ID `json:"judges"`
	Hide   bool `json:"hide"`
}

// Kind implements Command.
func (*HideJudges) Kind() string { return "judge.hide" }

func (cmd *HideJudges) apply(s *State, c *Ctx) (any, error) {
	ids, err := s.knownJudges(cmd.Judges)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	changed := make([]ID, 0, len(ids))
	for _, id := range ids {
		j := s.Judges[id]
		if j.Active == !cmd.Hide {
			continue
		}
		j.Active = !cmd.Hide
		reason := "judge unhidden"
		if cmd.Hide {
			reason = "judge hidden"
			j.Current, j.CurrentSince = ZeroID, 0
		}
		c.emit(Event{Type: EvJudge, To: ToJudge, Judge: j.ID, Data: s.judgeEvent(j, reason)})
		changed = append(changed, id)
	}
	if len(changed) > 0 {
		s.scoresChanged()
	}
	verb := hideVerb(cmd.Hide)
	if len(ids) == 1 {
		c.logf("%s judge %s", verb, s.Judges[ids[0]].Name)
	} else {
		c.logf("%s %d judges", verb, len(ids))
	}
	c.changed("judge", changed...)
	return nil, nil
}
