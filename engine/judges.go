package engine

import "strings"

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
			Rankings:     []ID{},
		}
		if s.IsGeneral(j) {
			j.Group = s.smallestGroup()
		}
		s.Judges[j.ID] = j
		s.JudgeOrder = append(s.JudgeOrder, j.ID)
		s.codeIndex[j.Code] = j.ID
		out = append(out, CreatedJudge{ID: j.ID, Code: j.Code, Name: j.Name, Email: j.Email})
		ids = append(ids, j.ID)
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
func (s *State) smallestGroup() int {
	n := s.Options.NumGroups
	if n < 1 {
		return 0
	}
	counts := make([]int, n)
	for _, j := range s.Judges {
		if j.Active && s.IsGeneral(j) && j.Group >= 0 && j.Group < n {
			counts[j.Group]++
		}
	}
	best := 0
	for g := 1; g < n; g++ {
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
