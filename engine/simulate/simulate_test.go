package simulate

import (
	"fmt"
	"reflect"
	"testing"

	"podium/engine"
)

// TestFocusBeatsSpread runs the standard simulated expo (100 projects, 25 judges × 12
// visits, judges of mixed noise, 10% careless) in both assignment modes on the same
// seeds: focus must name the true top 10 more often than spread by more than the 95%
// interval of the paired difference, without walking more than half of a random order.
// 40 seeds, as docs/behaviour.md#simulation's table: the star line lifted spread mode's top 10 too, and over
// 30 the difference (+0.04) was within its interval. The full table is `podium
// simulate` (docs/behaviour.md#simulation).
func TestFocusBeatsSpread(t *testing.T) {
	const seeds = 40 // fixed seeds: the outcome is deterministic
	cfg := DefaultConfig()
	cfg.Mode = engine.ModeFocus
	focus, err := Runs(cfg, 1, seeds)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Mode = engine.ModeSpread
	spread, err := Runs(cfg, 1, seeds)
	if err != nil {
		t.Fatal(err)
	}
	d := Diff(focus, spread)
	f := Summarize(cfg, focus)
	t.Logf("focus: rho %v top-10 %v top-3 %v walked %v of random order", f.Rho, f.Top10, f.Top3, f.WalkedShare)
	t.Logf("focus − spread: top-10 %v top-3 %v rho %v", d.Top10, d.Top3, d.Rho)
	if d.Top10.Mean-d.Top10.CI <= 0 {
		t.Errorf("focus does not beat spread on the top 10: %v", d.Top10)
	}
	if d.Top3.Mean <= 0 {
		t.Errorf("focus does not beat spread on the top 3: %v", d.Top3)
	}
	if f.WalkedShare.Mean > 0.5 {
		t.Errorf("focus walks %v of a random order", f.WalkedShare)
	}
}

// TestSimulationDeterministic: the same seed gives the same event.
func TestSimulationDeterministic(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Projects, cfg.Judges, cfg.Visits = 30, 8, 6
	a, err := RunOn(cfg, 5, Local(5))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RunOn(cfg, 5, Local(5))
	if a != b {
		t.Fatalf("same seed, different outcomes: %+v vs %+v", a, b)
	}
	// Runs spreads the events over the cores and gives what one after another gives.
	runs, err := Runs(cfg, 5, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range runs {
		seed := uint64(5 + i)
		if want, _ := RunOn(cfg, seed, Local(seed)); r != want {
			t.Fatalf("Runs, seed %d: %+v, one by one: %+v", seed, r, want)
		}
	}
}

// TestRandomJudgeStandsApart: in a simulated event of 10 judges (40 projects), one
// answering at random (its rankings and stars ignore quality) gets a lower reliability
// and a higher disagreement than every careful judge of noise σ 0.5 or 1 at 20 visits
// each, on at least 17 of 20 seeds, here 34 of 40 (docs/behaviour.md#ratings). Not on
// every seed: a careful judge whose fixed perception noise happens to run against
// quality (seed 12: correlation −0.23 over the 40 projects) is sent by focus mode to
// projects of similar quality, where that noise decides its order. The share sits near
// that bound: over seeds 1–200, 171 keep the random judge strictly apart (173 with
// focus_need 2, which spent the end of coverage on the nearest tables; 37 of 40 with
// focus_need 1, which sent fewer views to the edge of the top,
// docs/behaviour.md#why-the-edge-of-the-top), so 20 seeds decide by a seed or two.
func TestRandomJudgeStandsApart(t *testing.T) {
	const seeds = 40
	cfg := DefaultConfig()
	cfg.Projects, cfg.Judges, cfg.Visits, cfg.Careless, cfg.Random = 40, 10, 20, 0, 1
	cfg.Noises = []float64{0.5, 1}
	apart := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		random, careful := judgeFigures(t, cfg, seed)
		if random.Compared == 0 {
			t.Fatalf("seed %d: the random judge's outcomes were not compared", seed)
		}
		ok := true
		for _, j := range careful {
			if j.ReliabilityOf() <= random.ReliabilityOf() || j.Disagreement >= random.Disagreement {
				ok = false
				t.Logf("seed %d: careful %s: reliability %.2f, %s; random judge: %.2f, %s",
					seed, j.Name, j.ReliabilityOf(), figure(j), random.ReliabilityOf(), figure(random))
			}
		}
		if ok {
			apart++
		}
		t.Logf("seed %d: random judge reliability %.2f, %s", seed, random.ReliabilityOf(), figure(random))
	}
	if apart < seeds*17/20 {
		t.Errorf("the random judge stands apart from every careful judge on only %d of %d seeds", apart, seeds)
	}
}

// TestRandomJudgeAmongNoisyJudges: the same event with the world's judges (σ 0.5, 1 or
// 2) at 12 and 20 visits. A σ = 2 judge sent by focus mode to projects of similar
// quality ranks them little better than chance, so no figure puts the random judge
// below every careful judge on every seed: even against the true order, its ranking
// disagrees more than every careful judge's on only 13 of these 20 seeds at 12 visits
// (17 at 20). What holds: the figure means what the dashboard says (a judge
// answering at random disagrees on about half of its clear-cut pairs, careful judges on
// far fewer) and at 20 visits the random judge is among the two highest figures of
// the ten on most seeds (docs/behaviour.md#ratings).
func TestRandomJudgeAmongNoisyJudges(t *testing.T) {
	const seeds = 20
	for _, visits := range []int{12, 20} {
		cfg := DefaultConfig()
		cfg.Projects, cfg.Judges, cfg.Visits, cfg.Careless, cfg.Random = 40, 10, visits, 0, 1
		var randomSum, carefulSum float64
		carefulN, apart, topTwo := 0, 0, 0
		for seed := uint64(1); seed <= seeds; seed++ {
			random, careful := judgeFigures(t, cfg, seed)
			randomSum += random.Disagreement
			worst, above := careful[0], 0
			for _, j := range careful {
				carefulSum += j.Disagreement
				carefulN++
				if j.Disagreement > worst.Disagreement {
					worst = j
				}
				if j.Disagreement >= random.Disagreement {
					above++
				}
			}
			if above == 0 {
				apart++
			}
			if above <= 1 {
				topTwo++
			}
			t.Logf("%d visits, seed %d: random judge %s; most disagreeing careful judge %s", visits, seed, figure(random), figure(worst))
		}
		randomMean, carefulMean := randomSum/seeds, carefulSum/float64(carefulN)
		t.Logf("%d visits: random judge above every careful judge on %d of %d seeds, among the two highest on %d; mean disagreement: random %.2f, careful %.2f",
			visits, apart, seeds, topTwo, randomMean, carefulMean)
		if randomMean < 0.38 || randomMean > 0.62 {
			t.Errorf("%d visits: the random judge disagrees on %.2f of its clear-cut pairs on average, not about half", visits, randomMean)
		}
		if carefulMean > 0.3 {
			t.Errorf("%d visits: careful judges disagree on %.2f of their clear-cut pairs on average", visits, carefulMean)
		}
		if visits == 20 && topTwo < seeds*3/4 {
			t.Errorf("%d visits: the random judge is among the two most disagreeing judges on only %d of %d seeds", visits, topTwo, seeds)
		}
	}
}

// judgeFigures runs the event of cfg and seed and returns the random judge (the first)
// and the others, as stored after the last fit.
func judgeFigures(t *testing.T, cfg Config, seed uint64) (random engine.Judge, careful []engine.Judge) {
	t.Helper()
	b := Local(seed).(*local)
	if _, err := RunOn(cfg, seed, b); err != nil {
		t.Fatal(err)
	}
	b.e.Read(func(s *engine.State) {
		random = *s.Judges[b.judges[0]]
		for _, id := range b.judges[1:] {
			careful = append(careful, *s.Judges[id])
		}
	})
	return random, careful
}

// figure is a judge's disagreement as the dashboard shows it.
func figure(j engine.Judge) string {
	return fmt.Sprintf("disagreed on %.0f of %d clear-cut pairs (%.0f %%)", j.Disagreement*float64(j.Compared), j.Compared, 100*j.Disagreement)
}

// TestTrackWorld: the track-prize world (docs/behaviour.md#track-prizes) runs on the
// engine, its track judges leave no track project unseen, every method is scored, and
// the same seed gives the same event.
func TestTrackWorld(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Projects, cfg.Judges, cfg.Visits = 40, 8, 8
	cfg.Track = DefaultTrack()
	a, err := RunOn(cfg, 3, Local(3))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RunOn(cfg, 3, Local(3))
	if a.Track == nil || b.Track == nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different track outcomes: %+v vs %+v", a.Track, b.Track)
	}
	tr := a.Track
	if len(tr.Top3) != len(trackMethods) || len(tr.Winner) != len(trackMethods) || len(tr.Rho) != len(trackMethods) {
		t.Fatalf("scores for %d methods: %+v", len(trackMethods), tr)
	}
	if tr.Unseen != 0 || tr.Views != float64(cfg.Track.Judges*cfg.Track.Visits)/float64(cfg.Track.Projects) {
		t.Fatalf("track views: %v unseen, %v per project", tr.Unseen, tr.Views)
	}
	// An event begun before the rule leaves some unseen on some seed.
	cfg.EarlierTrackRule = true
	unseen := 0.0
	for seed := uint64(1); seed <= 4; seed++ {
		r, err := RunOn(cfg, seed, Local(seed))
		if err != nil {
			t.Fatal(err)
		}
		unseen += r.Track.Unseen
	}
	if unseen == 0 {
		t.Fatal("the earlier rule left no track project unseen in 4 events")
	}
}
