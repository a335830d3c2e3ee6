package engine

import (
	"math"
	"slices"
	"testing"
)

// judged gives j a seen list, a ranking and stars by hand.
func judged(s *State, j *Judge, seen []*Project, ranking []*Project, starred ...*Project) {
	for _, p := range seen {
		seeProject(s, j, p)
	}
	for _, p := range ranking {
		j.Rankings = append(j.Rankings, p.ID)
	}
	for _, p := range starred {
		j.SeenProjects[j.seenIndex(p.ID)].Starred = true
	}
}

func wantScore(t *testing.T, s *State, name string, p *Project, score, stars int, trackStars map[string]int) {
	t.Helper()
	got := s.ScoreOf(p.ID)
	if got.Score != score || got.Stars != stars {
		t.Fatalf("%s: %s score %d stars %d, want %d and %d", name, p.Name, got.Score, got.Stars, score, stars)
	}
	if len(got.TrackStars) != len(trackStars) {
		t.Fatalf("%s: %s track_stars %v, want %v", name, p.Name, got.TrackStars, trackStars)
	}
	for k, v := range trackStars {
		if got.TrackStars[k] != v {
			t.Fatalf("%s: %s track_stars %v, want %v", name, p.Name, got.TrackStars, trackStars)
		}
	}
}

func TestCopelandScoresByHand(t *testing.T) {
	s, ps := tiny(t, 1, 2, 3, 4)
	A, B, C, D := ps[0], ps[1], ps[2], ps[3]
	s.Options.JudgeTracks, s.Options.Tracks, s.Options.TrackViews = true, []string{"AI"}, []int{3}
	j1 := addTestJudge(s, 1, "")
	j2 := addTestJudge(s, 2, "")
	j3 := addTestJudge(s, 3, "")
	j4 := addTestJudge(s, 4, "AI")
	j5 := addTestJudge(s, 5, "")
	// j1 saw A, B, C and ranked B, A: rc = 2, uc = 1.
	//   B (i=0): 2+1-1-0 = 2;  A (i=1): 2+1-1-2 = 0;  C unranked: -2.  Starred C.
	judged(s, j1, []*Project{A, B, C}, []*Project{B, A}, C)
	// j2 saw A, D and ranked nothing: rc = 0, uc = 2: A and D get -0 = 0. Starred A.
	judged(s, j2, []*Project{A, D}, nil, A)
	// j3 saw C, D and ranked D, C: rc = 2, uc = 0: D: 2+0-1-0 = 1; C: 2+0-1-2 = -1. Starred D.
	judged(s, j3, []*Project{C, D}, []*Project{D, C}, D)
	// j4 is an AI track judge: no points; its stars of A and B go to track_stars["AI"].
	judged(s, j4, []*Project{A, B}, []*Project{A}, A, B)
	// j5 is hidden: would give A 1+... but adds nothing. Saw A, B, ranked A, B, starred B.
	judged(s, j5, []*Project{A, B}, []*Project{A, B}, B)
	j5.Active = false
	edited(s)

	// A: 0 (j1) + 0 (j2) = 0; B: 2; C: -2 (j1) - 1 (j3) = -3; D: 0 (j2) + 1 (j3) = 1.
	wantScore(t, s, "start", A, 0, 1, map[string]int{"AI": 1})
	wantScore(t, s, "start", B, 2, 0, map[string]int{"AI": 1})
	wantScore(t, s, "start", C, -3, 1, nil)
	wantScore(t, s, "start", D, 1, 1, nil)

	// Unhide j5 (the hide command calls scoresChanged). j5: rc = 2, uc = 0:
	//   A: 2+0-1-0 = 1;  B: 2+0-1-2 = -1; starred B.
	j5.Active = true
	s.scoresChanged()
	wantScore(t, s, "unhidden", A, 1, 1, map[string]int{"AI": 1})
	wantScore(t, s, "unhidden", B, 1, 1, map[string]int{"AI": 1})

	// Delete j1 (the delete command removes it and calls forgetJudge).
	//   A: 0 (j2) + 1 (j5) = 1; B: -1 (j5); C: -1 (j3); D: 1; C loses j1's star.
	delete(s.Judges, j1.ID)
	s.JudgeOrder = s.JudgeOrder[1:]
	s.forgetJudge(j1)
	wantScore(t, s, "j1 deleted", A, 1, 1, map[string]int{"AI": 1})
	wantScore(t, s, "j1 deleted", B, -1, 1, map[string]int{"AI": 1})
	wantScore(t, s, "j1 deleted", C, -1, 0, nil)

	// Tracks off: j4 judges as a general judge. j4: rc = 1, uc = 1:
	//   A: 1+1-1-0 = 1; B (unranked): -1. Its stars now count in stars.
	//   A: 0 + 1 + 1 = 2, stars 1 + 1 = 2; B: -1 - 1 = -2, stars 1 + 1 = 2.
	s.Options.JudgeTracks = false
	wantScore(t, s, "tracks off", A, 2, 2, nil)
	wantScore(t, s, "tracks off", B, -2, 2, nil)

	// Delete project D (removed from j2 and j3 first, then forgetProject).
	//   j3: seen C only, ranking C: rc = 1, uc = 0: C gets 1+0-1-0 = 0.
	//   j2: seen A only, no ranking: A gets 0. C: 0 total.
	for _, j := range []*Judge{j2, j3} {
		j.SeenProjects = j.SeenProjects[:1]
	}
	j3.Rankings = []ID{C.ID}
	delete(s.Projects, D.ID)
	s.forgetProject(D.ID)
	wantScore(t, s, "D deleted", C, 0, 0, nil)
}

func TestScoresIncrementalMatchesFull(t *testing.T) {
	r := newRig(t)
	r.projects(12)
	js := r.judges(5, "")
	r.must(Admin, &ClockUnpause{})
	for round := 0; round < 4; round++ {
		for i, j := range js {
			r.next(j)
			r.must(JudgeActor(j), &JudgeFinish{Judge: j, Starred: (round+i)%3 == 0})
			jj := r.judge(j)
			// Rank the judged projects in reverse order of judging, leaving the first out.
			var rk []ID
			for k := len(jj.SeenProjects) - 1; k >= 1; k-- {
				rk = append(rk, jj.SeenProjects[k].ProjectID)
			}
			r.must(JudgeActor(j), &JudgeRank{Judge: j, Ranking: rk})
			// Read scores now so that the next change goes through the incremental path.
			for _, p := range r.e.s.Projects {
				r.e.s.ScoreOf(p.ID)
			}
		}
		r.must(JudgeActor(js[0]), &JudgeStar{Judge: js[0], Project: r.judge(js[0]).SeenProjects[0].ProjectID, Starred: round%2 == 0})
	}
	s := r.e.s
	full := newJudgingData(new(uint64))
	for id := range s.Projects {
		inc := s.ScoreOf(id)
		save := s.jx
		s.jx = full
		want := s.ScoreOf(id)
		s.jx = save
		if inc.Score != want.Score || inc.Stars != want.Stars || inc.Votes != want.Votes || inc.Mu != want.Mu || inc.SigmaSq != want.SigmaSq {
			t.Fatalf("project %s: incremental %+v, full %+v", id, inc, want)
		}
	}
}

func TestCrowdBTByHand(t *testing.T) {
	s, ps := tiny(t, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	X, Y, Z, W, P, Q, T1, T2, U := ps[0], ps[1], ps[2], ps[3], ps[4], ps[5], ps[6], ps[7], ps[8]
	s.Options.JudgeTracks, s.Options.Tracks, s.Options.TrackViews = true, []string{"AI"}, []int{3}
	judged(s, addTestJudge(s, 1, ""), []*Project{X, Y}, []*Project{X, Y})  // X beats Y
	judged(s, addTestJudge(s, 2, ""), []*Project{Z, W}, []*Project{Z, W})  // Z beats W
	judged(s, addTestJudge(s, 3, ""), []*Project{P, Q}, []*Project{P})     // P beats unranked Q
	judged(s, addTestJudge(s, 4, "AI"), []*Project{T1, U}, []*Project{T1}) // track judge: ignored
	hid := addTestJudge(s, 5, "")                                          // hidden judge: ignored
	judged(s, hid, []*Project{T2, U}, []*Project{T2})
	hid.Active = false
	edited(s)

	// Each judge starts from alpha = 10, beta = 1 and each pair from mu = 0, sigma_sq = 1,
	// so every one of the three outcomes is the same computation. With e^0 = 1:
	//   mu step:    alpha/(alpha+beta) - 1/2 = 10/11 - 1/2 = 9/22
	//   winner mu = 0 + 1 * 9/22 = 0.40909...,  loser mu = -9/22
	//   sigma step: alpha*beta/(alpha+beta)^2 - 1/4 = 10/121 - 1/4 = -81/484
	//   sigma_sq  = 1 * max(1 - 81/484, kappa) = 403/484 = 0.83264...
	//   votes = 1 each.
	win, lose, sig := 9.0/22, -9.0/22, 403.0/484
	for _, c := range []struct {
		p       *Project
		mu, sig float64
		votes   int
	}{
		{X, win, sig, 1}, {Y, lose, sig, 1}, {Z, win, sig, 1}, {W, lose, sig, 1}, {P, win, sig, 1}, {Q, lose, sig, 1},
		{T1, 0, 1, 0}, {T2, 0, 1, 0}, {U, 0, 1, 0},
	} {
		got := s.ScoreOf(c.p.ID)
		if math.Abs(got.Mu-c.mu) > 1e-12 || math.Abs(got.SigmaSq-c.sig) > 1e-12 || got.Votes != c.votes {
			t.Fatalf("%s: mu %v sigma_sq %v votes %d, want %v %v %d", c.p.Name, got.Mu, got.SigmaSq, got.Votes, c.mu, c.sig, c.votes)
		}
	}

	// The judge's reliability after that first outcome is unchanged (moment matching of
	// c1 = 1/2: E = 10/11, E2 = 5/6, var = 5/726, alpha' = (10/11-5/6)(10/11)/(5/726) = 10,
	// beta' = (5/66)(1/11)(726/5) = 1), so the update function must return 10 and 1.
	a, b, _, _, _, _ := crowdUpdate(10, 1, 0, 1, 0, 1)
	if math.Abs(a-10) > 1e-9 || math.Abs(b-1) > 1e-9 {
		t.Fatalf("alpha, beta after one outcome = %v, %v, want 10, 1", a, b)
	}
}

func TestCrowdBTOrderAndVotes(t *testing.T) {
	// One judge ranks A > B > C and saw D unranked: outcomes in order
	// A>B, A>C, A>D, B>C, B>D, C>D. Votes: A 3, B 3, C 3, D 3. The best is ranked first.
	s, ps := tiny(t, 1, 2, 3, 4)
	A, B, C, D := ps[0], ps[1], ps[2], ps[3]
	judged(s, addTestJudge(s, 1, ""), []*Project{D, C, B, A}, []*Project{A, B, C})
	edited(s)
	mus := []float64{}
	for _, p := range []*Project{A, B, C, D} {
		sc := s.ScoreOf(p.ID)
		if sc.Votes != 3 {
			t.Fatalf("%s votes %d, want 3", p.Name, sc.Votes)
		}
		mus = append(mus, sc.Mu)
	}
	for i := 1; i < len(mus); i++ {
		if !(mus[i-1] > mus[i]) {
			t.Fatalf("mu not decreasing with rank: %v", mus)
		}
	}
	// Replaying the same outcomes by hand with crowdUpdate gives the same numbers.
	type pv struct{ mu, sig float64 }
	v := map[*Project]*pv{A: {0, 1}, B: {0, 1}, C: {0, 1}, D: {0, 1}}
	al, be := 10.0, 1.0
	for _, o := range [][2]*Project{{A, B}, {A, C}, {A, D}, {B, C}, {B, D}, {C, D}} {
		w, l := v[o[0]], v[o[1]]
		al, be, w.mu, w.sig, l.mu, l.sig = crowdUpdate(al, be, w.mu, w.sig, l.mu, l.sig)
	}
	for p, want := range v {
		if got := s.ScoreOf(p.ID); got.Mu != want.mu || got.SigmaSq != want.sig {
			t.Fatalf("%s: %v %v, want %v %v", p.Name, got.Mu, got.SigmaSq, want.mu, want.sig)
		}
	}
}

func TestCrowdBTComputedOutsideTheLock(t *testing.T) {
	s, ps := tiny(t, 1, 2, 3)
	j := addTestJudge(s, 1, "")
	judged(s, j, []*Project{ps[0], ps[1], ps[2]}, []*Project{ps[0], ps[1]})
	edited(s)
	in := s.crowdBTInput()
	if in == nil {
		t.Fatal("stale values but no input")
	}
	res := in.compute()
	// A ranking changes before the result comes back: the result must be dropped.
	j.Rankings = []ID{ps[2].ID}
	s.jd().scores.judgeChanged(j.ID, true)
	s.storeCrowdBT(res)
	if got := s.ScoreOf(ps[2].ID); got.Votes != 2 || got.Mu <= 0 {
		t.Fatalf("stale result used: %+v", got)
	}
	if s.crowdBTInput() != nil {
		t.Fatal("fresh values reported stale")
	}
	// A result for the current inputs is used as is.
	j.Rankings = []ID{ps[1].ID}
	s.jd().scores.judgeChanged(j.ID, true)
	res = s.crowdBTInput().compute()
	s.storeCrowdBT(res)
	if s.crowdBTInput() != nil {
		t.Fatal("stored result not used")
	}
	if got := s.ScoreOf(ps[1].ID); got.Votes != 2 || got.Mu <= 0 {
		t.Fatalf("stored result: %+v", got)
	}
	// The admin list does not need Crowd-BT.
	if got := s.CopelandOf(ps[1].ID); got.Score != 2 || got.Votes != 0 {
		t.Fatalf("copeland %+v", got)
	}
}

// TestJudgedListsLongMatchesShort: the set-based path for long seen lists gives exactly
// the scanned path's lists, with duplicate views, deleted projects, rankings that name
// unseen or repeated projects, and lists on both sides of the threshold.
func TestJudgedListsLongMatchesShort(t *testing.T) {
	rnd := NewRand(7)
	s := NewState()
	var ids []ID
	for i := 0; i < 80; i++ {
		id := ID{byte(i + 1), 9}
		ids = append(ids, id)
		if i%13 != 0 { // every 13th project "deleted": seen but no longer in s.Projects
			s.Projects[id] = &Project{ID: id}
		}
	}
	for trial := 0; trial < 300; trial++ {
		j := &Judge{}
		for k, n := 0, rnd.Intn(3*shortList); k < n; k++ {
			j.SeenProjects = append(j.SeenProjects, SeenProject{ProjectID: ids[rnd.Intn(len(ids))]})
		}
		for k, n := 0, rnd.Intn(len(j.SeenProjects)+3); k < n; k++ {
			j.Rankings = append(j.Rankings, ids[rnd.Intn(len(ids))])
		}
		r1, u1 := s.judgedListsLong(j)
		// The scanned path, whatever the length.
		var seen, r2, u2 []ID
		for _, sp := range j.SeenProjects {
			if _, ok := s.Projects[sp.ProjectID]; ok && !hasID(seen, sp.ProjectID) {
				seen = append(seen, sp.ProjectID)
			}
		}
		for _, id := range j.Rankings {
			if hasID(seen, id) && !hasID(r2, id) {
				r2 = append(r2, id)
			}
		}
		for _, id := range seen {
			if !hasID(r2, id) {
				u2 = append(u2, id)
			}
		}
		if !slices.Equal(r1, r2) || !slices.Equal(u1, u2) {
			t.Fatalf("trial %d: set path %v / %v, scan path %v / %v", trial, r1, u1, r2, u2)
		}
		r3, u3 := s.judgedLists(j)
		if !slices.Equal(r3, r2) || !slices.Equal(u3, u2) {
			t.Fatalf("trial %d: judgedLists %v / %v, want %v / %v", trial, r3, u3, r2, u2)
		}
	}
}
