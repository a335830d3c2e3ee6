package fit

import (
	"cmp"
	"math"
	"slices"
	"testing"

	"podium/engine"
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
		if slices.Contains(star, true) { // the star line, θ[n−1]
			for a, p := range seq {
				s := sigmoid(r * (f.theta[p] - f.theta[f.n-1]))
				if star[a] {
					lp += lineWeight * math.Log(s)
				} else {
					lp += lineWeight * math.Log(1-s)
				}
			}
		}
	}
	return lp
}

func testRatingInput() *engine.RatingInput {
	rnd := engine.NewRand(3)
	in := &engine.RatingInput{FocusTop: 3, Off: []int32{0}}
	const n = 12
	for i := 0; i < n; i++ {
		in.Projects = append(in.Projects, engine.ID{byte(i + 1)})
		in.Prev = append(in.Prev, 0)
	}
	for j := 0; j < 9; j++ {
		in.Judges = append(in.Judges, engine.ID{0, byte(j + 1)})
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
	f := &fitter{in: in, n: len(in.Projects) + 1, lineW: lineWeight}
	f.theta = make([]float64, f.n)
	f.rel = make([]float64, len(in.Judges))
	rnd := engine.NewRand(9)
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
	a, b := Ratings(in), Ratings(in)
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

// TestFitCrossTerms checks the reliabilities' derivatives (gRel, hRel) and the cross
// terms θ–reliability against finite differences.
func TestFitCrossTerms(t *testing.T) {
	in := testRatingInput()
	f := &fitter{in: in, n: len(in.Projects) + 1, lineW: lineWeight}
	f.theta = make([]float64, f.n)
	f.rel = make([]float64, len(in.Judges))
	rnd := engine.NewRand(11)
	for i := range f.theta {
		f.theta[i] = rnd.Norm()
	}
	for j := range f.rel {
		f.rel[j] = 0.5 + rnd.Float64()
	}
	f.pairs()
	f.gradient(false)
	gRel := append([]float64(nil), f.gRel...)
	hRel := append([]float64(nil), f.hRel...)
	cross := append([]float64(nil), f.cross...)
	lineCross := append([]float64(nil), f.lineCross...)
	grad := append([]float64(nil), f.grad...)
	const h = 1e-5
	for j := range in.Judges {
		f.rel[j] += h
		up := f.logPosterior()
		f.gradient(false)
		gradUp := append([]float64(nil), f.grad...)
		f.rel[j] -= 2 * h
		down := f.logPosterior()
		f.rel[j] += h
		mid := f.logPosterior()
		if g := (up - down) / (2 * h); math.Abs(g-gRel[j]) > 1e-5 {
			t.Fatalf("judge %d: reliability gradient %v, numeric %v", j, gRel[j], g)
		}
		if d := -(up - 2*mid + down) / (h * h); math.Abs(d-hRel[j]) > 1e-3 {
			t.Fatalf("judge %d: reliability curvature %v, numeric %v", j, hRel[j], d)
		}
		// The negative Hessian's entry (θ_p, r_j) is −∂grad_p/∂r_j: cross for the
		// judge's projects, 0 for the others.
		want := make([]float64, f.n)
		for k := in.Off[j]; k < in.Off[j+1]; k++ {
			want[in.Seq[k]] += cross[k]
		}
		want[f.n-1] = lineCross[j]
		for p := range want {
			if num := -(gradUp[p] - grad[p]) / h; math.Abs(num-want[p]) > 1e-3 {
				t.Fatalf("judge %d project %d: cross term %v, numeric %v", j, p, want[p], num)
			}
		}
	}
}

// TestFitReachesStationaryPoint: the fit ends where the log posterior's gradient
// vanishes (in θ, and in every reliability not held at a bound), cold and warm; a warm
// refit of unchanged lists from the stored (median-relative) reliabilities lands on the
// same ratings.
func TestFitReachesStationaryPoint(t *testing.T) {
	sig, _ := signalRatingInput(400, 200, 12, 7)
	for name, in := range map[string]*engine.RatingInput{"small": testRatingInput(), "signal": sig} {
		f, _ := newFitter(in)
		its := f.run(coldIters)
		if its >= coldIters {
			t.Errorf("%s: the cold fit did not settle in %d iterations", name, coldIters)
		}
		f.gradient(false)
		mg := 0.0
		for _, g := range f.grad {
			mg = math.Max(mg, math.Abs(g))
		}
		for j, g := range f.gRel {
			if f.rel[j] > minRel && f.rel[j] < maxRel {
				mg = math.Max(mg, math.Abs(g))
			}
		}
		t.Logf("%s: %d iterations, largest gradient %v", name, its, mg)
		for i, g := range f.grad {
			if math.Abs(g) > 1e-3 {
				t.Errorf("%s: project %d: gradient %v after the fit", name, i, g)
			}
		}
		for j, g := range f.gRel {
			r := f.rel[j]
			if r > minRel && r < maxRel && math.Abs(g) > 1e-3 {
				t.Errorf("%s: judge %d: reliability gradient %v after the fit", name, j, g)
			}
		}
		cold := f.result()
		warmIn := *in
		warmIn.Prev, warmIn.PrevRel = cold.Rating, cold.Reliability
		warm := Ratings(&warmIn)
		for i := range cold.Rating {
			if math.Abs(cold.Rating[i]-warm.Rating[i]) > 2e-3 || math.Abs(cold.SD[i]-warm.SD[i]) > 2e-3 {
				t.Fatalf("%s: project %d: cold %v ± %v, warm refit %v ± %v", name, i,
					cold.Rating[i], cold.SD[i], warm.Rating[i], warm.SD[i])
			}
		}
		for j := range cold.Reliability {
			if math.Abs(cold.Reliability[j]-warm.Reliability[j]) > 5e-3 {
				t.Fatalf("%s: judge %d: reliability cold %v, warm refit %v", name, j, cold.Reliability[j], warm.Reliability[j])
			}
		}
	}
}

// TestFitFindsQuality: on lists that follow a true quality, the fitted ratings
// correlate with it, and careless judges get a low reliability.
func TestFitFindsQuality(t *testing.T) {
	in, q := signalRatingInput(300, 300, 12, 3)
	out := Ratings(in)
	if rho := spearman(out.Rating, q); rho < 0.8 {
		t.Fatalf("rank correlation of rating and true quality %v, want ≥ 0.8", rho)
	}
}

// spearman is the rank correlation of a and b (no ties).
func spearman(a, b []float64) float64 {
	rank := func(v []float64) []float64 {
		idx := make([]int, len(v))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(x, y int) int { return cmp.Compare(v[x], v[y]) })
		r := make([]float64, len(v))
		for k, i := range idx {
			r[i] = float64(k)
		}
		return r
	}
	ra, rb := rank(a), rank(b)
	n, d2 := float64(len(a)), 0.0
	for i := range ra {
		d2 += (ra[i] - rb[i]) * (ra[i] - rb[i])
	}
	return 1 - 6*d2/(n*(n*n-1))
}

// TestFastExp: fastExp and logistic against the math package.
func TestFastExp(t *testing.T) {
	for x := -45.0; x <= 45; x += 0.0007 {
		want := math.Exp(x)
		if got := fastExp(x); math.Abs(got-want) > 4e-16*want {
			t.Fatalf("fastExp(%v) = %v, want %v", x, got, want)
		}
	}
	d := []float64{-50, -40, -7.5, -1, -1e-9, 0, 1e-9, 0.3, 2, 39, 60}
	p, q := make([]float64, len(d)), make([]float64, len(d))
	logistic(1.5, d, p, q)
	for i, di := range d {
		x := math.Max(-40, math.Min(40, 1.5*di))
		wp, wq := 1/(1+math.Exp(-x)), 1/(1+math.Exp(x))
		if math.Abs(p[i]-wp) > 1e-15*wp || math.Abs(q[i]-wq) > 1e-15*wq {
			t.Fatalf("logistic(%v): %v, %v; want %v, %v", 1.5*di, p[i], q[i], wp, wq)
		}
	}
}

// TestFitRatingsUntil: with a stop channel that stays open the fit is Ratings to the
// bit; a closed one makes it give up without a result.
func TestFitRatingsUntil(t *testing.T) {
	in, _ := signalRatingInput(300, 30, 40, 5)
	want := Ratings(in)
	open := make(chan struct{})
	got, done := RatingsUntil(in, open)
	if !done || got == nil {
		t.Fatal("a fit with an open stop channel gave up")
	}
	for i := range want.Rating {
		if got.Rating[i] != want.Rating[i] || got.SD[i] != want.SD[i] || got.PTop[i] != want.PTop[i] {
			t.Fatalf("project %d: %v/%v/%v, Ratings gives %v/%v/%v", i, got.Rating[i], got.SD[i], got.PTop[i], want.Rating[i], want.SD[i], want.PTop[i])
		}
	}
	for i := range want.Reliability {
		if got.Reliability[i] != want.Reliability[i] {
			t.Fatalf("judge %d: reliability %v, Ratings gives %v", i, got.Reliability[i], want.Reliability[i])
		}
	}
	closed := make(chan struct{})
	close(closed)
	if got, done := RatingsUntil(in, closed); done || got != nil {
		t.Fatal("a fit whose stop channel is closed returned a result")
	}
}

// fastExp returns e^x for |x| ≤ 60 within a few ulps: logistic's exponential, for one
// number (2^(k/64) from a table times a polynomial on |r| ≤ ln 2/128).
func fastExp(x float64) float64 {
	const (
		inv   = 64 / math.Ln2
		ln2hi = 6.93147180369123816490e-01 / 64
		ln2lo = 1.90821492927058770002e-10 / 64
		shift = 0x1.8p52 // adding it rounds to an integer held in the low bits
	)
	kf := x*inv + shift
	k := int32(math.Float64bits(kf))
	kf -= shift
	r := x - kf*ln2hi - kf*ln2lo
	pr := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720))))))
	return math.Float64frombits(math.Float64bits(expTable[k&63])+uint64(int64(k>>6))<<52) * pr
}

// sigmoid2 returns σ(x) and 1 − σ(x), each to full relative precision (x is clamped to
// ±40, where 1 − σ is below 5e-18).
func sigmoid2(x float64) (p, q float64) {
	if x > 40 {
		x = 40
	}
	if x < -40 {
		x = -40
	}
	e := fastExp(-x)
	p = 1 / (1 + e)
	return p, e * p
}

// sigmoid returns σ(x) (x clamped to ±40, as in the fit).
func sigmoid(x float64) float64 {
	p, _ := sigmoid2(x)
	return p
}
