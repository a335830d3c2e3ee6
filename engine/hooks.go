package engine

// Hooks through which admin commands keep the judging data (pair-comparison counts,
// score caches) right. The judging issue owns their bodies; admin commands call them.

// forgetJudge is called after a judge is deleted (its views already taken back out of
// the projects' seen counts by the caller).
func (s *State) forgetJudge(j *Judge) { s.scoresChanged() }

// forgetProject is called after a project is deleted and removed from every judge.
func (s *State) forgetProject(id ID) { s.scoresChanged() }

// scoresChanged marks cached scores stale (after hide/unhide of a judge, deletions,
// resets, track changes, and any change of rankings, stars or seen lists).
func (s *State) scoresChanged() {}
