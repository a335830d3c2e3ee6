package engine

// Podium's ratings (docs/behaviour.md#ratings): the state side. The fit itself (package engine/fit) runs
// outside the writer on a RatingInput copied under the read lock; its result comes back
// as a journaled SetRatings command, so assignments that use it replay exactly.

import (
	"cmp"
	"math"
	"slices"
)

func init() {
	register(func() Command { return &SetRatings{} })
}

// RatingPriorSD is the prior sd of a project's rating (logit units): the fit's prior,
// and the sd a project shows until a fit covers it.
const RatingPriorSD = 1.5

// Assignment modes of docs/behaviour.md#judging-flow step 9.
const (
	ModeFocus  = "focus"
	ModeSpread = "spread"
)

// Assignment goals of docs/behaviour.md#focus-assignment: what focus mode sharpens.
const (
	GoalPodium = "podium"
	GoalField  = "field"
)

// ProjectRating is a project's fitted rating (docs/behaviour.md#ratings). PTop3 is the probability of a
// place in the top 3, which focus assignment uses besides PTop.
type ProjectRating struct {
	Rating float64 `json:"rating"`
	SD     float64 `json:"sd"`
	PTop   float64 `json:"p_top"`
	PTop3  float64 `json:"p_top3"`
	Rank   int     `json:"rank"`
}

// SetRatings stores a fit's result (written by the server's background fitter, never by
// a client). Projects and judges are parallel to their value lists; ids that no longer
// exist are ignored, projects the fit did not cover get the prior (rating 0, sd of the
// prior, p_top 0) until the next fit.
type SetRatings struct {
	Version     uint64    `json:"version"` // RatingInputs version the fit saw
	Projects    []ID      `json:"projects"`
	Rating      []float64 `json:"rating"`
	SD          []float64 `json:"sd"`
	PTop        []float64 `json:"p_top"`
	PTop3       []float64 `json:"p_top3"`
	Judges      []ID      `json:"judges"`
	Reliability []float64 `json:"reliability"`
	// Disagreement and Compared, parallel to Judges when set (a journal from before
	// them has neither): see Judge.Disagreement.
	Disagreement []float64 `json:"disagreement,omitempty"`
	Compared     []int     `json:"compared,omitempty"`
	// Tracks holds the fit of every track's prize order (docs/behaviour.md#track-prizes);
	// a fit that carries any replaces the stored ones whole, one without any (a journal
	// from before them) leaves them.
	Tracks []TrackFit `json:"tracks,omitempty"`
}

// Kind implements Command.
func (*SetRatings) Kind() string { return "ratings.set" }

func (cmd *SetRatings) apply(s *State, c *Ctx) (any, error) {
	n := len(cmd.Projects)
	if len(cmd.Rating) != n || len(cmd.SD) != n || len(cmd.PTop) != n || len(cmd.PTop3) != n || len(cmd.Reliability) != len(cmd.Judges) {
		return nil, invalidf("ratings: value lists differ in length")
	}
	if cmd.agrees() && (len(cmd.Disagreement) != len(cmd.Judges) || len(cmd.Compared) != len(cmd.Judges)) {
		return nil, invalidf("ratings: value lists differ in length")
	}
	for _, vs := range [][]float64{cmd.Rating, cmd.SD, cmd.PTop, cmd.PTop3, cmd.Reliability, cmd.Disagreement} {
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, invalidf("ratings: value not finite")
			}
		}
	}
	for i := range cmd.Tracks {
		if err := cmd.Tracks[i].validate(); err != nil {
			return nil, err
		}
	}
	if len(cmd.Tracks) > 0 {
		// Stored at once, also in a replay: nothing derived follows from it.
		s.TrackFits = cmd.Tracks
	}
	if old := s.pendingFit; old != nil && !cmd.coversJudges(old) {
		s.rateJudges(old) // the waiting fit's judges' part, which this one does not replace whole
	}
	s.RatedAt = cmd.Version
	s.pendingFit, s.pendingTies = nil, nil
	wait := false
	if c.quiet {
		// Replaying: the fit waits until something reads it (ratings_replay.go).
		s.pendingTies, wait = s.tiesOf(cmd)
	}
	if wait {
		s.pendingFit = cmd
		if x := s.jd(); x.current(s) {
			x.keep(s) // as live: the index stays current; its focus needs wait for the flush
		}
	} else {
		s.rateJudges(cmd)
		s.setProjectRatings(cmd)
	}
	c.logf("ratings updated (%d projects, %d judges)", n, len(cmd.Judges))
	c.changed("ratings")
	return nil, nil
}

// rankProjects sets Rank: active projects by rating, then Copeland score, then table;
// hidden projects 0. The Copeland scores are brought up to date only when two ratings
// tie (after a fit they almost never do, and refreshing them after a flood of views is
// most of this function's cost). A fit that waited (ratings_replay.go) passes the
// scores its tied projects had when it was applied.
func (s *State) rankProjects(tieScores map[ID]int) {
	// Sorted by keys copied out of the projects: a comparison then reads no project
	// (docs/behaviour.md#recovery-at-memory-speed: a replayed fit ranks 10,000 of them).
	type key struct {
		rating float64
		loc    int
		p      *Project
	}
	keys := make([]key, 0, len(s.Projects))
	for _, p := range s.Projects {
		p.Ratings.Rank = 0
		if p.Active {
			keys = append(keys, key{p.Ratings.Rating, p.Location, p})
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(b.rating, a.rating); c != 0 {
			return c
		}
		return cmp.Compare(a.loc, b.loc)
	})
	list := make([]*Project, len(keys))
	for i := range keys {
		list[i] = keys[i].p
	}
	byRating := func(a, b *Project) int { return cmp.Compare(b.Ratings.Rating, a.Ratings.Rating) }
	var tied []ID // past maxTiedAlone only that there are ties matters (tiedScores)
	for i := 1; i < len(list) && len(tied) <= maxTiedAlone; i++ {
		if byRating(list[i-1], list[i]) == 0 {
			if len(tied) == 0 || tied[len(tied)-1] != list[i-1].ID {
				tied = append(tied, list[i-1].ID)
			}
			tied = append(tied, list[i].ID)
		}
	}
	if len(tied) > 0 {
		byScore := func(score map[ID]int) {
			slices.SortFunc(list, func(a, b *Project) int {
				if c := byRating(a, b); c != 0 {
					return c
				}
				if c := cmp.Compare(score[b.ID], score[a.ID]); c != 0 {
					return c
				}
				return cmp.Compare(a.Location, b.Location)
			})
		}
		if tieScores != nil {
			byScore(tieScores)
		} else {
			s.tiedScores(tied, byScore)
		}
	}
	for i, p := range list {
		p.Ratings.Rank = i + 1
	}
}

// RatingOf returns what the wire shows of a project's rating: rank 0 when hidden.
func (p *Project) RatingOf() ProjectRating {
	r := p.Ratings
	if !p.Active {
		r.Rank = 0
	}
	if r.SD == 0 {
		r.SD = RatingPriorSD
	}
	return r
}

// ReliabilityOf returns the judge's fitted reliability, 1 before any fit.
func (j *Judge) ReliabilityOf() float64 {
	if j.Reliability == 0 {
		return 1
	}
	return j.Reliability
}

// RatingInputsVersion counts changes to what the ratings are fitted from (views,
// rankings, stars, projects added, deleted, hidden or shown, hidden judges, tracks).
// The background fitter refits when it moved.
func (s *State) RatingInputsVersion() uint64 {
	c := &s.jd().scores
	c.mu.Lock()
	defer c.mu.Unlock()
	return *c.inputs
}

// RatingsCurrent says whether the stored ratings saw every change to their inputs
// (RatedAt equals RatingInputs); false when they did not, or when the state cannot
// say (restored from a snapshot of an earlier build: docs/behaviour.md#ratings).
func (s *State) RatingsCurrent() bool {
	return s.ratingsCounted && s.RatedAt == s.RatingInputsVersion()
}

// RatingInput is what a fit needs, copied from the state under the read lock.
type RatingInput struct {
	Version  uint64
	FocusTop int
	Projects []ID      // active projects, in table order
	Prev     []float64 // their last ratings (a warm start)
	PrevPTop []float64 // their last p_top
	Judges   []ID      // active general judges with at least two judged active projects
	PrevRel  []float64 // their last reliabilities (0 = none)
	// Per judge i, Seq[Off[i]:Off[i+1]] are its judged projects as indices into
	// Projects: first its ranking (NRanked[i] of them, best first), then the unranked
	// ones in the order judged. Star[k] says whether Seq[k] is starred.
	Off     []int32
	NRanked []int32
	Seq     []int32
	Star    []bool
	// Tracks are the inputs of each track's prize order, in options.tracks order
	// (docs/behaviour.md#track-prizes).
	Tracks []TrackInput
}

// RatingInput copies the fit's inputs (call it under the read lock).
func (s *State) RatingInput() *RatingInput {
	in := &RatingInput{FocusTop: s.Options.FocusTop, Off: []int32{0}}
	in.Version = s.RatingInputsVersion()
	idx := make(map[ID]int32, len(s.Projects))
	byLoc := s.ProjectsByLocation()
	for _, p := range byLoc {
		if !p.Active {
			continue
		}
		idx[p.ID] = int32(len(in.Projects))
		in.Projects = append(in.Projects, p.ID)
		in.Prev = append(in.Prev, p.Ratings.Rating)
		in.PrevPTop = append(in.PrevPTop, p.Ratings.PTop)
	}
	for _, id := range s.JudgeOrder {
		j, ok := s.Judges[id]
		if !ok || !j.Active || !s.IsGeneral(j) || len(j.SeenProjects) < 2 {
			continue
		}
		in.addJudge(j, idx)
	}
	for _, t := range s.Options.Tracks {
		in.Tracks = append(in.Tracks, s.trackInput(t, byLoc, idx))
	}
	return in
}

// addJudge appends judge j's list to in (its judged projects that idx numbers: its
// ranking, then the unranked ones in the order judged, with their stars), unless it
// holds fewer than two.
func (in *RatingInput) addJudge(j *Judge, idx map[ID]int32) {
	start := len(in.Seq)
	ranked := make(map[ID]bool, len(j.Rankings))
	for _, pid := range j.Rankings {
		if k, ok := idx[pid]; ok {
			ranked[pid] = true
			in.Seq = append(in.Seq, k)
			in.Star = append(in.Star, false)
		}
	}
	nr := len(in.Seq) - start
	for _, sp := range j.SeenProjects {
		if k, ok := idx[sp.ProjectID]; ok && !ranked[sp.ProjectID] {
			in.Seq = append(in.Seq, k)
			in.Star = append(in.Star, false)
		}
	}
	if len(in.Seq)-start < 2 {
		in.Seq, in.Star = in.Seq[:start], in.Star[:start]
		return
	}
	starred := make(map[ID]bool)
	for _, sp := range j.SeenProjects {
		if sp.Starred {
			starred[sp.ProjectID] = true
		}
	}
	for k := start; k < len(in.Seq); k++ {
		in.Star[k] = starred[in.Projects[in.Seq[k]]]
	}
	in.Judges = append(in.Judges, j.ID)
	in.PrevRel = append(in.PrevRel, j.Reliability)
	in.NRanked = append(in.NRanked, int32(nr))
	in.Off = append(in.Off, int32(len(in.Seq)))
}

// Changes says whether storing fit (a fit of in) would change the stored ratings by
// more than the fit's own precision: some rating, p_top or reliability moves by over
// 1e-3 (a project or judge never fitted always does). The background fitter asks it
// after a start, when it cannot know whether the journaled ratings saw every change.
func (in *RatingInput) Changes(fit *SetRatings) bool {
	const eps = 1e-3
	if len(fit.Rating) != len(in.Prev) || len(fit.Reliability) != len(in.PrevRel) || len(in.PrevPTop) != len(in.Prev) {
		return true
	}
	for i, r := range fit.Rating {
		if math.Abs(r-in.Prev[i]) > eps || math.Abs(fit.PTop[i]-in.PrevPTop[i]) > eps {
			return true
		}
	}
	for i, r := range fit.Reliability {
		if math.Abs(r-in.PrevRel[i]) > eps {
			return true
		}
	}
	if len(fit.Tracks) != len(in.Tracks) {
		return true
	}
	for i, t := range fit.Tracks {
		prev := in.Tracks[i].In.Prev
		if len(t.Rating) != len(prev) {
			return true
		}
		for k, r := range t.Rating {
			if math.Abs(r-prev[k]) > eps {
				return true
			}
		}
	}
	return false
}

// ResultEntry is one project in GET /api/admin/results.
type ResultEntry struct {
	ID       ID      `json:"id"`
	Name     string  `json:"name"`
	Location int     `json:"location"`
	Rank     int     `json:"rank"`
	Rating   float64 `json:"rating"`
	RatingSD float64 `json:"rating_sd"`
	PTop     float64 `json:"p_top"`
	PTop3    float64 `json:"p_top3"`
	Score    int     `json:"score"`
	Stars    int     `json:"stars"`
	Seen     int     `json:"seen"`
	// TrackStars is set in the per-track lists only: the project's stars from that
	// track's judges.
	TrackStars *int `json:"track_stars,omitempty"`
	// TrackRating and TrackRatingSD (per-track lists only) are the project's rating in
	// the track's prize order, fitted from the track's judges, and its sd; PTrack is
	// the probability of a place in the track prize's top 3
	// (docs/behaviour.md#track-prizes).
	TrackRating   *float64 `json:"track_rating,omitempty"`
	TrackRatingSD *float64 `json:"track_rating_sd,omitempty"`
	PTrack        *float64 `json:"p_track,omitempty"`
}

// ResultsView is GET /api/admin/results (docs/behaviour.md#ratings) plus, for the dashboard, how settled
// the top is: Stable3 and Stable10 estimate the probability that the current top 3
// (top focus_top) are exactly the true top 3 (as a set), from the projects' p_top3 and
// p_top; FocusTop is the size of that top.
type ResultsView struct {
	Projects []ResultEntry            `json:"projects"`
	Tracks   map[string][]ResultEntry `json:"tracks"`
	FocusTop int                      `json:"focus_top"`
	Stable3  float64                  `json:"stable_top3"`
	StableK  float64                  `json:"stable_top"`
}

// activeByRank lists the active projects by rank, then table.
func (s *State) activeByRank() []*Project {
	var ps []*Project
	for _, p := range s.Projects {
		if p.Active {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b *Project) int {
		if c := cmp.Compare(a.Ratings.Rank, b.Ratings.Rank); c != 0 {
			return c
		}
		return cmp.Compare(a.Location, b.Location)
	})
	return ps
}

// Results builds the results view.
func (s *State) Results() ResultsView {
	out := ResultsView{Projects: []ResultEntry{}, Tracks: map[string][]ResultEntry{}, FocusTop: s.Options.FocusTop}
	ps := s.activeByRank()
	entry := func(p *Project, sc Score) ResultEntry {
		r := p.RatingOf()
		return ResultEntry{ID: p.ID, Name: p.Name, Location: p.Location, Rank: r.Rank, Rating: r.Rating,
			RatingSD: r.SD, PTop: r.PTop, PTop3: r.PTop3, Score: sc.Score, Stars: sc.Stars, Seen: p.Seen}
	}
	scores := make(map[ID]Score, len(ps))
	out.Stable3, out.StableK = 1, 1
	for i, p := range ps {
		sc := s.CopelandOf(p.ID)
		scores[p.ID] = sc
		out.Projects = append(out.Projects, entry(p, sc))
		// Settledness: every project in the top keeps its place, every other stays out.
		if i < 3 {
			out.Stable3 *= p.Ratings.PTop3
		} else {
			out.Stable3 *= 1 - p.Ratings.PTop3
		}
		if i < s.Options.FocusTop {
			out.StableK *= p.Ratings.PTop
		} else {
			out.StableK *= 1 - p.Ratings.PTop
		}
	}
	if len(ps) == 0 {
		out.Stable3, out.StableK = 0, 0
	}
	for _, t := range s.Options.Tracks {
		// In the order of the track's judges (docs/behaviour.md#track-prizes).
		list := []ResultEntry{}
		rated := map[ID]trackRated{}
		for _, r := range s.trackRatings(t) {
			rated[r.p.ID] = r
		}
		for _, st := range s.PrizeOrder(t, trackPrizePlaces) {
			p := s.Projects[st.ID]
			e := entry(p, scores[p.ID])
			n := scores[p.ID].TrackStars[t]
			r, pt := rated[p.ID], st.P
			e.TrackStars, e.TrackRating, e.TrackRatingSD, e.PTrack = &n, &r.rating, &r.sd, &pt
			list = append(list, e)
		}
		out.Tracks[t] = list
	}
	return out
}
