package fit

// A track prize's order (docs/behaviour.md#track-prizes): fitted from the track's own
// judges, with the general judges' evidence (the overall rating) as a prior whose
// weight the track judges' data decides.
//
// The track judges' lists are fitted by the ratings' model (fit.go: a Bradley-Terry
// model with a reliability per judge and the star line), first with the ratings' prior
// N(0, ratingPriorSD²). Each judged project's evidence is then read off that fit as a
// normal likelihood (Laplace: its precision is the Hessian's diagonal less the prior's,
// its mean the one that gives the fitted rating), y_i with variance v_i. Against it the
// overall rating m_i (centred on the track's mean; sd s_i) is set in a normal model,
//
//	track rating_i ~ N(β·m_i, τ² + β²·s_i²),  y_i ~ N(track rating_i, v_i),
//
// and β (≥ 0: how far the track judges' order follows the overall rating) and τ (how
// far it departs from it) are averaged over their posterior on a grid, β with the prior
// N(0, betaPriorSD²), so that with little evidence β stays near 0 and the prior says
// little. τ is at least minTau: the prior never fixes a track rating, the track judges'
// lists always move it. Finally the track judges' lists are fitted again with that
// prior, per project, which gives the track ratings and their sds. Everything runs in
// a fixed order on a fixed grid: the same input gives the same bits.

import (
	"math"

	"podium/engine"
)

const (
	// trackIters bounds the iterations of each of a track's two fits (a track's
	// lists are short: they converge in a few).
	trackIters = 30
	// betaPriorSD is the prior sd of β, the weight of the overall rating in a track
	// rating's prior (the two are on about the same scale: β near 1 when the track's
	// judges judge what the general judges judge).
	betaPriorSD = 1.0
	// minTau and maxTau bound τ, the sd of a track rating around its prior mean.
	minTau = 0.35
	maxTau = 3.0
	// betaMax is the largest β the grid tries.
	betaMax = 2.0
	// minEvidence is the least likelihood precision of a project that counts in
	// estimating β and τ (below it the track judges have said next to nothing of it).
	minEvidence = 0.01
	// trackLineWeight is the star line's weight in a track's fit (the ratings' is
	// lineWeight): a track's lists are short and seldom overlap, and the line is what
	// compares them (chosen with the simulation, docs/behaviour.md#track-prizes).
	trackLineWeight = 1.0
)

// trackFits fits every track of in, with the overall ratings of overall as the prior.
func trackFits(in *engine.RatingInput, overall *engine.SetRatings) []engine.TrackFit {
	if len(in.Tracks) == 0 {
		return nil
	}
	out := make([]engine.TrackFit, len(in.Tracks))
	for i := range in.Tracks {
		out[i] = trackFit(&in.Tracks[i], overall)
	}
	return out
}

// trackFit fits one track's prize order.
func trackFit(t *engine.TrackInput, overall *engine.SetRatings) engine.TrackFit {
	in := &t.In
	n := len(in.Projects)
	out := engine.TrackFit{Track: t.Track, Projects: append([]engine.ID{}, in.Projects...),
		Rating: make([]float64, n), SD: make([]float64, n), Tau: ratingPriorSD}
	m, s := make([]float64, n), make([]float64, n)
	center := 0.0
	for i, k := range t.Overall {
		m[i], s[i] = overall.Rating[k], overall.SD[k]
		center += m[i]
	}
	if n > 0 {
		center /= float64(n)
	}
	for i := range m {
		m[i] -= center
	}
	out.Center = round6(center)
	for i := range out.SD {
		out.SD[i] = ratingPriorSD
	}
	if n == 0 || len(in.Judges) == 0 {
		return out // nothing from the track's judges: every project at the prior, β 0
	}
	f, _ := newFitterLine(in, trackLineWeight)
	f.run(trackIters)
	f.gradient(false)
	prec0 := 1 / (ratingPriorSD * ratingPriorSD)
	y, v := make([]float64, n), make([]float64, n) // v 0: no evidence
	for i := 0; i < n; i++ {
		pl := f.diag[i] - prec0
		if pl >= minEvidence {
			y[i], v[i] = f.theta[i]*f.diag[i]/pl, 1/pl
		}
	}
	beta, tau := priorWeight(y, v, m, s)
	f.priorMean, f.priorPrec = make([]float64, f.n), make([]float64, f.n)
	for i := 0; i < n; i++ {
		f.priorMean[i] = beta * m[i]
		f.priorPrec[i] = 1 / (tau*tau + beta*beta*s[i]*s[i])
	}
	f.priorPrec[n] = prec0 // the star line keeps the ratings' prior
	f.run(trackIters)
	f.gradient(false)
	for i := 0; i < n; i++ {
		out.Rating[i] = round6(f.theta[i])
		out.SD[i] = round6(1 / math.Sqrt(f.diag[i]))
	}
	out.Beta, out.Tau = round6(beta), round6(tau)
	return out
}

// priorWeight returns the posterior means of β and τ (the latter as the root of τ²'s)
// given the projects' evidence y (variance v, 0: none) and their centred overall
// ratings m (sd s), on a grid: β in [0, betaMax] with prior N(0, betaPriorSD²), τ in
// [minTau, maxTau] evenly in log τ.
func priorWeight(y, v, m, s []float64) (beta, tau float64) {
	const nb, nt = 81, 25
	logp := make([]float64, nb*nt)
	best := math.Inf(-1)
	for bi := range nb {
		b := betaMax * float64(bi) / (nb - 1)
		for ti := range nt {
			t := minTau * math.Pow(maxTau/minTau, float64(ti)/(nt-1))
			l := -b * b / (2 * betaPriorSD * betaPriorSD)
			for i := range y {
				if v[i] == 0 {
					continue
				}
				vv := t*t + v[i] + b*b*s[i]*s[i]
				d := y[i] - b*m[i]
				l -= 0.5 * (math.Log(vv) + d*d/vv)
			}
			logp[bi*nt+ti] = l
			best = math.Max(best, l)
		}
	}
	sw, sb, st := 0.0, 0.0, 0.0
	for bi := range nb {
		b := betaMax * float64(bi) / (nb - 1)
		for ti := range nt {
			t := minTau * math.Pow(maxTau/minTau, float64(ti)/(nt-1))
			w := math.Exp(logp[bi*nt+ti] - best)
			sw += w
			sb += w * b
			st += w * t * t
		}
	}
	return sb / sw, math.Sqrt(st / sw)
}
