package engine

import "sync"

// Score holds a project's computed results (SPEC §6).
type Score struct {
	Score      int
	Stars      int
	TrackStars map[string]int
	Votes      int
	Mu         float64
	SigmaSq    float64
}

// scoreCache keeps the results of SPEC §6. Copeland counts, stars and track stars are
// kept per judge: a change of one judge subtracts its old contribution and adds its new
// one. Crowd-BT depends on the order of all judges, so any change to its inputs marks
// it stale and the next read recomputes it. Reads happen under the engine's read lock
// from many goroutines, so the cache has its own mutex.
type scoreCache struct {
	mu         sync.Mutex
	all        bool                // everything must be recomputed
	tracksOn   bool                // Options.JudgeTracks the cache was computed with
	dirty      map[ID]struct{}     // judges whose contribution must be redone
	contrib    map[ID]judgeContrib // what each judge adds now
	score      map[ID]int
	stars      map[ID]int
	trackStars map[ID]map[string]int
	btDirty    bool
	bt         map[ID]btValue
}

// judgeContrib is what one judge adds to the Copeland results.
type judgeContrib struct {
	ids     []ID  // projects given Copeland points (general judges)
	points  []int // points of ids[i]
	starred []ID
	track   string // "" general: stars count in stars; else in track_stars[track]
}

func (c *scoreCache) init() {
	c.all = true
	c.btDirty = true
	c.dirty = map[ID]struct{}{}
}

// judgeChanged marks one judge's contribution stale; bt also marks Crowd-BT stale.
func (c *scoreCache) judgeChanged(id ID, bt bool) {
	c.mu.Lock()
	c.dirty[id] = struct{}{}
	if bt {
		c.btDirty = true
	}
	c.mu.Unlock()
}

// invalidate marks everything stale.
func (c *scoreCache) invalidate() {
	c.mu.Lock()
	c.all = true
	c.btDirty = true
	c.mu.Unlock()
}

// ScoreOf returns the computed results of a project.
func (s *State) ScoreOf(id ID) Score {
	c := &s.jd().scores
	c.mu.Lock()
	defer c.mu.Unlock()
	s.refreshScores(c)
	out := Score{Score: c.score[id], Stars: c.stars[id], TrackStars: map[string]int{}, Mu: crowdMuPrior, SigmaSq: crowdSigmaSqPrior}
	for t, n := range c.trackStars[id] {
		if n != 0 {
			out.TrackStars[t] = n
		}
	}
	if v, ok := c.bt[id]; ok {
		out.Votes, out.Mu, out.SigmaSq = v.votes, v.mu, v.sigmaSq
	}
	return out
}

// refreshScores brings the cache up to date (c.mu held).
func (s *State) refreshScores(c *scoreCache) {
	if c.tracksOn != s.Options.JudgeTracks {
		c.tracksOn = s.Options.JudgeTracks
		c.all, c.btDirty = true, true
	}
	if c.all {
		c.contrib = make(map[ID]judgeContrib, len(s.Judges))
		c.score = map[ID]int{}
		c.stars = map[ID]int{}
		c.trackStars = map[ID]map[string]int{}
		for _, id := range s.JudgeOrder {
			if j, ok := s.Judges[id]; ok {
				jc := s.contribOf(j)
				c.contrib[id] = jc
				c.add(jc, 1)
			}
		}
		c.all = false
		c.dirty = map[ID]struct{}{}
	} else if len(c.dirty) > 0 {
		for id := range c.dirty {
			c.add(c.contrib[id], -1)
			delete(c.contrib, id)
			if j, ok := s.Judges[id]; ok {
				jc := s.contribOf(j)
				c.contrib[id] = jc
				c.add(jc, 1)
			}
		}
		c.dirty = map[ID]struct{}{}
	}
	if c.btDirty {
		c.bt = s.crowdBT()
		c.btDirty = false
	}
}

// add adds (sign 1) or removes (sign -1) a judge's contribution.
func (c *scoreCache) add(jc judgeContrib, sign int) {
	for i, id := range jc.ids {
		c.score[id] += sign * jc.points[i]
	}
	for _, id := range jc.starred {
		if jc.track == "" {
			c.stars[id] += sign
			continue
		}
		m := c.trackStars[id]
		if m == nil {
			m = map[string]int{}
			c.trackStars[id] = m
		}
		m[jc.track] += sign
	}
}

// judgedLists returns a judge's valid ranking (existing projects it saw, best first) and
// its unranked seen projects (existing, in the order seen).
func (s *State) judgedLists(j *Judge) (ranked, unranked []ID) {
	seen := make(map[ID]bool, len(j.SeenProjects))
	for _, sp := range j.SeenProjects {
		if _, ok := s.Projects[sp.ProjectID]; ok {
			seen[sp.ProjectID] = true
		}
	}
	inRank := make(map[ID]bool, len(j.Rankings))
	for _, id := range j.Rankings {
		if seen[id] && !inRank[id] {
			inRank[id] = true
			ranked = append(ranked, id)
		}
	}
	for _, sp := range j.SeenProjects {
		if seen[sp.ProjectID] && !inRank[sp.ProjectID] {
			unranked = append(unranked, sp.ProjectID)
			inRank[sp.ProjectID] = true // a project seen twice counts once
		}
	}
	return ranked, unranked
}

// contribOf computes one judge's Copeland counts and stars (SPEC §6). Hidden judges add
// nothing; track judges add only track stars.
func (s *State) contribOf(j *Judge) judgeContrib {
	if !j.Active {
		return judgeContrib{}
	}
	jc := judgeContrib{track: s.trackOf(j)}
	if jc.track == "" {
		ranked, unranked := s.judgedLists(j)
		rc, uc := len(ranked), len(unranked)
		for i, id := range ranked {
			jc.ids = append(jc.ids, id)
			jc.points = append(jc.points, rc+uc-1-2*i)
		}
		for _, id := range unranked {
			jc.ids = append(jc.ids, id)
			jc.points = append(jc.points, -rc)
		}
	}
	for _, sp := range j.SeenProjects {
		if _, ok := s.Projects[sp.ProjectID]; ok && sp.Starred {
			jc.starred = append(jc.starred, sp.ProjectID)
		}
	}
	return jc
}
