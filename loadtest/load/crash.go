package load

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"podium/loadtest/client"
	"podium/loadtest/stats"
)

// CrashReport is the outcome of crash mode.
type CrashReport struct {
	Cycles         []CycleReport `json:"cycles"`
	AckedFinishes  int           `json:"acked_finishes"`
	AckedSkips     int           `json:"acked_skips"`
	AckedRanks     int64         `json:"acked_ranks"`
	AckedCreations int           `json:"acked_creations"` // judges + projects
	AckedLogins    int           `json:"acked_logins"`
	Lost           int           `json:"lost_writes"`      // acknowledged writes missing after a restart, over all checks
	Violations     int           `json:"violations"`       // all invariant violations, over all checks
	DoubtApplied   int           `json:"in_doubt_applied"` // unanswered writes found applied after a restart (allowed)
	GracefulCheck  bool          `json:"graceful_restart_checked"`
}

// CycleReport is one kill/restart cycle.
type CycleReport struct {
	Cycle       int      `json:"cycle"`
	KilledAfter float64  `json:"killed_after_seconds"`
	Finishes    int64    `json:"finishes"`
	Skips       int64    `json:"skips"`
	Ranks       int64    `json:"ranks"`
	Creations   int64    `json:"creations"`
	InDoubt     int64    `json:"writes_in_doubt"`  // sent, unanswered when the server died
	RecoverySec float64  `json:"recovery_seconds"` // restart until /readyz answered
	Lost        int      `json:"lost_writes"`
	Violations  int      `json:"violations"`
	Messages    []string `json:"messages"`
}

// lost counts acknowledged writes that the server no longer has.
func (ir *InvariantReport) lost() int {
	return ir.LostJudges + ir.LostProjects + ir.LostLogins + ir.LostFinishes + ir.WrongNotes + ir.RankMismatch + ir.LostSkips
}

// crash runs the judging load against a server it starts, SIGKILLs it at a random
// moment, restarts it on the same data directory and verifies every acknowledged write,
// CrashCycles times; then stops it gracefully, restarts it once more and verifies again.
func (r *runner) crash(ctx context.Context) (*Report, error) {
	cfg := r.cfg
	rep := r.rep
	if cfg.ServerBin == "" {
		return rep, errors.New("crash mode needs the server binary (it starts and kills the server itself)")
	}
	// crash mode drives judges and creators only; no watchers, readers or clock toggles
	rep.Scenario.Watchers, rep.Scenario.Readers, rep.Scenario.DurationS, rep.Scenario.ClockEvery = 0, 0, 0, 0
	cleanup, err := r.startManaged(ctx)
	if err != nil {
		return rep, err
	}
	defer cleanup()
	runStats := stats.NewRoutes()
	r.connectWith(r.srv.URL(), stats.NewRoutes(), runStats)
	rep.Server = r.srv.URL()
	if err := r.admin.WaitReady(ctx); err != nil {
		return rep, err
	}
	if err := r.setup(ctx, "lt-"+client.RunID(), cfg.Projects, cfg.Judges); err != nil {
		return rep, err
	}
	cr := &CrashReport{}
	rep.Crash = cr
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xc4a5))
	hs := &holdSampler{timerSec: 300}
	total := time.Duration(0)
	for cycle := 1; cycle <= cfg.CrashCycles; cycle++ {
		cyc, ran := r.crashCycle(ctx, cycle, rng, hs)
		total += ran
		if err := r.restartAndVerify(ctx, &cyc, cr, "after SIGKILL"); err != nil {
			return rep, err
		}
		cr.Cycles = append(cr.Cycles, cyc)
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
	// a graceful stop must keep everything as well (snapshot at shutdown)
	r.admin.CloseIdle() // idle keep-alive connections hold up the server's shutdown
	if err := r.srv.Stop(); err != nil {
		r.note("%v", err)
	}
	var g CycleReport
	if err := r.restartAndVerify(ctx, &g, cr, "after graceful stop"); err != nil {
		return rep, err
	}
	cr.GracefulCheck = true
	hs.sample(ctx, r.admin, r.lg)
	r.rep.Invariants.mergeHolds(hs)
	cr.Violations += hs.violations
	r.crashTotals(ctx, runStats, total)
	return rep, nil
}

// crashCycle runs the judges, the creators and the hold sampler against the server,
// SIGKILLs it after a random time between CrashMin and CrashMax, and returns what the
// cycle got acknowledged and how long the load ran.
func (r *runner) crashCycle(ctx context.Context, cycle int, rng *rand.Rand, hs *holdSampler) (CycleReport, time.Duration) {
	cfg := r.cfg
	cyc := CycleReport{Cycle: cycle}
	before := *r.jc.snapshot()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	r.startJudges(stop, &wg, r.lg.judgeList(), cfg.Seed+uint64(cycle)<<32)
	var cyCreations int64
	var cmu sync.Mutex
	for k := 0; k < cfg.Creators; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := r.creator(stop, fmt.Sprintf("lt-c%d-%d-%s", cycle, k, client.RunID()))
			cmu.Lock()
			cyCreations += n
			cmu.Unlock()
		}()
	}
	sideStop := make(chan struct{})
	var side sync.WaitGroup
	if cfg.SampleInterval > 0 {
		side.Add(1)
		go func() { defer side.Done(); hs.run(sideStop, cfg.SampleInterval, r.c, r.lg) }()
	}
	span := cfg.CrashMax - cfg.CrashMin
	d := cfg.CrashMin
	if span > 0 {
		d += time.Duration(rng.Int64N(int64(span)))
	}
	start := time.Now()
	sleepCtx(ctx, d)
	close(sideStop)
	side.Wait()
	r.srv.Kill() // SIGKILL mid-flight
	ran := time.Since(start)
	cyc.KilledAfter = ran.Seconds()
	close(stop)
	wg.Wait()
	after := r.jc.snapshot()
	cyc.Finishes = after.finishes - before.finishes
	cyc.Skips = after.skips - before.skips
	cyc.Ranks = after.ranks - before.ranks
	cyc.InDoubt = after.doubts - before.doubts
	cyc.Creations = cyCreations
	cfg.Log("cycle %d: killed after %.2fs (%d finishes, %d skips, %d ranks, %d creations acknowledged; %d writes in doubt)",
		cycle, cyc.KilledAfter, cyc.Finishes, cyc.Skips, cyc.Ranks, cyc.Creations, cyc.InDoubt)
	return cyc, ran
}

// crashTotals fills in the report of a crash run: the requests and judging of the
// cycles (total long), the acknowledged writes and the server's memory at the end.
func (r *runner) crashTotals(ctx context.Context, runStats *stats.Routes, total time.Duration) {
	rep, cr := r.rep, r.rep.Crash
	rep.ElapsedSec = total.Seconds()
	rep.Routes, rep.Errors = runStats.Report(total)
	rep.JudgeAll = stats.Summarize(runStats.Latencies(isJudgeAction))
	rep.Judging = r.jc.report(!r.noJudging.Load(), total)
	if r.noJudging.Load() {
		r.note("the server has no judging routes (POST /api/judge/next answered 404): crash load was judge/project creation and logins only")
	}
	for _, j := range r.lg.judgeList() {
		j.mu.Lock()
		cr.AckedFinishes += len(j.finishes)
		cr.AckedSkips += len(j.skips)
		if j.token != "" {
			cr.AckedLogins++
		}
		j.mu.Unlock()
	}
	cr.AckedRanks = r.jc.ranks.Load()
	r.lg.mu.Lock()
	cr.AckedCreations = len(r.lg.judges) + len(r.lg.projects)
	r.lg.mu.Unlock()
	rep.RSS.End = r.rss(ctx)
}

// restartAndVerify restarts the (dead) server on the same data directory, waits until it
// is ready, checks every acknowledged write and restarts the clock.
func (r *runner) restartAndVerify(ctx context.Context, cyc *CycleReport, cr *CrashReport, when string) error {
	t := time.Now()
	if err := r.srv.Start(ctx); err != nil {
		return fmt.Errorf("restart %s: %w", when, err)
	}
	r.connectWith(r.srv.URL(), r.admin.Stats(), r.c.Stats())
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := r.admin.WaitReady(rctx); err != nil {
		return fmt.Errorf("restart %s: %w", when, err)
	}
	cyc.RecoverySec = time.Since(t).Seconds()
	ir, err := verify(ctx, r.admin, r.lg, verifyOpts{logins: true, resolve: true})
	if err != nil {
		return fmt.Errorf("verify %s: %w", when, err)
	}
	cyc.Lost = ir.lost()
	cyc.Violations = ir.Violations
	cyc.Messages = ir.Messages
	cr.Lost += cyc.Lost
	cr.Violations += ir.Violations
	cr.DoubtApplied += ir.DoubtApplied
	r.rep.Invariants = ir // the last check is the one reported
	if ir.Violations > 0 {
		r.cfg.Log("%s: %d violations (%d lost writes): %v", when, ir.Violations, cyc.Lost, ir.Messages)
	} else {
		r.cfg.Log("%s: recovered in %.2fs, all acknowledged writes present (%d finishes, %d skips checked)", when, cyc.RecoverySec, ir.AckedFinishes, ir.AckedSkips)
	}
	if _, err := r.admin.SetClock(ctx, "unpause"); err != nil { // with clock_sync off it comes back paused
		return fmt.Errorf("unpause %s: %w", when, err)
	}
	return nil
}

// connectWith binds the clients to base keeping the given stats.
func (r *runner) connectWith(base string, setupStats, runStats *stats.Routes) {
	r.connect(base, setupStats)
	r.c = r.admin.WithStats(runStats)
}

// creator is an admin adding projects and judges one by one until stop; it returns
// how many creations were acknowledged.
func (r *runner) creator(stop <-chan struct{}, prefix string) int64 {
	ctx := context.Background()
	var n int64
	for i := 0; sleepOr(stop, 20*time.Millisecond); i++ {
		if i%2 == 0 {
			name := fmt.Sprintf("%s-p%d", prefix, i)
			var out struct {
				ID string `json:"id"`
			}
			if r.c.Do(ctx, "POST", "/api/project/new", "/api/project/new", client.AsAdmin, map[string]any{"name": name, "description": "added during the crash run"}, &out) == nil && out.ID != "" {
				r.lg.addProject(out.ID, name)
				n++
			}
			continue
		}
		name := fmt.Sprintf("%s-j%d", prefix, i)
		email := name + "@example.com"
		var out struct {
			ID string `json:"id"`
		}
		if r.c.Do(ctx, "POST", "/api/judge/new", "/api/judge/new", client.AsAdmin, map[string]any{"name": name, "email": email, "notes": "", "no_send": true}, &out) == nil && out.ID != "" {
			r.lg.addJudge(&judgeRec{id: out.ID, name: name, email: email})
			n++
		}
	}
	return n
}

func (jc *judgeCounters) snapshot() *struct{ finishes, skips, ranks, doubts int64 } {
	return &struct{ finishes, skips, ranks, doubts int64 }{jc.finishes.Load(), jc.skips.Load(), jc.ranks.Load(), jc.doubts.Load()}
}
