package engine

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

// PrizeOrder lists the active projects eligible for a prize, best first: track "" is the
// overall prize (every active project, by the overall ratings' rank), else that
// track's projects in the order of that track's judges (docs/behaviour.md#track-prizes).
// places is the number of places of the prize (1..10); P is the probability of being
// in the top `places` under the fit's uncertainty, deterministic for the same state.
func (s *State) PrizeOrder(track string, places int) []Standing {
	var ps []*Project
	for _, p := range s.Projects {
		if p.Active && (track == "" || containsString(p.ChallengeList, track)) {
			ps = append(ps, p)
		}
	}
	var stars map[ID]int
	if track != "" {
		stars = make(map[ID]int, len(ps))
		for _, p := range ps {
			stars[p.ID] = s.CopelandOf(p.ID).TrackStars[track]
		}
	}
	slices.SortFunc(ps, func(a, b *Project) int {
		if track != "" {
			if c := cmp.Compare(stars[b.ID], stars[a.ID]); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(a.Ratings.Rank, b.Ratings.Rank); c != 0 {
			return c
		}
		return cmp.Compare(a.Location, b.Location)
	})
	return standings(ps, places)
}

// standings gives each project of an ordered list its probability of being among the
// first `places`, from its rating and sd against the rating that divides the places
// from the rest.
func standings(ps []*Project, places int) []Standing {
	out := make([]Standing, len(ps))
	if len(ps) <= places {
		for i, p := range ps {
			out[i] = Standing{ID: p.ID, P: 1}
		}
		return out
	}
	cut := (ps[places-1].RatingOf().Rating + ps[places].RatingOf().Rating) / 2
	for i, p := range ps {
		r := p.RatingOf()
		out[i] = Standing{ID: p.ID, P: 0.5 * math.Erfc(-(r.Rating-cut)/(r.SD*math.Sqrt2))}
	}
	return out
}
