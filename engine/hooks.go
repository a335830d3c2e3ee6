package engine

// Hooks through which admin commands keep the judging data (pair-comparison counts,
// score caches) right. The judging issue owns their bodies; admin commands call them.
// The assignment index needs no hook: any command outside the judging flow makes it
// rebuild on its next use (see judgingData.sync).

// forgetJudge is called after a judge is deleted (its views already taken back out of
// the projects' seen counts by the caller).
func (s *State) forgetJudge(j *Judge) {
	x := s.jd()
	x.pairsDirty = true
	if j != nil {
		x.scores.judgeChanged(j.ID, true)
	} else {
		x.scores.invalidate()
	}
}

// forgetProject is called after a project is deleted and removed from every judge.
func (s *State) forgetProject(id ID) {
	x := s.jd()
	x.pairsDirty = true
	x.scores.invalidate() // every judge that saw it now has other Copeland counts
}

// scoresChanged marks cached scores stale (after hide/unhide of a judge, deletions,
// resets, track changes, and any change of rankings, stars or seen lists).
func (s *State) scoresChanged() {
	x := s.jd()
	x.pairsDirty = true
	x.scores.invalidate()
}

// ratingInputsChanged tells the background ratings fit that its inputs changed in a way
// the score cache does not see (a project added, hidden or shown, focus_top changed).
func (s *State) ratingInputsChanged() {
	c := &s.jd().scores
	c.mu.Lock()
	*c.inputs++
	c.mu.Unlock()
}
