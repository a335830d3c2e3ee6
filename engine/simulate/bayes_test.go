package simulate

import (
	"math"
	"testing"

	"podium/engine"
)

// TestTruncNorm: draws stay inside their interval, and their mean is the truncated
// normal's, also far out in a tail where a naive inversion of the CDF loses its digits.
func TestTruncNorm(t *testing.T) {
	phi := func(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }
	for _, c := range []struct{ lo, hi float64 }{{1, math.Inf(1)}, {math.Inf(-1), -2}, {-0.5, 0.25}, {5, 6}, {-9, -8}, {7, 7.01}, {-30, -29.9}} {
		a, b := c.lo, c.hi
		want := (phi(a) - phi(b)) / (stdCDF(b) - stdCDF(a)) // E[z | a ≤ z ≤ b]
		if a > 0 {
			want = (phi(a) - phi(b)) / (stdCDF(-a) - stdCDF(-b))
		}
		rnd := engine.NewRand(7)
		const n = 20000
		sum := 0.0
		for range n {
			x := truncNorm(rnd, 0, 1, a, b)
			if x < a || x > b {
				t.Fatalf("[%v, %v]: drew %v", a, b, x)
			}
			sum += x
		}
		if got := sum / n; !(math.Abs(got-want) <= 0.02) {
			t.Errorf("[%v, %v]: mean %.4f, want %.4f", a, b, got, want)
		}
	}
	// An empty interval far out ends (the point itself).
	if x := truncNorm(engine.NewRand(1), 0, 1, 9, 9); x != 9 {
		t.Fatalf("N(0, 1) in [9, 9]: %v", x)
	}
	// A scaled and shifted draw is the standard one moved.
	if x := truncNorm(engine.NewRand(1), 10, 2, 13, 13.001); x < 13 || x > 13.001 {
		t.Fatalf("N(10, 2²) in [13, 13.001]: %v", x)
	}
}

// TestTrackBayesRanksLoseLittle: over the same events, the Bayesian order on the track
// judges' rankings and stars with each judge's noise known comes close to the oracle
// that sees their perceptions, and knowing the noise is worth something (the ceiling
// the track table reports, docs/behaviour.md#track-prizes).
func TestTrackBayesRanksLoseLittle(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Projects, cfg.Judges, cfg.Visits = 40, 8, 8
	cfg.Track = DefaultTrack()
	idx := func(name string) int {
		for i, m := range trackMethods {
			if m == name {
				return i
			}
		}
		t.Fatalf("no method %q", name)
		return -1
	}
	oracle := idx("oracle: posterior of q_T from every view, true σ and r")
	known := idx("Bayes on track judges' rankings and stars, each judge's noise and r known")
	unknown := idx("Bayes on track judges' rankings and stars, noise and r unknown (Podium's ceiling)")
	var rho [3]float64
	const events = 30
	for seed := uint64(1); seed <= events; seed++ {
		r, err := RunOn(cfg, seed, Local(seed))
		if err != nil {
			t.Fatal(err)
		}
		for k, m := range []int{oracle, known, unknown} {
			rho[k] += r.Track.Rho[m] / events
		}
	}
	t.Logf("ρ within the track over %d events: oracle %.3f, Bayes noise known %.3f, unknown %.3f", events, rho[0], rho[1], rho[2])
	if rho[1] < rho[0]-0.08 || rho[1] > rho[0]+0.03 {
		t.Errorf("Bayes with the noise known: ρ %.3f, oracle %.3f", rho[1], rho[0])
	}
	if rho[2] >= rho[1] {
		t.Errorf("not knowing the noise cost nothing: ρ %.3f vs %.3f", rho[2], rho[1])
	}
}
