package simulate

import (
	"testing"

	"podium/engine"
)

// TestFocusBeatsSpread runs the standard simulated expo (100 projects, 25 judges × 12
// visits, judges of mixed noise, 10% careless) in both assignment modes on the same
// seeds: focus must name the true top 10 more often than spread by more than the 95%
// interval of the paired difference, without walking more than half of a random order.
// 40 seeds, as README's table: the star line lifted spread mode's top 10 too, and over
// 30 the difference (+0.04) was within its interval. The full table is `podium
// simulate` (README).
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

// TestRandomJudgeStandsApart: in a simulated event of 10 judges, one answering at
// random (its rankings and stars ignore quality) gets a lower reliability and a higher
// disagreement than every careful judge (docs/behaviour.md#ratings).
func TestRandomJudgeStandsApart(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Projects, cfg.Judges, cfg.Visits, cfg.Careless, cfg.Random = 40, 10, 20, 0, 1
	cfg.Noises = []float64{0.5, 1}
	for seed := uint64(1); seed <= 10; seed++ {
		b := Local(seed).(*local)
		if _, err := RunOn(cfg, seed, b); err != nil {
			t.Fatal(err)
		}
		b.e.Read(func(s *engine.State) {
			random := s.Judges[b.judges[0]]
			if random.Compared == 0 {
				t.Fatalf("seed %d: the random judge's outcomes were not compared", seed)
			}
			for _, id := range b.judges[1:] {
				j := s.Judges[id]
				if j.ReliabilityOf() <= random.ReliabilityOf() || j.Disagreement >= random.Disagreement {
					t.Errorf("seed %d: careful %s: reliability %.2f, disagreement %.2f of %d; random judge: %.2f, %.2f of %d",
						seed, j.Name, j.ReliabilityOf(), j.Disagreement, j.Compared, random.ReliabilityOf(), random.Disagreement, random.Compared)
				}
			}
			t.Logf("seed %d: random judge reliability %.2f, disagreement %.2f of %d", seed, random.ReliabilityOf(), random.Disagreement, random.Compared)
		})
	}
}
