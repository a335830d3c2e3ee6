package fit

// How each judge's rankings compare with the other judges' consensus
// (docs/behaviour.md#judges-against-the-consensus): the evidence behind "this judge
// answers at random".
//
// Compared with the ratings that include it, a judge agrees with itself: at 12 visits
// of 40 projects a judge is a third of the evidence on the projects it saw, and a judge
// answering at random looked 68 % consistent. Each judge is therefore compared with the
// consensus of the others (its group of judges held out, heldOutGroups groups in all),
// and only on the pairs that consensus is sure of (clear-cut pairs): on the others even
// a careful judge disagrees often, which hides one answering at random.

import (
	"math"

	"podium/engine"
)

const (
	// heldOutGroups is how many groups the judges are held out in (judge j in group
	// j mod heldOutGroups; one judge per group when there are fewer judges).
	heldOutGroups = 10
	// clearCut is how far apart, in sds of their difference, the held-out ratings must
	// put two projects for the pair to count: the consensus is then at least 84 % sure
	// of their order.
	clearCut = 1.0
)

// judgeChecks returns, per judge, how many clear-cut ranking outcomes it gave (a
// ranked project above a project after it in its list, on a pair the consensus without
// the judge is sure of) and the share of them that consensus orders the other way:
// about one half for a judge answering at random. It reads the gradient and curvature
// of the fit's last gradient() (result's, at the final point).
func (f *fitter) judgeChecks() ([]float64, []int) {
	in := f.in
	share, count := make([]float64, len(in.Judges)), make([]int, len(in.Judges))
	groups := min(heldOutGroups, len(in.Judges))
	prior := f.terms(nil)
	theta, sd := make([]float64, f.n), make([]float64, f.n)
	for g := range groups {
		var group []int
		for j := g; j < len(in.Judges); j += groups {
			group = append(group, j)
		}
		f.heldOut(group, prior, theta, sd)
		for _, j := range group {
			share[j], count[j] = disagreement(in, j, theta, sd)
		}
	}
	return share, count
}

// heldOut sets theta and sd to the consensus without the judges of group: one Newton
// step by the Hessian's diagonal from the fit's optimum, the gradient and curvature
// being the fit's less the group's own terms (prior: f.terms(nil)).
func (f *fitter) heldOut(group []int, prior *fitter, theta, sd []float64) {
	h := f.terms(group)
	for i := range theta {
		d := f.diag[i] - h.diag[i] + prior.diag[i]
		theta[i] = f.theta[i] + (f.grad[i]-h.grad[i]+prior.grad[i])/d
		sd[i] = 1 / math.Sqrt(d)
	}
}

// terms returns a fitter at f's point whose gradient and curvature are the prior's
// plus those of the given judges' lists alone (none: the prior's), from one gradient()
// over those lists: all the groups together cost one pass over every judge's pairs. A
// full refit without each judge separates a judge answering at random about as often as
// the step judgeChecks takes from these.
func (f *fitter) terms(judges []int) *fitter {
	in := f.in
	sub := &engine.RatingInput{Projects: in.Projects, Off: []int32{0}}
	h := &fitter{in: sub, n: f.n, theta: f.theta, lineW: f.lineW}
	for _, j := range judges {
		lo, hi := in.Off[j], in.Off[j+1]
		sub.Judges = append(sub.Judges, in.Judges[j])
		sub.NRanked = append(sub.NRanked, in.NRanked[j])
		sub.Seq = append(sub.Seq, in.Seq[lo:hi]...)
		sub.Star = append(sub.Star, in.Star[lo:hi]...)
		sub.Off = append(sub.Off, int32(len(sub.Seq)))
		h.rel = append(h.rel, f.rel[j])
	}
	h.pairs()
	h.gradient(false)
	return h
}

// disagreement compares judge j's ranking outcomes with the held-out ratings theta
// (sd: their sds; a pair's sd is taken as that of two independent ratings): how many
// are clear-cut, and the share of those theta orders the other way.
func disagreement(in *engine.RatingInput, j int, theta, sd []float64) (float64, int) {
	seq := in.Seq[in.Off[j]:in.Off[j+1]]
	count, against := 0, 0
	for a := 0; a < int(in.NRanked[j]); a++ {
		pa := seq[a]
		for _, pb := range seq[a+1:] {
			d := theta[pa] - theta[pb]
			if math.Abs(d) < clearCut*math.Hypot(sd[pa], sd[pb]) {
				continue
			}
			count++
			if d < 0 {
				against++
			}
		}
	}
	if count == 0 {
		return 0, 0
	}
	return float64(against) / float64(count), count
}
