package engine

import (
	"math"
	"math/bits"
	"slices"
)

// A replayed fit waits (docs/behaviour.md#recovery-at-memory-speed): a fit result sets
// the rating of every project and ranks them all, and the reliability of every judge,
// and while the journal replays, the next fit usually replaces all of it before
// anything has read it. So a replayed SetRatings is left pending in State.pendingFit; it
// is applied before any command that may read ratings (Engine.apply asks passFit), when
// a replayed next must run the assignment, before a copy or an encoding of the state,
// and at the end of the replay (Engine.Replayed).
// A later fit replaces a pending one's projects' part whole (it resets every project it
// does not list), and its judges' part when it lists the same judges (coversJudges);
// otherwise the pending judges' part is applied first.
// Projects whose ratings tie are ranked by their Copeland scores, which the finishes and
// rankings replayed across a waiting fit change: a fit with ties ranks them by the
// scores of its apply time. Most waiting fits are replaced unread, so those scores are
// not taken when it applies: it watches the judges whose points change across it
// (tieWatch) and works them out when it is flushed. A fit with more than maxTiedAlone
// ties, or that leaves an active project unlisted, applies at once.

// rateProjects sets every project's rating from a fit, or the prior when the fit does
// not list it (created since), and ranks them (ties by tieScores when not nil).
func (s *State) rateProjects(cmd *SetRatings, tieScores map[ID]int) {
	// Rank -1 marks a project rated here until rankProjects sets every rank, so that a
	// project listed twice counts once (with its last values). When as many were rated
	// as there are projects, the fit listed them all; else (projects created since, or a
	// rank of -1 from elsewhere) the ones it left out are found through a set.
	rated := 0
	for i, id := range cmd.Projects {
		if p, ok := s.Projects[id]; ok {
			if p.Ratings.Rank != -1 {
				rated++
			}
			p.Ratings = ProjectRating{Rating: cmd.Rating[i], SD: cmd.SD[i], PTop: cmd.PTop[i], PTop3: cmd.PTop3[i], Rank: -1}
		}
	}
	if rated < len(s.Projects) {
		listed := make(map[ID]bool, len(cmd.Projects))
		for _, id := range cmd.Projects {
			listed[id] = true
		}
		for id, p := range s.Projects {
			if !listed[id] {
				p.Ratings = ProjectRating{SD: RatingPriorSD}
			}
		}
	}
	s.rankProjects(tieScores)
}

// tiesOf returns the watch of the projects whose ratings in cmd tie with another's
// (nil when none do); ok is false when the fit cannot wait: it leaves active projects
// unlisted (they tie at the prior) or ties more than maxTiedAlone.
func (s *State) tiesOf(cmd *SetRatings) (w *tieWatch, ok bool) {
	if !s.ratingsCounted || cmd.Version != s.RatingInputs {
		// The projects may have changed since the fit copied them (when the counts
		// are equal nothing changed: it lists exactly the active ones).
		active, listed := 0, 0
		for _, p := range s.Projects {
			if p.Active {
				active++
			}
		}
		for _, id := range cmd.Projects {
			if p, ok := s.Projects[id]; ok && p.Active {
				listed++
			}
		}
		if listed < active {
			return nil, false
		}
	}
	var tied []ID
	for _, i := range tiedRatings(cmd.Rating) {
		if len(tied) == maxTiedAlone {
			return nil, false
		}
		tied = append(tied, cmd.Projects[i])
	}
	if len(tied) == 0 {
		return nil, true
	}
	return watchTies(tied, len(s.Judges)), true
}

// agrees reports whether the fit carries the judges' disagreement and comparison counts.
func (cmd *SetRatings) agrees() bool { return len(cmd.Disagreement) > 0 || len(cmd.Compared) > 0 }

// rateJudges applies the judges' part of a fit: each listed judge's reliability, and
// its disagreement and comparison counts when the fit carries them.
func (s *State) rateJudges(cmd *SetRatings) {
	agree := cmd.agrees()
	for i, id := range cmd.Judges {
		if j, ok := s.Judges[id]; ok {
			j.Reliability = cmd.Reliability[i]
			if agree {
				j.Disagreement, j.Compared = cmd.Disagreement[i], cmd.Compared[i]
			}
		}
	}
}

// coversJudges reports whether cmd's judges' part sets everything old's would: the
// same judges, and the counts too if old has them. A waiting fit's judges' part is
// then dropped unapplied.
func (cmd *SetRatings) coversJudges(old *SetRatings) bool {
	return slices.Equal(cmd.Judges, old.Judges) && (cmd.agrees() || !old.agrees())
}

// setProjectRatings applies the projects' part of a live fit: the ratings and ranks,
// then, when the judging index is current, the focus needs.
func (s *State) setProjectRatings(cmd *SetRatings) {
	s.rateProjects(cmd, nil)
	if x := s.jd(); x.current(s) {
		x.refreshFocus()
		x.keep(s)
	}
}

// flushFit applies a pending fit's projects' part, if there is one: the ratings and
// ranks, and the focus needs of an index that is current. It runs between two
// commands, so it leaves the index's currency as it found it (the fit kept it when it
// applied, as a live fit does): a keep here would mark it current for the command
// about to apply, whose changes it has not seen.
func (s *State) flushFit() {
	if cmd := s.pendingFit; cmd != nil {
		var ties map[ID]int // nil: no judge's points changed since, the scores of now do
		if w := s.pendingTies; w != nil && len(w.before) > 0 {
			ties = w.scan(s)
		}
		s.pendingFit, s.pendingTies = nil, nil
		s.rateJudges(cmd)
		s.rateProjects(cmd, ties)
		if x := s.jd(); x.current(s) {
			x.refreshFocus()
		}
	}
}

// ratingsBlind is a command whose replay reads no project's rating, rank or focus
// need, so a pending fit may wait across it. JudgeNext is one: a replayed next
// assigns its recorded project, and flushes the fit itself when it must run the
// assignment instead. Of these, JudgeFinish and JudgeRank change a judge's Copeland
// points: they show the fit's tie watch the judge first (notePoints).
type ratingsBlind interface{ readsNoRatings() }

func (*JudgeFinish) readsNoRatings() {}
func (*JudgeNotes) readsNoRatings()  {}
func (*JudgeRank) readsNoRatings()   {}
func (*JudgeStar) readsNoRatings()   {} // stars are not points
func (*JudgeNext) readsNoRatings()   {}
func (*SetRatings) readsNoRatings()  {}

// passFit runs before a replayed cmd while a fit waits: it applies the fit unless cmd
// is ratings-blind.
func (s *State) passFit(cmd Command) {
	if _, blind := cmd.(ratingsBlind); !blind {
		s.flushFit()
	}
}

// notePoints shows a waiting fit's tie watch judge j, before a command changes j's
// Copeland points.
func (s *State) notePoints(j *Judge) {
	if w := s.pendingTies; w != nil {
		w.touch(j)
	}
}

// Replayed ends a replay of the journal (docs/behaviour.md#recovery-at-memory-speed):
// the work the replayed commands left pending (audit lines, a fit's projects' part) is
// done, so the state is the one applying them live would have left. Recovery calls it
// once after the last record, also after a failed one.
func (e *Engine) Replayed() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.s.settle()
}

// tiedRatings returns, in order, the indexes of the values in r equal to another one
// (−0 and 0 are equal; the values are finite). A fit lists thousands of ratings and
// ties a handful, so the values are counted in an open-addressed table of their bits
// rather than a map.
func tiedRatings(r []float64) []int {
	size := 1
	for size < 2*len(r) {
		size <<= 1
	}
	shift := 64 - bits.Len(uint(size-1))
	keys := make([]uint64, size)
	count := make([]int32, size) // 0: an empty place
	slot := func(v float64) int {
		k := math.Float64bits(v + 0)
		h := int(k * 0x9e3779b97f4a7c15 >> shift)
		for count[h] != 0 && keys[h] != k {
			h = (h + 1) & (size - 1)
		}
		keys[h] = k
		return h
	}
	any := false
	for _, v := range r {
		h := slot(v)
		count[h]++
		any = any || count[h] > 1
	}
	if !any {
		return nil
	}
	var out []int
	for i, v := range r {
		if count[slot(v)] > 1 {
			out = append(out, i)
		}
	}
	return out
}
