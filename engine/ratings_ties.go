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
	fn(watchTies(tied, 0).scan(s))
}

// tieWatch is what a waiting fit (ratings_replay.go) needs to rank its tied projects by
// their Copeland scores of the fit's apply time: the tied projects, and what the
// judges whose points may have changed since had then. The commands a fit waits across
// only append to a judge's seen list and replace its ranking with a new array, so a
// judge's points of then are those of its seen list's first entries and its ranking of
// then, worked out only if the fit is flushed.
type tieWatch struct {
	tied   []ID
	set    map[ID]bool // the tied projects
	filter idFilter    // and their filter
	before map[ID]judgedThen
}

// judgedThen is a judge's lists when the fit applied: the length of its seen list and
// its ranking.
type judgedThen struct {
	seen     int
	rankings []ID
}

// watchTies starts the watch of the tied projects of a state of n judges.
func watchTies(tied []ID, n int) *tieWatch {
	w := &tieWatch{tied: tied, set: make(map[ID]bool, len(tied)), before: make(map[ID]judgedThen, n)}
	for _, id := range tied {
		w.set[id] = true
		w.filter.add(id)
	}
	return w
}

// touch keeps judge j's lists before a command that may change its points applies
// (once per judge: the first keeps the fit's time).
func (w *tieWatch) touch(j *Judge) {
	if _, ok := w.before[j.ID]; !ok {
		w.before[j.ID] = judgedThen{len(j.SeenProjects), j.Rankings}
	}
}

// scan adds up the tied projects' scores from every judge who saw one, with the lists
// kept by touch for the judges it saw and today's for the others. A big event's judges
// are scanned in two halves side by side: the scan only reads the state, and the
// writer waits for it (the flush at the end of a replay, when the decoder is done).
func (w *tieWatch) scan(s *State) map[ID]int {
	order := s.JudgeOrder
	if len(order) < splitScanAt {
		return w.scanJudges(s, order)
	}
	var other map[ID]int
	done := make(chan struct{})
	go func() {
		defer close(done)
		other = w.scanJudges(s, order[len(order)/2:])
	}()
	score := w.scanJudges(s, order[:len(order)/2])
	<-done
	for id, n := range other {
		score[id] += n
	}
	return score
}

// splitScanAt is how many judges scan reads in two halves (tests lower it).
var splitScanAt = 2048

// scanJudges is scan over some of the judges.
func (w *tieWatch) scanJudges(s *State, judges []ID) map[ID]int {
	score := make(map[ID]int, len(w.tied))
	for _, id := range w.tied {
		score[id] = 0
	}
	for _, jid := range judges { // sums of integers: the order does not matter
		j, ok := s.Judges[jid]
		if !ok {
			continue
		}
		seen, rankings := j.SeenProjects, j.Rankings
		then, kept := w.before[j.ID]
		if kept {
			seen, rankings = seen[:then.seen], then.rankings
		}
		if !j.Active || len(rankings) == 0 || !sawAnyOf(seen, &w.filter, w.set) {
			continue // no points, or none to a tied project (contribOf)
		}
		if kept {
			v := *j
			v.SeenProjects, v.Rankings = seen, rankings
			j = &v
		}
		jc := s.contribOf(j)
		for i, id := range jc.ids {
			if w.set[id] {
				score[id] += jc.points[i]
			}
		}
	}
	return score
}

// sawAnyOf reports whether the seen list holds one of the projects keyed in set, whose
// members f holds.
func sawAnyOf(seen []SeenProject, f *idFilter, set map[ID]bool) bool {
	for i := range seen {
		if id := seen[i].ProjectID; f.mayHold(id) && set[id] {
			return true
		}
	}
	return false
}

// idFilter is a 65,536-bit filter of a few ids in front of a map: the scan asks it
// about each of the 100,000 views of a big event, which costs a fraction of a map
// lookup, and with a few dozen members it lets about one id in 2,000 through.
type idFilter [1 << 10]uint64

func idFilterBit(id ID) uint64 { return idHash(id) >> 48 }

func (f *idFilter) add(id ID) {
	b := idFilterBit(id)
	f[b>>6] |= 1 << (b & 63)
}

func (f *idFilter) mayHold(id ID) bool {
	b := idFilterBit(id)
	return f[b>>6]&(1<<(b&63)) != 0
}
