package engine

import "testing"

// benchState builds an event by hand: nProjects projects, nJudges general judges, each
// having judged perJudge projects (spread evenly, the first half of each list ranked,
// every fifth starred). The clock runs; min_views is 3.
func benchState(b testing.TB, nProjects, nJudges, perJudge int) (*State, []*Judge) {
	b.Helper()
	s := NewState()
	s.Options.Clock = Clock{Running: true, StartTime: 1}
	ps := make([]*Project, nProjects)
	for i := range ps {
		p := &Project{
			ID: newID(1_700_000_000_000, NewRand(uint64(i)+1)), Name: "P", Location: i + 1,
			TrackSeen: map[string]int{}, ChallengeList: []string{}, Active: true, Created: uint64(i + 1),
		}
		p.Group = s.Options.GroupOfTable(p.Location)
		ps[i] = p
		s.Projects[p.ID] = p
		s.locIndex[p.Location] = p.ID
	}
	rnd := NewRand(99)
	js := make([]*Judge, nJudges)
	for i := range js {
		j := &Judge{
			ID: newID(1_700_000_000_000, NewRand(uint64(i)+1_000_000)), Name: "J", Active: true,
			LastLocation: -1, SeenProjects: []SeenProject{}, Skipped: map[ID]bool{}, Rankings: []ID{},
		}
		s.Judges[j.ID] = j
		s.JudgeOrder = append(s.JudgeOrder, j.ID)
		start := rnd.Intn(nProjects)
		for k := 0; k < perJudge && k < nProjects; k++ {
			p := ps[(start+k*7)%nProjects]
			if j.seenIndex(p.ID) >= 0 {
				continue
			}
			seeProject(s, j, p)
			j.SeenProjects[len(j.SeenProjects)-1].Starred = k%5 == 0
			j.LastLocation = p.Location
			if k < perJudge/2 {
				j.Rankings = append(j.Rankings, p.ID)
			}
		}
		js[i] = j
	}
	s.reindex()
	return s, js
}

// benchAssign measures one assignment (steps 3-10) for judges in turn; each assignment
// is undone afterwards so that every iteration sees the same event.
func benchAssign(b *testing.B, nProjects, nJudges, perJudge int, busy bool) {
	benchAssignBusy(b, nProjects, nJudges, perJudge, map[bool]int{false: 0, true: 2}[busy])
}

// benchAssignBusy: when every > 0, all judges but every every-th one hold a project,
// and the assignments measured are those of the others.
func benchAssignBusy(b *testing.B, nProjects, nJudges, perJudge, every int) {
	busy := every > 0
	s, js := benchState(b, nProjects, nJudges, perJudge)
	if benchSetup != nil {
		benchSetup(s)
	}
	x := s.jd()
	c := ctxAt(s, 1_700_000_500_000, 1)
	x.sync(s)
	x.reconcilePairs(s)
	x.noFast = noFastPath
	if busy {
		var rest []*Judge
		for i, j := range js {
			if i%every != 0 {
				s.nextFor(j, c)
			} else {
				rest = append(rest, j)
			}
		}
		js = rest
		s.Log = s.Log[:0]
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := js[i%len(js)]
		c.events = c.events[:0]
		res := s.nextFor(j, c)
		if res.ProjectID.IsZero() {
			b.Fatalf("no project: %+v", res)
		}
		// Undo: the judge gives the project back.
		x.release(res.ProjectID, j.ID)
		j.Current = ZeroID
		s.Log = s.Log[:0]
	}
}

func BenchmarkAssign1kProjects300Judges(b *testing.B) { benchAssign(b, 1000, 300, 3, false) }

func BenchmarkAssign10kProjects5kJudges20Seen(b *testing.B) { benchAssign(b, 10000, 5000, 20, false) }

// BenchmarkAssign10kProjects5kJudges20SeenHalfBusy: as above while 2,500 judges hold a
// project each (busy projects are skipped).
func BenchmarkAssign10kProjects5kJudges20SeenHalfBusy(b *testing.B) {
	benchAssign(b, 10000, 5000, 20, true)
}

// BenchmarkAssign10kProjects5kJudges20SeenAllBusy: the steady state of a busy expo: 4,950
// judges are looking at a project, and the other 50 ask for their next.
func BenchmarkAssign10kProjects5kJudges20SeenAllBusy(b *testing.B) {
	benchAssignBusy(b, 10000, 5000, 20, 100)
}

// BenchmarkAssignScan10k: the full scan alone (fast path off), for comparison.
func BenchmarkAssignScan10kProjects5kJudges20Seen(b *testing.B) {
	noFastPath = true
	defer func() { noFastPath = false }()
	benchAssign(b, 10000, 5000, 20, false)
}

var noFastPath bool

// BenchmarkScoresFull measures a full recomputation of every score (Copeland, stars and
// Crowd-BT) at 10,000 projects and 5,000 judges with 20 views each (10 ranked).
func BenchmarkScoresFull10kProjects5kJudges(b *testing.B) {
	s, _ := benchState(b, 10000, 5000, 20)
	var any ID
	for id := range s.Projects {
		any = id
		break
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.scoresChanged()
		s.ScoreOf(any)
	}
}

// BenchmarkScoresOneJudge measures the incremental path: one judge re-ranks, then the
// scores are read (Copeland incremental; Crowd-BT recomputed in full).
func BenchmarkScoresOneJudgeCopeland10k(b *testing.B) {
	s, js := benchState(b, 10000, 5000, 20)
	var any ID
	for id := range s.Projects {
		any = id
		break
	}
	s.ScoreOf(any)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.jd().scores.judgeChanged(js[i%len(js)].ID, false)
		s.ScoreOf(any)
	}
}

// BenchmarkScoresFullCopelandOnly10k: the Copeland part of a full recomputation (what
// the admin project list waits for after a hide, delete or reset).
func BenchmarkScoresFullCopelandOnly10kProjects5kJudges(b *testing.B) {
	s, _ := benchState(b, 10000, 5000, 20)
	var any ID
	for id := range s.Projects {
		any = id
		break
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.scoresChanged()
		s.CopelandOf(any)
	}
}

// BenchmarkCrowdBTCompute10k: Crowd-BT alone from copied inputs, as GET /api/project/:id
// runs it outside the engine lock, and the copy it takes under the lock.
func BenchmarkCrowdBTCompute10kProjects5kJudges(b *testing.B) {
	s, _ := benchState(b, 10000, 5000, 20)
	in := s.crowdBTInput()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in.compute()
	}
}

// BenchmarkCrowdBTInputCopy10k: what GET /api/project/:id holds the read lock for
// after one judge re-ranked: that judge's Copeland update and the copy of the inputs.
func BenchmarkCrowdBTInputCopy10kProjects5kJudges(b *testing.B) {
	s, js := benchState(b, 10000, 5000, 20)
	s.crowdBTInput()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.jd().scores.judgeChanged(js[i%len(js)].ID, true)
		s.crowdBTInput()
	}
}

// BenchmarkAssignFirst10kProjects: a judge's first assignment (no last table, so every
// project of the lowest views level is an equal candidate: 10,000 ties to draw from).
func BenchmarkAssignFirst10kProjects5kJudges(b *testing.B) { benchAssign(b, 10000, 5000, 0, false) }

// BenchmarkAssignDense1kProjects500Judges400Seen: the zero-think load test after a minute:
// every judge has seen 400 of 1,000 projects, so every project was judged together with
// nearly every other one (the pair counts are dense).
func BenchmarkAssignDense1kProjects500Judges400Seen(b *testing.B) {
	benchAssign(b, 1000, 500, 400, false)
}

// BenchmarkCountSeen: counting one more finished project against the judge's earlier ones
// (the pair-count update of a finish), for a judge with 20 views at 10,000 projects and
// one with 400 views in the dense 1,000-project event; undone after each iteration.
func BenchmarkCountSeen10kProjects5kJudges20Seen(b *testing.B) { benchCountSeen(b, 10000, 5000, 20) }

func BenchmarkCountSeenDense1kProjects500Judges400Seen(b *testing.B) {
	benchCountSeen(b, 1000, 500, 400)
}

func benchCountSeen(b *testing.B, nProjects, nJudges, perJudge int) {
	s, js := benchState(b, nProjects, nJudges, perJudge)
	x := s.jd()
	x.sync(s)
	x.reconcilePairs(s)
	// For each judge, a project number it has not seen.
	fresh := make([]int32, len(js))
	for i, j := range js {
		for id, n := range x.numOf {
			if j.seenIndex(id) < 0 {
				fresh[i] = n
				break
			}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(js)
		j, n := js[k], fresh[k]
		x.addSeen(j.ID, n)
		// Undo.
		list := x.counted[j.ID]
		list = list[:len(list)-1]
		x.counted[j.ID] = list
		for _, o := range list {
			if o != n {
				x.bump(n, o, -1)
				x.bump(o, n, -1)
			}
		}
	}
}
