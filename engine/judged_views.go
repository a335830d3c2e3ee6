package engine

// A judge's own judged projects (docs/behaviour.md#resources): what it saw, with its
// notes, star and feedback for the team.

// JudgedProject is a judge's view of a project it judged (GET /api/judge/projects items,
// GET /api/judge/project/:id): the SeenProject plus the project's current URL.
type JudgedProject struct {
	ProjectID   ID     `json:"project_id"`
	Name        string `json:"name"`
	Location    int    `json:"location"`
	Description string `json:"description"`
	Notes       string `json:"notes"`
	Feedback    string `json:"feedback"`
	Starred     bool   `json:"starred"`
	URL         string `json:"url"`
}

func (s *State) judgedView(sp *SeenProject) JudgedProject {
	v := JudgedProject{
		ProjectID: sp.ProjectID, Name: sp.Name, Location: sp.Location, Description: sp.Description,
		Notes: sp.Notes, Feedback: sp.Feedback, Starred: sp.Starred,
	}
	if p, ok := s.Projects[sp.ProjectID]; ok {
		v.URL = p.URL
	}
	return v
}

// JudgedProjects returns the projects judge id judged, in the order judged.
func (s *State) JudgedProjects(id ID) []JudgedProject {
	out := []JudgedProject{}
	if j, ok := s.Judges[id]; ok {
		for i := range j.SeenProjects {
			out = append(out, s.judgedView(&j.SeenProjects[i]))
		}
	}
	return out
}

// JudgedProject returns judge id's view of project p, if it judged it.
func (s *State) JudgedProject(id, p ID) (JudgedProject, bool) {
	j, ok := s.Judges[id]
	if !ok {
		return JudgedProject{}, false
	}
	i := j.seenIndex(p)
	if i < 0 {
		return JudgedProject{}, false
	}
	return s.judgedView(&j.SeenProjects[i]), true
}
