package engine

import (
	"sort"
	"sync/atomic"
)

// State is everything Podium knows: judges, projects, flags, options, clock, audit log,
// sessions and public content. Only the engine's single writer mutates it; readers look
// at it under the engine's read lock (see Engine.Read).
//
// Exported fields are the snapshot; unexported fields are indexes rebuilt by reindex.
type State struct {
	// Applied counts the commands applied so far; it is also the journal sequence number
	// of the last applied command.
	Applied uint64 `json:"applied"`
	// LastTime is the time (ms) of the last applied command.
	LastTime int64 `json:"last_time"`

	OptionsID ID      `json:"options_id"`
	Options   Options `json:"options"`

	Judges     map[ID]*Judge   `json:"judges"`
	JudgeOrder []ID            `json:"judge_order"` // creation order
	Projects   map[ID]*Project `json:"projects"`
	Flags      []Flag          `json:"flags"` // in time order

	// Log holds the audit log lines, oldest first (the newest MaxLogLines are kept).
	Log []string `json:"log"`

	// AdminSessions maps the SHA-256 (hex) of an admin session token to its expiry (ms).
	AdminSessions map[string]int64 `json:"admin_sessions"`

	// Content is the public content of docs/behaviour.md#public-content-api.
	Content Content `json:"content"`

	// Mail holds the login-code mails by judge and the team-link mails by project
	// (mail.go): pending ones survive restarts and failovers, sent ones are never sent
	// again.
	Mail map[ID]LoginMail `json:"mail"`

	// Conflicts lists the conflicts of interest, oldest first (conflicts.go); Undo holds
	// each judge's last finish, which it may take back for a while (undo.go); Keys holds
	// the answers kept for judge writes with an Idempotency-Key, oldest first
	// (idempotency.go). All of docs/behaviour.md#on-the-floor.
	Conflicts []Conflict       `json:"conflicts,omitempty"`
	Undo      map[ID]UndoPoint `json:"undo,omitempty"`
	Keys      []KeptAnswer     `json:"keys,omitempty"`

	// FocusNeed is the rule of focus mode (docs/behaviour.md#focus-assignment):
	// FocusNeedFree for an event begun since coverage ends at the free candidates,
	// FocusNeedBoundary for one begun since the "podium" need leans on the edge of the top,
	// FocusNeedCoverage for one begun since it carries coverage; 0 (absent) for one begun
	// before, which keeps the earlier need, so its journal replays to the same
	// assignments, until assignment_goal is set (then FocusNeedCoverage).
	FocusNeed int `json:"focus_need,omitempty"`

	// RatingInputs counts the changes to what the ratings are fitted from
	// (RatingInputsVersion) and RatedAt is that count as the stored ratings saw it
	// (SetRatings.Version): equal, the ratings are current, and a restart has nothing
	// to refit (docs/behaviour.md#ratings). Snapshots carry both, so the count goes on
	// across restarts on the journal's versions; one of an earlier build has neither
	// (ratingsCounted false: the count starts again at its restore).
	RatingInputs uint64 `json:"rating_inputs,omitempty"`
	RatedAt      uint64 `json:"rated_at,omitempty"`

	// Prizes are the event's prizes and Outcome the winners published for them
	// (docs/behaviour.md#after-judging).
	Prizes  []Prize  `json:"prizes,omitempty"`
	Outcome *Outcome `json:"outcome,omitempty"`

	// TrackFits holds the last fit of each track's prize order, journaled with the
	// ratings (docs/behaviour.md#track-prizes); TrackRule is the track judges' rule of
	// docs/behaviour.md#judging-flow step 6: TrackRuleCover for an event begun since
	// they cover their track, 0 (absent) for one begun before, which keeps the next
	// table up so that its journal replays to the same assignments.
	TrackFits []TrackFit `json:"track_fits,omitempty"`
	TrackRule int        `json:"track_rule,omitempty"`

	codeIndex   map[string]ID  // login code -> judge
	tokenIndex  map[string]ID  // token hash -> judge
	tokens      *tokenMirror   // the engine's lock-free copy of tokenIndex (tokens.go); nil in copies
	captures    *atomic.Uint64 // the engine's count of captures (Judge.seenOwn); nil in copies
	locIndex    map[int]ID     // table number -> project
	maxLoc      int            // highest key of locIndex when maxLocOK (see maxLocation)
	maxLocOK    bool           // maxLoc is up to date
	jx          *judgingData   // judging flow's derived data (judging_index.go)
	publicAt    uint64         // version of the public project listing (see PublicListChangedAt)
	logBuf      []byte         // scratch for building audit lines (Ctx.log)
	lines       *lineWriter    // a replay's audit lines being written (log_replay.go)
	keys        *keyIndex      // finds Keys by judge and key (idempotency.go)
	conflicted  map[ID][]ID    // judge -> projects it has a conflict with (conflicts.go)
	teamIndex   map[string]ID  // SHA-256 (hex) of a team token -> project (team.go)
	pendingFit  *SetRatings    // a replayed fit that waits (ratings_replay.go)
	pendingTies *tieWatch      // the watch of its tied projects (nil: none tie)
	// ratingsCounted: RatingInputs and RatedAt count on one base (a new state, or a
	// snapshot that carries them), so RatingsCurrent can compare them.
	ratingsCounted bool
}

// PublicListChangedAt is the public project listing's version: it grows whenever a
// command changes the listing (every such command emits an "expo" event) and starts at
// Applied when a state is loaded. Caches of the encoded listing key on it.
func (s *State) PublicListChangedAt() uint64 { return s.publicAt }

// MaxLogLines is how many audit log lines are kept.
const MaxLogLines = 50000

// logTrimAt is the length at which the audit log is cut back to MaxLogLines (every
// MaxLogLines/5 lines, so that trimming is not a copy per line).
const logTrimAt = MaxLogLines + MaxLogLines/5

// Judge is a person who judges projects.
type Judge struct {
	ID    ID     `json:"id"`
	Code  string `json:"code"`
	Name  string `json:"name"`
	Email string `json:"email"`
	Notes string `json:"notes"`
	Track string `json:"track"`
	// TokenHash is the SHA-256 (hex) of the judge's current session token ("" = none).
	TokenHash    string        `json:"token_hash"`
	Active       bool          `json:"active"`
	ReadWelcome  bool          `json:"read_welcome"`
	Group        int           `json:"group"`
	GroupSeen    int           `json:"group_seen"`
	Current      ID            `json:"current"`       // zero = none
	CurrentSince int64         `json:"current_since"` // ms, when Current was assigned
	LastLocation int           `json:"last_location"`
	Seen         int           `json:"seen"`
	SeenProjects []SeenProject `json:"seen_projects"`
	// Skipped holds the projects this judge skipped; the value is true for a busy skip
	// (which only lasts until the judge next finishes a project).
	Skipped map[ID]bool `json:"skipped"`
	// Flagged lists, in order, the projects this judge skipped with a reason other than
	// busy or absent (docs/behaviour.md#resources; Jury's client counts them as seen).
	Flagged      []ID  `json:"flagged"`
	Rankings     []ID  `json:"rankings"`
	LastActivity int64 `json:"last_activity"`
	// Reliability is the fitted weight of the judge's rankings (docs/behaviour.md#ratings; 0 = not
	// fitted yet, reported as 1).
	Reliability float64 `json:"reliability,omitempty"`
	// Compared is how many of the judge's ranking outcomes (a project ranked above
	// another it saw) fall on a pair the other judges' consensus is sure of, and
	// Disagreement the share of them that consensus orders the other way, as of the
	// last fit (docs/behaviour.md#judges-against-the-consensus).
	Disagreement float64 `json:"disagreement,omitempty"`
	Compared     int     `json:"compared,omitempty"`
	// Upcoming is the upcoming list of the judge's latest `next` that answered a
	// project: the projects it may visit offline without being assigned them
	// (docs/behaviour.md#offered-projects-only). Replaced whole, never changed in place.
	Upcoming []ID `json:"upcoming,omitempty"`

	// seenOwn is 1 + the engine's capture count when the writer last gave the judge a
	// private SeenProjects array (State.ownSeen); while no capture followed, the array
	// is shared with none and may be changed in place. 0: it may be shared.
	seenOwn uint64
	// seenBits is a filter of SeenProjects (judging_seen.go), valid while seenBitsOK.
	seenBits   [2]uint64
	seenBitsOK bool
}

// SeenProject is a project a judge finished, with the judge's notes and star.
type SeenProject struct {
	ProjectID   ID     `json:"project_id"`
	Starred     bool   `json:"starred"`
	Notes       string `json:"notes"`
	Name        string `json:"name"`
	Location    int    `json:"location"`
	Description string `json:"description"`
	// Feedback is what the judge wrote for the team, shared with it after the results
	// when the organiser chooses (docs/behaviour.md#after-judging); Notes stay private.
	Feedback string `json:"feedback,omitempty"`
}

// Project is a team's entry at a table.
type Project struct {
	ID            ID             `json:"id"`
	Name          string         `json:"name"`
	Description   string         `json:"description"`
	URL           string         `json:"url"`
	TryLink       string         `json:"try_link"`
	VideoLink     string         `json:"video_link"`
	ChallengeList []string       `json:"challenge_list"`
	Location      int            `json:"location"`
	Group         int            `json:"group"`
	Seen          int            `json:"seen"`
	TrackSeen     map[string]int `json:"track_seen"`
	Active        bool           `json:"active"`
	Prioritized   bool           `json:"prioritized"`
	LastActivity  int64          `json:"last_activity"`
	Created       uint64         `json:"created"` // Applied value of the creating command
	// Fitted ratings (docs/behaviour.md#ratings), set by the journaled ratings command only.
	Ratings ProjectRating `json:"ratings"`
	// ContactEmails are the team's addresses, for its team link (docs/behaviour.md#after-judging).
	ContactEmails []string `json:"contact_emails,omitempty"`
	// TeamToken is the secret of the team's page /team/<token> ("" until issued).
	TeamToken string `json:"team_token,omitempty"`
}

// Flag records a skip with its reason.
type Flag struct {
	ID              ID     `json:"id"`
	ProjectID       ID     `json:"project_id"`
	JudgeID         ID     `json:"judge_id"`
	Time            int64  `json:"time"`
	ProjectName     string `json:"project_name"`
	ProjectLocation int    `json:"project_location"`
	JudgeName       string `json:"judge_name"`
	Reason          string `json:"reason"`
}

// Clock is the judging clock. Elapsed time is PauseTime-StartTime while paused and
// now-StartTime while running (all ms).
type Clock struct {
	StartTime int64 `json:"start_time"`
	PauseTime int64 `json:"pause_time"`
	Running   bool  `json:"running"`
}

// Elapsed returns the running milliseconds at time now.
func (c Clock) Elapsed(now int64) int64 {
	if c.Running {
		if now < c.StartTime {
			return 0
		}
		return now - c.StartTime
	}
	return c.PauseTime - c.StartTime
}

// Options are the event's settings (docs/behaviour.md#resources).
type Options struct {
	ID             ID                `json:"id"`
	Ref            int               `json:"ref"`
	Clock          Clock             `json:"clock"`
	JudgingTimer   int               `json:"judging_timer"`
	MinViews       int               `json:"min_views"`
	ClockSync      bool              `json:"clock_sync"`
	Deliberation   bool              `json:"deliberation"`
	JudgeTracks    bool              `json:"judge_tracks"`
	Tracks         []string          `json:"tracks"`
	TrackViews     []int             `json:"track_views"`
	MultiGroup     bool              `json:"multi_group"`
	NumGroups      int               `json:"num_groups"`
	GroupSizes     []int             `json:"group_sizes"`
	SwitchingMode  string            `json:"switching_mode"`
	AutoSwitchProp float64           `json:"auto_switch_prop"`
	ManualSwitches int               `json:"manual_switches"`
	QRCode         string            `json:"qr_code"`
	TrackQRCodes   map[string]string `json:"track_qr_codes"`
	GroupNames     []string          `json:"group_names"`
	IgnoreTracks   []string          `json:"ignore_tracks"`
	MaxReqPerMin   int               `json:"max_req_per_min"`
	BlockReqs      bool              `json:"block_reqs"`
	// EventName is the event's display name (page titles, the expo header, the
	// login-code email subject).
	EventName string `json:"event_name"`
	// AssignmentMode is "focus" (default) or "spread" (docs/behaviour.md#judging-flow step 9); FocusTop is the
	// size of the top whose membership focus mode sharpens and p_top is about (docs/behaviour.md#ratings).
	AssignmentMode string `json:"assignment_mode"`
	FocusTop       int    `json:"focus_top"`
	// AssignmentGoal is what focus mode sharpens: "podium" (default; the top) or
	// "field" (the whole ranking) (docs/behaviour.md#focus-assignment). "" (absent) is
	// an event begun before the goal existed: it keeps that build's need, so its journal
	// replays to the same assignments, until the goal is set.
	AssignmentGoal string `json:"assignment_goal,omitempty"`
}

// DefaultOptions returns the options of a new event.
func DefaultOptions(id ID) Options {
	return Options{
		ID:             id,
		JudgingTimer:   300,
		MinViews:       DefaultMinViews,
		ClockSync:      true, // a restart never pauses judging by surprise (docs/behaviour.md#resources)
		Tracks:         []string{},
		TrackViews:     []int{},
		NumGroups:      3,
		GroupSizes:     []int{30, 30, 30},
		SwitchingMode:  "auto",
		AutoSwitchProp: 0.1,
		TrackQRCodes:   map[string]string{},
		GroupNames:     []string{"Group 1", "Group 2", "Group 3"},
		IgnoreTracks:   []string{},
		MaxReqPerMin:   100,
		EventName:      DefaultEventName,
		AssignmentMode: ModeFocus,
		FocusTop:       DefaultFocusTop,
		AssignmentGoal: GoalPodium,
	}
}

// DefaultMinViews is min_views of a new event: one coverage view per project before
// focus assignment sharpens the top (docs/behaviour.md#resource-details has the
// simulation behind it, and what 0 trades).
const DefaultMinViews = 1

// NewState returns the state of a brand-new server.
func NewState() *State {
	s := &State{
		Judges:        map[ID]*Judge{},
		JudgeOrder:    []ID{},
		Projects:      map[ID]*Project{},
		Flags:         []Flag{},
		Log:           []string{},
		AdminSessions: map[string]int64{},
		Content:       newContent(),
		Mail:          map[ID]LoginMail{},
	}
	// The options id of a new server is fixed so that two fresh servers agree.
	s.OptionsID = ID{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
	s.Options = DefaultOptions(s.OptionsID)
	s.FocusNeed = FocusNeedFree
	s.TrackRule = TrackRuleCover
	s.ratingsCounted = true
	s.reindex()
	return s
}

// reindex rebuilds the unexported indexes from the exported fields and fills in nil
// collections (after a snapshot restore).
func (s *State) reindex() {
	if s.Judges == nil {
		s.Judges = map[ID]*Judge{}
	}
	if s.JudgeOrder == nil {
		s.JudgeOrder = []ID{}
	}
	if s.Projects == nil {
		s.Projects = map[ID]*Project{}
	}
	if s.Flags == nil {
		s.Flags = []Flag{}
	}
	if s.Log == nil {
		s.Log = []string{}
	}
	if s.AdminSessions == nil {
		s.AdminSessions = map[string]int64{}
	}
	if s.Mail == nil {
		s.Mail = map[ID]LoginMail{} // a snapshot from before mails were in the state
	}
	s.Content.fill()
	if s.Options.EventName == "" {
		s.Options.EventName = DefaultEventName // a snapshot from before event_name
	}
	s.publicAt = s.Applied
	if s.Options.AssignmentMode == "" { // a snapshot from before focus mode
		s.Options.AssignmentMode = ModeFocus
	}
	if s.Options.FocusTop == 0 {
		s.Options.FocusTop = DefaultFocusTop
	}
	s.codeIndex = make(map[string]ID, len(s.Judges))
	s.tokenIndex = make(map[string]ID, len(s.Judges))
	for id, j := range s.Judges {
		if j.Skipped == nil {
			j.Skipped = map[ID]bool{}
		}
		if j.SeenProjects == nil {
			j.SeenProjects = []SeenProject{}
		}
		if j.Rankings == nil {
			j.Rankings = []ID{}
		}
		if j.Flagged == nil {
			j.Flagged = s.flaggedFromFlags(j)
		}
		s.codeIndex[j.Code] = id
		if j.TokenHash != "" {
			s.tokenIndex[j.TokenHash] = id
		}
	}
	s.tokens.reset(s.tokenIndex)
	s.locIndex = make(map[int]ID, len(s.Projects))
	s.maxLocOK = false
	for id, p := range s.Projects {
		if p.TrackSeen == nil {
			p.TrackSeen = map[string]int{}
		}
		if p.ChallengeList == nil {
			p.ChallengeList = []string{}
		}
		s.locIndex[p.Location] = id
	}
	for _, fn := range reindexHooks {
		fn(s)
	}
}

// reindexHooks lets other files of the engine rebuild their own derived data after a
// restore (for example the judging issue's pair-comparison counts).
var reindexHooks []func(*State)

// JudgeByToken returns the judge whose session token hashes to tokenHash.
func (s *State) JudgeByToken(tokenHash string) (*Judge, bool) {
	if tokenHash == "" {
		return nil, false
	}
	id, ok := s.tokenIndex[tokenHash]
	if !ok {
		return nil, false
	}
	j, ok := s.Judges[id]
	return j, ok
}

// JudgeByCode returns the judge with the given login code.
func (s *State) JudgeByCode(code string) (*Judge, bool) {
	id, ok := s.codeIndex[code]
	if !ok {
		return nil, false
	}
	j, ok := s.Judges[id]
	return j, ok
}

// ProjectsByLocation returns all projects sorted by table number.
func (s *State) ProjectsByLocation() []*Project {
	out := make([]*Project, 0, len(s.Projects))
	for _, p := range s.Projects {
		out = append(out, p)
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Location != out[b].Location {
			return out[a].Location < out[b].Location
		}
		return out[a].Created < out[b].Created
	})
	return out
}

// JudgesInOrder returns the judges in creation order.
func (s *State) JudgesInOrder() []*Judge {
	out := make([]*Judge, 0, len(s.JudgeOrder))
	for _, id := range s.JudgeOrder {
		if j, ok := s.Judges[id]; ok {
			out = append(out, j)
		}
	}
	return out
}

// IsGeneral reports whether j judges as a general judge (no track, or tracks off).
func (s *State) IsGeneral(j *Judge) bool {
	return j.Track == "" || !s.Options.JudgeTracks
}

// GroupOfTable returns the project group of table number loc (docs/behaviour.md#admin-operations: group_sizes[i]
// consecutive tables form group i starting at table 1; tables beyond fall in the last).
func (o *Options) GroupOfTable(loc int) int {
	if o.NumGroups <= 1 || len(o.GroupSizes) == 0 {
		return 0
	}
	end := 0
	for i, n := range o.GroupSizes {
		end += n
		if loc <= end {
			return i
		}
	}
	return len(o.GroupSizes) - 1
}

// maxLocation returns the highest table number in use (0 when there are no projects).
// It is cached: creating projects one by one would otherwise scan every table each
// time (half the CPU of an admin adding projects at 10,000+). Code that moves or
// removes a table clears maxLocOK.
func (s *State) maxLocation() int {
	if s.maxLocOK {
		return s.maxLoc
	}
	m := 0
	for loc := range s.locIndex {
		if loc > m {
			m = loc
		}
	}
	s.maxLoc, s.maxLocOK = m, true
	return m
}
