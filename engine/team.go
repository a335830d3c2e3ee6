package engine

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"slices"
)

// Team pages (docs/behaviour.md#after-judging): every project has a secret link
// /team/<token> that shows the team where judging stands and, after the results, the
// winners, its prizes and (when the organiser chose) its judges' feedback. Tokens are
// made by the server (crypto-random, at least 128 bits) and carried in the command;
// they are found through their SHA-256 and compared in constant time.

func init() {
	register(
		func() Command { return &IssueTeamLinks{} },
		func() Command { return &RotateTeamLink{} },
	)
	reindexHooks = append(reindexHooks, func(s *State) { s.indexTeams() })
}

// MinTeamTokenLen is the shortest team token accepted (22 base64url characters: 128 bits).
const MinTeamTokenLen = 22

func tokenKey(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

func (s *State) indexTeams() {
	s.teamIndex = map[string]ID{}
	for id, p := range s.Projects {
		if p.TeamToken != "" {
			s.teamIndex[tokenKey(p.TeamToken)] = id
		}
	}
}

func checkTeamToken(t string) error {
	if len(t) < MinTeamTokenLen || len(t) > 128 {
		return invalidf("team token must be %d to 128 characters", MinTeamTokenLen)
	}
	for i := 0; i < len(t); i++ {
		ch := t[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
			return invalidf("team token must be URL-safe base64")
		}
	}
	return nil
}

// TeamLink gives project Project the team token Token.
type TeamLink struct {
	Project ID     `json:"project"`
	Token   string `json:"token"`
}

// IssueTeamLinks gives the listed projects that have no team link yet their token;
// projects that have one, or no longer exist, are left as they are. The result is how
// many got one.
type IssueTeamLinks struct {
	Links []TeamLink `json:"links"`
}

// Kind implements Command.
func (*IssueTeamLinks) Kind() string { return "team.issue" }

func (cmd *IssueTeamLinks) apply(s *State, c *Ctx) (any, error) {
	for _, l := range cmd.Links {
		if err := checkTeamToken(l.Token); err != nil {
			return nil, err
		}
		if _, taken := s.teamIndex[tokenKey(l.Token)]; taken {
			return nil, conflictf("team token already in use")
		}
	}
	n := 0
	for _, l := range cmd.Links {
		p, ok := s.Projects[l.Project]
		if !ok || p.TeamToken != "" {
			continue
		}
		p.TeamToken = l.Token
		s.teamIndex[tokenKey(l.Token)] = p.ID
		n++
	}
	if n > 0 {
		c.logf("made team links for %d projects", n)
	}
	return n, nil
}

// RotateTeamLink replaces a project's team link (POST /api/admin/team-links/rotate/:id):
// the old link stops working at once.
type RotateTeamLink struct {
	Project ID     `json:"project"`
	Token   string `json:"token"`
}

// Kind implements Command.
func (*RotateTeamLink) Kind() string { return "team.rotate" }

func (cmd *RotateTeamLink) apply(s *State, c *Ctx) (any, error) {
	p, ok := s.Projects[cmd.Project]
	if !ok {
		return nil, notFoundf("project not found")
	}
	if err := checkTeamToken(cmd.Token); err != nil {
		return nil, err
	}
	if _, taken := s.teamIndex[tokenKey(cmd.Token)]; taken {
		return nil, conflictf("team token already in use")
	}
	if p.TeamToken != "" {
		delete(s.teamIndex, tokenKey(p.TeamToken))
	}
	p.TeamToken = cmd.Token
	s.teamIndex[tokenKey(cmd.Token)] = p.ID
	c.logProject("replaced the team link of", p)
	return nil, nil
}

// MissingTeamLinks lists the projects without a team link, by table.
func (s *State) MissingTeamLinks() []ID {
	var out []ID
	for _, p := range s.ProjectsByLocation() {
		if p.TeamToken == "" {
			out = append(out, p.ID)
		}
	}
	return out
}

// TeamLinkRow is one project's team link (GET /api/admin/team-links and its CSV):
// Token is the secret the transport turns into the link.
type TeamLinkRow struct {
	ID            ID
	Name          string
	Location      int
	ContactEmails []string
	Token         string
	Active        bool
}

// TeamLinks lists every project's team link, by table.
func (s *State) TeamLinks() []TeamLinkRow {
	ps := s.ProjectsByLocation()
	out := make([]TeamLinkRow, 0, len(ps))
	for _, p := range ps {
		out = append(out, TeamLinkRow{ID: p.ID, Name: p.Name, Location: p.Location,
			ContactEmails: append([]string{}, p.ContactEmails...), Token: p.TeamToken, Active: p.Active})
	}
	return out
}

// projectByToken finds the project whose team token is token.
func (s *State) projectByToken(token string) (*Project, bool) {
	if token == "" {
		return nil, false
	}
	id, ok := s.teamIndex[tokenKey(token)]
	if !ok {
		return nil, false
	}
	p, ok := s.Projects[id]
	if !ok || subtle.ConstantTimeCompare([]byte(p.TeamToken), []byte(token)) != 1 {
		return nil, false
	}
	return p, true
}

// Judging states on a team page.
const (
	JudgingNotStarted = "not started"
	JudgingOn         = "in progress"
	JudgingClosed     = "closed"
)

// PrizeWon is a prize a team won.
type PrizeWon struct {
	Prize string `json:"prize"`
	Place int    `json:"place"`
}

// TeamPage is GET /api/team/:token. A hidden project's page has only its name and the
// event's; nothing of the results shows before they are published, and feedback only
// when the organiser published it with feedback.
type TeamPage struct {
	EventName string        `json:"event_name"`
	Name      string        `json:"name"`
	Location  int           `json:"location"`
	Active    bool          `json:"active"`
	Judging   string        `json:"judging"`
	Visits    int           `json:"visits"`
	Published bool          `json:"published"`
	PrizesWon []PrizeWon    `json:"prizes_won"`
	Winners   []PublicPrize `json:"winners"`
	Feedback  []string      `json:"feedback"`
	// FeedbackShared says whether the organiser shares feedback with the teams.
	FeedbackShared bool `json:"feedback_shared"`
}

// TeamPageOf builds the team page of the project whose token is token, at time now.
func (s *State) TeamPageOf(token string, now int64) (TeamPage, bool) {
	p, ok := s.projectByToken(token)
	if !ok {
		return TeamPage{}, false
	}
	out := TeamPage{EventName: s.Options.EventName, Name: p.Name, Active: p.Active, Judging: JudgingClosed,
		PrizesWon: []PrizeWon{}, Winners: []PublicPrize{}, Feedback: []string{}}
	if !p.Active {
		return out, true
	}
	out.Location = p.Location
	out.Visits = p.Seen
	for _, n := range p.TrackSeen {
		out.Visits += n
	}
	clock := s.Options.Clock
	switch {
	case s.Outcome != nil || s.Options.Deliberation:
		out.Judging = JudgingClosed
	case clock.Running || clock.Elapsed(now) > 0:
		out.Judging = JudgingOn
	default:
		out.Judging = JudgingNotStarted
	}
	if s.Outcome == nil {
		return out, true
	}
	out.Published = true
	out.Winners = s.PublicWinners().Prizes
	for _, pz := range s.Prizes {
		if i := slices.Index(s.Outcome.winnersOf(pz.ID), p.ID); i >= 0 {
			out.PrizesWon = append(out.PrizesWon, PrizeWon{Prize: pz.Name, Place: i + 1})
		}
	}
	out.FeedbackShared = s.Outcome.Feedback
	if s.Outcome.Feedback {
		out.Feedback = s.feedbackOn(p.ID)
	}
	return out, true
}
