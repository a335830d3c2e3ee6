package fit

import (
	"cmp"
	"math"
	"slices"
	"testing"

	"podium/engine"
)

// addJudge appends a judge who ranked all of seq (best first), starring none.
func addJudge(in *engine.RatingInput, seq []int32) {
	in.Judges = append(in.Judges, engine.ID{byte(len(in.Judges)), byte(len(in.Judges) >> 8), 9})
	in.PrevRel = append(in.PrevRel, 0)
	in.Seq = append(in.Seq, seq...)
	in.Star = append(in.Star, make([]bool, len(seq))...)
	in.NRanked = append(in.NRanked, int32(len(seq)))
	in.Off = append(in.Off, int32(len(in.Seq)))
}

// TestJudgeChecksHoldTheJudgeOut: a judge is compared with the consensus of the others
// (docs/behaviour.md#judges-against-the-consensus). A judge who alone saw its projects
// has no clear-cut pair (against ratings it made itself, it would agree on all of
// them); a judge who ranks the others' projects in the reverse of the true order
// disagrees on most of its clear-cut pairs, more than every other judge.
func TestJudgeChecksHoldTheJudgeOut(t *testing.T) {
	in, q := signalRatingInput(60, 12, 12, 7)
	var lone []int32
	for i := range 6 {
		in.Projects = append(in.Projects, engine.ID{byte(i), 0, 0, 3})
		in.Prev = append(in.Prev, 0)
		lone = append(lone, int32(60+i))
	}
	addJudge(in, lone)
	reversed := []int32{0, 7, 14, 21, 28, 35, 42, 49, 56, 3, 10, 17}
	slices.SortFunc(reversed, func(a, b int32) int { return cmp.Compare(q[a], q[b]) })
	addJudge(in, reversed)
	out := Ratings(in)
	nj := len(in.Judges)
	if c := out.Compared[nj-2]; c != 0 {
		t.Errorf("the judge who alone saw its projects has %d clear-cut pairs", c)
	}
	rev := out.Disagreement[nj-1]
	if rev < 0.8 || out.Compared[nj-1] < 10 {
		t.Errorf("the reversed judge disagrees on %.2f of %d clear-cut pairs", rev, out.Compared[nj-1])
	}
	for j := range nj - 2 {
		if out.Disagreement[j] >= rev {
			t.Errorf("judge %d disagrees on %.2f of %d, the reversed judge on %.2f", j, out.Disagreement[j], out.Compared[j], rev)
		}
	}
}

// TestHeldOutNearRefit: the held-out ratings (one step from the fit's optimum) are close
// to a fit from scratch without the group, much closer than the fit's own ratings.
func TestHeldOutNearRefit(t *testing.T) {
	for _, seed := range []uint64{11, 12, 13} {
		in, _ := signalRatingInput(80, 20, 12, seed)
		f, _ := newFitter(in)
		f.run(coldIters)
		f.gradient(false)
		theta, sd := make([]float64, f.n), make([]float64, f.n)
		var group []int
		for j := 3; j < len(in.Judges); j += heldOutGroups {
			group = append(group, j)
		}
		f.heldOut(group, f.terms(nil), theta, sd)
		sub := &engine.RatingInput{FocusTop: in.FocusTop, Projects: in.Projects, Prev: make([]float64, len(in.Projects)), Off: []int32{0}}
		for j := range in.Judges {
			if j%heldOutGroups != 3 {
				lo, hi := in.Off[j], in.Off[j+1]
				addJudge(sub, in.Seq[lo:hi])
				copy(sub.Star[len(sub.Star)-int(hi-lo):], in.Star[lo:hi])
			}
		}
		refit := Ratings(sub)
		n := len(refit.Rating)
		held, full := correlation(theta[:n], refit.Rating), correlation(f.theta[:n], refit.Rating)
		if held < 0.99 || held <= full {
			t.Errorf("seed %d: held-out ratings correlate %.4f with a refit without the group, the fit's %.4f", seed, held, full)
		}
		t.Logf("seed %d: correlation with a refit without the group: held-out %.4f, the fit's ratings %.4f", seed, held, full)
	}
}

func correlation(x, y []float64) float64 {
	var sxy, sxx, syy float64
	for i := range x {
		sxy += x[i] * y[i]
		sxx += x[i] * x[i]
		syy += y[i] * y[i]
	}
	return sxy / math.Sqrt(sxx*syy)
}
