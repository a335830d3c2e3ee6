// Package fit computes Podium's ratings (docs/behaviour.md#ratings) from an engine.RatingInput copied
// under the engine's read lock; the result is the engine.SetRatings command that stores
// them. It is pure numerics: the standard library only, no clock, no randomness.
//
// The model is a Bradley-Terry model with a reliability per judge, fitted by maximum a
// posteriori. Each judge's list yields pairwise outcomes (a ranked project beats every
// project ranked below it and every unranked project it saw; a starred project beats
// the judge's unstarred ones, as weak evidence):
//
//	P(w beats l | judge j) = σ(r_j · (θ_w − θ_l))
//
// with priors θ ~ N(0, ratingPriorSD²) and r_j ~ N(1, relPriorSD²). One ranking of n
// projects is one noisy look at each of them, not n(n−1)/2 independent comparisons, so
// a judge's pairs are weighted by pairWeight/(n−1): every project gets about the same
// evidence from one judge whatever the list's length. The outcomes are never listed:
// each pass walks every judge's list, one sigmoid per pair. Far from the optimum the fit
// alternates one Newton step per judge on r_j with a Newton step on θ (the sparse
// Hessian solved by preconditioned conjugate gradients, never formed); near it, it
// takes Newton steps in θ and r together (see run). rating_sd comes from the Hessian's
// diagonal (Laplace), p_top from a normal approximation: each project is in the top K
// with probability Φ((θ_i − t)/sd_i), with the threshold t chosen so that these sum to K.
// Everything runs in a fixed order, so the same input gives the same bits.
package fit

import (
	"math"
	"slices"

	"podium/engine"
)

const (
	ratingPriorSD = engine.RatingPriorSD
	relPriorSD    = 0.75 // prior sd of a judge's reliability around 1
	pairWeight    = 2.0  // evidence of one ranking per project
	starWeight    = 0.25 // a star's weight relative to a ranked pair
	// lineWeight is the weight of a project's star (or its absence) against the star
	// line, per judge who stars (see stepLine).
	lineWeight = 0.5
	minRel     = 0.05
	maxRel     = 4.0
	// maxCG and cgTol bound the conjugate-gradient steps of one Newton step (an
	// inexact Newton step is enough: the next one corrects it).
	maxCG = 20
	cgTol = 0.1
	// The fit stops once no rating or reliability moves by fitStop, or after coldIters
	// (warmIters from the last ratings) iterations; see run.
	fitStop    = 1e-3
	newtonFrom = 0.3
	coldIters  = 12
	warmIters  = 6
)

// Ratings fits the ratings of in. It only reads in and is safe to run outside the
// writer; the result is the command that stores it.
func Ratings(in *engine.RatingInput) *engine.SetRatings {
	cmd, _ := RatingsUntil(in, nil)
	return cmd
}

// RatingsUntil is Ratings that gives up once stop is closed (checked at every
// conjugate-gradient step, a few milliseconds apart even at thousands of projects): a
// big event's fit takes seconds, and a shutting-down server must not wait for it. It
// returns false when it gave up.
func RatingsUntil(in *engine.RatingInput, stop <-chan struct{}) (*engine.SetRatings, bool) {
	f, warm := newFitter(in)
	f.stop = stop
	iters := coldIters
	if warm {
		iters = warmIters
	}
	f.run(iters)
	if f.stopped() {
		return nil, false
	}
	out := f.result()
	out.Tracks = trackFits(in, out) // docs/behaviour.md#track-prizes
	return out, true
}

// stopped reports whether the fit was asked to give up.
func (f *fitter) stopped() bool {
	if f.stop == nil {
		return false
	}
	select {
	case <-f.stop:
		return true
	default:
		return false
	}
}

// newFitter sets up a fit of in from its last ratings (warm), or else from the judges'
// average places.
func newFitter(in *engine.RatingInput) (f *fitter, warm bool) {
	return newFitterLine(in, lineWeight)
}

// newFitterLine is newFitter with the star line weighing lineW.
func newFitterLine(in *engine.RatingInput, lineW float64) (f *fitter, warm bool) {
	n := len(in.Projects)
	f = &fitter{in: in, n: n + 1, lineW: lineW} // θ[n] is the star line
	f.theta = make([]float64, n+1)
	for i := range in.Projects {
		if i < len(in.Prev) && in.Prev[i] != 0 {
			f.theta[i], warm = in.Prev[i], true
		}
	}
	f.rel = make([]float64, len(in.Judges))
	for i := range f.rel {
		f.rel[i] = 1
		if in.PrevRel[i] > 0 {
			// The stored reliabilities are relative to the median judge: the first
			// iteration's own step per judge puts them back on the fit's scale.
			f.rel[i] = math.Min(maxRel, math.Max(minRel, in.PrevRel[i]))
		}
	}
	if !warm {
		f.borda() // a cold start: begin from the average place in the judges' lists
	}
	f.pairs()
	for range 3 {
		f.stepLine()
	}
	return f, warm
}

// result is the command that stores the fit's current point.
func (f *fitter) result() *engine.SetRatings {
	in, n := f.in, f.n-1 // the projects, without the star line
	f.gradient(false)    // the Hessian's diagonal at the final point
	out := &engine.SetRatings{
		Version: in.Version, Projects: append([]engine.ID{}, in.Projects...),
		Rating: f.theta[:n], SD: make([]float64, n),
		Judges: append([]engine.ID{}, in.Judges...), Reliability: make([]float64, len(in.Judges)),
	}
	for i := range out.SD {
		out.SD[i] = 1 / math.Sqrt(f.diag[i])
	}
	k := in.FocusTop
	if k < 1 {
		k = engine.DefaultFocusTop
	}
	out.PTop = engine.TopProbabilities(out.Rating, out.SD, k)
	out.PTop3 = engine.TopProbabilities(out.Rating, out.SD, 3)
	// Reliability is reported relative to the median judge (1 = typical).
	med := median(f.rel)
	for i, r := range f.rel {
		out.Reliability[i] = r / med
	}
	out.Disagreement, out.Compared = f.judgeChecks()
	for i := range out.Rating {
		out.Rating[i] = round6(out.Rating[i])
		out.SD[i] = round6(out.SD[i])
		out.PTop[i] = round6(out.PTop[i])
		out.PTop3[i] = round6(out.PTop3[i])
	}
	for i := range out.Reliability {
		out.Reliability[i] = round6(out.Reliability[i])
		out.Disagreement[i] = round6(out.Disagreement[i])
	}
	return out
}

// run iterates until no rating or reliability moves by fitStop, at most iters times.
// Far from the optimum an iteration is a block step (each judge's reliability with θ
// fixed, then a Newton step in θ): the model is not concave in θ and the reliabilities
// together, and this is the robust way down. Once both steps are below newtonFrom it
// is a Newton step in both together, which converges quadratically (the block steps
// only halve the error each time: the ratings' spread and the reliabilities trade off);
// a joint step that is not a descent-like step (the Hessian not positive definite, or
// a step more than twice the last) is undone and replaced by a block step. It returns
// the number of iterations.
func (f *fitter) run(iters int) int {
	lastSt, lastSr := math.Inf(1), math.Inf(1)
	saveT, saveR := make([]float64, f.n), make([]float64, len(f.rel))
	for it := 0; it < iters && !f.stopped(); it++ {
		var st, sr float64
		joint := false
		if lastSt < newtonFrom && lastSr < newtonFrom {
			copy(saveT, f.theta)
			copy(saveR, f.rel)
			f.gradient(false)
			var ok bool
			st, sr, ok = f.newtonJoint(cgTol)
			joint = ok && st <= max(2*lastSt, newtonFrom) && sr <= max(2*lastSr, newtonFrom)
			if !joint {
				copy(f.theta, saveT)
				copy(f.rel, saveR)
			}
		}
		if !joint {
			sr = f.gradient(true)
			st = f.newtonTheta(cgTol)
		}
		lastSt, lastSr = st, sr
		if st < fitStop && sr < fitStop {
			return it + 1
		}
	}
	return iters
}

// borda sets θ to each project's average place in the lists it is in: +1 for first,
// −1 for last (unranked projects share the places after the ranked ones), scaled to the
// prior.
func (f *fitter) borda() {
	in := f.in
	sum := make([]float64, f.n)
	cnt := make([]float64, f.n)
	for j := range in.Judges {
		seq := in.Seq[in.Off[j]:in.Off[j+1]]
		n, nr := len(seq), int(in.NRanked[j])
		for p, b := range seq {
			place := float64(p)
			if p >= nr {
				place = float64(nr+n-1) / 2
			}
			sum[b] += 1 - 2*place/float64(n-1)
			cnt[b]++
		}
	}
	for i := range f.theta {
		if cnt[i] > 0 {
			f.theta[i] = ratingPriorSD * sum[i] / (cnt[i] + 1)
		}
	}
}

// round6 keeps six decimals: the journal stays short and the values read back exactly.
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

type fitter struct {
	stop  <-chan struct{} // closed: give up (see RatingsUntil)
	in    *engine.RatingInput
	n     int
	theta []float64
	rel   []float64
	// priorMean and priorPrec, when set, are each θ's prior mean and precision (a
	// track's prize order, track.go); else the prior is N(0, ratingPriorSD²).
	priorMean, priorPrec []float64
	lineW                float64   // the star line's weight (lineWeight; a track's: trackLineWeight)
	grad                 []float64 // of the log posterior in θ
	diag                 []float64 // of the negative Hessian in θ
	// Per judge, at the point of the last gradient(): the log posterior's first and
	// (negated) second derivative in its reliability.
	gRel, hRel []float64
	// cross[k] (aligned with in.Seq) is the negative Hessian's entry for θ of the
	// judge's k-th project and the judge's reliability; invD[j] is 1/hRel[j], or 0 for a
	// judge held at a bound of its reliability.
	cross []float64
	invD  []float64
	diagS []float64 // the diagonal of the Schur complement (the CG preconditioner)
	// The outcomes are never listed: a judge's pairs are enumerated from its list (see
	// pairs). curv holds each pair's Hessian weight at the last gradient(), judge j's
	// from cOff[j], in that enumeration order.
	cOff   []int
	curv   []float32
	maxLen int
	// The star line (newton.go) is θ[n−1], fitted with the ratings: stars says which
	// judges star at all (only they say something with a missing star); lineCurv is
	// each judged project's Hessian weight against the line at the last gradient()
	// (aligned with in.Seq), lineCross each judge's cross term of the line and its
	// reliability.
	stars     []bool
	lineCurv  []float64
	lineCross []float64
	// scratch
	vLoc, oLoc, dLoc, sLoc  []float64
	rowB                    []int32
	starPos                 []int32 // the current judge's starred unranked positions
	rowD, rowP, rowQ        []float64
	cgX, cgR, cgZ, cgP, cgQ []float64
}

// A judge's outcomes, one per unordered pair {a, b} of positions in its list (a < b):
// when a is ranked, a beats b with the weight wt = pairWeight/(n−1); when exactly one of
// the two is starred, it beats the other with the weight wt·starWeight. Pairs of two
// unranked projects without a star between them carry nothing and are left out. The
// enumeration order: a ascending, then b ascending.

// pairs sizes the pairs' storage.
func (f *fitter) pairs() {
	in := f.in
	f.cOff = make([]int, len(in.Judges)+1)
	total := 0
	for j := range in.Judges {
		f.cOff[j] = total
		lo, hi := in.Off[j], in.Off[j+1]
		n, nr := int(hi-lo), int(in.NRanked[j])
		f.maxLen = max(f.maxLen, n)
		total += nr*(n-nr) + nr*(nr-1)/2
		star := in.Star[lo+int32(nr) : hi]
		k := 0
		for _, st := range star {
			if st {
				k++
			}
		}
		total += k * (len(star) - k)
	}
	f.cOff[len(in.Judges)] = total
	f.stars = make([]bool, len(in.Judges))
	for j := range in.Judges {
		f.stars[j] = slices.Contains(in.Star[in.Off[j]:in.Off[j+1]], true)
	}
	f.lineCurv = make([]float64, len(in.Seq))
	f.lineCross = make([]float64, len(in.Judges))
	f.curv = make([]float32, total)
	f.grad = make([]float64, f.n)
	f.diag = make([]float64, f.n)
	f.gRel = make([]float64, len(in.Judges))
	f.hRel = make([]float64, len(in.Judges))
	f.cross = make([]float64, len(in.Seq))
	f.invD = make([]float64, len(in.Judges))
	f.diagS = make([]float64, f.n)
	f.vLoc = make([]float64, f.maxLen)
	f.oLoc = make([]float64, f.maxLen)
	f.dLoc = make([]float64, f.maxLen)
	f.sLoc = make([]float64, f.maxLen)
	f.rowB = make([]int32, f.maxLen)
	f.rowD, f.rowP, f.rowQ = make([]float64, f.maxLen), make([]float64, f.maxLen), make([]float64, f.maxLen)
	f.cgX, f.cgR, f.cgZ = make([]float64, f.n), make([]float64, f.n), make([]float64, f.n)
	f.cgP, f.cgQ = make([]float64, f.n), make([]float64, f.n)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 1
	}
	c := append([]float64(nil), v...)
	slices.Sort(c)
	m := c[len(c)/2]
	if len(c)%2 == 0 {
		m = (c[len(c)/2-1] + m) / 2
	}
	if m <= 0 {
		return 1
	}
	return m
}
