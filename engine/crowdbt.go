package engine

import "math"

// Crowd-BT (Chen et al., "Pairwise ranking aggregation in a crowdsourced setting"), with
// the update rule and constants Gavel uses. Each project has a Gaussian belief (mu,
// sigma_sq) about its quality; each judge a Beta belief (alpha, beta) about its
// reliability. Every pairwise outcome updates both projects and the judge.
const (
	crowdMuPrior      = 0.0
	crowdSigmaSqPrior = 1.0
	crowdAlphaPrior   = 10.0
	crowdBetaPrior    = 1.0
	crowdKappa        = 0.0001 // keeps variances positive
	// Gavel's gamma (0.1) weighs the judge's information in its expected-information-gain
	// choice of the next pair; the update rule does not use it, and Podium assigns by its
	// own rules, so it has no constant here.
)

type btValue struct {
	mu, sigmaSq float64
	votes       int
}

// crowdInput is a copy of what Crowd-BT needs: the active general judges' rankings
// and unranked seen projects, judges in creation order. Taking it is cheap, so that the
// expensive computation can run without holding the engine's lock (see CrowdBT.Refresh).
type crowdInput struct {
	version uint64
	judges  []crowdJudge
}

type crowdJudge struct{ ranked, unranked []ID }

// crowdResult is computed Crowd-BT values, to hand back with storeCrowdBT.
type crowdResult struct {
	version uint64
	values  map[ID]btValue
}

// crowdBTInput returns a copy of Crowd-BT's inputs when the cached values are stale,
// or nil when they are current. Call it under the read lock, run compute outside it,
// and hand the result to storeCrowdBT.
func (s *State) crowdBTInput() *crowdInput {
	c := &s.jd().scores
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checkOptions(s)
	if !c.btDirty {
		return nil
	}
	return s.crowdInputLocked(c)
}

// crowdBTStale reports whether the cached Crowd-BT values need recomputing (cheap; call
// under the read lock).
func (s *State) crowdBTStale() bool {
	c := &s.jd().scores
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checkOptions(s)
	return c.btDirty
}

// storeCrowdBT caches values computed from crowdBTInput, unless the inputs changed in
// the meantime (then the next read computes them again).
func (s *State) storeCrowdBT(r *crowdResult) {
	if r == nil {
		return
	}
	c := &s.jd().scores
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checkOptions(s)
	if c.btDirty && c.btVersion == r.version {
		c.bt = r.values
		c.btDirty = false
	}
}

// crowdInputLocked copies the inputs (c.mu held). The lists are the Copeland
// contributions' own: each is built once and never changed afterwards (a judge's change
// replaces its contribution), so they can be shared with a computation running outside
// the lock.
func (s *State) crowdInputLocked(c *scoreCache) *crowdInput {
	s.refreshScores(c, false)
	in := &crowdInput{version: c.btVersion, judges: make([]crowdJudge, 0, len(s.JudgeOrder))}
	for _, jid := range s.JudgeOrder {
		jc, ok := c.contrib[jid]
		if !ok || jc.rc == 0 {
			continue
		}
		in.judges = append(in.judges, crowdJudge{ranked: jc.ids[:jc.rc:jc.rc], unranked: jc.ids[jc.rc:]})
	}
	return in
}

// compute runs Crowd-BT over the inputs, applying outcomes in a fixed order: judges by
// creation, then for each ranked project (best first) its wins over the projects ranked
// below it, then over the judge's unranked seen projects.
func (in *crowdInput) compute() *crowdResult {
	idx := map[ID]int{}
	var mu, sig []float64
	var votes []int
	var rk, un []int
	at := func(id ID) int {
		i, ok := idx[id]
		if !ok {
			i = len(mu)
			idx[id] = i
			mu = append(mu, crowdMuPrior)
			sig = append(sig, crowdSigmaSqPrior)
			votes = append(votes, 0)
		}
		return i
	}
	for _, cj := range in.judges {
		alpha, beta := crowdAlphaPrior, crowdBetaPrior
		rk, un = rk[:0], un[:0]
		for _, id := range cj.ranked {
			rk = append(rk, at(id))
		}
		for _, id := range cj.unranked {
			un = append(un, at(id))
		}
		outcome := func(w, l int) {
			alpha, beta, mu[w], sig[w], mu[l], sig[l] = crowdUpdate(alpha, beta, mu[w], sig[w], mu[l], sig[l])
			votes[w]++
			votes[l]++
		}
		for i, w := range rk {
			for _, l := range rk[i+1:] {
				outcome(w, l)
			}
			for _, l := range un {
				outcome(w, l)
			}
		}
	}
	out := &crowdResult{version: in.version, values: make(map[ID]btValue, len(idx))}
	for id, i := range idx {
		out.values[id] = btValue{mu: mu[i], sigmaSq: sig[i], votes: votes[i]}
	}
	return out
}

// crowdUpdate applies one outcome (winner beat loser, judged by a judge with reliability
// alpha, beta) and returns the updated judge and project parameters. All new values are
// computed from the old ones. A non-finite result (which the constants should never
// produce) leaves the old value in place so that results always encode as JSON.
func crowdUpdate(alpha, beta, muW, sigW, muL, sigL float64) (float64, float64, float64, float64, float64, float64) {
	eW, eL := math.Exp(muW), math.Exp(muL)

	// Judge: expected reliability after the outcome, matched to a Beta by moments.
	sum := eW + eL
	c1 := eW/sum + 0.5*(sigW+sigL)*(eW*eL*(eL-eW))/(sum*sum*sum)
	c2 := 1 - c1
	c := (c1*alpha + c2*beta) / (alpha + beta)
	ex := (c1*(alpha+1)*alpha + c2*alpha*beta) / (c * (alpha + beta + 1) * (alpha + beta))
	ex2 := (c1*(alpha+2)*(alpha+1)*alpha + c2*(alpha+1)*alpha*beta) / (c * (alpha + beta + 2) * (alpha + beta + 1) * (alpha + beta))
	variance := ex2 - ex*ex
	newAlpha := (ex - ex2) * ex / variance
	newBeta := (ex - ex2) * (1 - ex) / variance

	// Projects: means move by the judge-weighted surprise, variances shrink.
	wsum := alpha*eW + beta*eL
	m := alpha*eW/wsum - eW/sum
	newMuW := muW + sigW*m
	newMuL := muL - sigL*m
	v := alpha*eW*beta*eL/(wsum*wsum) - eW*eL/(sum*sum)
	newSigW := sigW * math.Max(1+sigW*v, crowdKappa)
	newSigL := sigL * math.Max(1+sigL*v, crowdKappa)

	return finiteOr(newAlpha, alpha), finiteOr(newBeta, beta), finiteOr(newMuW, muW), finiteOr(newSigW, sigW),
		finiteOr(newMuL, muL), finiteOr(newSigL, sigL)
}

func finiteOr(v, old float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return old
	}
	return v
}
