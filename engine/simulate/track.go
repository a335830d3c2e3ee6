package simulate

// The track-prize world (docs/behaviour.md#track-prizes): a sponsor's track of Projects
// projects (their challenge list names TrackName) and Judges track judges, none careless,
// of noise drawn from Noises, making Visits visits each inside the track. Each track
// project has a track quality q_T = R·q + √(1−R²)·u, u ~ N(0, 1): track judges perceive
// q_T + σ·z, general judges q + σ·z. The track prize is scored against the true order
// of q_T within the track, for Podium's results' track list and for the reference
// orders (trackMethods). The track's tables, u and the track judges' noises come from
// a random stream of their own, so the general world of a seed is the one without the
// track.

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"

	"podium/engine"
)

// TrackName is the simulated track's name.
const TrackName = "Sponsor"

// TrackWorld describes the simulated track.
type TrackWorld struct {
	Projects, Judges, Visits int
	Noises                   []float64
	R                        float64 // correlation of track quality with quality
	// Tables are the track's tables (1-based), drawn per event (RunOn sets them).
	Tables []int
}

// DefaultTrack is the track of docs/behaviour.md#track-prizes: 15 projects, 3 track
// judges × 8 visits, r = 0.6.
func DefaultTrack() *TrackWorld {
	return &TrackWorld{Projects: 15, Judges: 3, Visits: 8, Noises: []float64{0.5, 1, 2}, R: 0.6}
}

// TrackEntry is one project of the results' track list.
type TrackEntry struct {
	ID         engine.ID
	TrackStars int
	Rank       int
}

// TrackRun is how one event's track prize came out, per method (trackMethods order).
type TrackRun struct {
	Top3, Winner, Rho []float64
	Unseen            float64 // track projects no track judge saw
	Views             float64 // track judges' views per track project
}

// trackMethods name the orders a track prize is scored for.
var trackMethods = []string{
	"Podium today: track stars, then the overall rating",
	"track stars alone",
	"track judges' Borda alone",
	"overall rating alone, restricted to the track",
	"oracle: posterior of q_T from every view, true σ and r",
	"Podium: PrizeOrder (results' track list)",
	"Bayes on track judges' rankings and stars, each judge's noise and r known",
	"Bayes on track judges' rankings and stars, noise and r unknown (Podium's ceiling)",
}

// trackTables draws the track's n tables.
func (ev *event) trackTables(n int) []int {
	ev.trk = engine.NewRand(ev.seed*0xd6e8feb86659fd93 + 5)
	r := ev.trk
	perm := make([]int, ev.cfg.Projects)
	for i := range perm {
		perm[i] = i + 1
	}
	n = min(n, len(perm))
	for i := 0; i < n; i++ {
		k := i + r.Intn(len(perm)-i)
		perm[i], perm[k] = perm[k], perm[i]
	}
	out := slices.Clone(perm[:n])
	slices.Sort(out)
	return out
}

// trackWorld draws the track's qualities and adds its judges (numbered after the
// general ones).
func (ev *event) trackWorld(pids []engine.ID) {
	tw := ev.cfg.Track
	r := ev.trk
	ev.trackQ = map[engine.ID]float64{}
	for _, t := range tw.Tables {
		id := pids[t-1]
		ev.trackQ[id] = tw.R*ev.quality[id] + math.Sqrt(1-tw.R*tw.R)*r.Norm()
	}
	for range tw.Judges {
		ev.judges = append(ev.judges, &simJudge{track: true, noise: tw.Noises[r.Intn(len(tw.Noises))],
			percept: map[engine.ID]float64{}, left: tw.Visits, lastLoc: -1})
	}
}

// measureTrack scores the track prize's orders.
func (ev *event) measureTrack(f Final) *TrackRun {
	var ids []engine.ID
	for id := range ev.trackQ {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b engine.ID) int { return ev.loc[a] - ev.loc[b] })
	truth := slices.Clone(ids)
	slices.SortFunc(truth, func(a, b engine.ID) int { return cmpFloatDesc(ev.trackQ[a], ev.trackQ[b]) })

	entry := map[engine.ID]TrackEntry{}
	var podium []engine.ID
	for _, e := range f.Track {
		entry[e.ID] = e
		podium = append(podium, e.ID)
	}
	rankOf := func(id engine.ID) int {
		if r := entry[id].Rank; r > 0 {
			return r
		}
		return math.MaxInt32
	}
	byKey := func(key func(engine.ID) float64) []engine.ID { // higher first, ties by table
		o := slices.Clone(ids)
		slices.SortStableFunc(o, func(a, b engine.ID) int { return cmpFloatDesc(key(a), key(b)) })
		return o
	}
	today := slices.Clone(ids)
	slices.SortFunc(today, func(a, b engine.ID) int {
		if c := cmp.Compare(entry[b].TrackStars, entry[a].TrackStars); c != 0 {
			return c
		}
		if c := cmp.Compare(rankOf(a), rankOf(b)); c != 0 {
			return c
		}
		return ev.loc[a] - ev.loc[b]
	})
	stars := byKey(func(id engine.ID) float64 { return float64(entry[id].TrackStars) })
	overall := byKey(func(id engine.ID) float64 { return -float64(rankOf(id)) })

	// Borda: each track judge's list gives its i-th of n 1 − 2i/(n−1); a project's
	// score is its mean over the lists it is in (0 in none).
	sum, cnt := map[engine.ID]float64{}, map[engine.ID]float64{}
	out := &TrackRun{}
	seenByTrack := map[engine.ID]bool{}
	for _, j := range ev.judges {
		if !j.track {
			continue
		}
		for _, id := range j.seen {
			seenByTrack[id] = true
			out.Views++
		}
		r := j.ranking(0)
		for i, id := range r {
			if len(r) > 1 {
				sum[id] += 1 - 2*float64(i)/float64(len(r)-1)
			}
			cnt[id]++
		}
	}
	borda := byKey(func(id engine.ID) float64 {
		if cnt[id] == 0 {
			return 0
		}
		return sum[id] / cnt[id]
	})
	oracle := byKey(func(id engine.ID) float64 { return ev.trackPosterior(id) })
	for _, id := range ids {
		if !seenByTrack[id] {
			out.Unseen++
		}
	}
	out.Views /= float64(len(ids))
	bayes := func(known bool) []engine.ID {
		m := ev.trackBayes(ids, known)
		pos := make(map[engine.ID]float64, len(ids))
		for i, id := range ids {
			pos[id] = m[i]
		}
		return byKey(func(id engine.ID) float64 { return pos[id] })
	}
	for _, o := range [][]engine.ID{today, stars, borda, overall, oracle, podium, bayes(true), bayes(false)} {
		w := 0.0
		if len(o) > 0 && o[0] == truth[0] {
			w = 1
		}
		out.Top3 = append(out.Top3, overlap(truth, o, 3))
		out.Winner = append(out.Winner, w)
		out.Rho = append(out.Rho, spearman(truth, o))
	}
	return out
}

// trackPosterior is the oracle's mean of project id's track quality given every view
// of it (each judge's true noise): the general judges' views of q, set against q's
// prior N(0, 1), give q's posterior N(m, v), so q_T's prior is N(r·m, r²·v + 1 − r²);
// the track judges' views of q_T are added to it.
func (ev *event) trackPosterior(id engine.ID) float64 {
	r := ev.cfg.Track.R
	m, v := ev.qPosterior(id)
	pm, pv := r*m, r*r*v+1-r*r
	pt, st := 0.0, 0.0
	for _, j := range ev.judges {
		if y, ok := j.percept[id]; ok && j.track {
			w := 1 / (j.noise * j.noise)
			pt, st = pt+w, st+w*y
		}
	}
	return (pm/pv + st) / (1/pv + pt)
}

// qPosterior is the mean and variance of project id's quality q given the general
// judges' views of it (each judge's true noise) set against q's prior N(0, 1).
func (ev *event) qPosterior(id engine.ID) (mean, variance float64) {
	pq, sq := 1.0, 0.0
	for _, j := range ev.judges {
		if y, ok := j.percept[id]; ok && !j.track {
			w := 1 / (j.noise * j.noise)
			pq, sq = pq+w, sq+w*y
		}
	}
	return sq / pq, 1 / pq
}

// spearman is Spearman's ρ of order o against the true order truth (the same projects).
func spearman(truth, o []engine.ID) float64 {
	n := float64(len(truth))
	if n < 2 || len(o) != len(truth) {
		return 0
	}
	pos := map[engine.ID]int{}
	for i, id := range truth {
		pos[id] = i
	}
	d2 := 0.0
	for i, id := range o {
		d := float64(i - pos[id])
		d2 += d * d
	}
	return 1 - 6*d2/(n*(n*n-1))
}

// WriteTrackTable writes the track prize's table (Markdown) of runs: per method top-3
// precision, winner share and ρ within the track (mean ± 95 % interval), then how
// many track projects no track judge saw.
func WriteTrackTable(w io.Writer, runs []Run) {
	fmt.Fprint(w, "| method | top-3 | winner | ρ |\n|---|---|---|---|\n")
	for m, name := range trackMethods {
		at := func(f func(t *TrackRun) []float64) Estimate {
			return estimate(runs, func(r Run) float64 {
				if r.Track == nil || m >= len(f(r.Track)) {
					return 0
				}
				return f(r.Track)[m]
			})
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.3f |\n", name,
			at(func(t *TrackRun) []float64 { return t.Top3 }), at(func(t *TrackRun) []float64 { return t.Winner }),
			at(func(t *TrackRun) []float64 { return t.Rho }).Mean)
	}
	unseen := estimate(runs, func(r Run) float64 { return trackOr(r, func(t *TrackRun) float64 { return t.Unseen }) })
	views := estimate(runs, func(r Run) float64 { return trackOr(r, func(t *TrackRun) float64 { return t.Views }) })
	fmt.Fprintf(w, "\ntrack projects never seen by a track judge: %s; track views per track project: %.2f\n", unseen, views.Mean)
}

func trackOr(r Run, f func(t *TrackRun) float64) float64 {
	if r.Track == nil {
		return 0
	}
	return f(r.Track)
}
