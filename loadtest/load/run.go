package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
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

// Report is everything a run measured. Latencies are in milliseconds, memory in bytes.
type Report struct {
	Mode       string          `json:"mode"` // "load" or "crash"
	Server     string          `json:"server"`
	Managed    bool            `json:"managed_server"` // the tool started the server binary
	Started    time.Time       `json:"started"`
	Scenario   Scenario        `json:"scenario"`
	Setup      SetupReport     `json:"setup"`
	ElapsedSec float64         `json:"elapsed_seconds"` // measured phase
	Routes     []stats.Route   `json:"routes"`
	Errors     map[string]int  `json:"errors_by_status"` // measured phase, "0" = no answer
	JudgeAll   stats.Latency   `json:"judge_actions"`    // next+skip+finish+rank together
	Judging    JudgingReport   `json:"judging"`
	Broadcast  BroadcastReport `json:"broadcast"`
	RSS        RSSReport       `json:"rss"`
	Machine    MachineReport   `json:"machine"`
	Metrics    ServerMetrics   `json:"server_metrics"`
	Invariants InvariantReport `json:"invariants"`
	Crash      *CrashReport    `json:"crash,omitempty"`
	Nodes      []NodeReport    `json:"nodes,omitempty"` // judge traffic per URL (several URLs only)
	Kill       *KillReport     `json:"kill,omitempty"`  // the failure the tool injected
	Gap        GapReport       `json:"write_gap"`
	Timeline   []stats.Second  `json:"judge_timeline"` // judge actions completed per second of the phase
	ServerLog  string          `json:"server_log,omitempty"`
	Notes      []string        `json:"notes"`
}

// Scenario echoes the configuration of a run.
type Scenario struct {
	Projects   int     `json:"projects"`
	Judges     int     `json:"judges"`
	Watchers   int     `json:"watchers"`
	Readers    int     `json:"readers"`
	DurationS  float64 `json:"duration_seconds"`
	ThinkMs    float64 `json:"think_ms"`
	SkipProb   float64 `json:"skip_prob"`
	RankProb   float64 `json:"rank_prob"`
	ClockEvery float64 `json:"clock_every_seconds"`
	Seed       uint64  `json:"seed"`
	FDLimit    uint64  `json:"fd_limit"`
}

// SetupReport is the scenario setup through the API.
type SetupReport struct {
	Seconds     float64       `json:"seconds"`
	ProjectsVia string        `json:"projects_via"`
	JudgesVia   string        `json:"judges_via"`
	Routes      []stats.Route `json:"routes"`
}

// RSSReport is the server's resident memory.
type RSSReport struct {
	Source        string `json:"source"` // "metrics" (process_resident_memory_bytes) or "proc" (/proc/PID/status)
	AfterSetup    int64  `json:"after_setup"`
	AfterWatchers int64  `json:"after_watchers"`
	End           int64  `json:"end"`
	Peak          int64  `json:"peak"` // managed server only (polled /proc every 500 ms)
}

// MachineReport says how busy the machine was during the measured phase: the load
// generator and the server share it (and, here, other work).
type MachineReport struct {
	CPUs         int     `json:"cpus"`
	LoadAvgStart string  `json:"loadavg_start"`
	LoadAvgEnd   string  `json:"loadavg_end"`
	ServerCPU    float64 `json:"server_cpu_seconds"` // managed server only
	ToolCPU      float64 `json:"loadtest_cpu_seconds"`
	ToolRSS      int64   `json:"loadtest_rss_end"`
	// FsyncProbe times 4 KiB write+fsync in the managed server's data directory just
	// before the server starts.
	FsyncProbe stats.Latency `json:"fsync_probe"`
}

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
	cfg := r.cfg
	r.rep.RSS.AfterSetup = r.rss(ctx)
	if r.rep.RSS.AfterSetup == 0 {
		r.note("server RSS unavailable (no /metrics process collector and not a managed server)")
	}
	var peakStop, peakDone chan struct{}
	if r.srv != nil {
		peakStop, peakDone = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(peakDone)
			for sleepOr(peakStop, 500*time.Millisecond) {
				if v := server.RSS(r.srv.PID()); v > r.rep.RSS.Peak {
					r.rep.RSS.Peak = v
				}
			}
		}()
	}
	judges := r.lg.judgeList()
	var ws *watchers
	if cfg.Watchers > 0 {
		if err := wsProbe(ctx, r.admin.Base()); err != nil {
			r.note("websocket watchers skipped: %v", err)
			ws = &watchers{dialErrs: map[string]int{}}
		} else {
			t := time.Now()
			ws = startWatchers(ctx, r.admin.Base(), cfg.Watchers, judges, cfg.AdminPassword)
			cfg.Log("connected %d/%d watchers in %.1fs", len(ws.list), cfg.Watchers, time.Since(t).Seconds())
			time.Sleep(time.Second) // let the hellos arrive
		}
	} else {
		ws = &watchers{dialErrs: map[string]int{}}
	}
	r.rep.RSS.AfterWatchers = r.rss(ctx)

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

	stop := make(chan struct{})
	var wg sync.WaitGroup
	r.rep.Machine.CPUs, r.rep.Machine.LoadAvgStart = runtime.NumCPU(), server.LoadAvg()
	metrics0 := scrape(ctx, r.admin.WithStats(nil))
	cpu0, srvCPU0 := server.SelfCPU(), 0.0
	if r.srv != nil {
		srvCPU0 = server.CPU(r.srv.PID())
	}
	if len(r.urls) > 1 {
		r.nodes = newNodeSet(r.urls, cfg.AdminPassword, cfg.Judges+64, r.c.Stats(), judges)
		defer r.nodes.closeIdle()
	}
	start := time.Now()
	r.gaps = newGapRecorder(start)
	r.c.Stats().StartTimeline(start, isJudgeAction)
	for i, j := range judges {
		wg.Add(1)
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
		delay := r.rampDelay(i, len(judges))
		go func() {
			defer wg.Done()
			if sleepOr(stop, delay) {
				r.judgeLoop(stop, j, rng)
			}
		}()
	}
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
	cfg.Log("load running for %s (%d judges, %d readers, %d watchers)", cfg.Duration, len(judges), cfg.Readers, len(ws.list))
	sleepCtx(ctx, cfg.Duration)
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)
	side.Wait()
	r.rep.Machine.LoadAvgEnd = server.LoadAvg()
	r.rep.Machine.ToolRSS = server.RSS(os.Getpid())
	r.rep.Machine.ToolCPU = math.Round((server.SelfCPU()-cpu0)*10) / 10
	if r.srv != nil {
		r.rep.Machine.ServerCPU = math.Round((server.CPU(r.srv.PID())-srvCPU0)*10) / 10
	}
	time.Sleep(time.Second) // late broadcasts
	r.rep.RSS.End = r.rss(ctx)
	r.rep.Metrics = serverMetrics(metrics0, scrape(ctx, r.admin.WithStats(nil)))
	ws.close()
	if peakStop != nil {
		close(peakStop)
		<-peakDone
	}

	r.rep.ElapsedSec = elapsed.Seconds()
	r.rep.Routes, r.rep.Errors = r.c.Stats().Report(elapsed)
	r.rep.JudgeAll = stats.Summarize(r.c.Stats().Latencies(isJudgeAction))
	r.rep.Timeline = r.c.Stats().Timeline(elapsed)
	r.rep.Judging = r.jc.report(!r.noJudging.Load(), elapsed)
	if r.noJudging.Load() {
		r.note("the server has no judging routes (POST /api/judge/next answered 404): judge load skipped")
	}
	r.rep.Broadcast = ws.analyze(cfg.Watchers, ct.list())
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
	if killedURL != "" && killedURL == r.admin.Base() {
		for _, u := range r.urls {
			if u != killedURL {
				r.note("the node used for checks was killed: final checks through %s", u)
				r.admin = client.New(u, cfg.AdminPassword, client.NewHostClient(u, 16, 30*time.Second), r.admin.Stats())
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
