package engine

// maxTiedAlone is how many tied projects tiedScores scores on their own rather than
// through the whole score cache.
const maxTiedAlone = 64

// tiedScores calls fn with the Copeland scores of at least the tied projects, which
// rankProjects orders by them. Through the score cache when it is current; when the
// cache must be redone whole (after a restore: the first ranking of a replay, or the
// first fit after a start) and the tied projects are few, they are scored from the
// judges who saw them alone, to the same numbers (docs/behaviour.md#recovery-at-memory-speed),
// and the cache is left to be filled by whoever reads it next.
func (s *State) tiedScores(tied []ID, fn func(score map[ID]int)) {
	c := &s.jd().scores
	c.mu.Lock()
	c.checkOptions(s)
	whole := c.all
	c.mu.Unlock()
	if !whole || len(tied) > maxTiedAlone {
		s.copelandScores(fn)
		return
	}
	score := make(map[ID]int, len(tied))
	for _, id := range tied {
		score[id] = 0
	}
	for _, id := range s.JudgeOrder {
		j, ok := s.Judges[id]
		if !ok || !j.Active || len(j.Rankings) == 0 || !sawAnyOf(j, score) {
			continue
		}
		jc := s.contribOf(j)
		for i, pid := range jc.ids {
			if _, want := score[pid]; want {
				score[pid] += jc.points[i]
			}
		}
	}
	fn(score)
}

// sawAnyOf reports whether j's seen list holds one of the projects keyed in set.
func sawAnyOf(j *Judge, set map[ID]int) bool {
	for i := range j.SeenProjects {
		if _, ok := set[j.SeenProjects[i].ProjectID]; ok {
			return true
		}
	}
	return false
}
