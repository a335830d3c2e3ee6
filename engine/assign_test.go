package engine

import (
	"testing"
)

// tiny builds a hand-made state: projects at the given tables (all active, seen 0) and
// returns it with the projects in the given order. The clock runs.
func tiny(t *testing.T, tables ...int) (*State, []*Project) {
	t.Helper()
	s := NewState()
	s.Options.Clock = Clock{Running: true, StartTime: 1}
	ps := make([]*Project, 0, len(tables))
	for i, loc := range tables {
		p := &Project{
			ID: testID(100 + i), Name: "P" + itoa(loc), Location: loc, Group: s.Options.GroupOfTable(loc),
			TrackSeen: map[string]int{}, ChallengeList: []string{}, Active: true, Created: uint64(i + 1),
		}
		s.Projects[p.ID] = p
		s.locIndex[loc] = p.ID
		ps = append(ps, p)
	}
	return s, ps
}

// testID returns a recognisable id.
func testID(n int) ID {
	var id ID
	id[0] = 0x42
	id[10] = byte(n >> 8)
	id[11] = byte(n)
	return id
}

// addTestJudge adds an active judge (general unless track is given).
func addTestJudge(s *State, n int, track string) *Judge {
	j := &Judge{
		ID: testID(1000 + n), Name: "J" + itoa(n), Code: itoa(10000000 + n), Email: "j" + itoa(n) + "@x.io",
		Track: track, Active: true, LastLocation: -1, SeenProjects: []SeenProject{},
		Skipped: map[ID]bool{}, Rankings: []ID{},
	}
	s.Judges[j.ID] = j
	s.JudgeOrder = append(s.JudgeOrder, j.ID)
	s.codeIndex[j.Code] = j.ID
	return j
}

// seeProject records that j judged p (as a finished view would), without the flow.
func seeProject(s *State, j *Judge, p *Project) {
	j.SeenProjects = append(j.SeenProjects, SeenProject{ProjectID: p.ID, Name: p.Name, Location: p.Location})
	j.Seen++
	if s.IsGeneral(j) {
		p.Seen++
	} else {
		p.TrackSeen[j.Track]++
	}
}

// hold makes p the current project of j since time since.
func hold(j *Judge, p *Project, since int64) {
	j.Current, j.CurrentSince, j.LastLocation = p.ID, since, p.Location
}

// edited tells the derived data that the test changed the state by hand (as a command
// outside the judging flow would).
func edited(s *State) {
	s.Applied++
	s.scoresChanged()
}

func ctxAt(s *State, now int64, seed uint64) *Ctx {
	return &Ctx{Time: now, Rand: NewRand(seed), Actor: System, state: s}
}

// next runs the next step for j at time now and returns the project's table or the
// reason.
func next(t *testing.T, s *State, j *Judge, now int64) (int, string) {
	t.Helper()
	edited(s)
	res := s.nextFor(j, ctxAt(s, now, 7))
	if res.Reason != "" {
		return 0, res.Reason
	}
	return s.Projects[res.ProjectID].Location, ""
}

func TestAssignSteps(t *testing.T) {
	const now = 10_000_000
	cases := []struct {
		name   string
		tables []int
		setup  func(s *State, ps []*Project, j *Judge)
		want   int    // table, or 0 with reason
		reason string // expected reason
	}{
		{"1 current project is returned", []int{1, 2}, func(s *State, ps []*Project, j *Judge) {
			hold(j, ps[1], now)
		}, 2, ""},
		{"2 hidden judge", []int{1}, func(s *State, ps []*Project, j *Judge) {
			j.Active = false
			s.Options.Deliberation = true
		}, 0, ReasonInactive},
		{"2 deliberation before paused", []int{1}, func(s *State, ps []*Project, j *Judge) {
			s.Options.Deliberation = true
			s.Options.Clock.Running = false
		}, 0, ReasonDeliberation},
		{"2 clock paused", []int{1}, func(s *State, ps []*Project, j *Judge) {
			s.Options.Clock.Running = false
		}, 0, ReasonPaused},
		{"3 seen, skipped and hidden projects are not candidates", []int{1, 2, 3, 4}, func(s *State, ps []*Project, j *Judge) {
			seeProject(s, j, ps[0])
			j.Skipped[ps[1].ID] = false
			ps[2].Active = false
			j.LastLocation = 1
		}, 4, ""},
		{"3 a busy skip excludes too", []int{1, 2}, func(s *State, ps []*Project, j *Judge) {
			j.Skipped[ps[0].ID] = true
			j.LastLocation = 1
		}, 2, ""},
		{"3 nothing left is done", []int{1, 2}, func(s *State, ps []*Project, j *Judge) {
			seeProject(s, j, ps[0])
			j.Skipped[ps[1].ID] = false
		}, 0, ReasonDone},
		{"4 track judge gets only its track's projects", []int{1, 2, 3}, func(s *State, ps []*Project, j *Judge) {
			s.Options.JudgeTracks, s.Options.Tracks, s.Options.TrackViews = true, []string{"AI"}, []int{2}
			j.Track = "AI"
			ps[2].ChallengeList = []string{"Web", "AI"}
		}, 3, ""},
		{"4 track views reached (counting viewers) is not a candidate", []int{1, 2, 3}, func(s *State, ps []*Project, j *Judge) {
			s.Options.JudgeTracks, s.Options.Tracks, s.Options.TrackViews = true, []string{"AI"}, []int{2}
			j.Track = "AI"
			for _, p := range ps {
				p.ChallengeList = []string{"AI"}
			}
			ps[0].TrackSeen["AI"] = 2 // done
			ps[1].TrackSeen["AI"] = 1 // plus one AI judge looking = 2: done
			other := addTestJudge(s, 2, "AI")
			hold(other, ps[1], now-1000)
		}, 3, ""},
		{"4 track judges ignore tracks when judge_tracks is off", []int{1, 2}, func(s *State, ps []*Project, j *Judge) {
			s.Options.Tracks, s.Options.TrackViews = []string{"AI"}, []int{1}
			s.Options.MinViews = 1 // views decide: table 1 has none
			j.Track = "AI"
			ps[1].Seen = 1
		}, 1, ""},
		{"5 busy project is dropped", []int{1, 2}, func(s *State, ps []*Project, j *Judge) {
			hold(addTestJudge(s, 2, ""), ps[0], now-1000)
			j.LastLocation = 1
		}, 2, ""},
		{"5 busy project is kept when it is the only one", []int{1, 2}, func(s *State, ps []*Project, j *Judge) {
			hold(addTestJudge(s, 2, ""), ps[0], now-1000)
			seeProject(s, j, ps[1])
		}, 1, ""},
		{"5 assignment older than twice the timer is not busy", []int{1, 2}, func(s *State, ps []*Project, j *Judge) {
			s.Options.JudgingTimer = 300
			s.Options.MinViews = 1
			hold(addTestJudge(s, 2, ""), ps[0], now-600_001) // stale
			ps[1].Seen = 1                                   // so table 1 (seen 0) wins on views
			j.LastLocation = 2
		}, 1, ""},
		{"5 assignment exactly twice the timer old is still busy", []int{1, 2}, func(s *State, ps []*Project, j *Judge) {
			s.Options.JudgingTimer = 300
			hold(addTestJudge(s, 2, ""), ps[0], now-600_000)
			ps[1].Seen = 1
			j.LastLocation = 1
		}, 2, ""},
		{"5 timer 0: assignments never go stale", []int{1, 2}, func(s *State, ps []*Project, j *Judge) {
			s.Options.JudgingTimer = 0
			hold(addTestJudge(s, 2, ""), ps[0], 1)
			ps[1].Seen = 1
			j.LastLocation = 1
		}, 2, ""},
		{"6 track judge takes the next table after its last", []int{1, 3, 5, 7}, func(s *State, ps []*Project, j *Judge) {
			s.Options.JudgeTracks, s.Options.Tracks, s.Options.TrackViews = true, []string{"AI"}, []int{3}
			j.Track = "AI"
			for _, p := range ps {
				p.ChallengeList = []string{"AI"}
			}
			ps[3].TrackSeen["AI"] = 0
			ps[1].TrackSeen["AI"] = 2 // views do not matter for track judges, only the walk
			j.LastLocation = 3
		}, 5, ""},
		{"6 track judge wraps to the lowest table", []int{1, 3, 5}, func(s *State, ps []*Project, j *Judge) {
			s.Options.JudgeTracks, s.Options.Tracks, s.Options.TrackViews = true, []string{"AI"}, []int{3}
			j.Track = "AI"
			for _, p := range ps {
				p.ChallengeList = []string{"AI"}
			}
			j.LastLocation = 5
			ps[2].Seen = 0
			seeProject(s, j, ps[2])
		}, 1, ""},
		{"7 judge's group first", []int{1, 2, 3, 4}, func(s *State, ps []*Project, j *Judge) {
			s.Options.MultiGroup, s.Options.NumGroups, s.Options.GroupSizes = true, 2, []int{2, 2}
			for _, p := range ps {
				p.Group = s.Options.GroupOfTable(p.Location)
			}
			j.Group = 1
			j.LastLocation = 1
		}, 3, ""},
		{"8 prioritized at table 9 beats unseen at table 2", []int{2, 9}, func(s *State, ps []*Project, j *Judge) {
			ps[1].Prioritized = true
			ps[1].Seen = 5
			j.LastLocation = 2
		}, 9, ""},
		{"8 lowest prioritized table", []int{2, 7, 9}, func(s *State, ps []*Project, j *Judge) {
			ps[1].Prioritized = true
			ps[2].Prioritized = true
			j.LastLocation = 9
		}, 7, ""},
		{"9 fewest views first", []int{1, 2, 3}, func(s *State, ps []*Project, j *Judge) {
			s.Options.MinViews = 3
			ps[0].Seen, ps[1].Seen, ps[2].Seen = 2, 1, 2
			j.LastLocation = 1
		}, 2, ""},
		{"9 below min_views: nearest table", []int{1, 4, 6, 10}, func(s *State, ps []*Project, j *Judge) {
			j.LastLocation = 7
		}, 6, ""},
		{"9 below min_views: nearest table below too", []int{1, 4, 9}, func(s *State, ps []*Project, j *Judge) {
			j.LastLocation = 5
		}, 4, ""},
		{"9 at min_views: least compared wins over nearest", []int{1, 2, 3, 4}, func(s *State, ps []*Project, j *Judge) {
			s.Options.MinViews = 1
			s.Options.AssignmentMode = ModeSpread
			// j saw table 1. Another judge saw tables 1 and 2, so (1,2) was compared once.
			o := addTestJudge(s, 2, "")
			seeProject(s, o, ps[0])
			seeProject(s, o, ps[1])
			seeProject(s, j, ps[0])
			ps[2].Seen, ps[3].Seen = 1, 1
			ps[0].Seen = 2
			j.LastLocation = 1
		}, 3, ""},
		{"9 least compared: ties go to the nearest table", []int{1, 2, 5, 8}, func(s *State, ps []*Project, j *Judge) {
			s.Options.MinViews = 0
			s.Options.AssignmentMode = ModeSpread
			j.LastLocation = 7
		}, 8, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, ps := tiny(t, tc.tables...)
			j := addTestJudge(s, 1, "")
			tc.setup(s, ps, j)
			loc, reason := next(t, s, j, now)
			if loc != tc.want || reason != tc.reason {
				t.Fatalf("got table %d reason %q, want table %d reason %q", loc, reason, tc.want, tc.reason)
			}
		})
	}
}

func TestAssignRecordsAssignment(t *testing.T) {
	s, ps := tiny(t, 3, 9)
	j := addTestJudge(s, 1, "")
	ps[1].Prioritized = true
	edited(s)
	c := ctxAt(s, 5000, 1)
	res := s.nextFor(j, c)
	if res.ProjectID != ps[1].ID {
		t.Fatalf("got %v", res)
	}
	if j.Current != ps[1].ID || j.CurrentSince != 5000 || j.LastLocation != 9 || j.LastActivity != 5000 || ps[1].LastActivity != 5000 {
		t.Fatalf("assignment not recorded: %+v", j)
	}
	if ps[1].Prioritized {
		t.Fatal("prioritized flag not cleared on assignment")
	}
}

func TestAssignFirstIsRandomFromSeed(t *testing.T) {
	// On the first assignment (no last location) the choice among equals is random from
	// the seed: the same seed gives the same table, and some seeds differ.
	pick := func(seed uint64) int {
		s, _ := tiny(t, 1, 2, 3, 4, 5, 6, 7, 8)
		j := addTestJudge(s, 1, "")
		edited(s)
		res := s.nextFor(j, ctxAt(s, 1000, seed))
		return s.Projects[res.ProjectID].Location
	}
	seen := map[int]bool{}
	for seed := uint64(0); seed < 40; seed++ {
		a, b := pick(seed), pick(seed)
		if a != b {
			t.Fatalf("seed %d gave %d then %d", seed, a, b)
		}
		seen[a] = true
	}
	if len(seen) < 3 {
		t.Fatalf("first assignments not spread: %v", seen)
	}
}

func TestAssignGroupSwitchWhenGroupEmpty(t *testing.T) {
	s, ps := tiny(t, 1, 2, 3, 4)
	s.Options.MultiGroup, s.Options.NumGroups, s.Options.GroupSizes = true, 2, []int{2, 2}
	for _, p := range ps {
		p.Group = s.Options.GroupOfTable(p.Location)
	}
	j := addTestJudge(s, 1, "")
	j.Group, j.GroupSeen = 0, 4
	seeProject(s, j, ps[0])
	j.Skipped[ps[1].ID] = false
	j.LastLocation = 2
	edited(s)
	c := ctxAt(s, 1000, 1)
	res := s.nextFor(j, c)
	if loc := s.Projects[res.ProjectID].Location; loc != 3 {
		t.Fatalf("got table %d, want 3", loc)
	}
	if j.Group != 1 || j.GroupSeen != 0 {
		t.Fatalf("judge not moved: group %d group_seen %d", j.Group, j.GroupSeen)
	}
	if !hasJudgeEvent(c.events, j.ID, "group switched") {
		t.Fatalf("no judge event: %+v", c.events)
	}
}

func hasJudgeEvent(evs []Event, judge ID, reason string) bool {
	for _, ev := range evs {
		if ev.Type == EvJudge && ev.Judge == judge && ev.To == ToJudge {
			if je, ok := ev.Data.(JudgeEvent); ok && je.Reason == reason {
				return true
			}
		}
	}
	return false
}

func TestPairCountsSparseAndForgetful(t *testing.T) {
	s, ps := tiny(t, 1, 2, 3, 4)
	a := addTestJudge(s, 1, "")
	b := addTestJudge(s, 2, "")
	seeProject(s, a, ps[0])
	seeProject(s, a, ps[1])
	seeProject(s, a, ps[2])
	seeProject(s, b, ps[0])
	seeProject(s, b, ps[1])
	edited(s)
	if n := s.pairCountOf(ps[0].ID, ps[1].ID); n != 2 {
		t.Fatalf("pair(1,2) = %d, want 2 (both judges)", n)
	}
	if n := s.pairCountOf(ps[1].ID, ps[2].ID); n != 1 {
		t.Fatalf("pair(2,3) = %d, want 1", n)
	}
	if n := s.pairCountOf(ps[0].ID, ps[3].ID); n != 0 {
		t.Fatalf("pair(1,4) = %d, want 0", n)
	}
	// Delete project 2 (as the admin command does: remove it everywhere, then the hook).
	delete(s.Projects, ps[1].ID)
	delete(s.locIndex, ps[1].Location)
	a.SeenProjects = append(a.SeenProjects[:1], a.SeenProjects[2:]...)
	b.SeenProjects = b.SeenProjects[:1]
	s.forgetProject(ps[1].ID)
	if n := s.pairCountOf(ps[0].ID, ps[2].ID); n != 1 {
		t.Fatalf("after deleting table 2, pair(1,3) = %d, want 1", n)
	}
	if n := s.pairCountOf(ps[0].ID, ps[1].ID); n != 0 {
		t.Fatalf("deleted project still counted: %d", n)
	}
	// Delete judge a.
	delete(s.Judges, a.ID)
	s.JudgeOrder = s.JudgeOrder[1:]
	s.forgetJudge(a)
	if n := s.pairCountOf(ps[0].ID, ps[2].ID); n != 0 {
		t.Fatalf("deleted judge still counted: %d", n)
	}
	// Sparse: only pairs that exist are stored.
	total := 0
	for i := range s.jd().nbrs {
		total += s.jd().nbrs[i].size()
	}
	if total != 0 {
		t.Fatalf("%d pair entries left, want 0", total)
	}
}

// TestFastPathMatchesScan compares the fast path of step 9 with the full scan on many
// random small events: same project for the same seed, every time.
func TestFastPathMatchesScan(t *testing.T) {
	rnd := NewRand(5)
	fast, scans := 0, 0
	for round := 0; round < 400; round++ {
		nP := 5 + rnd.Intn(40)
		tables := make([]int, nP)
		loc := 0
		for i := range tables {
			loc += 1 + rnd.Intn(3) // gaps between tables
			tables[i] = loc
		}
		s, ps := tiny(t, tables...)
		s.Options.MinViews = rnd.Intn(4)
		s.Options.JudgingTimer = []int{0, 60, 300}[rnd.Intn(3)]
		now := int64(1_000_000)
		s.FocusNeed = []int{FocusNeedBoundary, FocusNeedFree}[rnd.Intn(2)]
		for _, p := range ps {
			p.Seen = rnd.Intn(4)
			p.Active = rnd.Intn(10) > 0
			p.Ratings = ProjectRating{PTop: []float64{0, 0.5, 0.9}[rnd.Intn(3)], SD: 1}
		}
		var judges []*Judge
		for i := 0; i < 1+rnd.Intn(8); i++ {
			judges = append(judges, addTestJudge(s, i+1, ""))
		}
		for _, j := range judges {
			for k := 0; k < rnd.Intn(6); k++ {
				p := ps[rnd.Intn(nP)]
				if j.seenIndex(p.ID) < 0 {
					j.SeenProjects = append(j.SeenProjects, SeenProject{ProjectID: p.ID, Location: p.Location})
				}
			}
			if rnd.Intn(3) == 0 {
				j.Skipped[ps[rnd.Intn(nP)].ID] = rnd.Intn(2) == 0
			}
		}
		for _, j := range judges[1:] {
			if rnd.Intn(2) == 0 {
				hold(j, ps[rnd.Intn(nP)], now-int64(rnd.Intn(800_000)))
			}
		}
		j := judges[0]
		j.Current = ZeroID
		j.LastLocation = rnd.Intn(loc + 2)
		edited(s)
		seed := rnd.Uint64()
		x := s.jd()
		if round%2 == 1 { // exercise the walk and its give-up on small events
			x.bigLevel, x.maxWalk = 2, 1+rnd.Intn(12)
		}
		x.noFast = true
		want := s.pickNext(j, ctxAt(s, now, seed))
		x.noFast = false
		x.fastHits = 0
		got := s.pickNext(j, ctxAt(s, now, seed))
		if got != want {
			t.Fatalf("round %d: fast path %v, scan %v", round, got, want)
		}
		if x.fastHits > 0 {
			fast++
			x.fastHits = 0
		} else {
			scans++
		}
	}
	if fast == 0 {
		t.Fatal("fast path never taken")
	}
	t.Logf("fast path decided %d rounds, scan %d", fast, scans)
}

// TestHoldQueueStaysSmall: assignments come and go forever; the queue of holds must not
// grow with them (with and without a judging timer).
func TestHoldQueueStaysSmall(t *testing.T) {
	for _, timer := range []int{0, 300} {
		r := newRig(t)
		r.e.s.Options.JudgingTimer = timer
		r.projects(600)
		js := r.judges(3, "")
		r.must(Admin, &ClockUnpause{})
		for i := 0; i < 3000; i++ {
			j := js[i%3]
			r.next(j)
			if r.judge(j).Current.IsZero() {
				continue
			}
			r.must(JudgeActor(j), &JudgeSkip{Judge: j, Reason: SkipBusy})
			if i%10 == 0 && !r.judge(j).Current.IsZero() {
				r.must(JudgeActor(j), &JudgeFinish{Judge: j})
			}
		}
		if r.e.s.jd().fastHits < 3000 {
			t.Fatalf("only %d assignments", r.e.s.jd().fastHits)
		}
		if n := len(r.e.s.jd().holdQ); n > 2*3+1024+1 {
			t.Fatalf("timer %d: hold queue has %d entries for 3 judges", timer, n)
		}
	}
}

// TestMarksSurviveEpochWrap: the per-assignment marks are epoch numbers; near the end
// of the counter they are cleared before an assignment, never in the middle of one.
func TestMarksSurviveEpochWrap(t *testing.T) {
	for _, start := range []uint32{1<<32 - 6, 1<<32 - 5, 1<<32 - 4, 1<<32 - 3, 1<<32 - 2, 1<<32 - 1} {
		s, ps := tiny(t, 1, 2, 3)
		j := addTestJudge(s, 1, "")
		o := addTestJudge(s, 2, "")
		seeProject(s, o, ps[0])
		seeProject(s, o, ps[1])
		seeProject(s, j, ps[0]) // j saw table 1; pair sums are needed (min_views 0)
		seeProject(s, j, ps[1])
		s.Options.MinViews = 0
		j.LastLocation = 1
		edited(s)
		x := s.jd()
		x.sync(s)
		x.epoch = start
		for i := range x.mark { // marks left by the first assignments of the count (epoch 0)
			x.mark[i], x.sumMark[i] = 0, 0
		}
		res := s.nextFor(j, ctxAt(s, 1000, 3))
		if res.ProjectID.IsZero() {
			t.Fatalf("epoch %d: no project (%s), want table 3", start, res.Reason)
		}
		if loc := s.Projects[res.ProjectID].Location; loc != 3 {
			t.Fatalf("epoch %d: got table %d, want 3 (tables 1 and 2 judged)", start, loc)
		}
	}
}
