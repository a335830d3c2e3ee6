package engine

// Prize orders (docs/behaviour.md#track-prizes): the overall prize follows the ratings,
// a track prize follows that track's judges. A track's order is fitted with the ratings
// (package engine/fit, outside the writer) from the track judges' own rankings, unranked
// seen projects and stars, with the overall rating only as a prior whose weight the
// track judges' data decides; it is journaled inside SetRatings (Tracks) and kept in
// State.TrackFits, so replay restores it exactly.

import (
	"cmp"
	"math"
	"slices"
)

// Standing is one project's place in a prize's proposed order.
type Standing struct {
	ID ID
	P  float64 // estimated probability that the project belongs in the prize's places
}

// TrackFit is the fitted order of one track's projects (docs/behaviour.md#track-prizes):
// each listed project's track rating (higher is better) and its sd. The prior of a
// project's track rating is normal with mean Beta × (its overall rating − Center) and
// variance Tau² + Beta² × (its overall rating's sd)²; a project of the track the fit
// does not list (added since) is rated by that prior alone.
type TrackFit struct {
	Track    string    `json:"track"`
	Projects []ID      `json:"projects"`
	Rating   []float64 `json:"rating"`
	SD       []float64 `json:"sd"`
	Beta     float64   `json:"beta"`
	Center   float64   `json:"center"`
	Tau      float64   `json:"tau"`
}

// TrackRuleCover is State.TrackRule of an event begun since track judges cover their
// track (docs/behaviour.md#judging-flow step 6); 0 (absent) keeps the next table up.
const TrackRuleCover = 1

// trackWalkCost is the need (p(1−p) of a place in the track prize) given up per table
// a track judge walks: crossing 100 tables is worth 0.1.
const trackWalkCost = 0.001

// trackPrizePlaces is the number of places of a track prize that the results' track
// lists and a track judge's assignment sharpen.
const trackPrizePlaces = 3

// validate checks that a track fit's lists agree in length and its values are finite.
func (t *TrackFit) validate() error {
	n := len(t.Projects)
	if len(t.Rating) != n || len(t.SD) != n {
		return invalidf("ratings: track %q: value lists differ in length", t.Track)
	}
	for _, vs := range [][]float64{t.Rating, t.SD, {t.Beta, t.Center, t.Tau}} {
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return invalidf("ratings: track %q: value not finite", t.Track)
			}
		}
	}
	return nil
}

// trackFit returns the stored fit of track t, or nil.
func (s *State) trackFit(t string) *TrackFit {
	for i := range s.TrackFits {
		if s.TrackFits[i].Track == t {
			return &s.TrackFits[i]
		}
	}
	return nil
}

// trackRated is a track project with its track rating.
type trackRated struct {
	p          *Project
	rating, sd float64
}

// trackRatings returns track t's active projects (in table order) with their track
// ratings: the fit's, or for a project the fit does not list (or before any fit) its
// prior.
func (s *State) trackRatings(t string) []trackRated {
	f := s.trackFit(t)
	idx := map[ID]int{}
	if f != nil {
		for i, id := range f.Projects {
			idx[id] = i
		}
	}
	var ps []*Project // a track judge's every assignment reads them: no sort of all projects
	for _, p := range s.Projects {
		if p.Active && containsString(p.ChallengeList, t) {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b *Project) int {
		if c := cmp.Compare(a.Location, b.Location); c != 0 {
			return c
		}
		return cmp.Compare(a.Created, b.Created)
	})
	var out []trackRated
	for _, p := range ps {
		r := trackRated{p: p, sd: RatingPriorSD}
		if i, ok := idx[p.ID]; ok {
			r.rating, r.sd = f.Rating[i], f.SD[i]
		} else if f != nil {
			o := p.RatingOf()
			r.rating = f.Beta * (o.Rating - f.Center)
			r.sd = math.Sqrt(f.Tau*f.Tau + f.Beta*f.Beta*o.SD*o.SD)
		}
		if !(r.sd > 0) {
			r.sd = RatingPriorSD
		}
		out = append(out, r)
	}
	return out
}

// PrizeOrder lists the active projects eligible for a prize, best first: track "" is the
// overall prize (every active project, by the overall ratings' rank), else that
// track's projects in the order of that track's judges (docs/behaviour.md#track-prizes).
// places is the number of places of the prize (1..10); P is the probability of being
// in the top `places` under the fit's uncertainty, deterministic for the same state.
func (s *State) PrizeOrder(track string, places int) []Standing {
	places = max(places, 1)
	if track == "" {
		ps := s.activeByRank()
		theta, sd := make([]float64, len(ps)), make([]float64, len(ps))
		for i, p := range ps {
			r := p.RatingOf()
			theta[i], sd[i] = r.Rating, r.SD
		}
		out := make([]Standing, len(ps))
		for i, pt := range TopProbabilities(theta, sd, places) {
			out[i] = Standing{ID: ps[i].ID, P: pt}
		}
		return out
	}
	rs := s.trackRatings(track)
	theta, sd := make([]float64, len(rs)), make([]float64, len(rs))
	for i, r := range rs {
		theta[i], sd[i] = r.rating, r.sd
	}
	pt := TopProbabilities(theta, sd, places)
	type entry struct {
		trackRated
		pt    float64
		stars int
	}
	es := make([]entry, len(rs))
	for i, r := range rs {
		es[i] = entry{r, pt[i], s.CopelandOf(r.p.ID).TrackStars[track]}
	}
	// Equal track ratings (before the track judges have said anything) keep the
	// order of before: track stars, then the overall rank.
	slices.SortStableFunc(es, func(a, b entry) int {
		if c := cmp.Compare(b.rating, a.rating); c != 0 {
			return c
		}
		if c := cmp.Compare(b.stars, a.stars); c != 0 {
			return c
		}
		return cmp.Compare(a.p.Ratings.Rank, b.p.Ratings.Rank)
	})
	out := make([]Standing, len(es))
	for i, e := range es {
		out[i] = Standing{ID: e.p.ID, P: e.pt}
	}
	return out
}

// trackNeeds returns, for track t's active projects, how uncertain their place in the
// track prize is: p(1−p), p the probability of a place in its top trackPrizePlaces.
func (s *State) trackNeeds(t string) map[ID]float64 {
	rs := s.trackRatings(t)
	theta, sd := make([]float64, len(rs)), make([]float64, len(rs))
	for i, r := range rs {
		theta[i], sd[i] = r.rating, r.sd
	}
	out := make(map[ID]float64, len(rs))
	for i, p := range TopProbabilities(theta, sd, trackPrizePlaces) {
		out[rs[i].p.ID] = p * (1 - p)
	}
	return out
}

// TopProbabilities estimates for each rating theta[i] (sd sd[i]) the probability of a
// place in the top k: Φ((θ_i − t)/sd_i), the threshold t chosen so that these sum to k
// (all 1 when k covers them all). The ratings fit uses it for p_top.
func TopProbabilities(theta, sd []float64, k int) []float64 {
	n := len(theta)
	out := make([]float64, n)
	if n == 0 {
		return out
	}
	if k >= n {
		for i := range out {
			out[i] = 1
		}
		return out
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	maxSD := 0.0
	for i := range theta {
		lo, hi = math.Min(lo, theta[i]), math.Max(hi, theta[i])
		maxSD = math.Max(maxSD, sd[i])
	}
	lo, hi = lo-10*maxSD, hi+10*maxSD
	// Newton's method on t, kept inside a shrinking bracket [lo, hi] (bisection when a
	// step would leave it): Σ Φ((θ_i − t)/sd_i) falls as t grows.
	t := (lo + hi) / 2
	for it := 0; it < 60; it++ {
		sum, slope := 0.0, 0.0
		for i := range theta {
			z := (theta[i] - t) / sd[i]
			sum += normCDF(z)
			slope += math.Exp(-z*z/2) / (sd[i] * math.Sqrt(2*math.Pi))
		}
		diff := sum - float64(k)
		if math.Abs(diff) < 1e-9 {
			break
		}
		if diff > 0 {
			lo = t
		} else {
			hi = t
		}
		next := t + diff/slope
		if slope == 0 || next <= lo || next >= hi {
			next = (lo + hi) / 2
		}
		if math.Abs(next-t) < 1e-12 {
			break
		}
		t = next
	}
	for i := range theta {
		out[i] = normCDF((theta[i] - t) / sd[i])
	}
	return out
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// cloneTrackFits deep-copies track fits (State.clone).
func cloneTrackFits(fs []TrackFit) []TrackFit {
	if fs == nil {
		return nil
	}
	out := make([]TrackFit, len(fs))
	for i, f := range fs {
		f.Projects, f.Rating, f.SD = cloneSlice(f.Projects), cloneSlice(f.Rating), cloneSlice(f.SD)
		out[i] = f
	}
	return out
}

// TrackInput is what the fit of one track's prize order needs: In lists the track's
// active projects (in table order; Prev their last track ratings) and its active track
// judges' lists of them, as RatingInput does for the ratings; Overall gives each
// project's index in the ratings' projects (its overall rating is the prior's).
type TrackInput struct {
	Track   string
	Overall []int32
	In      RatingInput
}

// trackInput copies track t's inputs: byLoc are the projects in table order, overall
// numbers the active ones as the ratings' input does.
func (s *State) trackInput(t string, byLoc []*Project, overall map[ID]int32) TrackInput {
	ti := TrackInput{Track: t, In: RatingInput{Version: s.RatingInputsVersion(), FocusTop: trackPrizePlaces, Off: []int32{0}}}
	prev := map[ID]float64{}
	if f := s.trackFit(t); f != nil {
		for i, id := range f.Projects {
			prev[id] = f.Rating[i]
		}
	}
	idx := map[ID]int32{}
	for _, p := range byLoc {
		if !p.Active || !containsString(p.ChallengeList, t) {
			continue
		}
		idx[p.ID] = int32(len(ti.In.Projects))
		ti.In.Projects = append(ti.In.Projects, p.ID)
		ti.In.Prev = append(ti.In.Prev, prev[p.ID])
		ti.Overall = append(ti.Overall, overall[p.ID])
	}
	for _, id := range s.JudgeOrder {
		if j, ok := s.Judges[id]; ok && j.Active && s.trackOf(j) == t && len(j.SeenProjects) >= 2 {
			ti.In.addJudge(j, idx)
		}
	}
	return ti
}

// trackPick is step 6 of docs/behaviour.md#judging-flow for a track judge in an event
// begun since State.TrackRule (before it, the next table up among the candidates of
// step 5: alongTables). Of the candidates all, it keeps those with the fewest track
// views, and of them (step 5) the ones nobody else is looking at, unless that leaves
// none: coverage of the track comes before a general judge's hold, so that every track
// project gets a track judge's view before any gets a second one. While they have none,
// the next table up (alongTables); once all have one, the one whose place in the track
// prize is least certain (trackNeeds), less trackWalkCost per table walked, ties by the
// nearest table, then the command's random stream.
func (p *picker) trackPick(all []int32) *Project {
	x := p.x
	fewest := -1
	for _, k := range all {
		if n := x.proj[k].TrackSeen[p.track]; fewest < 0 || n < fewest {
			fewest = n
		}
	}
	var keep, free []int32
	for _, k := range all {
		if x.proj[k].TrackSeen[p.track] == fewest {
			keep = append(keep, k)
			if x.slots[k].flags&slotHeld == 0 || !x.busy(k, p.now, p.window) {
				free = append(free, k)
			}
		}
	}
	if len(free) > 0 {
		keep = free
	}
	if fewest == 0 {
		return p.alongTables(keep)
	}
	need := p.s.trackNeeds(p.track)
	best := focusBest{}
	for _, k := range keep {
		d := x.distFrom(k, p.last)
		best.offer(k, need[x.proj[k].ID]-trackWalkCost*float64(d), d)
	}
	return x.pickTie(best.ties, p.c.Rand)
}
