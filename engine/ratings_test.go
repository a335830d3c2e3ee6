package engine

import (
	"math"
	"testing"
)

// logPosterior is the fit's objective written out directly from the lists (test
// reference).
func (f *fitter) logPosterior() float64 {
	in := f.in
	lp := 0.0
	for _, t := range f.theta {
		lp -= t * t / (2 * ratingPriorSD * ratingPriorSD)
	}
	for j := range in.Judges {
		r := f.rel[j]
		lp -= (r - 1) * (r - 1) / (2 * relPriorSD * relPriorSD)
		seq := in.Seq[in.Off[j]:in.Off[j+1]]
		star := in.Star[in.Off[j]:in.Off[j+1]]
		wt := pairWeight / float64(len(seq)-1)
		beats := func(w, l int32, wt float64) {
			lp += wt * math.Log(sigmoid(r*(f.theta[w]-f.theta[l])))
		}
		for a := 0; a < int(in.NRanked[j]); a++ {
			for b := a + 1; b < len(seq); b++ {
				beats(seq[a], seq[b], wt)
			}
		}
		for a := range seq {
			for b := range seq {
				if star[a] && !star[b] {
					beats(seq[a], seq[b], wt*starWeight)
				}
			}
		}
	}
	return lp
}

func testRatingInput() *RatingInput {
	rnd := NewRand(3)
	in := &RatingInput{FocusTop: 3, Off: []int32{0}}
	const n = 12
	for i := 0; i < n; i++ {
		in.Projects = append(in.Projects, ID{byte(i + 1)})
		in.Prev = append(in.Prev, 0)
	}
	for j := 0; j < 9; j++ {
		in.Judges = append(in.Judges, ID{0, byte(j + 1)})
		in.PrevRel = append(in.PrevRel, 0)
		seen := 3 + rnd.Intn(5)
		start := rnd.Intn(n)
		for k := 0; k < seen; k++ {
			in.Seq = append(in.Seq, int32((start+k*5)%n))
			in.Star = append(in.Star, rnd.Intn(4) == 0)
		}
		in.NRanked = append(in.NRanked, int32(rnd.Intn(seen+1)))
		in.Off = append(in.Off, int32(len(in.Seq)))
	}
	return in
}

// TestFitGradientAndHessian checks the gradient, Hessian diagonal and Hessian-vector
// product against finite differences of the log posterior.
func TestFitGradientAndHessian(t *testing.T) {
	in := testRatingInput()
	f := &fitter{in: in, n: len(in.Projects)}
	f.theta = make([]float64, f.n)
	f.rel = make([]float64, len(in.Judges))
	rnd := NewRand(9)
	for i := range f.theta {
		f.theta[i] = rnd.Norm()
	}
	for j := range f.rel {
		f.rel[j] = 0.5 + rnd.Float64()
	}
	f.pairs()
	f.gradient(false)
	const h = 1e-5
	grad := append([]float64(nil), f.grad...)
	diag := append([]float64(nil), f.diag...)
	v := make([]float64, f.n)
	for i := range v {
		v[i] = rnd.Norm()
	}
	hv := make([]float64, f.n)
	f.hessMul(v, hv)
	for i := 0; i < f.n; i++ {
		f.theta[i] += h
		up := f.logPosterior()
		f.theta[i] -= 2 * h
		down := f.logPosterior()
		f.theta[i] += h
		mid := f.logPosterior()
		if g := (up - down) / (2 * h); math.Abs(g-grad[i]) > 1e-5 {
			t.Fatalf("gradient %d: %v, numeric %v", i, grad[i], g)
		}
		if d := -(up - 2*mid + down) / (h * h); math.Abs(d-diag[i]) > 1e-3 {
			t.Fatalf("hessian diagonal %d: %v, numeric %v", i, diag[i], d)
		}
	}
	// H·v against the change of the gradient along v.
	for i := range f.theta {
		f.theta[i] += h * v[i]
	}
	f.gradient(false)
	for i := range f.theta {
		if num := -(f.grad[i] - grad[i]) / h; math.Abs(num-hv[i]) > 1e-3 {
			t.Fatalf("H·v %d: %v, numeric %v", i, hv[i], num)
		}
	}
}

// TestFitRatingsDeterministic: the same input gives the same bits, ratings follow the
// rankings, and p_top sums to the top's size.
func TestFitRatingsDeterministic(t *testing.T) {
	in := testRatingInput()
	a, b := FitRatings(in), FitRatings(in)
	for i := range a.Rating {
		if a.Rating[i] != b.Rating[i] || a.SD[i] != b.SD[i] || a.PTop[i] != b.PTop[i] {
			t.Fatal("two fits of the same input differ")
		}
	}
	sum := 0.0
	for _, p := range a.PTop {
		sum += p
	}
	if math.Abs(sum-3) > 1e-3 {
		t.Fatalf("p_top sums to %v, want 3", sum)
	}
}
