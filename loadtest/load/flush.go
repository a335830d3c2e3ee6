package load

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"podium/loadtest/client"
	"podium/loadtest/stats"
)

// Flush mode (docs/behaviour.md#on-the-floor): every judge is given a project online,
// then the hall's Wi-Fi drops. Each phone queues Config.Flush keyed actions — finishing
// its project, then the two `upcoming` ones (a finish naming the project), placing them
// in a ranking, editing a note — and all judges come back online at once and send their
// queues in order. A share of the actions is sent twice (an answer lost on the way):
// the repeat must come back as the kept answer (Idempotent-Replayed: true, same body)
// and change nothing. The ledger's invariants then check that nothing was lost or
// doubled.

// FlushReport is what a flush run measured.
type FlushReport struct {
	Judges     int           `json:"judges"`
	Actions    int           `json:"actions"`     // first sends
	Resent     int           `json:"resent"`      // duplicates sent
	Replayed   int           `json:"replayed"`    // duplicates answered from the kept answer
	Errors     int           `json:"errors"`      // non-2xx or no answer
	Mismatches int           `json:"mismatches"`  // a repeat not replayed, or another body
	ElapsedSec float64       `json:"elapsed_sec"` // from "back online" to the last answer
	Latency    stats.Latency `json:"latency"`     // every flush request
}

// flushAction is one queued judge write and what its acknowledgement records.
type flushAction struct {
	method, path, key string
	body              any
	acked             func(j *judgeRec)
}

// flushQueue builds the n actions judge j queued offline while at project cur with
// upcoming projects up.
func flushQueue(j *judgeRec, cur string, up []string, n int, rng *rand.Rand) []flushAction {
	key := func(i int) string { return fmt.Sprintf("%s-%d", j.id, i) }
	finish := func(p string, starred bool) flushAction {
		f := finishRec{notes: randomNotes(rng), starred: starred}
		return flushAction{method: "POST", path: "/api/judge/finish",
			body:  map[string]any{"project": p, "notes": f.notes, "starred": f.starred},
			acked: func(j *judgeRec) { j.finishes[p] = f; j.finishOrder = append(j.finishOrder, p) }}
	}
	q := []flushAction{finish(cur, true)}
	visited := []string{cur}
	for _, p := range up {
		q = append(q, finish(p, rng.IntN(2) == 0))
		visited = append(visited, p)
	}
	ranking := append([]string(nil), visited...)
	rng.Shuffle(len(ranking), func(x, y int) { ranking[x], ranking[y] = ranking[y], ranking[x] })
	q = append(q, flushAction{method: "POST", path: "/api/judge/rank", body: map[string]any{"ranking": ranking},
		acked: func(j *judgeRec) { j.rankAcked = ranking }})
	for i := 0; len(q) < n; i++ {
		p := visited[i%len(visited)]
		notes := randomNotes(rng) + " (edited)"
		q = append(q, flushAction{method: "PUT", path: "/api/judge/notes/" + p, body: map[string]string{"notes": notes},
			acked: func(j *judgeRec) { f := j.finishes[p]; f.notes = notes; j.finishes[p] = f }})
	}
	q = q[:n]
	for i := range q {
		q[i].key = key(i)
	}
	return q
}

// flushPhase runs flush mode after the setup.
func (r *runner) flushPhase(ctx context.Context) error {
	rep := &FlushReport{}
	r.rep.Flush = rep
	js := r.lg.judgeList()
	queues := make([][]flushAction, len(js))
	// Online: each judge's project and its upcoming ones.
	err := client.Parallel(len(js), r.cfg.SetupWorkers, func(i int) error {
		var nr struct {
			ProjectID string   `json:"project_id"`
			Upcoming  []string `json:"upcoming"`
		}
		j := js[i]
		if err := r.admin.Do(ctx, "POST", "/api/judge/next", "/api/judge/next", client.AsJudge(j.token), nil, &nr); err != nil {
			return err
		}
		if nr.ProjectID == "" {
			return fmt.Errorf("judge %s got no project: give more projects", j.id)
		}
		queues[i] = flushQueue(j, nr.ProjectID, nr.Upcoming, r.cfg.Flush, rand.New(rand.NewPCG(r.cfg.Seed, uint64(i))))
		return nil
	})
	if err != nil {
		return fmt.Errorf("flush mode, online part: %w", err)
	}
	var mu sync.Mutex
	var lat []time.Duration
	var problems []string
	back := make(chan struct{})
	var wg sync.WaitGroup
	for i, j := range js {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(r.cfg.Seed^0xf1, uint64(i)))
			<-back // all phones find the network at once
			for _, a := range queues[i] {
				r.flushSend(ctx, j, a, rng, rep, &mu, &lat, &problems)
			}
		}()
	}
	r.cfg.Log("flush: %d judges come back online with %d queued actions each", len(js), r.cfg.Flush)
	start := time.Now()
	close(back)
	wg.Wait()
	rep.ElapsedSec = time.Since(start).Seconds()
	rep.Judges = len(js)
	rep.Latency = stats.Summarize(lat)
	ir, err := verify(ctx, r.admin, r.lg, verifyOpts{})
	if err != nil {
		return fmt.Errorf("invariant check: %w", err)
	}
	for _, m := range problems {
		ir.fail("%s", m)
	}
	r.rep.Invariants = ir
	return nil
}

// flushSend sends one queued action and, with probability 0.2, sends it again as a
// phone that lost the answer would; the repeat must be the kept answer.
func (r *runner) flushSend(ctx context.Context, j *judgeRec, a flushAction, rng *rand.Rand, rep *FlushReport,
	mu *sync.Mutex, lat *[]time.Duration, problems *[]string) {
	auth := client.AsJudge(j.token)
	send := func() (bool, []byte, error, time.Duration) {
		var body []byte
		t := time.Now()
		replayed, err := r.c.DoKeyed(ctx, a.method, a.path, a.path, auth, a.key, a.body, &body)
		return replayed, body, err, time.Since(t)
	}
	replayed, first, err, d := send()
	resend := rng.Float64() < 0.2
	var again []byte
	var replayed2 bool
	var err2 error
	var d2 time.Duration
	if resend {
		replayed2, again, err2, d2 = send()
	}
	mu.Lock()
	defer mu.Unlock()
	rep.Actions++
	*lat = append(*lat, d)
	fail := func(e error) {
		rep.Errors++
		r.rep.Errors[fmt.Sprint(client.Status(e))]++
		if len(*problems) < 20 {
			*problems = append(*problems, e.Error())
		}
	}
	switch {
	case err != nil:
		fail(err)
		return
	case replayed:
		rep.Mismatches++
		*problems = append(*problems, fmt.Sprintf("judge %s: the first send of %s was answered as a repeat", j.id, a.key))
	default:
		j.mu.Lock()
		a.acked(j)
		j.mu.Unlock()
	}
	if !resend {
		return
	}
	rep.Resent++
	*lat = append(*lat, d2)
	switch {
	case err2 != nil:
		fail(err2)
	case !replayed2 || string(again) != string(first):
		rep.Mismatches++
		*problems = append(*problems, fmt.Sprintf("judge %s: repeat of %s: replayed %v, body %s, first %s", j.id, a.key, replayed2, again, first))
	default:
		rep.Replayed++
	}
}
