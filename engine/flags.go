package engine

import "sort"

func init() {
	register(func() Command { return &DismissFlag{} })
}

// FlagsView returns a copy of the flags sorted by time (oldest first).
func (s *State) FlagsView() []Flag {
	out := append([]Flag{}, s.Flags...)
	sort.SliceStable(out, func(a, b int) bool { return out[a].Time < out[b].Time })
	return out
}

// DismissFlag removes a flag record. The skip it recorded still excludes the project
// for that judge, and a project hidden because of it stays hidden.
type DismissFlag struct {
	Flag ID `json:"flag"`
}

// Kind implements Command.
func (*DismissFlag) Kind() string { return "flag.dismiss" }

func (cmd *DismissFlag) apply(s *State, c *Ctx) (any, error) {
	idx := -1
	for i := range s.Flags {
		if s.Flags[i].ID == cmd.Flag {
			idx = i
			break
		}
	}
	if idx < 0 {
		return nil, notFoundf("flag not found")
	}
	f := s.Flags[idx]
	s.Flags = append(s.Flags[:idx:idx], s.Flags[idx+1:]...)
	c.logf("dismissed flag %q of judge %s on project %s (table %d)", f.Reason, f.JudgeName, f.ProjectName, f.ProjectLocation)
	c.changed("project", f.ProjectID)
	return nil, nil
}
