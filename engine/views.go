package engine

// Views are copies of state shaped for the wire. They are built under the read lock and
// encoded after it is released, so they never share slices or maps with the state.

// JudgeView is a judge as GET /api/judge and GET /api/judge/list return it. Token is
// always empty: the server keeps only a hash of session tokens.
type JudgeView struct {
	ID           ID            `json:"id"`
	Token        string        `json:"token"`
	Code         string        `json:"code"`
	Name         string        `json:"name"`
	Email        string        `json:"email"`
	Active       bool          `json:"active"`
	Track        string        `json:"track"`
	Group        int           `json:"group"`
	ReadWelcome  bool          `json:"read_welcome"`
	Notes        string        `json:"notes"`
	Current      *ID           `json:"current"`
	LastLocation int           `json:"last_location"`
	Seen         int           `json:"seen"`
	GroupSeen    int           `json:"group_seen"`
	SeenProjects []SeenProject `json:"seen_projects"`
	Flagged      []ID          `json:"flagged"`
	Rankings     []ID          `json:"rankings"`
	LastActivity int64         `json:"last_activity"`
	// Reliability is on the admin's judge list only (docs/behaviour.md#ratings), not on the judge's own.
	Reliability *float64 `json:"reliability,omitempty"`
	// Disagreement and Compared are on the admin's judge list only: the judge's
	// clear-cut ranking outcomes and the share of them the other judges' consensus
	// orders the other way (docs/behaviour.md#judges-against-the-consensus; 0 and 0
	// before a fit covers the judge).
	Disagreement *float64 `json:"disagreement,omitempty"`
	Compared     *int     `json:"compared,omitempty"`
	// Mail is the login-code email's state, on the admin's judge list only (absent when
	// no mail was ever requested for the judge).
	Mail *MailView `json:"mail,omitempty"`
}

// View copies the judge for the wire.
func (j *Judge) View() JudgeView {
	v := JudgeView{
		ID: j.ID, Code: j.Code, Name: j.Name, Email: j.Email, Active: j.Active, Track: j.Track,
		Group: j.Group, ReadWelcome: j.ReadWelcome, Notes: j.Notes, LastLocation: j.LastLocation,
		Seen: j.Seen, GroupSeen: j.GroupSeen, LastActivity: j.LastActivity,
		SeenProjects: append([]SeenProject{}, j.SeenProjects...),
		Flagged:      append([]ID{}, j.Flagged...),
		Rankings:     append([]ID{}, j.Rankings...),
	}
	if !j.Current.IsZero() {
		cur := j.Current
		v.Current = &cur
	}
	return v
}

// AdminView copies the judge for the admin's judge list: View plus its reliability,
// disagreement and compared.
func (j *Judge) AdminView() JudgeView {
	v := j.View()
	r, d, c := j.ReliabilityOf(), j.Disagreement, j.Compared
	v.Reliability, v.Disagreement, v.Compared = &r, &d, &c
	return v
}

// ProjectAdminView is a project as GET /api/project/list returns it.
type ProjectAdminView struct {
	ID            ID             `json:"id"`
	Name          string         `json:"name"`
	Location      int            `json:"location"`
	Description   string         `json:"description"`
	URL           string         `json:"url"`
	TryLink       string         `json:"try_link"`
	VideoLink     string         `json:"video_link"`
	ChallengeList []string       `json:"challenge_list"`
	Seen          int            `json:"seen"`
	TrackSeen     map[string]int `json:"track_seen"`
	Score         int            `json:"score"`
	Stars         int            `json:"stars"`
	TrackStars    map[string]int `json:"track_stars"`
	Active        bool           `json:"active"`
	Prioritized   bool           `json:"prioritized"`
	Group         int            `json:"group"`
	LastActivity  int64          `json:"last_activity"`
	Rating        float64        `json:"rating"`
	RatingSD      float64        `json:"rating_sd"`
	Rank          int            `json:"rank"`
	PTop          float64        `json:"p_top"`
	ContactEmails []string       `json:"contact_emails"`
}

// AdminView copies the project with its computed scores.
func (s *State) AdminView(p *Project) ProjectAdminView {
	sc := s.CopelandOf(p.ID)
	r := p.RatingOf()
	ts := make(map[string]int, len(sc.TrackStars))
	for k, v := range sc.TrackStars {
		ts[k] = v
	}
	seen := make(map[string]int, len(p.TrackSeen))
	for k, v := range p.TrackSeen {
		seen[k] = v
	}
	return ProjectAdminView{
		ID: p.ID, Name: p.Name, Location: p.Location, Description: p.Description, URL: p.URL,
		TryLink: p.TryLink, VideoLink: p.VideoLink, ChallengeList: append([]string{}, p.ChallengeList...),
		Seen: p.Seen, TrackSeen: seen, Score: sc.Score, Stars: sc.Stars, TrackStars: ts,
		Active: p.Active, Prioritized: p.Prioritized, Group: p.Group, LastActivity: p.LastActivity,
		Rating: r.Rating, RatingSD: r.SD, Rank: r.Rank, PTop: r.PTop,
		ContactEmails: append([]string{}, p.ContactEmails...),
	}
}

// ProjectJudgeView is a project as GET /api/project/:id returns it to a judge; URL and
// Group are beyond the seed's table (Jury's client links the title and names the group).
type ProjectJudgeView struct {
	ID            ID       `json:"id"`
	Name          string   `json:"name"`
	Location      int      `json:"location"`
	Description   string   `json:"description"`
	URL           string   `json:"url"`
	TryLink       string   `json:"try_link"`
	VideoLink     string   `json:"video_link"`
	ChallengeList []string `json:"challenge_list"`
	Seen          int      `json:"seen"`
	Votes         int      `json:"votes"`
	Mu            float64  `json:"mu"`
	SigmaSq       float64  `json:"sigma_sq"`
	Active        bool     `json:"active"`
	Prioritized   bool     `json:"prioritized"`
	Group         int      `json:"group"`
	LastActivity  int64    `json:"last_activity"`
}

// JudgeView copies the project with its Crowd-BT values.
func (s *State) JudgeView(p *Project) ProjectJudgeView {
	sc := s.ScoreOf(p.ID)
	return ProjectJudgeView{
		ID: p.ID, Name: p.Name, Location: p.Location, Description: p.Description, URL: p.URL,
		TryLink: p.TryLink, VideoLink: p.VideoLink, ChallengeList: append([]string{}, p.ChallengeList...),
		Seen: p.Seen, Votes: sc.Votes, Mu: sc.Mu, SigmaSq: sc.SigmaSq, Active: p.Active,
		Prioritized: p.Prioritized, Group: p.Group, LastActivity: p.LastActivity,
	}
}

// PublicProject is a project as the public expo listing shows it. ID is an addition to
// the seed's fields so that expo screens can match "remove" events.
type PublicProject struct {
	ID            ID       `json:"id"`
	Name          string   `json:"name"`
	Location      int      `json:"location"`
	Description   string   `json:"description"`
	URL           string   `json:"url"`
	TryLink       string   `json:"try_link"`
	VideoLink     string   `json:"video_link"`
	ChallengeList []string `json:"challenge_list"`
	Group         int      `json:"group"`
}

// Public copies the project for the public listing.
func (p *Project) Public() PublicProject {
	return PublicProject{
		ID: p.ID, Name: p.Name, Location: p.Location, Description: p.Description, URL: p.URL,
		TryLink: p.TryLink, VideoLink: p.VideoLink, ChallengeList: append([]string{}, p.ChallengeList...),
		Group: p.Group,
	}
}

// OptionsView returns a deep copy of the options.
func (s *State) OptionsView() Options {
	o := s.Options
	o.Tracks = append([]string{}, o.Tracks...)
	o.TrackViews = append([]int{}, o.TrackViews...)
	o.GroupSizes = append([]int{}, o.GroupSizes...)
	o.GroupNames = append([]string{}, o.GroupNames...)
	o.IgnoreTracks = append([]string{}, o.IgnoreTracks...)
	o.TrackQRCodes = make(map[string]string, len(s.Options.TrackQRCodes))
	for k, v := range s.Options.TrackQRCodes {
		o.TrackQRCodes[k] = v
	}
	return o
}

// GroupInfoView returns the group names and whether groups are on.
func (s *State) GroupInfoView() GroupInfo {
	return GroupInfo{Names: append([]string{}, s.Options.GroupNames...), Enabled: s.Options.MultiGroup, EventName: s.Options.EventName}
}
