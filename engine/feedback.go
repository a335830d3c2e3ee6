package engine

import (
	"cmp"
	"slices"
	"unicode/utf8"
)

// Feedback for the team (docs/behaviour.md#after-judging): separate from a judge's
// private notes, written with the finish or later, read by the organiser before it
// goes out, and shown to the team after the results when the organiser chooses.

func init() {
	register(
		func() Command { return &JudgeFeedback{} },
		func() Command { return &RemoveFeedback{} },
	)
}

// MaxFeedbackLen is the longest feedback, in characters.
const MaxFeedbackLen = 2000

func checkFeedback(v string) error {
	if len(v) > MaxFeedbackLen && utf8.RuneCountInString(v) > MaxFeedbackLen {
		return invalidf("feedback is longer than %d characters", MaxFeedbackLen)
	}
	return nil
}

// JudgeFeedback sets the judge's feedback on a project it judged (PUT
// /api/judge/feedback/:id).
type JudgeFeedback struct {
	Judge    ID     `json:"judge"`
	Project  ID     `json:"project"`
	Feedback string `json:"feedback"`
}

// Kind implements Command.
func (*JudgeFeedback) Kind() string { return "judging.feedback" }

func (cmd *JudgeFeedback) apply(s *State, c *Ctx) (any, error) {
	j, err := s.judgeFor(cmd.Judge)
	if err != nil {
		return nil, err
	}
	if err := checkFeedback(cmd.Feedback); err != nil {
		return nil, err
	}
	i := j.seenIndex(cmd.Project)
	if i < 0 {
		return nil, notFoundf("project not among the judge's judged projects")
	}
	s.ownSeen(j)
	j.SeenProjects[i].Feedback = cmd.Feedback
	j.LastActivity = c.Time
	c.logText("edited feedback for the team of project ", j.SeenProjects[i].Name)
	c.changed("judge", j.ID)
	return nil, nil
}

// RemoveFeedback removes one judge's feedback on one project before it goes out
// (DELETE /api/admin/feedback/:judge/:project).
type RemoveFeedback struct {
	Judge   ID `json:"judge"`
	Project ID `json:"project"`
}

// Kind implements Command.
func (*RemoveFeedback) Kind() string { return "feedback.remove" }

func (cmd *RemoveFeedback) apply(s *State, c *Ctx) (any, error) {
	j, ok := s.Judges[cmd.Judge]
	if !ok {
		return nil, notFoundf("judge not found")
	}
	i := j.seenIndex(cmd.Project)
	if i < 0 || j.SeenProjects[i].Feedback == "" {
		return nil, notFoundf("no feedback of this judge on this project")
	}
	s.ownSeen(j)
	j.SeenProjects[i].Feedback = ""
	c.logf("removed the feedback of judge %s on project %s (table %d)", j.Name, j.SeenProjects[i].Name, j.SeenProjects[i].Location)
	c.changed("judge", j.ID)
	return nil, nil
}

// FeedbackItem is one judge's feedback on one project (GET /api/admin/feedback).
type FeedbackItem struct {
	JudgeID     ID     `json:"judge_id"`
	JudgeName   string `json:"judge_name"`
	ProjectID   ID     `json:"project_id"`
	ProjectName string `json:"project_name"`
	Location    int    `json:"location"`
	Feedback    string `json:"feedback"`
}

// FeedbackItems lists every feedback item of projects that exist, by table, then by
// the judges' creation order.
func (s *State) FeedbackItems() []FeedbackItem {
	out := []FeedbackItem{}
	for _, j := range s.JudgesInOrder() {
		for _, sp := range j.SeenProjects {
			p, ok := s.Projects[sp.ProjectID]
			if sp.Feedback == "" || !ok {
				continue
			}
			out = append(out, FeedbackItem{JudgeID: j.ID, JudgeName: j.Name, ProjectID: p.ID, ProjectName: p.Name,
				Location: p.Location, Feedback: sp.Feedback})
		}
	}
	slices.SortStableFunc(out, func(a, b FeedbackItem) int { return cmp.Compare(a.Location, b.Location) })
	return out
}

// feedbackOn lists the feedback judges wrote on project id, in text order (a stable
// order that says nothing of who visited when).
func (s *State) feedbackOn(id ID) []string {
	out := []string{}
	for _, j := range s.Judges {
		if i := j.seenIndex(id); i >= 0 && j.SeenProjects[i].Feedback != "" {
			out = append(out, j.SeenProjects[i].Feedback)
		}
	}
	slices.Sort(out)
	return out
}
