package engine

import (
	"bytes"
	"reflect"
	"sort"
	"testing"
)

// checkIndex compares the incrementally kept assignment index and pair counts with ones
// rebuilt from scratch.
func checkIndex(t *testing.T, s *State, pairs bool) {
	t.Helper()
	x := s.jd()
	if !x.valid || x.syncedAt != s.Applied {
		return // would be rebuilt on next use anyway
	}
	fresh := newJudgingData(new(uint64))
	fresh.sync(s)
	if len(fresh.slots) != len(x.slots) {
		t.Fatalf("index has %d slots, want %d", len(x.slots), len(fresh.slots))
	}
	holders := func(hs []holder) string {
		var ids []string
		for _, h := range hs {
			ids = append(ids, h.judge.String()+"@"+itoa(int(h.since))+h.track)
		}
		sort.Strings(ids)
		return "" + joinStrings(ids)
	}
	trim := func(l []int32) []int32 {
		for len(l) > 0 && l[len(l)-1] == 0 {
			l = l[:len(l)-1]
		}
		return l
	}
	if !equalNums(trim(x.levelCount), trim(fresh.levelCount)) || x.prioCount != fresh.prioCount {
		t.Fatalf("level counts %v prio %d, want %v prio %d", x.levelCount, x.prioCount, fresh.levelCount, fresh.prioCount)
	}
	members := func(lists [][]int32) map[int32]int {
		out := map[int32]int{}
		for v, l := range lists {
			for _, k := range l {
				out[k] = v
			}
		}
		return out
	}
	for name, pair := range map[string][2][][]int32{"free": {x.lvFree, fresh.lvFree}, "held": {x.lvHeld, fresh.lvHeld}} {
		a, b := members(pair[0]), members(pair[1])
		if len(a) != len(b) {
			t.Fatalf("%s level lists hold %d slots, want %d", name, len(a), len(b))
		}
		for k, v := range b {
			if w, ok := a[k]; !ok || w != v {
				t.Fatalf("%s level lists: slot %d at level %d (%v), want %d", name, k, w, ok, v)
			}
		}
	}
	for k := range x.slots {
		a, b := x.slots[k], fresh.slots[k]
		if a != b || x.proj[k] != fresh.proj[k] {
			t.Fatalf("slot %d (%s) stale: %+v, want %+v", k, fresh.proj[k].Name, a, b)
		}
		if holders(x.holders[k]) != holders(fresh.holders[k]) {
			t.Fatalf("slot %d (%s) holders %s, want %s", k, fresh.proj[k].Name, holders(x.holders[k]), holders(fresh.holders[k]))
		}
	}
	if pairs && !x.pairsDirty {
		fresh.reconcilePairs(s)
		freshIDs, ids := idsByNum(fresh), idsByNum(x)
		for id, n := range fresh.numOf {
			m, ok := x.numOf[id]
			if !ok {
				if fresh.nbrs[n].size() > 0 {
					t.Fatalf("pairs of %s missing", id)
				}
				continue
			}
			want := map[ID]int32{}
			fresh.nbrs[n].each(func(other, c int32) { want[freshIDs[other]] = c })
			got := map[ID]int32{}
			x.nbrs[m].each(func(other, c int32) { got[ids[other]] = c })
			if len(got) != len(want) {
				t.Fatalf("pairs of %s: %v, want %v", id, got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("pairs of %s: %v, want %v", id, got, want)
				}
			}
		}
	}
}

func idsByNum(x *judgingData) []ID {
	out := make([]ID, len(x.nbrs))
	for id, n := range x.numOf {
		out[n] = id
	}
	return out
}

func joinStrings(a []string) string {
	var b bytes.Buffer
	for _, s := range a {
		b.WriteString(s)
		b.WriteByte(',')
	}
	return b.String()
}

// TestSimulation runs an expo of 200 projects and 60 judges who finish or skip at
// random until every project has its views, then stops the clock. It checks the four
// properties of the judging issue and that the derived index never drifts from the
// state. With skips, a skipped project gains no view while the others move on, so the
// spread of views is checked per assignment; without skips it is also checked over all
// projects after every round of turns.
func TestSimulation(t *testing.T) {
	t.Run("finish and skip", func(t *testing.T) { simulate(t, 80, 2024) })
	t.Run("finish only", func(t *testing.T) { simulate(t, 100, 7) })
}

func simulate(t *testing.T, finishPct int, seed uint64) {
	const nProjects, nJudges = 200, 60
	r := newRig(t)
	r.projects(nProjects)
	js := r.judges(nJudges, "")
	r.must(Admin, &ClockUnpause{})
	s := r.e.s
	minViews := s.Options.MinViews
	beh := NewRand(seed) // the judges' behaviour
	finished := map[ID][]ID{}
	var assignments []NextResult // every next result, in order, for the replay check

	// checkAssignment: judge j was just given p (by next or skip).
	checkAssignment := func(j *Judge) {
		p := s.Projects[j.Current]
		if p == nil {
			return
		}
		// (1) Not doubled up while a free candidate existed.
		doubled := false
		for _, o := range s.Judges {
			if o.ID != j.ID && o.Current == p.ID {
				doubled = true
			}
		}
		excluded := map[ID]bool{}
		for _, sp := range j.SeenProjects {
			excluded[sp.ProjectID] = true
		}
		for id := range j.Skipped {
			excluded[id] = true
		}
		held := map[ID]bool{}
		for _, o := range s.Judges {
			if o.ID != j.ID && !o.Current.IsZero() {
				held[o.Current] = true
			}
		}
		minOpen := -1 // least views among projects this judge could still be given
		for _, q := range s.Projects {
			if !q.Active || excluded[q.ID] {
				continue
			}
			if doubled && !held[q.ID] {
				t.Fatalf("%s given %s, which %s, while %s was free", j.Name, p.Name, "another judge holds", q.Name)
			}
			if minOpen < 0 || q.Seen < minOpen {
				minOpen = q.Seen
			}
		}
		// (2) Views spread: while projects are below min_views, nobody gets a project
		// more than one view ahead of the least-seen project it could be given.
		if minOpen < minViews && p.Seen > minOpen+1 {
			t.Fatalf("%s given %s with %d views while a project it could judge has %d", j.Name, p.Name, p.Seen, minOpen)
		}
	}

	spreadViolations := 0
	for tick := 0; tick < 200; tick++ {
		order := make([]ID, len(js))
		copy(order, js)
		for i := len(order) - 1; i > 0; i-- {
			k := beh.Intn(i + 1)
			order[i], order[k] = order[k], order[i]
		}
		for _, jid := range order {
			j := s.Judges[jid]
			if !j.Current.IsZero() {
				cur := j.Current
				roll := beh.Intn(100)
				switch {
				case roll < finishPct:
					r.must(JudgeActor(jid), &JudgeFinish{Judge: jid, Notes: "n", Starred: roll < 10})
					finished[jid] = append(finished[jid], cur)
				case roll < 90 || roll < finishPct+5:
					r.must(JudgeActor(jid), &JudgeSkip{Judge: jid, Reason: SkipBusy})
					checkAssignment(j)
				default:
					r.must(JudgeActor(jid), &JudgeSkip{Judge: jid, Reason: []string{SkipCannotDemo, SkipTooComplex, SkipOffensive, SkipAbsent}[roll%4]})
					checkAssignment(j)
				}
			}
			had := j.Current
			res := r.next(jid)
			assignments = append(assignments, res)
			if had.IsZero() && !res.ProjectID.IsZero() {
				checkAssignment(j)
			}
			// Only judging commands run here, so a drift would persist: checking every
			// few commands finds it (and keeps the test fast under -race).
			if n := len(r.envs); n%5 == 0 {
				checkIndex(t, s, n%95 == 0)
			}
		}
		// Global spread at the end of each tick, counted for the report.
		lo, hi := -1, -1
		for _, p := range s.Projects {
			if !p.Active {
				continue
			}
			if lo < 0 || p.Seen < lo {
				lo = p.Seen
			}
			if p.Seen > hi {
				hi = p.Seen
			}
		}
		if lo < minViews && hi-lo > 1 {
			spreadViolations++
		}
		if lo >= minViews && tick > 20 {
			break
		}
	}
	checkIndex(t, s, true)
	r.must(Admin, &ClockPause{})
	for _, jid := range js {
		if j := s.Judges[jid]; j.Current.IsZero() {
			if res := r.next(jid); res.Reason != ReasonPaused {
				t.Fatalf("next after the clock stopped = %+v", res)
			}
		}
	}
	if finishPct == 100 && spreadViolations > 0 {
		t.Fatalf("views differed by more than one after %d rounds", spreadViolations)
	}
	for _, p := range s.Projects {
		if p.Active && p.Seen < minViews {
			t.Fatalf("%s has %d views", p.Name, p.Seen)
		}
	}
	t.Logf("%d commands; global max-min views > 1 at %d tick ends; fast path decided %d assignments", len(r.envs), spreadViolations, s.jd().fastHits)

	// (3) Every finished project appears exactly once in its judge's list, in order.
	for _, jid := range js {
		list := s.JudgedProjects(jid)
		if len(list) != len(finished[jid]) {
			t.Fatalf("judge %s: %d judged projects, finished %d", s.Judges[jid].Name, len(list), len(finished[jid]))
		}
		once := map[ID]bool{}
		for i, v := range list {
			if once[v.ProjectID] || v.ProjectID != finished[jid][i] {
				t.Fatalf("judge %s: list %v, finished %v", s.Judges[jid].Name, list, finished[jid])
			}
			once[v.ProjectID] = true
		}
	}

	// (4) Replaying the journal on a fresh engine gives the same assignments and state.
	replay := New()
	k := 0
	for _, env := range r.envs {
		res, _, err := replay.Apply(env)
		if err != nil {
			t.Fatalf("replay %s: %v", env.Cmd.Kind(), err)
		}
		if _, ok := env.Cmd.(*JudgeNext); ok {
			// upcoming is advice computed when the next first applied (a replayed
			// record assigns its recorded project and does not compute it again).
			got, want := res.(NextResult), assignments[k]
			got.Upcoming, want.Upcoming = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("replayed next #%d = %+v, want %+v", k, got, assignments[k])
			}
			k++
		}
	}
	a, _, _ := r.e.Snapshot()
	b, _, _ := replay.Snapshot()
	if !bytes.Equal(a, b) {
		t.Fatal("replayed snapshot differs")
	}
	// And restoring the snapshot then carrying on gives the same as not restoring.
	restored := New()
	if err := restored.Restore(a); err != nil {
		t.Fatal(err)
	}
	for _, e := range []*Engine{r.e, restored} {
		if _, _, err := e.Apply(&Envelope{Time: r.now + 1000, Seed: 77, Actor: Admin, Cmd: &ClockUnpause{}}); err != nil {
			t.Fatal(err)
		}
		for i, jid := range js {
			if _, _, err := e.Apply(&Envelope{Time: r.now + 2000 + int64(i), Seed: uint64(i), Actor: JudgeActor(jid), Cmd: &JudgeNext{Judge: jid}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	a, _, _ = r.e.Snapshot()
	b, _, _ = restored.Snapshot()
	if !bytes.Equal(a, b) {
		t.Fatal("engine restored from a snapshot assigns differently")
	}
}

// TestJudgingAcrossAdminCommands interleaves the judging flow with the admin commands
// that change what it depends on (delete, hide, move, prioritize), and checks after
// each one that the derived data equals a fresh rebuild, that incremental scores equal
// a full recomputation, and that replay gives the same state.
func TestJudgingAcrossAdminCommands(t *testing.T) {
	r := newRig(t)
	ps := r.projects(30)
	js := r.judges(8, "")
	r.must(Admin, &ClockUnpause{})
	s := r.e.s
	beh := NewRand(11)
	round := func() {
		for _, j := range js {
			if _, ok := s.Judges[j]; !ok {
				continue
			}
			r.next(j)
			if !s.Judges[j].Current.IsZero() {
				r.must(JudgeActor(j), &JudgeFinish{Judge: j, Starred: beh.Intn(3) == 0})
				jj := s.Judges[j]
				var rk []ID
				for i := len(jj.SeenProjects) - 1; i >= 0; i -= 2 {
					rk = append(rk, jj.SeenProjects[i].ProjectID)
				}
				r.must(JudgeActor(j), &JudgeRank{Judge: j, Ranking: rk})
			}
			r.next(j)
			checkIndex(t, s, true)
		}
	}
	compareScores := func(when string) {
		t.Helper()
		full := newJudgingData(new(uint64))
		for id := range s.Projects {
			inc := s.ScoreOf(id)
			save := s.jx
			s.jx = full
			want := s.ScoreOf(id)
			s.jx = save
			if inc.Score != want.Score || inc.Stars != want.Stars || inc.Votes != want.Votes || inc.Mu != want.Mu {
				t.Fatalf("%s: project %s incremental %+v, full %+v", when, id, inc, want)
			}
		}
		// Pair counts equal a rebuild from the seen lists.
		x := s.jd()
		x.reconcilePairs(s)
		fresh := newJudgingData(new(uint64))
		fresh.reconcilePairs(s)
		for _, a := range ps {
			for _, b := range ps {
				if got, want := s.pairCountOf(a, b), pairCountIn(fresh, a, b); got != want {
					t.Fatalf("%s: pair count %d, want %d", when, got, want)
				}
			}
		}
	}
	for i := 0; i < 3; i++ {
		round()
	}
	compareScores("after judging")
	r.must(Admin, &DeleteProject{Project: s.Judges[js[0]].SeenProjects[0].ProjectID})
	compareScores("project deleted")
	round()
	r.must(Admin, &HideJudges{Judges: []ID{js[1], js[2]}, Hide: true})
	compareScores("judges hidden")
	round()
	r.must(Admin, &DeleteJudge{Judge: js[3]})
	compareScores("judge deleted")
	r.must(Admin, &HideProjects{Projects: []ID{ps[5], ps[6]}, Hide: true})
	r.must(Admin, &MoveProject{Project: ps[7], Location: 99})
	r.must(Admin, &PrioritizeProjects{Projects: []ID{ps[20]}, Prioritize: true})
	round()
	r.must(Admin, &HideJudges{Judges: []ID{js[1]}, Hide: false})
	round()
	compareScores("after more judging")
	replay := New()
	for _, env := range r.envs {
		if _, _, err := replay.Apply(env); err != nil {
			t.Fatal(err)
		}
	}
	a, _, _ := r.e.Snapshot()
	b, _, _ := replay.Snapshot()
	if !bytes.Equal(a, b) {
		t.Fatal("replay differs")
	}
}

func pairCountIn(x *judgingData, a, b ID) int {
	na, ok1 := x.numOf[a]
	nb, ok2 := x.numOf[b]
	if !ok1 || !ok2 {
		return 0
	}
	return int(x.nbrs[na].get(nb))
}

// pairCountOf returns how many judges saw both a and b.
func (s *State) pairCountOf(a, b ID) int {
	x := s.jd()
	x.reconcilePairs(s)
	na, ok1 := x.numOf[a]
	nb, ok2 := x.numOf[b]
	if !ok1 || !ok2 {
		return 0
	}
	return int(x.nbrs[na].get(nb))
}
