package engine

import "sync"

// Score holds a project's computed results (docs/behaviour.md#scores).
type Score struct {
	Score      int
	Stars      int
	TrackStars map[string]int
	Votes      int
	Mu         float64
	SigmaSq    float64
}

// scoreCache keeps the results of docs/behaviour.md#scores. Copeland counts, stars and track stars are
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
	btVersion  uint64  // counts changes to Crowd-BT's inputs
	inputs     *uint64 // State.RatingInputs, counted here (RatingInputsVersion)
	bt         map[ID]btValue
}

// judgeContrib is what one judge adds to the Copeland results.
type judgeContrib struct {
	ids     []ID  // projects given Copeland points (general judges): ranked, then unranked
	rc      int   // how many of ids are ranked
	points  []int // points of ids[i]
	starred []ID
	track   string // "" general: stars count in stars; else in track_stars[track]
}

func (c *scoreCache) init(inputs *uint64) {
	c.inputs = inputs
	c.all = true
	c.btDirty = true
	c.dirty = map[ID]struct{}{}
}

// judgeChanged marks one judge's contribution stale; bt also marks Crowd-BT stale.
func (c *scoreCache) judgeChanged(id ID, bt bool) {
	c.mu.Lock()
	if !c.all { // else all is redone anyway (after a restore: the whole replay)
		c.dirty[id] = struct{}{}
	}
	*c.inputs++
	if bt {
		c.btDirty = true
		c.btVersion++
	}
	c.mu.Unlock()
}

// invalidate marks everything stale.
func (c *scoreCache) invalidate() {
	c.mu.Lock()
	c.all = true
	c.btDirty = true
	c.btVersion++
	*c.inputs++
	c.mu.Unlock()
}

// ScoreOf returns the computed results of a project.
func (s *State) ScoreOf(id ID) Score {
	return s.scoreOf(id, true)
}

// CopelandOf returns a project's Copeland score, stars and track stars, without the
// Crowd-BT values (Votes, Mu, SigmaSq are the priors): lists that show no Crowd-BT
// values need not wait for its recomputation.
func (s *State) CopelandOf(id ID) Score {
	return s.scoreOf(id, false)
}

// copelandScores calls fn with every project's Copeland score (docs/behaviour.md#scores), brought up to
// date once: for callers that need all of them (fn must not keep the map).
func (s *State) copelandScores(fn func(score map[ID]int)) {
	c := &s.jd().scores
	c.mu.Lock()
	defer c.mu.Unlock()
	s.refreshScores(c, false)
	fn(c.score)
}

func (s *State) scoreOf(id ID, bt bool) Score {
	c := &s.jd().scores
	c.mu.Lock()
	defer c.mu.Unlock()
	s.refreshScores(c, bt)
	out := Score{Score: c.score[id], Stars: c.stars[id], TrackStars: map[string]int{}, Mu: crowdMuPrior, SigmaSq: crowdSigmaSqPrior}
	for t, n := range c.trackStars[id] {
		if n != 0 {
			out.TrackStars[t] = n
		}
	}
	if !bt {
		return out
	}
	if v, ok := c.bt[id]; ok {
		out.Votes, out.Mu, out.SigmaSq = v.votes, v.mu, v.sigmaSq
	}
	return out
}

// refreshScores brings the cache up to date, Crowd-BT only when bt (c.mu held).
func (s *State) refreshScores(c *scoreCache, bt bool) {
	c.checkOptions(s)
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
	if bt && c.btDirty {
		c.bt = s.crowdInputLocked(c).compute().values
		c.btDirty = false
	}
}

// checkOptions marks everything stale when judge_tracks changed since the last
// computation (c.mu held).
func (c *scoreCache) checkOptions(s *State) {
	if c.tracksOn != s.Options.JudgeTracks {
		c.tracksOn = s.Options.JudgeTracks
		c.all, c.btDirty = true, true
		c.btVersion++
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
// its unranked seen projects (existing, in the order seen). Short lists are scanned; a
// long one (a judge who has seen hundreds of projects) goes through a set, so that a
// refresh stays linear in the list's length.
func (s *State) judgedLists(j *Judge) (ranked, unranked []ID) {
	if len(j.SeenProjects) > shortList {
		return s.judgedListsLong(j)
	}
	seen := make([]ID, 0, len(j.SeenProjects))
	for _, sp := range j.SeenProjects {
		if _, ok := s.Projects[sp.ProjectID]; ok && !hasID(seen, sp.ProjectID) {
			seen = append(seen, sp.ProjectID)
		}
	}
	for _, id := range j.Rankings {
		if hasID(seen, id) && !hasID(ranked, id) {
			ranked = append(ranked, id)
		}
	}
	for _, id := range seen {
		if !hasID(ranked, id) {
			unranked = append(unranked, id)
		}
	}
	return ranked, unranked
}

// shortList is the length up to which judgedLists scans instead of building a set.
const shortList = 24

// judgedListsLong is judgedLists through a set (same result).
func (s *State) judgedListsLong(j *Judge) (ranked, unranked []ID) {
	isRanked := make(map[ID]bool, len(j.SeenProjects)) // seen projects: whether ranked
	seen := make([]ID, 0, len(j.SeenProjects))
	for _, sp := range j.SeenProjects {
		if _, dup := isRanked[sp.ProjectID]; dup {
			continue
		}
		if _, ok := s.Projects[sp.ProjectID]; ok {
			isRanked[sp.ProjectID] = false
			seen = append(seen, sp.ProjectID)
		}
	}
	for _, id := range j.Rankings {
		if r, ok := isRanked[id]; ok && !r {
			isRanked[id] = true
			ranked = append(ranked, id)
		}
	}
	for _, id := range seen {
		if !isRanked[id] {
			unranked = append(unranked, id)
		}
	}
	return ranked, unranked
}

func hasID(list []ID, id ID) bool {
	for i := range list {
		if list[i] == id {
			return true
		}
	}
	return false
}

// contribOf computes one judge's Copeland counts and stars (docs/behaviour.md#scores). Hidden judges add
// nothing; track judges add only track stars.
func (s *State) contribOf(j *Judge) judgeContrib {
	if !j.Active {
		return judgeContrib{}
	}
	jc := judgeContrib{track: s.trackOf(j)}
	// A judge who ranked nothing gives every project it saw 0 points (and Crowd-BT
	// skips it): its lists need not be built, which matters for a judge who has walked
	// hundreds of tables without ranking.
	if jc.track == "" && len(j.Rankings) > 0 {
		ranked, unranked := s.judgedLists(j)
		rc, uc := len(ranked), len(unranked)
		jc.rc = rc
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
