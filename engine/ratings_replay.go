package engine

// A replayed fit's projects' part waits (docs/behaviour.md#recovery-at-memory-speed):
// a fit result sets the rating of every project and ranks them all, and while the
// journal replays, the next fit usually replaces all of it before anything has read it.
// So a replayed SetRatings applies its judges' part at once and leaves its projects'
// part pending in State.pendingFit; the pending part is applied before any command that
// may read ratings (Engine.apply asks readsRatings), when a replayed next must run the
// assignment, before a copy or an encoding of the state, and at the end of the replay
// (Engine.Replayed).
// A later fit replaces a pending one whole: it resets every project it does not list.
// Projects whose ratings tie are ranked by their Copeland scores, which the finishes and
// rankings replayed across a waiting fit change: a fit with ties keeps the tied
// projects' scores of its apply time and ranks by them (tiesOf); one with more than
// maxTiedAlone ties, or that leaves an active project unlisted, applies at once.

// rateProjects sets every project's rating from a fit, or the prior when the fit does
// not list it (created since), and ranks them (ties by tieScores when not nil).
func (s *State) rateProjects(cmd *SetRatings, tieScores map[ID]int) {
	for _, p := range s.Projects { // the projects the fit left out (created since)
		p.Ratings = ProjectRating{SD: RatingPriorSD}
	}
	for i, id := range cmd.Projects { // a project listed twice: the last one counts
		if p, ok := s.Projects[id]; ok {
			p.Ratings = ProjectRating{Rating: cmd.Rating[i], SD: cmd.SD[i], PTop: cmd.PTop[i], PTop3: cmd.PTop3[i]}
		}
	}
	s.rankProjects(tieScores)
}

// tiesOf returns the Copeland scores, as they are now, of the projects whose ratings
// in cmd tie with another's (nil when none do); ok is false when the fit cannot wait:
// it leaves active projects unlisted (they tie at the prior) or ties more than maxTiedAlone.
func (s *State) tiesOf(cmd *SetRatings) (scores map[ID]int, ok bool) {
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
	count := make(map[float64]int32, len(cmd.Rating))
	for _, r := range cmd.Rating {
		count[r+0]++ // −0 and 0 tie
	}
	var tied []ID
	for i, r := range cmd.Rating {
		if count[r+0] > 1 {
			if len(tied) == maxTiedAlone {
				return nil, false
			}
			tied = append(tied, cmd.Projects[i])
		}
	}
	if len(tied) == 0 {
		return nil, true
	}
	scores = make(map[ID]int, len(tied))
	s.tiedScores(tied, func(score map[ID]int) {
		for _, id := range tied {
			scores[id] = score[id]
		}
	})
	return scores, true
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
		ties := s.pendingTies
		s.pendingFit, s.pendingTies = nil, nil
		s.rateProjects(cmd, ties)
		if x := s.jd(); x.current(s) {
			x.refreshFocus()
		}
	}
}

// ratingsBlind is a command whose replay reads no project's rating, rank or focus
// need, so a pending fit may wait across it. JudgeNext is one: a replayed next
// assigns its recorded project, and flushes the fit itself when it must run the
// assignment instead.
type ratingsBlind interface{ readsNoRatings() }

func (*JudgeFinish) readsNoRatings() {}
func (*JudgeNotes) readsNoRatings()  {}
func (*JudgeRank) readsNoRatings()   {}
func (*JudgeStar) readsNoRatings()   {}
func (*JudgeNext) readsNoRatings()   {}
func (*SetRatings) readsNoRatings()  {}

// readsRatings reports whether a pending fit must be applied before a replayed cmd:
// unless it is ratings-blind.
func readsRatings(cmd Command) bool {
	_, blind := cmd.(ratingsBlind)
	return !blind
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
