package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Ranks broken by Copeland scores come out the same whether the tied projects are
// scored alone (a restored state, whose score cache must be redone whole) or through
// the filled cache: few ties (scored alone) and many (through the cache).
func TestTiedRanksAfterRestore(t *testing.T) {
	for _, nTied := range []int{5, maxTiedAlone + 6} {
		t.Run(fmt.Sprint(nTied, " tied"), func(t *testing.T) { tiedRanksAfterRestore(t, nTied) })
	}
	t.Run("5 tied, judges read in two halves", func(t *testing.T) {
		defer splitHalves()()
		tiedRanksAfterRestore(t, 5)
	})
}

// splitHalves makes the tie scans read every event's judges in two halves side by
// side, as a big event's are, until the returned function is called.
func splitHalves() (restore func()) {
	at := splitScanAt
	splitScanAt = 2
	return func() { splitScanAt = at }
}

func tiedRanksAfterRestore(t *testing.T, nTied int) {
	live := New()
	rec := newRecorder(t, live, 5)
	ps := make([]NewProject, 120)
	for i := range ps {
		ps[i] = NewProject{Name: fmt.Sprint("p", i)}
	}
	rec.apply(Admin, &CreateProjects{Projects: ps})
	var judges []ID
	for i := 0; i < 30; i++ {
		res := rec.apply(Admin, &CreateJudges{Judges: []NewJudge{{Name: fmt.Sprint("j", i), Email: fmt.Sprintf("j%d@x.org", i)}}, Codes: []string{fmt.Sprintf("%08d", i+1)}})
		judges = append(judges, res.([]CreatedJudge)[0].ID)
	}
	rec.apply(Admin, &ClockUnpause{})
	r := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 8; round++ {
		for _, j := range judges {
			rec.apply(JudgeActor(j), &JudgeNext{Judge: j})
			rec.apply(JudgeActor(j), &JudgeFinish{Judge: j})
		}
	}
	for _, j := range judges {
		var seen []ID
		live.Read(func(s *State) {
			for _, sp := range s.Judges[j].SeenProjects {
				seen = append(seen, sp.ProjectID)
			}
		})
		r.Shuffle(len(seen), func(a, b int) { seen[a], seen[b] = seen[b], seen[a] })
		rec.apply(JudgeActor(j), &JudgeRank{Judge: j, Ranking: seen[:5]})
	}
	fit := &SetRatings{}
	live.Read(func(s *State) {
		for i, p := range s.ProjectsByLocation() {
			rating := r.NormFloat64()
			if i < nTied {
				rating = 0.25
			}
			fit.Projects, fit.Rating = append(fit.Projects, p.ID), append(fit.Rating, rating)
			fit.SD, fit.PTop, fit.PTop3 = append(fit.SD, 0.5), append(fit.PTop, 0.1), append(fit.PTop3, 0.2)
		}
	})
	snap, _, err := live.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	restored := New()
	if err := restored.Restore(snap); err != nil {
		t.Fatal(err)
	}
	scores := map[int]bool{}
	live.Read(func(s *State) { // fills the live engine's cache
		for _, id := range fit.Projects[:nTied] {
			scores[s.ScoreOf(id).Score] = true
		}
	})
	if len(scores) < 2 {
		t.Fatalf("the tied projects' scores are all the same (%v): the test orders nothing", scores)
	}
	env := rec.env(System, fit)
	for _, e := range []*Engine{live, restored} {
		if _, _, err := e.Apply(env); err != nil {
			t.Fatal(err)
		}
	}
	ranks := func(e *Engine) (out []int) {
		e.Read(func(s *State) {
			for _, id := range fit.Projects {
				out = append(out, s.Projects[id].Ratings.Rank)
			}
		})
		return out
	}
	if a, b := ranks(live), ranks(restored); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("ranks through the cache %v, after a restore %v", a, b)
	}
}
