// Package ratio is the ratio benchmark (`loadtest -ratio`). It measures Podium against
// yardsticks run in the same process tree at the same time, so that a busy shared machine moves both sides
// alike: the heartbeat (GET /healthz) against judge actions (next → finish), and the
// websocket hub against a tuned gorilla/websocket broadcaster (baseline.go) for memory
// per idle connection, broadcast latency and server CPU per delivered message. Every
// figure is the median of Rounds rounds; the sides alternate within each round.
package ratio

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/valyala/fasthttp"

	"podium/loadtest/client"
	"podium/loadtest/server"
	"podium/loadtest/stats"
)

// Config configures a ratio run.
type Config struct {
	ServerBin   string        // podium binary
	BaselineCmd []string      // command starting the gorilla baseline (prints its address)
	Rounds      int           // rounds (median reported); default 3
	Phase       time.Duration // length of each HTTP phase; default 4 s
	Conns       int           // heartbeat connections and judges; default 64
	Projects    int           // default 2,000
	Sockets     int           // idle websockets / broadcast watchers; default 10,000; <0: no websocket part
	Broadcasts  int           // broadcasts per round and side; default 10
	LogLevel    string        // the server's LOG_LEVEL (default info, as in production)
	WSDataRoot  string        // parent of the websocket servers' data directories (default: the run's temp dir)
	ServerEnv   []string      // extra KEY=VALUE for the podium server
	// ProfileDir, when set, gets two server CPU profiles taken after the rounds through
	// the server's PPROF_ADDR listener: heartbeat.pprof over a heartbeat phase and
	// judge.pprof over a judge-action phase (fresh judges), each ProfileFor long, with an
	// execution trace of 2 s from the middle of each (<phase>.trace), and
	// the server's /metrics before and after each (<phase>.metrics.before, .after).
	ProfileDir string
	ProfileFor time.Duration // default 10 s
	Log        func(format string, args ...any)
}

// Report is what a ratio run measured: per-round values and their medians.
type Report struct {
	Rounds       int       `json:"rounds"`
	Heartbeat    []float64 `json:"heartbeat_rps"`
	JudgeActions []float64 `json:"judge_actions_per_s"`
	Ratio        []float64 `json:"judge_to_heartbeat"`
	Exhausted    int       `json:"judges_out_of_projects"`
	// CPU microseconds per request (user+system from /proc), server and load generator,
	// per round: where a judge action's cost goes compared with a heartbeat's.
	ServerCPUHeartbeat  []float64 `json:"server_cpu_us_per_heartbeat"`
	ServerCPUAction     []float64 `json:"server_cpu_us_per_judge_action"`
	LoadgenCPUHeartbeat []float64 `json:"loadgen_cpu_us_per_heartbeat"`
	LoadgenCPUAction    []float64 `json:"loadgen_cpu_us_per_judge_action"`
	PodiumWSKiB         []float64 `json:"podium_kib_per_idle_ws"`
	BaselineWSKiB       []float64 `json:"baseline_kib_per_idle_ws"`
	PodiumP50           []float64 `json:"podium_broadcast_p50_ms"`
	PodiumP99           []float64 `json:"podium_broadcast_p99_ms"`
	BaselineP50         []float64 `json:"baseline_broadcast_p50_ms"`
	BaselineP99         []float64 `json:"baseline_broadcast_p99_ms"`
	PodiumCPU           []float64 `json:"podium_cpu_us_per_delivery"`
	BaselineCPU         []float64 `json:"baseline_cpu_us_per_delivery"`
	PodiumMissed        int       `json:"podium_deliveries_missed"`
	BaselineMissed      int       `json:"baseline_deliveries_missed"`
	LoadAvg             []string  `json:"loadavg_per_round"`
	Notes               []string  `json:"notes"`
	// Share of the machine's CPU time left idle (idle + iowait, all CPUs, /proc/stat)
	// during each round's heartbeat and judge slices, in percent: the two loads can only
	// be compared by their CPU cost when the machine is equally busy in both.
	IdleHeartbeat []float64 `json:"machine_idle_pct_heartbeat"`
	IdleAction    []float64 `json:"machine_idle_pct_judge_action"`
}

func (c *Config) defaults() {
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.Phase <= 0 {
		c.Phase = 4 * time.Second
	}
	if c.Conns <= 0 {
		c.Conns = 64
	}
	if c.Projects <= 0 {
		c.Projects = 2000
	}
	if c.Sockets == 0 {
		c.Sockets = 10000
	}
	if c.Broadcasts <= 0 {
		c.Broadcasts = 10
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	if c.Log == nil {
		c.Log = func(string, ...any) {}
	}
	if c.ProfileFor <= 0 {
		c.ProfileFor = 10 * time.Second
	}
}

// setupWorkers is how many setup requests run at once.
const setupWorkers = 16

// bench is one ratio run: the podium server of the HTTP phases and its admin client.
type bench struct {
	cfg       *Config
	rep       *Report
	root      string // the run's temp dir
	bin       string // absolute path of the podium binary
	password  string // admin password of every podium process
	prefix    string // names of the judges and projects
	srv       *server.Background
	pprofAddr string // the server's PPROF_ADDR (with ProfileDir)
	url       string
	hc        *fasthttp.HostClient
	admin     *client.Client
}

// Run runs the ratio benchmark.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	if _, err := server.RaiseFDLimit(); err != nil {
		cfg.Log("raising the open-files limit failed: %v", err)
	}
	rep := &Report{Rounds: cfg.Rounds, Notes: []string{}}
	root, err := os.MkdirTemp("", "podium-ratio-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	b := &bench{cfg: &cfg, rep: rep, root: root, password: "ratio-" + client.RunID()}
	if err := b.start(ctx); err != nil {
		return nil, err
	}
	defer b.srv.Stop()
	b.prefix = "ratio-" + client.RunID()
	tokens, err := b.setup(ctx)
	if err != nil {
		return nil, err
	}
	for round := 1; round <= cfg.Rounds && ctx.Err() == nil; round++ {
		if round > 1 {
			// Fresh judges each round: at zero think time 64 judges would otherwise run
			// out of the 2,000 projects within a few rounds and measure "done" answers.
			if tokens, err = b.freshJudges(ctx, (round-1)*cfg.Conns, cfg.Conns); err != nil {
				return rep, err
			}
		}
		rep.LoadAvg = append(rep.LoadAvg, server.LoadAvg())
		b.httpRound(ctx, round, tokens)
		if err := b.wsRound(ctx, round); err != nil {
			return rep, err
		}
	}
	if cfg.ProfileDir != "" && ctx.Err() == nil {
		if err := b.profile(ctx); err != nil {
			return rep, err
		}
	}
	if rep.Exhausted > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d judge loops ran out of projects before a phase ended", rep.Exhausted))
	}
	return rep, ctx.Err()
}

// start starts the podium server of the HTTP phases on a fresh data directory and waits
// until it is ready.
func (b *bench) start(ctx context.Context) error {
	cfg := b.cfg
	bin, err := filepath.Abs(cfg.ServerBin)
	if err != nil {
		return err
	}
	b.bin = bin
	env := append([]string{"PORT=0", "DATA_DIR=" + filepath.Join(b.root, "data"), "ADMIN_PASSWORD=" + b.password,
		"LOG_LEVEL=" + cfg.LogLevel, "TRUSTED_PROXIES=127.0.0.1,::1",
		// 64 judges at zero think time measure the cost of an action; a real judge's
		// write budget (10/s) would measure the throttle instead.
		"JUDGE_WRITES_PER_SEC=1000000"}, cfg.ServerEnv...)
	if cfg.ProfileDir != "" {
		if b.pprofAddr, err = freeAddr(); err != nil {
			return err
		}
		env = append(env, "PPROF_ADDR="+b.pprofAddr)
	}
	if b.srv, err = server.StartBackground([]string{bin}, env, listening); err != nil {
		return err
	}
	cfg.Log("podium pid %d on %s (log %s)", b.srv.PID(), b.srv.Addr(), b.srv.LogPath())
	b.url = "http://" + b.srv.Addr()
	b.hc = client.NewHostClient(b.url, cfg.Conns+16, 30*time.Second)
	b.admin = client.New(b.url, b.password, b.hc, stats.NewRoutes())
	if err := b.admin.WaitReady(ctx); err != nil {
		b.srv.Stop()
		return err
	}
	return nil
}

// listening matches podium's "listening" line; its group is the address.
var listening = regexp.MustCompile(`podium listening on http://(\S+)`)

// setup raises the login limit, creates the projects and the first judges, logs the
// judges in and starts the clock, and returns the judges' bearer tokens.
func (b *bench) setup(ctx context.Context) ([]string, error) {
	start := time.Now()
	if n := b.admin.RaiseLoginLimit(ctx); n != "" {
		b.cfg.Log("note: %s", n)
	}
	made, err := b.admin.CreateProjects(ctx, b.prefix, 0, b.cfg.Projects, setupWorkers, true)
	if err != nil {
		return nil, fmt.Errorf("create projects: %w", err)
	}
	b.cfg.Log("created %d projects in %.1fs", len(made), time.Since(start).Seconds())
	t := time.Now()
	tokens, err := b.freshJudges(ctx, 0, b.cfg.Conns)
	if err != nil {
		return nil, err
	}
	b.cfg.Log("created and logged in %d judges in %.1fs", len(tokens), time.Since(t).Seconds())
	if _, err := b.admin.SetClock(ctx, "unpause"); err != nil {
		return nil, fmt.Errorf("start the clock: %w", err)
	}
	return tokens, nil
}

// freshJudges creates and logs in n more judges (numbered from offset) and returns their
// bearer tokens.
func (b *bench) freshJudges(ctx context.Context, offset, n int) ([]string, error) {
	js, err := b.admin.CreateJudges(ctx, b.prefix, offset, n, setupWorkers, true)
	if err != nil {
		return nil, fmt.Errorf("create judges: %w", err)
	}
	tokens := make([]string, len(js))
	err = client.Parallel(len(js), setupWorkers, func(i int) error {
		var err error
		tokens[i], err = b.admin.Login(ctx, js[i].Code, client.FakeIP(offset+i))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("judge login: %w", err)
	}
	return tokens, nil
}

// httpRound measures the heartbeat and the judge actions of one round and adds the
// figures to the report. The two loads alternate in slices so that a neighbour's burst
// on the shared machine hits both alike.
func (b *bench) httpRound(ctx context.Context, round int, tokens []string) {
	cfg, rep, pid := b.cfg, b.rep, b.srv.PID()
	var hb, ja float64
	var cpu [4]float64 // server and load generator CPU s: heartbeat, judge actions
	var reqs [2]float64
	var idle [4]float64 // machine idle and total ticks: heartbeat, judge actions
	me := os.Getpid()
	for k := 0; k < ratioSlices && ctx.Err() == nil; k++ {
		i0, m0 := server.MachineCPU()
		s0, l0, t0 := server.CPU(pid), server.CPU(me), time.Now()
		rate := heartbeat(b.hc, b.url, cfg.Conns, cfg.Phase/ratioSlices)
		s1, l1, t1 := server.CPU(pid), server.CPU(me), time.Now()
		i1, m1 := server.MachineCPU()
		hb += rate / ratioSlices
		reqs[0] += rate * t1.Sub(t0).Seconds()
		rate, out := judgeActions(b.hc, b.url, tokens, cfg.Phase/ratioSlices)
		s2, l2 := server.CPU(pid), server.CPU(me)
		i2, m2 := server.MachineCPU()
		idle[0], idle[1] = idle[0]+i1-i0, idle[1]+m1-m0
		idle[2], idle[3] = idle[2]+i2-i1, idle[3]+m2-m1
		ja += rate / ratioSlices
		reqs[1] += rate * time.Since(t1).Seconds()
		rep.Exhausted += out
		cpu[0], cpu[1] = cpu[0]+s1-s0, cpu[1]+s2-s1
		cpu[2], cpu[3] = cpu[2]+l1-l0, cpu[3]+l2-l1
	}
	if reqs[0] > 0 && reqs[1] > 0 {
		rep.ServerCPUHeartbeat = append(rep.ServerCPUHeartbeat, cpu[0]/reqs[0]*1e6)
		rep.ServerCPUAction = append(rep.ServerCPUAction, cpu[1]/reqs[1]*1e6)
		rep.LoadgenCPUHeartbeat = append(rep.LoadgenCPUHeartbeat, cpu[2]/reqs[0]*1e6)
		rep.LoadgenCPUAction = append(rep.LoadgenCPUAction, cpu[3]/reqs[1]*1e6)
	}
	if idle[1] > 0 && idle[3] > 0 {
		rep.IdleHeartbeat = append(rep.IdleHeartbeat, 100*idle[0]/idle[1])
		rep.IdleAction = append(rep.IdleAction, 100*idle[2]/idle[3])
	}
	rep.Heartbeat = append(rep.Heartbeat, hb)
	rep.JudgeActions = append(rep.JudgeActions, ja)
	rep.Ratio = append(rep.Ratio, ja/hb)
	cfg.Log("round %d: heartbeat %.0f req/s, judge actions %.0f/s, ratio %.3f", round, hb, ja, ja/hb)
}

// wsRound measures the websocket figures of one round, podium's and the baseline's (in
// alternating order), and adds them to the report.
func (b *bench) wsRound(ctx context.Context, round int) error {
	cfg := b.cfg
	if cfg.Sockets < 0 { // HTTP figures only
		return nil
	}
	wsRoot := b.root
	if cfg.WSDataRoot != "" {
		var err error
		if wsRoot, err = os.MkdirTemp(cfg.WSDataRoot, "podium-ratio-ws-*"); err != nil {
			return err
		}
		defer os.RemoveAll(wsRoot)
	}
	sides := []wsSide{podiumSide(ctx, b.bin, wsRoot, b.password, round, cfg), baselineSide(cfg)}
	if round%2 == 0 { // alternate which side goes first
		sides[0], sides[1] = sides[1], sides[0]
	}
	for _, s := range sides {
		m, err := s.measure(ctx, cfg.Sockets, cfg.Broadcasts)
		if err != nil {
			return fmt.Errorf("%s websockets: %w", s.name, err)
		}
		cfg.Log("round %d %s: %.1f KiB per idle websocket, broadcast p50 %.1f ms p99 %.1f ms, %.2f µs CPU per delivery (%d missed)",
			round, s.name, m.kib, m.p50, m.p99, m.cpuUS, m.missed)
		b.rep.addWS(s.name, m)
	}
	return nil
}

// addWS appends one side's websocket figures of a round.
func (rep *Report) addWS(side string, m wsMeasure) {
	if side == "podium" {
		rep.PodiumWSKiB = append(rep.PodiumWSKiB, m.kib)
		rep.PodiumP50, rep.PodiumP99 = append(rep.PodiumP50, m.p50), append(rep.PodiumP99, m.p99)
		rep.PodiumCPU = append(rep.PodiumCPU, m.cpuUS)
		rep.PodiumMissed += m.missed
		return
	}
	rep.BaselineWSKiB = append(rep.BaselineWSKiB, m.kib)
	rep.BaselineP50, rep.BaselineP99 = append(rep.BaselineP50, m.p50), append(rep.BaselineP99, m.p99)
	rep.BaselineCPU = append(rep.BaselineCPU, m.cpuUS)
	rep.BaselineMissed += m.missed
}
