package load

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"podium/loadtest/client"
)

// judgeCounters counts judge outcomes over a phase.
type judgeCounters struct {
	nexts, assigned, paused, done atomic.Int64
	finishes, skips, ranks        atomic.Int64
	doubts                        atomic.Int64 // writes sent that got no answer
	unexpected                    atomic.Int64 // non-2xx answers
}

// JudgingReport summarises what the judge clients did.
type JudgingReport struct {
	Available   bool    `json:"available"` // false: the server has no judging routes (POST /api/judge/next is 404)
	Nexts       int64   `json:"nexts"`
	Assigned    int64   `json:"assigned"`
	Paused      int64   `json:"paused_answers"`
	Done        int64   `json:"done_answers"`
	Finishes    int64   `json:"finishes"`
	Skips       int64   `json:"skips"`
	Ranks       int64   `json:"ranks"`
	InDoubt     int64   `json:"writes_in_doubt"`
	Unexpected  int64   `json:"unexpected_answers"`
	FinishesSec float64 `json:"finishes_per_second"`
}

func (jc *judgeCounters) report(available bool, elapsed time.Duration) JudgingReport {
	r := JudgingReport{
		Available: available, Nexts: jc.nexts.Load(), Assigned: jc.assigned.Load(), Paused: jc.paused.Load(),
		Done: jc.done.Load(), Finishes: jc.finishes.Load(), Skips: jc.skips.Load(), Ranks: jc.ranks.Load(),
		InDoubt: jc.doubts.Load(), Unexpected: jc.unexpected.Load(),
	}
	if elapsed > 0 {
		r.FinishesSec = float64(int(float64(r.Finishes)/elapsed.Seconds()*10)) / 10
	}
	return r
}

var skipReasons = []struct {
	reason string
	weight float64
}{{"busy", 0.4}, {"cannot-demo", 0.25}, {"too-complex", 0.2}, {"absent", 0.1}, {"offensive", 0.05}}

func pickReason(rng *rand.Rand) string {
	x := rng.Float64()
	for _, r := range skipReasons {
		if x < r.weight {
			return r.reason
		}
		x -= r.weight
	}
	return "busy"
}

var noteWords = strings.Fields("great demo clear pitch solid backend nice ui needs polish ambitious scope " +
	"innovative idea working prototype live data crashed once impressive team good docs fast")

func randomNotes(rng *rand.Rand) string {
	n := 3 + rng.IntN(10)
	w := make([]string, n)
	for i := range w {
		w[i] = noteWords[rng.IntN(len(noteWords))]
	}
	return strings.Join(w, " ")
}

// sleepOr sleeps d or until stop closes; it reports whether to go on.
func sleepOr(stop <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-stop:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-stop:
		return false
	case <-t.C:
		return true
	}
}

// startJudges starts a judgeLoop for every judge of judges that has logged in, each
// after its ramp delay and with a random source seeded from seed and its index; wg
// counts them.
func (r *runner) startJudges(stop <-chan struct{}, wg *sync.WaitGroup, judges []*judgeRec, seed uint64) {
	for i, j := range judges {
		j.mu.Lock()
		hasToken := j.token != ""
		j.mu.Unlock()
		if !hasToken {
			continue
		}
		wg.Add(1)
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		delay := r.rampDelay(i, len(judges))
		go func() {
			defer wg.Done()
			if sleepOr(stop, delay) {
				r.judgeLoop(stop, j, rng)
			}
		}()
	}
}

// judgeLoop is one judge's phone: next -> think -> finish (notes, star) or skip (reason)
// -> sometimes rank, until stop closes. Requests are not cancelled by stop, so that a
// normal end of the run leaves no write in doubt.
func (r *runner) judgeLoop(stop <-chan struct{}, j *judgeRec, rng *rand.Rand) {
	ctx := context.Background()
	j.mu.Lock()
	tok := j.token
	j.mu.Unlock()
	a := client.AsJudge(tok)
	for sleepOr(stop, 0) {
		j.mu.Lock()
		from := j.assignFrom
		j.mu.Unlock()
		sent := nowMs()
		if from == 0 {
			from = sent
		}
		var nr struct {
			ProjectID *string `json:"project_id"`
			Reason    string  `json:"reason"`
		}
		r.jc.nexts.Add(1)
		t := time.Now()
		err := r.judgeDo(ctx, j, "/api/judge/next", a, nil, &nr)
		r.recordWrite("next", t, err, false) // may be answered from the node's state (after a skip that assigned already): never counted as a success
		if err != nil {
			switch client.Status(err) {
			case 404, 405:
				r.noJudging.Store(true)
				return
			case 0: // no answer: try again. The server may have assigned a project
				// already (the answer lost in a crash), which the retry returns: the
				// hold may have begun at this first request.
				j.mu.Lock()
				if j.assignFrom == 0 {
					j.assignFrom = sent
				}
				j.mu.Unlock()
			default:
				r.jc.unexpected.Add(1)
			}
			if !sleepOr(stop, 50*time.Millisecond) {
				return
			}
			continue
		}
		if nr.ProjectID == nil {
			if !r.waitForProject(stop, nr.Reason, rng) {
				return
			}
			continue
		}
		r.jc.assigned.Add(1)
		p := *nr.ProjectID
		j.mu.Lock()
		if j.holding != p {
			if j.holding != "" {
				r.lg.closeHold(j.holding, j.id, sent)
			}
			r.lg.openHold(p, j.id, from)
			j.holding = p
		}
		j.assignFrom = 0
		j.mu.Unlock()

		if !sleepOr(stop, r.think(rng)) {
			return
		}
		if rng.Float64() < r.cfg.SkipProb {
			r.skip(ctx, j, a, p, rng)
		} else if r.finish(ctx, j, a, p, rng) && rng.Float64() < r.cfg.RankProb {
			r.rank(ctx, j, a, rng)
		}
	}
}

// waitForProject pauses a judge whose next got no project for the given reason, as a
// phone would before asking again; it reports whether to go on.
func (r *runner) waitForProject(stop <-chan struct{}, reason string, rng *rand.Rand) bool {
	switch reason {
	case "paused":
		r.jc.paused.Add(1) // a phone would wait for the clock event; poll gently
		return sleepOr(stop, 50*time.Millisecond+time.Duration(rng.IntN(50))*time.Millisecond)
	case "done":
		r.jc.done.Add(1)
		return sleepOr(stop, 250*time.Millisecond)
	default:
		return sleepOr(stop, 100*time.Millisecond)
	}
}

func (r *runner) think(rng *rand.Rand) time.Duration {
	if r.cfg.Think <= 0 {
		return 0
	}
	// uniformly between half and one and a half think times
	return r.cfg.Think/2 + time.Duration(rng.Int64N(int64(r.cfg.Think)))
}

func (r *runner) skip(ctx context.Context, j *judgeRec, a client.Auth, p string, rng *rand.Rand) {
	reason := pickReason(rng)
	sent := nowMs()
	t := time.Now()
	err := r.judgeDo(ctx, j, "/api/judge/skip", a, map[string]string{"reason": reason}, nil)
	r.recordWrite("skip", t, err, err == nil)
	j.mu.Lock()
	defer j.mu.Unlock()
	switch code := client.Status(err); {
	case err == nil:
		r.jc.skips.Add(1)
		j.skips = append(j.skips, skipRec{project: p, reason: reason})
		j.excluded[p] = true
		r.lg.closeHold(p, j.id, nowMs())
		j.holding = ""
		j.assignFrom = sent // the server may assign the next project inside the skip
	case code == 0:
		r.jc.doubts.Add(1)
		j.excluded[p] = true
		j.assignFrom = sent
	default:
		r.jc.unexpected.Add(1)
		if code == 409 { // released meanwhile
			r.lg.closeHold(p, j.id, nowMs())
			j.holding = ""
		}
	}
}

func (r *runner) finish(ctx context.Context, j *judgeRec, a client.Auth, p string, rng *rand.Rand) bool {
	f := finishRec{notes: randomNotes(rng), starred: rng.IntN(4) == 0}
	t := time.Now()
	err := r.judgeDo(ctx, j, "/api/judge/finish", a, map[string]any{"notes": f.notes, "starred": f.starred}, nil)
	r.recordWrite("finish", t, err, err == nil)
	j.mu.Lock()
	defer j.mu.Unlock()
	switch code := client.Status(err); {
	case err == nil:
		r.jc.finishes.Add(1)
		if _, dup := j.finishes[p]; dup {
			j.dupFinishes = append(j.dupFinishes, p) // judged twice: reported as a violation
		}
		j.finishes[p] = f
		j.finishOrder = append(j.finishOrder, p)
		r.lg.closeHold(p, j.id, nowMs())
		j.holding = ""
		return true
	case code == 0:
		r.jc.doubts.Add(1)
		j.doubtFinish[p] = f
	default:
		r.jc.unexpected.Add(1)
		if code == 409 {
			r.lg.closeHold(p, j.id, nowMs())
			j.holding = ""
		}
	}
	return false
}

func (r *runner) rank(ctx context.Context, j *judgeRec, a client.Auth, rng *rand.Rand) {
	j.mu.Lock()
	pool := append([]string(nil), j.finishOrder...)
	j.mu.Unlock()
	rng.Shuffle(len(pool), func(x, y int) { pool[x], pool[y] = pool[y], pool[x] })
	k := 1 + rng.IntN(min(5, len(pool)))
	ranking := pool[:k]
	t := time.Now()
	err := r.judgeDo(ctx, j, "/api/judge/rank", a, map[string]any{"ranking": ranking}, nil)
	r.recordWrite("rank", t, err, err == nil)
	j.mu.Lock()
	defer j.mu.Unlock()
	switch code := client.Status(err); {
	case err == nil:
		r.jc.ranks.Add(1)
		j.rankAcked = ranking
		j.rankDoubt = nil
	case code == 0:
		r.jc.doubts.Add(1)
		j.rankDoubt = append(j.rankDoubt, ranking)
	default:
		r.jc.unexpected.Add(1)
	}
}

// judgeDo sends a judge's POST to the judge's current node (r.c with a single URL); a
// request that gets no answer moves the judge to the next node.
func (r *runner) judgeDo(ctx context.Context, j *judgeRec, path string, a client.Auth, body, out any) error {
	if r.nodes == nil {
		return r.c.Do(ctx, "POST", path, path, a, body, out)
	}
	i, c := r.nodes.pick(j.id)
	err := c.Do(ctx, "POST", path, path, a, body, out)
	r.nodes.done(j.id, i, err == nil || client.Status(err) != 0)
	return err
}

// recordWrite feeds the write-gap recorder: journaled is an acknowledged journaled
// action; no answer or a 5xx is a failed write; anything else is neither.
func (r *runner) recordWrite(route string, sent time.Time, err error, journaled bool) {
	switch code := client.Status(err); {
	case journaled:
		r.gaps.add(route, sent, true)
	case err != nil && (code == 0 || code >= 500):
		r.gaps.add(route, sent, false)
	}
}
