package simulate

// The best any track order can do from what Podium is told (docs/behaviour.md#track-prizes):
// the Bayesian posterior of q_T given the track judges' rankings and stars only (not their
// perceptions), sampled by Gibbs. Each track judge's perceptions are latent, ordered as
// its ranking and above or below the star line as its stars say; the general judges'
// views of q give q_T's prior through r, as for the oracle. Told each judge's noise and
// r, it measures what rankings lose against the oracle's perceptions. Told neither (each
// judge's noise drawn from the world's noises, r from a uniform prior on [0, 1]), it is
// the ceiling of an order that, like Podium, knows the world's shape but not how noisy
// each judge is nor how far the sponsor's criteria follow overall quality.

import (
	"math"

	"podium/engine"
)

const (
	bayesBurn   = 100  // Gibbs sweeps discarded
	bayesSweeps = 1000 // Gibbs sweeps averaged
	rGrid       = 20   // steps of r's grid on [0, 1] when r is sampled
)

// bayesJudge is one track judge's ranking as the sampler sees it.
type bayesJudge struct {
	order []int     // the track projects it saw (indexes), best first
	star  []bool    // aligned with order
	y     []float64 // its latent perceptions, aligned with order
	noise float64   // its noise: known, or the current draw
}

// trackBayes returns the posterior mean of q_T of each of ids from the track judges'
// rankings and stars; known gives the sampler each judge's true noise and the true r.
func (ev *event) trackBayes(ids []engine.ID, known bool) []float64 {
	tw := ev.cfg.Track
	line := ev.cfg.StarAbove
	n := len(ids)
	idx := make(map[engine.ID]int, n)
	qm, qv := make([]float64, n), make([]float64, n) // q's posterior from the general judges
	for i, id := range ids {
		idx[id] = i
		qm[i], qv[i] = ev.qPosterior(id)
	}
	r := tw.R
	if !known {
		r = 0.5
	}
	var js []*bayesJudge
	for _, j := range ev.judges {
		if !j.track || len(j.seen) == 0 {
			continue
		}
		b := &bayesJudge{noise: 1}
		if known {
			b.noise = j.noise
		}
		stars := 0
		for _, id := range j.ranking(0) {
			st := j.percept[id] >= line
			b.order, b.star = append(b.order, idx[id]), append(b.star, st)
			if st {
				stars++
			}
		}
		for k := range b.order { // a start that meets every constraint
			b.y = append(b.y, line+0.3*(float64(stars-k)-0.5))
		}
		js = append(js, b)
	}
	rnd := engine.NewRand(ev.seed*0x9e3779b97f4a7c15 + 11)
	theta := make([]float64, n)
	for i := range theta {
		theta[i] = r * qm[i]
	}
	mean := make([]float64, n)
	prec, sum := make([]float64, n), make([]float64, n)
	for it := 0; it < bayesBurn+bayesSweeps; it++ {
		for _, b := range js {
			b.sampleY(rnd, theta, line)
			if !known {
				b.sampleNoise(rnd, theta, tw.Noises)
			}
		}
		if !known {
			r = sampleR(rnd, theta, qm, qv)
		}
		for i := range theta {
			pv := r*r*qv[i] + 1 - r*r // q_T's prior: N(r·m, r²·v + 1 − r²)
			prec[i], sum[i] = 1/pv, r*qm[i]/pv
		}
		for _, b := range js {
			w := 1 / (b.noise * b.noise)
			for k, i := range b.order {
				prec[i] += w
				sum[i] += w * b.y[k]
			}
		}
		for i := range theta {
			theta[i] = sum[i]/prec[i] + rnd.Norm()/math.Sqrt(prec[i])
			if it >= bayesBurn {
				mean[i] += theta[i] / bayesSweeps
			}
		}
	}
	return mean
}

// sampleR draws r from its grid on [0, 1] (equally likely a priori) given θ, each q_T
// being N(r·m, r²·v + 1 − r²) with (m, v) its project's q posterior.
func sampleR(rnd *engine.Rand, theta, qm, qv []float64) float64 {
	logp := make([]float64, rGrid+1)
	for g := range logp {
		r := float64(g) / rGrid
		for i, t := range theta {
			pv := r*r*qv[i] + 1 - r*r
			d := t - r*qm[i]
			logp[g] -= 0.5 * (math.Log(pv) + d*d/pv)
		}
	}
	return float64(drawLog(rnd, logp)) / rGrid
}

// drawLog draws an index with probability proportional to exp(logp[i]).
func drawLog(rnd *engine.Rand, logp []float64) int {
	best := math.Inf(-1)
	for _, l := range logp {
		best = math.Max(best, l)
	}
	total := 0.0
	for i, l := range logp {
		logp[i] = math.Exp(l - best)
		total += logp[i]
	}
	u := rnd.Float64() * total
	for i, w := range logp {
		if u -= w; u <= 0 {
			return i
		}
	}
	return len(logp) - 1
}

// sampleY draws each latent perception given the others and θ: normal around its
// project's θ, between its neighbours in the ranking, on its side of the star line.
func (b *bayesJudge) sampleY(rnd *engine.Rand, theta []float64, line float64) {
	for k, i := range b.order {
		lo, hi := math.Inf(-1), math.Inf(1)
		if k+1 < len(b.y) {
			lo = b.y[k+1]
		}
		if k > 0 {
			hi = b.y[k-1]
		}
		if b.star[k] {
			lo = math.Max(lo, line)
		} else {
			hi = math.Min(hi, line)
		}
		b.y[k] = truncNorm(rnd, theta[i], b.noise, lo, hi)
	}
}

// sampleNoise draws the judge's noise from noises (equally likely a priori) given its
// perceptions and θ.
func (b *bayesJudge) sampleNoise(rnd *engine.Rand, theta, noises []float64) {
	logp := make([]float64, len(noises))
	for s, sg := range noises {
		for k, i := range b.order {
			d := b.y[k] - theta[i]
			logp[s] -= math.Log(sg) + d*d/(2*sg*sg)
		}
	}
	b.noise = noises[drawLog(rnd, logp)]
}

// truncNorm draws from N(mu, s²) truncated to [lo, hi]: by inverting the normal CDF (on
// the side of the mean where the interval's tail probabilities keep their digits), or,
// for an interval beyond tailFrom sds where the inverse loses them, by rejection from an
// exponential (Robert, "Simulation of truncated normal variables", 1995).
func truncNorm(rnd *engine.Rand, mu, s, lo, hi float64) float64 {
	a, b := (lo-mu)/s, (hi-mu)/s
	flip := a > 0
	if flip {
		a, b = -b, -a
	}
	var x float64
	if b < -tailFrom {
		x = -tailDraw(rnd, -b, -a)
	} else {
		pa, pb := stdCDF(a), stdCDF(b)
		u := math.Min(math.Max(pa+rnd.Float64()*(pb-pa), 1e-300), 1-1e-16)
		x = math.Min(math.Max(-math.Sqrt2*math.Erfcinv(2*u), a), b)
	}
	if flip {
		x = -x
	}
	return mu + s*x
}

// tailFrom is where truncNorm leaves the inverse CDF for rejection.
const tailFrom = 5

// tailDraw draws a standard normal truncated to [a, b], a ≥ tailFrom, by rejection:
// from a uniform on [a, b] when the interval is narrow (kept with probability
// exp(−(x² − a²)/2) ≥ e^−1.5), else from x = a + E/a with E exponential, kept with
// probability exp(−(x − a)²/2) when x ≤ b.
func tailDraw(rnd *engine.Rand, a, b float64) float64 {
	if (b-a)*a < 1 {
		for {
			x := a + rnd.Float64()*(b-a)
			if rnd.Float64() <= math.Exp(-(x*x-a*a)/2) {
				return x
			}
		}
	}
	for {
		x := a - math.Log(1-rnd.Float64())/a
		if x <= b && rnd.Float64() <= math.Exp(-(x-a)*(x-a)/2) {
			return x
		}
	}
}

func stdCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
