// Package load drives a running Podium server the way real clients do — judges on
// phones, admin dashboards, expo screens and the marketing site — over HTTP and
// websockets only, and reports throughput, latency, broadcast delivery, memory and
// invariant violations. It can start the server binary itself (one node, or a cluster
// of nodes on loopback), SIGKILL a node or the leader during the measured phase and
// report the write gap, or, in crash mode, SIGKILL and restart the server under load
// and check that no acknowledged write was lost. Everything it knows comes from the
// wire.
package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"podium/loadtest/client"
	"podium/loadtest/server"
	"podium/loadtest/stats"
)

// runner holds one run's shared state.
type runner struct {
	cfg       *Config
	c         *client.Client // measured-phase requests
	admin     *client.Client // setup and checks
	lg        *ledger
	jc        *judgeCounters
	noJudging atomic.Bool
	srv       *server.Process
	rep       *Report
	urls      []string       // every server URL, r.admin's first (one: single-server mode)
	cluster   []*managedNode // nodes the tool started (cluster mode)
	nodes     *nodeSet       // judges' clients with several URLs
	gaps      *gapRecorder
}

func (r *runner) note(format string, args ...any) {
	r.rep.Notes = append(r.rep.Notes, fmt.Sprintf(format, args...))
	r.cfg.Log("note: "+format, args...)
}

// Run executes the configured scenario (or crash mode when CrashCycles > 0) and returns
// its report. An error means the run could not be carried out; findings (errors,
// violations, lost writes) are in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	fd, fdErr := server.RaiseFDLimit()
	rep := &Report{Started: time.Now().UTC(), Mode: "load", Errors: map[string]int{}, Notes: []string{}}
	rep.Scenario = Scenario{
		Projects: cfg.Projects, Judges: cfg.Judges, Watchers: cfg.Watchers, Readers: cfg.Readers,
		DurationS: cfg.Duration.Seconds(), ThinkMs: float64(cfg.Think.Microseconds()) / 1000,
		SkipProb: cfg.SkipProb, RankProb: cfg.RankProb, ClockEvery: cfg.ClockInterval.Seconds(), Seed: cfg.Seed, FDLimit: fd,
	}
	r := &runner{cfg: &cfg, lg: newLedger(), jc: &judgeCounters{}, rep: rep}
	if fdErr != nil {
		r.note("raising the open-files limit failed: %v", fdErr)
	}
	if err := cfg.checkCluster(); err != nil {
		return rep, err
	}
	if cfg.CrashCycles > 0 {
		rep.Mode = "crash"
		return r.crash(ctx)
	}
	base := cfg.URL
	r.urls = append([]string{cfg.URL}, cfg.MoreURLs...)
	switch {
	case cfg.ServerBin != "" && cfg.ClusterNodes > 0:
		nodes, cleanup, err := r.startCluster(ctx)
		if err != nil {
			return rep, err
		}
		defer cleanup()
		r.cluster, r.rep.Managed = nodes, true
		// setup and checks go through a follower; the judges start on every node
		leader, _ := r.leaderOf(ctx, nodes)
		pick := nodes[0]
		for _, nd := range nodes {
			if nd != leader {
				pick = nd
				break
			}
		}
		r.srv, base, r.urls = pick.p, pick.url, []string{pick.url}
		for _, nd := range nodes {
			if nd != pick {
				r.urls = append(r.urls, nd.url)
			}
		}
	case cfg.ServerBin != "":
		cleanup, err := r.startManaged(ctx)
		if err != nil {
			return rep, err
		}
		defer cleanup()
		base = r.srv.URL()
		r.urls = []string{base}
	}
	if base == "" {
		return rep, errors.New("no server: give a URL or a server binary")
	}
	rep.Server = strings.Join(r.urls, ",")
	r.connect(base, stats.NewRoutes())
	if err := r.admin.WaitReady(ctx); err != nil {
		return rep, err
	}
	if err := r.setup(ctx, "lt-"+client.RunID(), cfg.Projects, cfg.Judges); err != nil {
		return rep, err
	}
	if cfg.Flush > 0 {
		rep.Mode = "flush"
		return rep, r.flushPhase(ctx)
	}
	if err := r.loadPhase(ctx); err != nil {
		return rep, err
	}
	return rep, nil
}

// connect (re)binds the clients to base.
func (r *runner) connect(base string, setupStats *stats.Routes) {
	hc := client.NewHostClient(base, r.cfg.Judges+r.cfg.Readers+r.cfg.Creators+64, 30*time.Second)
	r.admin = client.New(base, r.cfg.AdminPassword, hc, setupStats)
	r.c = r.admin.WithStats(stats.NewRoutes())
}

// setup creates the projects and judges, raises the login limit, logs every judge in and
// starts the clock.
func (r *runner) setup(ctx context.Context, prefix string, projects, judges int) error {
	start := time.Now()
	if n := r.admin.RaiseLoginLimit(ctx); n != "" {
		r.note("%s", n)
	}
	csv := !r.cfg.NoCSV
	before := len(r.lg.projects)
	if err := createProjects(ctx, r.admin, r.lg, prefix, 0, projects, r.cfg.SetupWorkers, csv); err != nil {
		return fmt.Errorf("create projects: %w", err)
	}
	r.rep.Setup.ProjectsVia = via(r.admin.Stats(), "/api/project/csv", csv)
	r.cfg.Log("created %d projects in %.1fs", len(r.lg.projects)-before, time.Since(start).Seconds())
	t := time.Now()
	if err := createJudges(ctx, r.admin, r.lg, prefix, 0, judges, r.cfg.SetupWorkers, csv); err != nil {
		return fmt.Errorf("create judges: %w", err)
	}
	r.rep.Setup.JudgesVia = via(r.admin.Stats(), "/api/judge/csv", csv)
	r.cfg.Log("created %d judges in %.1fs", judges, time.Since(t).Seconds())
	t = time.Now()
	js := r.lg.judgeList()
	if err := client.Parallel(len(js), r.cfg.SetupWorkers, func(i int) error { return login(ctx, r.admin, js[i]) }); err != nil {
		return fmt.Errorf("judge login: %w", err)
	}
	r.cfg.Log("logged in %d judges in %.1fs", len(js), time.Since(t).Seconds())
	if _, err := r.admin.SetClock(ctx, "unpause"); err != nil {
		return fmt.Errorf("start the clock: %w", err)
	}
	r.rep.Setup.Seconds = time.Since(start).Seconds()
	r.rep.Setup.Routes, _ = r.admin.Stats().Report(time.Since(start))
	return nil
}

func via(st *stats.Routes, csvRoute string, tried bool) string {
	if !tried {
		return "single requests"
	}
	if st.Answers("POST "+csvRoute, 200) > 0 {
		return "CSV import " + csvRoute
	}
	return "single requests (no CSV import route)"
}

// createProjects adds n projects through c and records the acknowledged ones in lg.
func createProjects(ctx context.Context, c *client.Client, lg *ledger, prefix string, from, n, workers int, csv bool) error {
	made, err := c.CreateProjects(ctx, prefix, from, n, workers, csv)
	for _, p := range made {
		lg.addProject(p.ID, p.Name)
	}
	return err
}

// createJudges adds n judges through c and records them in lg with their login codes.
func createJudges(ctx context.Context, c *client.Client, lg *ledger, prefix string, from, n, workers int, csv bool) error {
	made, err := c.CreateJudges(ctx, prefix, from, n, workers, csv)
	for k, j := range made {
		lg.addJudge(&judgeRec{id: j.ID, name: j.Name, email: j.Email, code: j.Code, xff: client.FakeIP(from + k)})
	}
	return err
}

// login logs judge j in through c and records its token.
func login(ctx context.Context, c *client.Client, j *judgeRec) error {
	tok, err := c.Login(ctx, j.code, j.xff)
	if err != nil {
		return err
	}
	j.mu.Lock()
	j.token = tok
	j.mu.Unlock()
	return nil
}

func (r *runner) rss(ctx context.Context) int64 {
	if v := metricsRSS(ctx, r.admin.WithStats(nil)); v > 0 {
		if r.rep.RSS.Source == "" {
			r.rep.RSS.Source = "metrics"
		}
		return v
	}
	if r.srv != nil {
		if v := server.RSS(r.srv.PID()); v > 0 {
			r.rep.RSS.Source = "proc"
			return v
		}
	}
	return 0
}

// loadPhase runs judges, readers, watchers, the clock toggler and the hold sampler for
// the configured duration, then checks the invariants.
func (r *runner) loadPhase(ctx context.Context) error {
	r.rep.RSS.AfterSetup = r.rss(ctx)
	if r.rep.RSS.AfterSetup == 0 {
		r.note("server RSS unavailable (no /metrics process collector and not a managed server)")
	}
	stopPeak := r.samplePeakRSS()
	ws := r.connectWatchers(ctx)
	r.rep.RSS.AfterWatchers = r.rss(ctx)
	hs, ct := r.newSamplers(ctx)
	usage := r.startUsage(ctx)
	if len(r.urls) > 1 {
		r.nodes = newNodeSet(r.urls, r.cfg.AdminPassword, r.cfg.Judges+64, r.c.Stats(), r.lg.judgeList())
		defer r.nodes.closeIdle()
	}
	elapsed, kill, killedURL := r.measure(ctx, len(ws.list), hs, ct)
	r.endUsage(usage)
	time.Sleep(time.Second) // late broadcasts
	r.rep.RSS.End = r.rss(ctx)
	r.rep.Metrics = serverMetrics(usage.metrics, scrape(ctx, r.admin.WithStats(nil)))
	ws.close()
	stopPeak()
	r.reportPhase(elapsed, ws, ct, kill, killedURL)
	return r.finalChecks(ctx, hs, ct, killedURL)
}

// samplePeakRSS polls a managed server's RSS every 500 ms into the report's peak until
// the returned func is called.
func (r *runner) samplePeakRSS() (stop func()) {
	if r.srv == nil {
		return func() {}
	}
	peakStop, peakDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(peakDone)
		for sleepOr(peakStop, 500*time.Millisecond) {
			if v := server.RSS(r.srv.PID()); v > r.rep.RSS.Peak {
				r.rep.RSS.Peak = v
			}
		}
	}()
	return func() { close(peakStop); <-peakDone }
}

// connectWatchers opens the websocket watchers (none when the server has no websocket
// endpoint) and gives their hellos a second to arrive.
func (r *runner) connectWatchers(ctx context.Context) *watchers {
	cfg := r.cfg
	if cfg.Watchers <= 0 {
		return &watchers{dialErrs: map[string]int{}}
	}
	if err := wsProbe(ctx, r.admin.Base()); err != nil {
		r.note("websocket watchers skipped: %v", err)
		return &watchers{dialErrs: map[string]int{}}
	}
	t := time.Now()
	ws := startWatchers(ctx, r.admin.Base(), cfg.Watchers, r.lg.judgeList(), cfg.AdminPassword)
	cfg.Log("connected %d/%d watchers in %.1fs", len(ws.list), cfg.Watchers, time.Since(t).Seconds())
	time.Sleep(time.Second) // let the hellos arrive
	return ws
}

// newSamplers returns the hold sampler (knowing the server's judging timer) and the
// clock toggler (knowing the running clock).
func (r *runner) newSamplers(ctx context.Context) (*holdSampler, *clockToggler) {
	timer := 300
	var tm struct {
		JudgingTimer int `json:"judging_timer"`
	}
	if r.admin.Do(ctx, "GET", "/api/admin/timer", "/api/admin/timer", client.AsAdmin, nil, &tm) == nil {
		timer = tm.JudgingTimer
	}
	hs := &holdSampler{timerSec: timer}
	ct := &clockToggler{}
	if clk, err := r.admin.SetClock(ctx, "unpause"); err == nil {
		ct.last = keyOf(clk)
	}
	return hs, ct
}

// usage is the machine's and the server's counters at the start of the measured phase.
type usage struct {
	metrics         map[string]float64
	toolCPU, srvCPU float64
}

func (r *runner) startUsage(ctx context.Context) usage {
	r.rep.Machine.CPUs, r.rep.Machine.LoadAvgStart = runtime.NumCPU(), server.LoadAvg()
	u := usage{metrics: scrape(ctx, r.admin.WithStats(nil)), toolCPU: server.SelfCPU()}
	if r.srv != nil {
		u.srvCPU = server.CPU(r.srv.PID())
	}
	return u
}

func (r *runner) endUsage(u usage) {
	r.rep.Machine.LoadAvgEnd = server.LoadAvg()
	r.rep.Machine.ToolRSS = server.RSS(os.Getpid())
	r.rep.Machine.ToolCPU = math.Round((server.SelfCPU()-u.toolCPU)*10) / 10
	if r.srv != nil {
		r.rep.Machine.ServerCPU = math.Round((server.CPU(r.srv.PID())-u.srvCPU)*10) / 10
	}
}

// measure runs the judges and, beside them, the killer, the readers, the clock toggler
// and the hold sampler for the configured duration. It returns how long the judges ran
// and the failure it injected (with the URL of the node it killed).
func (r *runner) measure(ctx context.Context, watchers int, hs *holdSampler, ct *clockToggler) (time.Duration, KillReport, string) {
	cfg := r.cfg
	judges := r.lg.judgeList()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	r.gaps = newGapRecorder(start)
	r.c.Stats().StartTimeline(start, isJudgeAction)
	r.startJudges(stop, &wg, judges, cfg.Seed)
	var side sync.WaitGroup
	var kill KillReport
	killedURL := ""
	if cfg.KillAfter > 0 {
		side.Add(1)
		go func() { defer side.Done(); r.killer(stop, start, &kill, &killedURL) }()
	}
	for i := 0; i < cfg.Readers; i++ {
		side.Add(1)
		go func() { defer side.Done(); r.reader(stop) }()
	}
	if cfg.ClockInterval > 0 {
		side.Add(1)
		go func() { defer side.Done(); ct.run(stop, r.c, cfg.ClockInterval, cfg.ClockPause) }()
	}
	if cfg.SampleInterval > 0 {
		side.Add(1)
		go func() { defer side.Done(); hs.run(stop, cfg.SampleInterval, r.c, r.lg) }()
	}
	cfg.Log("load running for %s (%d judges, %d readers, %d watchers)", cfg.Duration, len(judges), cfg.Readers, watchers)
	sleepCtx(ctx, cfg.Duration)
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)
	side.Wait()
	return elapsed, kill, killedURL
}

// reportPhase fills in the report of the measured phase: requests, judging, broadcast
// delivery, the injected failure, the write gap and the per-node traffic.
func (r *runner) reportPhase(elapsed time.Duration, ws *watchers, ct *clockToggler, kill KillReport, killedURL string) {
	r.rep.ElapsedSec = elapsed.Seconds()
	r.rep.Routes, r.rep.Errors = r.c.Stats().Report(elapsed)
	r.rep.JudgeAll = stats.Summarize(r.c.Stats().Latencies(isJudgeAction))
	r.rep.Timeline = r.c.Stats().Timeline(elapsed)
	r.rep.Judging = r.jc.report(!r.noJudging.Load(), elapsed)
	if r.noJudging.Load() {
		r.note("the server has no judging routes (POST /api/judge/next answered 404): judge load skipped")
	}
	r.rep.Broadcast = ws.analyze(r.cfg.Watchers, ct.list())
	killAt, deadAt := time.Duration(-1), time.Duration(-1)
	if kill.Target != "" {
		r.rep.Kill = &kill
		if kill.Error == "" {
			killAt = time.Duration(kill.AfterMs * float64(time.Millisecond))
			deadAt = time.Duration(kill.DeadMs * float64(time.Millisecond))
		}
	}
	r.rep.Gap = computeGap(r.gaps.events(), elapsed, killAt, deadAt)
	if r.nodes != nil {
		r.rep.Nodes = r.nodes.report(killedURL)
	}
}

// finalChecks checks the invariants once everything is at rest: through another node
// when the one used for checks was killed, after it has applied every committed change,
// with one more hold sample.
func (r *runner) finalChecks(ctx context.Context, hs *holdSampler, ct *clockToggler, killedURL string) error {
	if killedURL != "" && killedURL == r.admin.Base() {
		for _, u := range r.urls {
			if u != killedURL {
				r.note("the node used for checks was killed: final checks through %s", u)
				r.admin = client.New(u, r.cfg.AdminPassword, client.NewHostClient(u, 16, 30*time.Second), r.admin.Stats())
				break
			}
		}
	}
	r.caughtUp(ctx, 10*time.Second)
	if len(ct.errs) > 0 {
		r.note("clock toggles failed %d times, first: %s", len(ct.errs), ct.errs[0])
	}

	// final consistent picture: one more hold sample with everything at rest, then verify
	hs.sample(ctx, r.admin, r.lg)
	ir, err := verify(ctx, r.admin, r.lg, verifyOpts{})
	if err != nil {
		return fmt.Errorf("invariant check: %w", err)
	}
	ir.mergeHolds(hs)
	r.rep.Invariants = ir
	if !ir.SkipsChecked {
		r.note("GET /api/admin/flags unavailable: acknowledged skips not checked")
	}
	return nil
}

// rampDelay staggers judge i's start: thousands of phones do not open their connections
// in the same millisecond, and a synchronized connect storm measures the kernel's SYN
// queues rather than the server. The ramp is the think time (or 1 s at zero think time).
func (r *runner) rampDelay(i, n int) time.Duration {
	ramp := r.cfg.Think
	if ramp <= 0 {
		ramp = time.Second
	}
	if n <= 1 {
		return 0
	}
	return ramp * time.Duration(i) / time.Duration(n)
}

func isJudgeAction(route string) bool {
	for _, p := range []string{"POST /api/judge/next", "POST /api/judge/skip", "POST /api/judge/finish", "POST /api/judge/rank"} {
		if route == p {
			return true
		}
	}
	return false
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// reader is an expo screen or the marketing site polling the public listings.
func (r *runner) reader(stop <-chan struct{}) {
	ctx := context.Background()
	key := client.Auth{Header: map[string]string{"X-API-Key": r.cfg.APIKey}}
	for sleepOr(stop, r.cfg.ReaderInterval) {
		_ = r.c.Do(ctx, "GET", "/api/project/list/public", "/api/project/list/public", client.AsAnon, nil, nil)
		if r.cfg.APIKey != "" {
			for _, k := range []string{"schedule", "sponsors", "faq"} {
				_ = r.c.Do(ctx, "GET", "/v1/public/"+k, "/v1/public/"+k, key, nil, nil)
			}
		}
	}
}

// mib formats bytes for the report ("n/a" when unknown).
func mib(b int64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}
