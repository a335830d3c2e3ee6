package fit

// The ratings fit's numeric kernels (fit.go drives them): the pass over every
// judge's pairs that gives the gradient and curvature, the Hessian-vector product, and
// the Newton steps (in θ alone, and in θ and the reliabilities together).

import "math"

// expTable holds 2^(i/64).
var expTable = func() (t [64]float64) {
	for i := range t {
		t[i] = math.Exp2(float64(i) / 64)
	}
	return t
}()

// row lists the pairs {a, b} of the current judge's list (gathered in vLoc and sLoc,
// its starred unranked positions in starPos) with b > a, in enumeration order: their b
// in rowB and θ_a − θ_b in rowD. It returns how many. An unranked, unstarred a pairs
// only with the starred positions after it, so a judge who ranks nothing and stars
// nothing costs nothing here (not n² steps of finding no pair).
func (f *fitter) row(a, n, nr int) int {
	tl, sl := f.vLoc[:n], f.sLoc[:n]
	ta, m := tl[a], 0
	if a < nr { // ranked: every later project
		for b := a + 1; b < n; b++ {
			f.rowB[m], f.rowD[m] = int32(b), ta-tl[b]
			m++
		}
		return m
	}
	if sl[a] == 0 { // unranked, unstarred: the starred ones after it
		for _, b := range f.starPos {
			if int(b) > a {
				f.rowB[m], f.rowD[m] = b, ta-tl[b]
				m++
			}
		}
		return m
	}
	for b := a + 1; b < n; b++ { // unranked, starred: the unstarred ones after it
		if sl[b] == 0 {
			f.rowB[m], f.rowD[m] = int32(b), ta-tl[b]
			m++
		}
	}
	return m
}

// gatherStars sets starPos to the starred positions of star from nr on, and returns
// where the judge's pairs end: n, or nr when no unranked project is starred (then no
// position from nr on has a pair).
func (f *fitter) gatherStars(star []bool, nr int) int {
	f.starPos = f.starPos[:0]
	for b := nr; b < len(star); b++ {
		if star[b] {
			f.starPos = append(f.starPos, int32(b))
		}
	}
	if len(f.starPos) == 0 {
		return nr
	}
	return len(star)
}

// logistic sets p[i] = σ(r·d[i]) and q[i] = 1 − σ(r·d[i]), each to full relative
// precision (r·d is clamped to ±40, where 1 − σ is below 5e-18). It takes e^x as
// 2^(k/64) from expTable times a polynomial on |x − k·ln 2/64| ≤ ln 2/128: within a few
// ulps, about twice as fast as math.Exp, and as deterministic (the tests' fastExp is
// the same computation for one number).
func logistic(r float64, d, p, q []float64) {
	const (
		inv   = 64 / math.Ln2
		ln2hi = 6.93147180369123816490e-01 / 64
		ln2lo = 1.90821492927058770002e-10 / 64
		shift = 0x1.8p52
	)
	q = q[:len(d)]
	p = p[:len(d)]
	for i, di := range d {
		x := -r * di
		if x > 40 {
			x = 40
		}
		if x < -40 {
			x = -40
		}
		kf := x*inv + shift
		k := int32(math.Float64bits(kf))
		kf -= shift
		t := x - kf*ln2hi - kf*ln2lo
		pt := 1 + t*(1+t*(1.0/2+t*(1.0/6+t*(1.0/24+t*(1.0/120+t*(1.0/720))))))
		e := math.Float64frombits(math.Float64bits(expTable[k&63])+uint64(int64(k>>6))<<52) * pt
		pi := 1 / (1 + e)
		p[i] = pi
		q[i] = e * pi
	}
}

// gradient fills grad and diag (in θ), gRel and hRel (in each reliability) and the
// pairs' Hessian weights, all at the current point, in one pass over the pairs. With
// rel, it first takes one Newton step on each judge's reliability (θ fixed), and the
// rest is at the new reliability; it returns the largest of those steps.
func (f *fitter) gradient(rel bool) float64 {
	in := f.in
	prec := 1 / (ratingPriorSD * ratingPriorSD)
	for i := range f.grad {
		f.grad[i] = -f.theta[i] * prec
		f.diag[i] = prec
	}
	if f.priorPrec != nil { // a track's prize order (track.go)
		for i := range f.grad {
			f.grad[i] = -(f.theta[i] - f.priorMean[i]) * f.priorPrec[i]
			f.diag[i] = f.priorPrec[i]
		}
	}
	relPrec := 1 / (relPriorSD * relPriorSD)
	th, grad, diag := f.theta, f.grad, f.diag
	relStep := 0.0
	for j := range in.Judges {
		lo, hi := in.Off[j], in.Off[j+1]
		seq, star := in.Seq[lo:hi], in.Star[lo:hi]
		n, nr := len(seq), int(in.NRanked[j])
		wt := pairWeight / float64(n-1)
		sw := wt * starWeight
		tl, gl, hl, sl := f.vLoc[:n], f.oLoc[:n], f.dLoc[:n], f.sLoc[:n]
		for a, p := range seq {
			tl[a], gl[a], hl[a], sl[a] = th[p], 0, 0, 0
			if star[a] {
				sl[a] = 1
			}
		}
		end := f.gatherStars(star, nr)
		if rel {
			relStep = math.Max(relStep, f.stepRel(j, n, nr, end, wt, sw))
		}
		r := f.rel[j]
		c := f.curv[f.cOff[j]:f.cOff[j+1]]
		k := 0
		gr, hr := -(r-1)*relPrec, relPrec
		ul := f.cross[lo:hi]
		for a := range ul {
			ul[a] = 0
		}
		for a := 0; a < end; a++ {
			m := f.row(a, n, nr)
			bs, dr, pr, qr := f.rowB[:m], f.rowD[:m], f.rowP[:m], f.rowQ[:m]
			logistic(r, dr, pr, qr)
			sa, rk := sl[a], 0.0
			if a < nr {
				rk = 1
			}
			ga, ha, ma := 0.0, 0.0, 0.0
			for i, b := range bs {
				sb := sl[b]
				// a beats b with weight wab, b beats a with weight wba
				wab, wba := rk*wt+sw*sa*(1-sb), sw*sb*(1-sa)
				d, p, q := dr[i], pr[i], qr[i]
				e := wab*q - wba*p // the log-likelihood's slope in r·d
				w := (wab + wba) * p * q
				g := r * e
				ga += g
				gl[b] -= g
				h := r * r * w
				ha += h
				hl[b] += h
				gr += d * e
				hr += d * d * w
				mm := r*d*w - e
				ma += mm
				ul[b] -= mm
				c[k+i] = float32(h)
			}
			k += m
			gl[a] += ga
			hl[a] += ha
			ul[a] += ma
		}
		f.lineCross[j] = 0
		if f.stars[j] {
			g, h := f.lineTerms(j, n, gl, hl, ul)
			gr += g
			hr += h
		}
		for a, p := range seq {
			grad[p] += gl[a]
			diag[p] += hl[a]
		}
		f.gRel[j], f.hRel[j] = gr, hr
		// A judge at a bound that its gradient pushes against stays there.
		f.invD[j] = 1 / hr
		if (r <= minRel && gr < 0) || (r >= maxRel && gr > 0) {
			f.invD[j] = 0
		}
	}
	return relStep
}

// stepRel takes one Newton step on judge j's reliability with θ fixed, and returns its
// size. The judge's list (n long, nr ranked, its pairs ending at end) is gathered in
// vLoc and sLoc; wt and sw are its pairs' weights (see gradient).
func (f *fitter) stepRel(j, n, nr, end int, wt, sw float64) float64 {
	sl := f.sLoc[:n]
	relPrec := 1 / (relPriorSD * relPriorSD)
	r := f.rel[j]
	gr, hr := -(r-1)*relPrec, relPrec
	for a := 0; a < end; a++ {
		m := f.row(a, n, nr)
		bs, dr, pr, qr := f.rowB[:m], f.rowD[:m], f.rowP[:m], f.rowQ[:m]
		logistic(r, dr, pr, qr)
		sa, rk := sl[a], 0.0
		if a < nr {
			rk = 1
		}
		for i, b := range bs {
			sb := sl[b]
			wab, wba := rk*wt+sw*sa*(1-sb), sw*sb*(1-sa)
			d, p, q := dr[i], pr[i], qr[i]
			gr += d * (wab*q - wba*p)
			hr += d * d * (wab + wba) * p * q
		}
	}
	if f.stars[j] {
		g, h := f.lineTerms(j, n, nil, nil, nil)
		gr += g
		hr += h
	}
	nv := math.Min(maxRel, math.Max(minRel, r+gr/hr))
	f.rel[j] = nv
	return math.Abs(nv - r)
}

// hessMul sets out = H·v (H the negative Hessian of the log posterior in θ, at the last
// gradient()).
func (f *fitter) hessMul(v, out []float64) { f.hessMulS(v, out, false) }

// hessMulS is hessMul, or with schur the product with the Schur complement of the
// reliabilities' block, H_θθ − U·D⁻¹·Uᵀ (U the cross terms, D the reliabilities'
// diagonal).
func (f *fitter) hessMulS(v, out []float64, schur bool) {
	in := f.in
	prec := 1 / (ratingPriorSD * ratingPriorSD)
	for i := range out {
		out[i] = v[i] * prec
	}
	if f.priorPrec != nil {
		for i := range out {
			out[i] = v[i] * f.priorPrec[i]
		}
	}
	for j := range in.Judges {
		lo, hi := in.Off[j], in.Off[j+1]
		seq, star := in.Seq[lo:hi], in.Star[lo:hi]
		n, nr := len(seq), int(in.NRanked[j])
		vl, ol := f.vLoc[:n], f.oLoc[:n]
		for a, p := range seq {
			vl[a], ol[a] = v[p], 0
		}
		c := f.curv[f.cOff[j]:f.cOff[j+1]]
		k := 0
		for a := 0; a < nr; a++ {
			va, acc := vl[a], 0.0
			cc := c[k : k+n-a-1]
			k += n - a - 1
			for i, cb := range cc {
				b := a + 1 + i
				d := float64(cb) * (va - vl[b])
				acc += d
				ol[b] -= d
			}
			ol[a] += acc
		}
		end := f.gatherStars(star, nr)
		for a := nr; a < end; a++ {
			va, acc := vl[a], 0.0
			if !star[a] { // pairs only with the starred ones after it
				for _, b := range f.starPos {
					if int(b) <= a {
						continue
					}
					d := float64(c[k]) * (va - vl[b])
					k++
					acc += d
					ol[b] -= d
				}
			} else {
				for b := a + 1; b < n; b++ {
					if star[b] {
						continue
					}
					d := float64(c[k]) * (va - vl[b])
					k++
					acc += d
					ol[b] -= d
				}
			}
			ol[a] += acc
		}
		line := f.n - 1
		if f.stars[j] {
			vc := v[line]
			for a, h := range f.lineCurv[lo:hi] {
				t := h * (vl[a] - vc)
				ol[a] += t
				out[line] -= t
			}
		}
		if schur && f.invD[j] != 0 {
			ul, lc := f.cross[lo:hi], f.lineCross[j]
			s := lc * v[line]
			for a, u := range ul {
				s += u * vl[a]
			}
			s *= f.invD[j]
			for a, u := range ul {
				ol[a] -= u * s
			}
			out[line] -= lc * s
		}
		for a, p := range seq {
			out[p] += ol[a]
		}
	}
}

// pcg solves H·x = r (r already in f.cgR) into f.cgX by conjugate gradients
// preconditioned by diag, from x = 0, to the relative residual tol or maxCG steps; mul
// computes H·p. With checkPD it stops where H is not positive definite along the
// search, and returns false when that happens at the first step (x is then 0).
func (f *fitter) pcg(mul func(p, q []float64), diag []float64, tol float64, checkPD bool) bool {
	x, r, z, p, q := f.cgX, f.cgR, f.cgZ, f.cgP, f.cgQ
	for i := range x {
		x[i] = 0
		z[i] = r[i] / diag[i]
		p[i] = z[i]
	}
	rz := dot(r, z)
	stop := tol * tol * rz
	for it := 0; it < maxCG && rz > stop && !f.stopped(); it++ {
		mul(p, q)
		pq := dot(p, q)
		if checkPD && !(pq > 0) {
			return it > 0
		}
		alpha := rz / pq
		for i := range x {
			x[i] += alpha * p[i]
			r[i] -= alpha * q[i]
		}
		rz2 := 0.0
		for i := range z {
			z[i] = r[i] / diag[i]
			rz2 += r[i] * z[i]
		}
		beta := rz2 / rz
		rz = rz2
		for i := range p {
			p[i] = z[i] + beta*p[i]
		}
	}
	return true
}

// newtonTheta solves H·x = grad (at the last gradient()) by conjugate gradients
// preconditioned by H's diagonal, to the relative residual tol or maxCG steps, adds x
// to θ and returns its largest component.
func (f *fitter) newtonTheta(tol float64) float64 {
	x := f.cgX
	copy(f.cgR, f.grad)
	f.pcg(f.hessMul, f.diag, tol, false)
	step := 0.0
	for i := range x {
		f.theta[i] += x[i]
		step = math.Max(step, math.Abs(x[i]))
	}
	return step
}

// newtonJoint takes one Newton step in θ and the reliabilities together (at the last
// gradient()): the reliabilities are eliminated (their block is diagonal), the Schur
// complement system in θ is solved by preconditioned CG, and each reliability follows
// by back-substitution. It returns the largest steps in θ and in reliability; ok is
// false when the Hessian is not positive definite along the search (then nothing moved).
func (f *fitter) newtonJoint(tol float64) (st, sr float64, ok bool) {
	in := f.in
	x, r := f.cgX, f.cgR
	copy(r, f.grad)
	copy(f.diagS, f.diag)
	for j := range in.Judges {
		id := f.invD[j]
		if id == 0 {
			continue
		}
		lo, hi := in.Off[j], in.Off[j+1]
		gj := f.gRel[j] * id
		for k, u := range f.cross[lo:hi] {
			pi := in.Seq[lo+int32(k)]
			r[pi] -= u * gj
			f.diagS[pi] -= u * u * id
		}
		lc, line := f.lineCross[j], f.n-1
		r[line] -= lc * gj
		f.diagS[line] -= lc * lc * id
	}
	for i := range x {
		if f.diagS[i] < 0.1*f.diag[i] {
			f.diagS[i] = 0.1 * f.diag[i]
		}
	}
	if !f.pcg(func(p, q []float64) { f.hessMulS(p, q, true) }, f.diagS, tol, true) {
		return 0, 0, false
	}
	for i := range x {
		f.theta[i] += x[i]
		st = math.Max(st, math.Abs(x[i]))
	}
	for j := range in.Judges {
		id := f.invD[j]
		if id == 0 {
			continue
		}
		lo, hi := in.Off[j], in.Off[j+1]
		g := f.gRel[j] - f.lineCross[j]*x[f.n-1]
		for k, u := range f.cross[lo:hi] {
			g -= u * x[in.Seq[lo+int32(k)]]
		}
		old := f.rel[j]
		f.rel[j] = math.Min(maxRel, math.Max(minRel, old+g*id))
		sr = math.Max(sr, math.Abs(f.rel[j]-old))
	}
	return st, sr, true
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// The star line: a judge who stars says of each project it judged whether it is above
// one line on the rating scale, the same line for every judge (P(star) = σ(r_j·(θ −
// line))): evidence that compares projects no judge saw together, where rankings only
// compare the projects of one judge's list. A judge who never stars says nothing this
// way. Each term weighs lineWeight.

// lineTerms adds judge j's star-line terms at the current point (its list of n gathered
// in vLoc and sLoc, its reliability f.rel[j]) to gl, hl and ul (the list's gradient,
// curvature and cross terms, when not nil; the curvature is kept in lineCurv for
// hessMulS), and returns their gradient and curvature in the reliability.
func (f *fitter) lineTerms(j, n int, gl, hl, ul []float64) (gr, hr float64) {
	tl, sl := f.vLoc[:n], f.sLoc[:n]
	dr, pr, qr := f.rowD[:n], f.rowP[:n], f.rowQ[:n]
	line := f.n - 1
	for a := range dr {
		dr[a] = tl[a] - f.theta[line]
	}
	r := f.rel[j]
	logistic(r, dr, pr, qr)
	lc := f.lineCurv[f.in.Off[j]:f.in.Off[j+1]]
	for a, d := range dr {
		p, q := pr[a], qr[a]
		e := f.lineW * (sl[a]*q - (1-sl[a])*p) // the log-likelihood's slope in r·d
		w := f.lineW * p * q
		gr += d * e
		hr += d * d * w
		if gl != nil {
			gl[a] += r * e
			hl[a] += r * r * w
			ul[a] += r*d*w - e
			lc[a] = r * r * w
			f.grad[line] -= r * e
			f.diag[line] += r * r * w
			f.lineCross[j] -= r*d*w - e
		}
	}
	return gr, hr
}

// stepLine takes one Newton step on the star line alone, θ[n−1] (prior
// N(0, ratingPriorSD²)), with the ratings and reliabilities fixed: the fit's starting
// point for it.
func (f *fitter) stepLine() {
	in := f.in
	prec := 1 / (ratingPriorSD * ratingPriorSD)
	line := f.n - 1
	g, h := -f.theta[line]*prec, prec
	for j := range in.Judges {
		if !f.stars[j] {
			continue
		}
		lo, hi := in.Off[j], in.Off[j+1]
		n := int(hi - lo)
		dr, pr, qr := f.rowD[:n], f.rowP[:n], f.rowQ[:n]
		for a, p := range in.Seq[lo:hi] {
			dr[a] = f.theta[p] - f.theta[line]
		}
		r := f.rel[j]
		logistic(r, dr, pr, qr)
		for a, st := range in.Star[lo:hi] {
			p, q := pr[a], qr[a]
			e := -f.lineW * p
			if st {
				e = f.lineW * q
			}
			g -= r * e
			h += r * r * f.lineW * p * q
		}
	}
	f.theta[line] += g / h
}
