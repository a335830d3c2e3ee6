package worker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"podium/engine"
	"podium/engine/fit"
	"podium/persist"
)

// ratedNode is a single node with the ratings fit running on it, as the server runs.
type ratedNode struct {
	*persist.Node
	fit *Ratings
}

func openRated(t *testing.T, dir string, opts RatingsOptions) *ratedNode {
	t.Helper()
	n, err := persist.Open(dir, persist.Options{Log: zerolog.Nop()})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return &ratedNode{Node: n, fit: RatingsStart(n, opts)}
}

// Close stops the fit, then the node.
func (n *ratedNode) Close() error {
	n.fit.Stop()
	return n.Node.Close()
}

func mustSubmit(t *testing.T, n *ratedNode, cmd engine.Command) any {
	t.Helper()
	res, err := n.Submit(context.Background(), engine.Admin, cmd)
	if err != nil {
		t.Fatalf("submit %s: %v", cmd.Kind(), err)
	}
	return res
}

func addJudge(t *testing.T, n *ratedNode, i int) engine.ID {
	t.Helper()
	res := mustSubmit(t, n, &engine.CreateJudges{
		Judges: []engine.NewJudge{{Name: fmt.Sprintf("Judge %d", i), Email: fmt.Sprintf("j%d@example.com", i)}},
		Codes:  []string{fmt.Sprintf("%08d", 10000000+i)},
	})
	return res.([]engine.CreatedJudge)[0].ID
}

func addProject(t *testing.T, n *ratedNode, i int) engine.ID {
	t.Helper()
	res := mustSubmit(t, n, &engine.CreateProjects{Projects: []engine.NewProject{{Name: fmt.Sprintf("Project %d", i), ChallengeList: []string{"AI"}}}})
	return res.(engine.CreatedProjects).IDs[0]
}

// judgeRounds has every judge take rounds views (next, finish, rank all it saw, best
// first by project order).
func judgeRounds(t *testing.T, n *ratedNode, judges []engine.ID, rounds int) {
	t.Helper()
	for r := 0; r < rounds; r++ {
		for _, j := range judges {
			a := engine.JudgeActor(j)
			ctx := context.Background()
			if _, err := n.Submit(ctx, a, &engine.JudgeNext{Judge: j}); err != nil {
				t.Fatal(err)
			}
			if _, err := n.Submit(ctx, a, &engine.JudgeFinish{Judge: j, Starred: r == 0}); err != nil {
				t.Fatal(err)
			}
			var seen []engine.ID
			n.Read(func(s *engine.State) {
				for _, sp := range s.Judges[j].SeenProjects {
					seen = append(seen, sp.ProjectID)
				}
			})
			if _, err := n.Submit(ctx, a, &engine.JudgeRank{Judge: j, Ranking: seen}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// fittedRatings counts the projects with a fitted (non-zero) rating, and returns the
// number of applied commands.
func fittedRatings(n *ratedNode) (fitted int, applied uint64) {
	n.Read(func(s *engine.State) {
		applied = s.Applied
		for _, p := range s.Projects {
			if p.Ratings.Rating != 0 {
				fitted++
			}
		}
	})
	return fitted, applied
}

// TestRatingsRefitAfterRestart: changes the fitter had not caught up with when the
// node stopped are fitted after the next start without any new change; a start with
// current ratings stores nothing. Pending counts the changes no fit has seen
// and reads 0 once the ratings are current.
func TestRatingsRefitAfterRestart(t *testing.T) {
	dir := t.TempDir()
	// A fitter that never gets to fit during the first run.
	n := openRated(t, dir, RatingsOptions{Every: 1 << 30, Quiet: time.Hour})
	var projects, judges []engine.ID
	for i := 0; i < 12; i++ {
		projects = append(projects, addProject(t, n, i))
	}
	for i := 0; i < 4; i++ {
		judges = append(judges, addJudge(t, n, i))
	}
	mustSubmit(t, n, &engine.ClockUnpause{})
	judgeRounds(t, n, judges, 3)
	if f, _ := fittedRatings(n); f != 0 {
		t.Fatalf("%d projects fitted in the first run", f)
	}
	if p := n.fit.Pending(); p < 4*3 {
		t.Fatalf("RatingsPending %d after 12 unfitted finishes", p)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	n = openRated(t, dir, RatingsOptions{})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if f, _ := fittedRatings(n); f > 0 && n.fit.Pending() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no ratings fitted after the restart")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var before []engine.ProjectRating
	n.Read(func(s *engine.State) {
		for _, id := range projects {
			before = append(before, s.Projects[id].Ratings)
		}
	})
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	// The ratings are current now: a start checks them and stores nothing.
	n = openRated(t, dir, RatingsOptions{})
	defer n.Close()
	_, applied := fittedRatings(n)
	time.Sleep(1500 * time.Millisecond) // the check runs at once after the start
	if _, now := fittedRatings(n); now != applied {
		t.Fatalf("a start with current ratings applied %d commands", now-applied)
	}
	if p := n.fit.Pending(); p != 0 {
		t.Fatalf("RatingsPending %d after the start's check found the ratings current", p)
	}
	n.Read(func(s *engine.State) {
		for i, id := range projects {
			if s.Projects[id].Ratings != before[i] {
				t.Fatalf("project %d: ratings %+v, were %+v", i, s.Projects[id].Ratings, before[i])
			}
		}
	})
}

// TestRatingsFollowTheWriter: with the fast cadence (RATINGS_MIN_GAP=0, RATINGS_EVERY=1,
// RATINGS_QUIET=0) the writer's notice starts a fit after every finish, and the fit
// that includes it is stored: Pending reads 0 again and the stored ratings are what a
// fresh fit of the current inputs gives.
func TestRatingsFollowTheWriter(t *testing.T) {
	n := openRated(t, t.TempDir(), RatingsOptions{Every: 1, MinGap: -1, Quiet: -1})
	defer n.Close()
	for i := 0; i < 8; i++ {
		addProject(t, n, i)
	}
	judges := []engine.ID{addJudge(t, n, 0), addJudge(t, n, 1)}
	mustSubmit(t, n, &engine.ClockUnpause{})
	for round := 0; round < 3; round++ {
		judgeRounds(t, n, judges, 1)
		waitCurrent(t, n)
		var in *engine.RatingInput
		n.Read(func(s *engine.State) { in = s.RatingInput() })
		if round > 0 && len(in.Judges) != 2 {
			t.Fatalf("round %d: %d judges in the fit's inputs", round, len(in.Judges))
		}
		if in.Changes(fit.Ratings(in)) {
			t.Fatalf("round %d: Pending is 0 but the stored ratings are not the fit of the current inputs", round)
		}
	}
}

// waitCurrent waits (at most a generous 30 s, so a broken fitter fails rather than
// hangs) until no change is pending.
func waitCurrent(t *testing.T, n *ratedNode) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for n.fit.Pending() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Pending still %d", n.fit.Pending())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStartKeepsCurrentRatings: ratings stored with every change seen are kept as they
// are across restarts, even when a fit of the same inputs would give other numbers (a
// fit from another starting point stops elsewhere on a flat posterior): a start fits
// only when the state says a change is missing (State.RatingsCurrent), also after a
// snapshot. A finish after the stored fit is fitted after the next start.
func TestStartKeepsCurrentRatings(t *testing.T) {
	dir := t.TempDir()
	n := openRated(t, dir, RatingsOptions{Every: 1 << 30, Quiet: time.Hour})
	for i := 0; i < 8; i++ {
		addProject(t, n, i)
	}
	judges := []engine.ID{addJudge(t, n, 0), addJudge(t, n, 1), addJudge(t, n, 2)}
	mustSubmit(t, n, &engine.ClockUnpause{})
	judgeRounds(t, n, judges, 2)
	// Ratings no fit would give: the projects' table order, every judge 0.5.
	var in *engine.RatingInput
	n.Read(func(s *engine.State) { in = s.RatingInput() })
	cmd := fit.Ratings(in)
	for i := range cmd.Rating {
		cmd.Rating[i] = float64(i) / 4
	}
	for i := range cmd.Reliability {
		cmd.Reliability[i] = 0.5
	}
	if _, err := n.Submit(context.Background(), engine.System, cmd); err != nil {
		t.Fatal(err)
	}
	stored := func(n *ratedNode) (r []float64, current bool) {
		n.Read(func(s *engine.State) {
			for _, id := range in.Projects {
				r = append(r, s.Projects[id].Ratings.Rating)
			}
			current = s.RatingsCurrent()
		})
		return r, current
	}
	want, current := stored(n)
	if !current {
		t.Fatal("RatingsCurrent false right after a fit of the current inputs was stored")
	}
	for round, snapshot := range []bool{false, true} {
		if snapshot {
			if err := n.Snapshot(); err != nil {
				t.Fatal(err)
			}
		}
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
		n = openRated(t, dir, RatingsOptions{})
		waitCurrent(t, n)
		got, current := stored(n)
		if !current || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("restart %d (snapshot %v): ratings %v (current %v), were %v", round, snapshot, got, current, want)
		}
	}
	// One more finish: the state says a change is missing, and the start fits it.
	judgeRounds(t, n, judges[:1], 1)
	if _, current := stored(n); current {
		t.Fatal("RatingsCurrent true after a finish no fit has seen")
	}
	n.fit.Stop()
	if err := n.Node.Close(); err != nil {
		t.Fatal(err)
	}
	n = openRated(t, dir, RatingsOptions{})
	defer n.Close()
	waitCurrent(t, n)
	if got, current := stored(n); !current || fmt.Sprint(got) == fmt.Sprint(want) {
		t.Fatalf("after a start with a change missing: ratings %v (current %v), were %v", got, current, want)
	}
}
