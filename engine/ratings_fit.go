package engine

// The ratings fit of SPEC §6a: a Bradley-Terry model with a reliability per judge,
// fitted by maximum a posteriori. Each judge's list yields pairwise outcomes (a ranked
// project beats every project ranked below it and every unranked project it saw; a
// starred project beats the judge's unstarred ones, as weak evidence):
//
//	P(w beats l | judge j) = σ(r_j · (θ_w − θ_l))
//
// with priors θ ~ N(0, ratingPriorSD²) and r_j ~ N(1, relPriorSD²). One ranking of n
// projects is one noisy look at each of them, not n(n−1)/2 independent comparisons, so
// a judge's pairs are weighted by pairWeight/(n−1): every project gets about the same
// evidence from one judge whatever the list's length. The fit alternates Newton steps
// on θ (the sparse Hessian solved by preconditioned conjugate gradients, never formed)
// with one Newton step per judge on r_j. rating_sd comes from the Hessian's diagonal
// (Laplace), p_top from a normal approximation: each project is in the top K with
// probability Φ((θ_i − t)/sd_i), with the threshold t chosen so that these sum to K.
// Everything runs in a fixed order, so the same input gives the same bits.

import (
	"math"
	"slices"
)

const (
	ratingPriorSD = 1.5  // prior sd of a rating (logit units)
	relPriorSD    = 0.5  // prior sd of a judge's reliability around 1
	pairWeight    = 2.0  // evidence of one ranking per project
	starWeight    = 0.25 // a star's weight relative to a ranked pair
	minRel        = 0.05
	// maxCG bounds the conjugate-gradient steps of one Newton step (an inexact Newton
	// step is enough: the next one corrects it).
	maxCG  = 20
	maxRel = 4.0
)

// FitRatings fits the ratings of in. It only reads in and is safe to run outside the
// writer; the result is the command that stores it.
func FitRatings(in *RatingInput) *SetRatings {
	n := len(in.Projects)
	f := &fitter{in: in, n: n}
	f.theta = make([]float64, n)
	warm := false
	for i := range f.theta {
		if i < len(in.Prev) && in.Prev[i] != 0 {
			f.theta[i], warm = in.Prev[i], true
		}
	}
	f.rel = make([]float64, len(in.Judges))
	for i := range f.rel {
		f.rel[i] = 1
		if in.PrevRel[i] > 0 {
			f.rel[i] = in.PrevRel[i]
		}
	}
	if !warm {
		f.borda() // a cold start: begin from the average place in the judges' lists
	}
	f.pairs()
	outer := 10
	if warm {
		outer = 6
	}
	for it := 0; it < outer; it++ {
		step := f.newtonTheta()
		f.updateRel()
		if step < 1e-3 {
			break
		}
	}
	f.gradient() // the Hessian's diagonal at the final point
	out := &SetRatings{
		Version: in.Version, Projects: append([]ID{}, in.Projects...),
		Rating: f.theta, SD: make([]float64, n),
		Judges: append([]ID{}, in.Judges...), Reliability: make([]float64, len(in.Judges)),
	}
	for i := range out.SD {
		out.SD[i] = 1 / math.Sqrt(f.diag[i])
	}
	k := in.FocusTop
	if k < 1 {
		k = DefaultFocusTop
	}
	out.PTop = topProbabilities(f.theta, out.SD, k)
	out.PTop3 = topProbabilities(f.theta, out.SD, 3)
	// Reliability is reported relative to the median judge (1 = typical).
	med := median(f.rel)
	for i, r := range f.rel {
		out.Reliability[i] = r / med
	}
	for i := range out.Rating {
		out.Rating[i] = round6(out.Rating[i])
		out.SD[i] = round6(out.SD[i])
		out.PTop[i] = round6(out.PTop[i])
		out.PTop3[i] = round6(out.PTop3[i])
	}
	for i := range out.Reliability {
		out.Reliability[i] = round6(out.Reliability[i])
	}
	return out
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
	in    *RatingInput
	n     int
	theta []float64
	rel   []float64
	grad  []float64
	diag  []float64
	// The outcomes, judge by judge (judge j's are pOff[j]:pOff[j+1]): winner, loser,
	// weight, and at the current point the Hessian weight.
	pOff       []int32
	pw, pl     []int32
	pwt, pcurv []float32
}

// pairs lists every outcome of every judge in a fixed order: a ranked project beats
// every project after it in the judge's list (ranked below it, or unranked); a starred
// project beats each unstarred one (weight starWeight).
func (f *fitter) pairs() {
	in := f.in
	total := 0
	for j := range in.Judges {
		n, nr := int(in.Off[j+1]-in.Off[j]), int(in.NRanked[j])
		total += nr*(n-nr) + nr*(nr-1)/2
		k := 0
		for p := in.Off[j]; p < in.Off[j+1]; p++ {
			if in.Star[p] {
				k++
			}
		}
		total += k * (n - k)
	}
	f.pOff = make([]int32, 0, len(in.Judges)+1)
	f.pw, f.pl = make([]int32, 0, total), make([]int32, 0, total)
	f.pwt, f.pcurv = make([]float32, 0, total), make([]float32, total)
	f.pOff = append(f.pOff, 0)
	for j := range in.Judges {
		seq := in.Seq[in.Off[j]:in.Off[j+1]]
		star := in.Star[in.Off[j]:in.Off[j+1]]
		nr := int(in.NRanked[j])
		wt := float32(pairWeight / float64(len(seq)-1))
		for a := 0; a < nr; a++ {
			for b := a + 1; b < len(seq); b++ {
				f.pw, f.pl, f.pwt = append(f.pw, seq[a]), append(f.pl, seq[b]), append(f.pwt, wt)
			}
		}
		sw := wt * starWeight
		for a := range seq {
			if !star[a] {
				continue
			}
			for b := range seq {
				if !star[b] {
					f.pw, f.pl, f.pwt = append(f.pw, seq[a]), append(f.pl, seq[b]), append(f.pwt, sw)
				}
			}
		}
		f.pOff = append(f.pOff, int32(len(f.pw)))
	}
	f.grad = make([]float64, f.n)
	f.diag = make([]float64, f.n)
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// gradient fills grad (of the log posterior), diag (of the negative Hessian) and the
// pairs' Hessian weights at the current point.
func (f *fitter) gradient() {
	prec := 1 / (ratingPriorSD * ratingPriorSD)
	for i := range f.grad {
		f.grad[i] = -f.theta[i] * prec
		f.diag[i] = prec
	}
	th, grad, diag := f.theta, f.grad, f.diag
	for j := range f.in.Judges {
		r := f.rel[j]
		lo, hi := f.pOff[j], f.pOff[j+1]
		pw, pl, pwt, pc := f.pw[lo:hi], f.pl[lo:hi], f.pwt[lo:hi], f.pcurv[lo:hi]
		for k := range pw {
			w, l, wt := pw[k], pl[k], float64(pwt[k])
			p := sigmoid(r * (th[w] - th[l]))
			g := wt * r * (1 - p)
			grad[w] += g
			grad[l] -= g
			h := wt * r * r * p * (1 - p)
			diag[w] += h
			diag[l] += h
			pc[k] = float32(h)
		}
	}
}

// hessMul sets out = H·v (H the negative Hessian of the log posterior in θ).
func (f *fitter) hessMul(v, out []float64) {
	prec := 1 / (ratingPriorSD * ratingPriorSD)
	for i := range out {
		out[i] = v[i] * prec
	}
	pw, pl, pc := f.pw, f.pl, f.pcurv[:len(f.pw)]
	for k := range pw {
		w, l := pw[k], pl[k]
		d := float64(pc[k]) * (v[w] - v[l])
		out[w] += d
		out[l] -= d
	}
}

// newtonTheta takes one Newton step in θ and returns its largest component.
func (f *fitter) newtonTheta() float64 {
	f.gradient()
	n := f.n
	x := make([]float64, n)
	r := append([]float64(nil), f.grad...)
	z := make([]float64, n)
	for i := range z {
		z[i] = r[i] / f.diag[i]
	}
	p := append([]float64(nil), z...)
	q := make([]float64, n)
	rz := dot(r, z)
	norm0 := math.Sqrt(dot(r, r))
	for it := 0; it < maxCG && rz > 0; it++ {
		f.hessMul(p, q)
		alpha := rz / dot(p, q)
		for i := range x {
			x[i] += alpha * p[i]
			r[i] -= alpha * q[i]
		}
		if math.Sqrt(dot(r, r)) < 1e-3*norm0+1e-12 {
			break
		}
		for i := range z {
			z[i] = r[i] / f.diag[i]
		}
		rz2 := dot(r, z)
		beta := rz2 / rz
		rz = rz2
		for i := range p {
			p[i] = z[i] + beta*p[i]
		}
	}
	step := 0.0
	for i := range x {
		f.theta[i] += x[i]
		step = math.Max(step, math.Abs(x[i]))
	}
	return step
}

// updateRel takes one Newton step per judge on its reliability.
func (f *fitter) updateRel() {
	prec := 1 / (relPriorSD * relPriorSD)
	th := f.theta
	for j := range f.in.Judges {
		r := f.rel[j]
		g, h := -(r-1)*prec, prec
		lo, hi := f.pOff[j], f.pOff[j+1]
		pw, pl, pwt := f.pw[lo:hi], f.pl[lo:hi], f.pwt[lo:hi]
		for k := range pw {
			d := th[pw[k]] - th[pl[k]]
			p := sigmoid(r * d)
			wt := float64(pwt[k])
			g += wt * d * (1 - p)
			h += wt * d * d * p * (1 - p)
		}
		f.rel[j] = math.Min(maxRel, math.Max(minRel, r+g/h))
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
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

// topProbabilities estimates for each project the probability of a place in the top k.
func topProbabilities(theta, sd []float64, k int) []float64 {
	n := len(theta)
	out := make([]float64, n)
	if n == 0 {
		return out
	}
	if k >= n {
		for i := range out {
			out[i] = 1
		}
		return out
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	maxSD := 0.0
	for i := range theta {
		lo, hi = math.Min(lo, theta[i]), math.Max(hi, theta[i])
		maxSD = math.Max(maxSD, sd[i])
	}
	lo, hi = lo-10*maxSD, hi+10*maxSD
	// Newton's method on t, kept inside a shrinking bracket [lo, hi] (bisection when a
	// step would leave it): Σ Φ((θ_i − t)/sd_i) falls as t grows.
	t := (lo + hi) / 2
	for it := 0; it < 60; it++ {
		sum, slope := 0.0, 0.0
		for i := range theta {
			z := (theta[i] - t) / sd[i]
			sum += normCDF(z)
			slope += math.Exp(-z*z/2) / (sd[i] * math.Sqrt(2*math.Pi))
		}
		diff := sum - float64(k)
		if math.Abs(diff) < 1e-9 {
			break
		}
		if diff > 0 {
			lo = t
		} else {
			hi = t
		}
		next := t + diff/slope
		if slope == 0 || next <= lo || next >= hi {
			next = (lo + hi) / 2
		}
		if math.Abs(next-t) < 1e-12 {
			break
		}
		t = next
	}
	for i := range theta {
		out[i] = normCDF((theta[i] - t) / sd[i])
	}
	return out
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
