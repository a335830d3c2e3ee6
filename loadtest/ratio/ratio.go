package ratio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// The ratio benchmark (`loadtest -ratio`) measures Podium against yardsticks run in the
// same process tree at the same time, so that a busy shared machine moves both sides
// alike: the heartbeat (GET /healthz) against judge actions (next → finish), and the
// websocket hub against a tuned gorilla/websocket broadcaster (baseline.go) for memory
// per idle connection, broadcast latency and server CPU per delivered message. Every
// figure is the median of Rounds rounds; the sides alternate within each round.

// RatioConfig configures a ratio run.
type RatioConfig struct {
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

// RatioReport is what a ratio run measured: per-round values and their medians.
type RatioReport struct {
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

func (c *RatioConfig) defaults() {
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

// freeAddr returns a loopback address with a port free at the time of the call.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// saveMetrics writes the server's /metrics to path (best effort: the files only help to
// read a profile).
func saveMetrics(base, path string) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if f, err := os.Create(path); err == nil {
		io.Copy(f, resp.Body)
		f.Close()
	}
}

// profileDuring runs load while it fetches a CPU profile of d from the server's pprof
// listener at addr (the load starts half a second before the profile and runs d plus a
// second), and writes the profile to path.
func profileDuring(addr string, d time.Duration, path string, load func()) error {
	done := make(chan struct{})
	go func() { defer close(done); load() }()
	time.Sleep(500 * time.Millisecond)
	secs := max(1, int(d.Seconds()))
	tr := make(chan error, 1)
	go func() { // an execution trace of 2 s from the middle of the phase
		time.Sleep(d / 2)
		tr <- fetchTo(fmt.Sprintf("http://%s/debug/pprof/trace?seconds=2", addr), strings.TrimSuffix(path, ".pprof")+".trace")
	}()
	// The load generator's own profile over the same seconds (<phase>.loadgen.pprof):
	// its CPU counts in the ratio too, as the heartbeat's does.
	lg, lerr := os.Create(strings.TrimSuffix(path, ".pprof") + ".loadgen.pprof")
	if lerr == nil {
		if lerr = pprof.StartCPUProfile(lg); lerr != nil {
			lg.Close()
		}
	}
	err := fetchTo(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs), path)
	if lerr == nil {
		pprof.StopCPUProfile()
		lerr = lg.Close()
	}
	if terr := <-tr; err == nil {
		err = terr
	}
	if err == nil {
		err = lerr
	}
	<-done
	return err
}

// fetchTo writes the body of a GET of url to path.
func fetchTo(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	if err = os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// RunRatio runs the ratio benchmark.
func RunRatio(ctx context.Context, cfg RatioConfig) (*RatioReport, error) {
	cfg.defaults()
	if _, err := RaiseFDLimit(); err != nil {
		cfg.Log("raising the open-files limit failed: %v", err)
	}
	rep := &RatioReport{Rounds: cfg.Rounds, Notes: []string{}}
	root, err := os.MkdirTemp("", "podium-ratio-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	password := "ratio-" + runID()
	bin, err := filepath.Abs(cfg.ServerBin)
	if err != nil {
		return nil, err
	}
	env := append([]string{"PORT=0", "DATA_DIR=" + filepath.Join(root, "data"), "ADMIN_PASSWORD=" + password,
		"LOG_LEVEL=" + cfg.LogLevel, "TRUSTED_PROXIES=127.0.0.1,::1",
		// 64 judges at zero think time measure the cost of an action; a real judge's
		// write budget (10/s) would measure the throttle instead.
		"JUDGE_WRITES_PER_SEC=1000000"}, cfg.ServerEnv...)
	pprofAddr := ""
	if cfg.ProfileDir != "" {
		if pprofAddr, err = freeAddr(); err != nil {
			return nil, err
		}
		env = append(env, "PPROF_ADDR="+pprofAddr)
	}
	srv, err := startProc([]string{bin}, env, regexp.MustCompile(`podium listening on http://(\S+)`))
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	cfg.Log("podium pid %d on %s (log %s)", srv.pid(), srv.addr, srv.out)

	podiumURL := "http://" + srv.addr
	hc := newHTTPClient(podiumURL, cfg.Conns+16, 30*time.Second)
	admin := newClient(podiumURL, password, hc, NewStats())
	if err := admin.waitReady(ctx); err != nil {
		return nil, err
	}
	r := &runner{cfg: &Config{SetupWorkers: 16, Log: cfg.Log}, lg: newLedger(), jc: &judgeCounters{}, rep: &Report{}}
	r.admin, r.c = admin, admin
	prefix := "ratio-" + runID()
	if err := r.setup(ctx, prefix, cfg.Projects, cfg.Conns); err != nil {
		return nil, err
	}
	judges := r.lg.judgeList()
	for round := 1; round <= cfg.Rounds && ctx.Err() == nil; round++ {
		if round > 1 {
			// Fresh judges each round: at zero think time 64 judges would otherwise run
			// out of the 2,000 projects within a few rounds and measure "done" answers.
			if judges, err = freshJudges(ctx, r, prefix, (round-1)*cfg.Conns, cfg.Conns); err != nil {
				return rep, err
			}
		}
		rep.LoadAvg = append(rep.LoadAvg, loadAvg())
		// The two loads alternate in slices so that a neighbour's burst on the shared
		// machine hits both alike.
		var hb, ja float64
		var cpu [4]float64 // server and load generator CPU s: heartbeat, judge actions
		var reqs [2]float64
		var idle [4]float64 // machine idle and total ticks: heartbeat, judge actions
		me := os.Getpid()
		for k := 0; k < ratioSlices && ctx.Err() == nil; k++ {
			i0, m0 := machineCPU()
			s0, l0, t0 := procCPU(srv.pid()), procCPU(me), time.Now()
			rate := heartbeat(hc, podiumURL, cfg.Conns, cfg.Phase/ratioSlices)
			s1, l1, t1 := procCPU(srv.pid()), procCPU(me), time.Now()
			i1, m1 := machineCPU()
			hb += rate / ratioSlices
			reqs[0] += rate * t1.Sub(t0).Seconds()
			rate, out := judgeActions(hc, podiumURL, judges, cfg.Phase/ratioSlices)
			s2, l2 := procCPU(srv.pid()), procCPU(me)
			i2, m2 := machineCPU()
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

		wsRoot := root
		if cfg.WSDataRoot != "" {
			if wsRoot, err = os.MkdirTemp(cfg.WSDataRoot, "podium-ratio-ws-*"); err != nil {
				return rep, err
			}
			defer os.RemoveAll(wsRoot)
		}
		sides := []wsSide{podiumSide(ctx, bin, wsRoot, password, round, &cfg), baselineSide(&cfg)}
		if cfg.Sockets < 0 { // HTTP figures only
			sides = nil
		}
		if round%2 == 0 && len(sides) == 2 { // alternate which side goes first
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, s := range sides {
			m, err := s.measure(ctx, cfg.Sockets, cfg.Broadcasts)
			if err != nil {
				return rep, fmt.Errorf("%s websockets: %w", s.name, err)
			}
			cfg.Log("round %d %s: %.1f KiB per idle websocket, broadcast p50 %.1f ms p99 %.1f ms, %.2f µs CPU per delivery (%d missed)",
				round, s.name, m.kib, m.p50, m.p99, m.cpuUS, m.missed)
			if s.name == "podium" {
				rep.PodiumWSKiB = append(rep.PodiumWSKiB, m.kib)
				rep.PodiumP50, rep.PodiumP99 = append(rep.PodiumP50, m.p50), append(rep.PodiumP99, m.p99)
				rep.PodiumCPU = append(rep.PodiumCPU, m.cpuUS)
				rep.PodiumMissed += m.missed
			} else {
				rep.BaselineWSKiB = append(rep.BaselineWSKiB, m.kib)
				rep.BaselineP50, rep.BaselineP99 = append(rep.BaselineP50, m.p50), append(rep.BaselineP99, m.p99)
				rep.BaselineCPU = append(rep.BaselineCPU, m.cpuUS)
				rep.BaselineMissed += m.missed
			}
		}
	}
	if cfg.ProfileDir != "" && ctx.Err() == nil {
		if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
			return rep, err
		}
		if judges, err = freshJudges(ctx, r, prefix, (cfg.Rounds+1)*cfg.Conns, cfg.Conns); err != nil {
			return rep, err
		}
		for _, ph := range []struct {
			name string
			run  func()
		}{
			{"heartbeat", func() { heartbeat(hc, podiumURL, cfg.Conns, cfg.ProfileFor+time.Second) }},
			{"judge", func() { judgeActions(hc, podiumURL, judges, cfg.ProfileFor+time.Second) }},
		} {
			path := filepath.Join(cfg.ProfileDir, ph.name+".pprof")
			// Allocations (cumulative) before and after: go tool pprof -diff_base.
			allocs := filepath.Join(cfg.ProfileDir, ph.name+".allocs")
			saveMetrics(podiumURL, filepath.Join(cfg.ProfileDir, ph.name+".metrics.before"))
			if err := fetchTo(fmt.Sprintf("http://%s/debug/pprof/allocs", pprofAddr), allocs+".before"); err != nil {
				return rep, err
			}
			if err := profileDuring(pprofAddr, cfg.ProfileFor, path, ph.run); err != nil {
				return rep, fmt.Errorf("%s profile: %w", ph.name, err)
			}
			if err := fetchTo(fmt.Sprintf("http://%s/debug/pprof/allocs", pprofAddr), allocs); err != nil {
				return rep, err
			}
			saveMetrics(podiumURL, filepath.Join(cfg.ProfileDir, ph.name+".metrics.after"))
			cfg.Log("server CPU profile of a %s phase: %s", ph.name, path)
		}
	}
	if rep.Exhausted > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d judge loops ran out of projects before a phase ended", rep.Exhausted))
	}
	return rep, ctx.Err()
}

// freshJudges creates and logs in n more judges (numbered from offset) and returns them.
func freshJudges(ctx context.Context, r *runner, prefix string, offset, n int) ([]*judgeRec, error) {
	had := map[*judgeRec]bool{}
	for _, j := range r.lg.judgeList() {
		had[j] = true
	}
	if err := createJudges(ctx, r.admin, r.lg, prefix, offset, n, r.cfg.SetupWorkers, true); err != nil {
		return nil, fmt.Errorf("create judges: %w", err)
	}
	var fresh []*judgeRec
	for _, j := range r.lg.judgeList() {
		if !had[j] {
			fresh = append(fresh, j)
		}
	}
	if err := parallel(len(fresh), r.cfg.SetupWorkers, func(i int) error { return login(ctx, r.admin, fresh[i]) }); err != nil {
		return nil, fmt.Errorf("judge login: %w", err)
	}
	return fresh, nil
}

// wsSide is one websocket server of a round: started fresh (its RSS before the first
// socket is the zero the sockets are measured from), measured, stopped.
type wsSide struct {
	name  string
	start func() (p *proc, url string, fire func() error, err error)
}

func (s wsSide) measure(ctx context.Context, sockets, broadcasts int) (wsMeasure, error) {
	p, url, fire, err := s.start()
	if err != nil {
		return wsMeasure{}, err
	}
	defer p.stop()
	time.Sleep(time.Second)
	return measureWS(ctx, p.pid(), procRSS(p.pid()), url, sockets, broadcasts, fire)
}

// podiumSide is a podium process of its own for the websocket figures (never the one
// that served the HTTP phases), on a fresh data directory.
func podiumSide(ctx context.Context, bin, root, password string, round int, cfg *RatioConfig) wsSide {
	return wsSide{name: "podium", start: func() (*proc, string, func() error, error) {
		env := append([]string{"PORT=0", "DATA_DIR=" + filepath.Join(root, fmt.Sprintf("data-ws-%d", round)),
			"ADMIN_PASSWORD=" + password, "LOG_LEVEL=" + cfg.LogLevel,
			fmt.Sprintf("MAX_WS_CONNECTIONS=%d", cfg.Sockets+1000)}, cfg.ServerEnv...)
		p, err := startProc([]string{bin}, env, regexp.MustCompile(`podium listening on http://(\S+)`))
		if err != nil {
			return nil, "", nil, err
		}
		admin := newClient("http://"+p.addr, password, newHTTPClient("http://"+p.addr, 4, 30*time.Second), nil)
		if err := admin.waitReady(ctx); err != nil {
			p.stop()
			return nil, "", nil, err
		}
		return p, "ws://" + p.addr + "/api/ws", podiumClockToggle(ctx, admin), nil
	}}
}

// baselineSide is the gorilla/websocket broadcaster (baseline.go) in a process of its own.
func baselineSide(cfg *RatioConfig) wsSide {
	return wsSide{name: "baseline", start: func() (*proc, string, func() error, error) {
		p, err := startProc(cfg.BaselineCmd, nil, regexp.MustCompile(`baseline listening on http://(\S+)`))
		if err != nil {
			return nil, "", nil, err
		}
		return p, "ws://" + p.addr + "/ws", baselineFire("http://" + p.addr), nil
	}}
}

// ratioSlices is how many alternating slices a round's heartbeat and judge phases are cut into.
const ratioSlices = 4

// heartbeat measures GET /healthz requests per second over conns keep-alive connections.
func heartbeat(hc *fasthttp.HostClient, base string, conns int, d time.Duration) float64 {
	var n atomic.Int64
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.SetRequestURI(base + "/healthz")
			for time.Now().Before(stop) {
				if hc.DoTimeout(req, resp, 10*time.Second) == nil && resp.StatusCode() == 200 {
					n.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds()
}

// judgeActions runs every judge's next → finish loop and returns the acknowledged
// (journaled) actions per second, next and finish each counting one, and how many
// judges ran out of projects.
func judgeActions(hc *fasthttp.HostClient, base string, judges []*judgeRec, d time.Duration) (float64, int) {
	var n atomic.Int64
	var out atomic.Int64
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for _, j := range judges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j.mu.Lock()
			bearer := "Bearer " + j.token
			j.mu.Unlock()
			next, fin := fasthttp.AcquireRequest(), fasthttp.AcquireRequest()
			resp := fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(next)
			defer fasthttp.ReleaseRequest(fin)
			defer fasthttp.ReleaseResponse(resp)
			for _, req := range []*fasthttp.Request{next, fin} {
				req.Header.SetMethod("POST")
				req.Header.Set("Authorization", bearer)
				req.Header.SetContentType("application/json")
			}
			next.SetRequestURI(base + "/api/judge/next")
			fin.SetRequestURI(base + "/api/judge/finish")
			fin.SetBodyString(`{"notes":"ok"}`)
			for time.Now().Before(stop) {
				if hc.DoTimeout(next, resp, 10*time.Second) != nil || resp.StatusCode() != 200 {
					continue
				}
				if !hasProjectID(resp.Body()) {
					out.Add(1)
					return
				}
				n.Add(1)
				if hc.DoTimeout(fin, resp, 10*time.Second) == nil && resp.StatusCode() == 200 {
					n.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds(), int(out.Load())
}

// hasProjectID reports whether a next answer names a project (a non-empty
// "project_id"), without decoding it: the load generator's CPU is shared with the
// server's, and a reflective decode per action would be counted against judge actions.
func hasProjectID(body []byte) bool {
	const key = `"project_id":"`
	i := bytes.Index(body, []byte(key))
	return i >= 0 && i+len(key) < len(body) && body[i+len(key)] != '"'
}

// podiumClockToggle returns a broadcast trigger that pauses or unpauses the clock (each
// call the opposite of the last), which sends one "clock" message to every socket. The
// server is fresh: its clock starts paused.
func podiumClockToggle(ctx context.Context, admin *client) func() error {
	pause := false
	return func() error {
		action := "unpause"
		if pause {
			action = "pause"
		}
		pause = !pause
		_, err := admin.clock(ctx, action)
		return err
	}
}

// baselineFire returns a broadcast trigger for the baseline server: POST /broadcast with a
// message of the size of Podium's clock message.
func baselineFire(base string) func() error {
	hc := newHTTPClient(base, 4, 30*time.Second)
	seq := 0
	return func() error {
		seq++
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI(base + "/broadcast")
		req.Header.SetMethod("POST")
		req.SetBodyString(fmt.Sprintf(`{"type":"clock","seq":%d,"data":{"running":false,"time":%d,"start_time":%d,"pause_time":%d}}`,
			seq, 123456, time.Now().UnixMilli()-123456, time.Now().UnixMilli()))
		if err := hc.DoTimeout(req, resp, 30*time.Second); err != nil {
			return err
		}
		if resp.StatusCode() != 200 {
			return fmt.Errorf("baseline /broadcast: %d", resp.StatusCode())
		}
		return nil
	}
}

// median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Print writes the report: medians, each beside its yardstick, then the rounds.
func (rep *RatioReport) Print(w io.Writer) {
	r2 := func(x float64) float64 { return math.Round(x*100) / 100 }
	fmt.Fprintf(w, "ratio benchmark: median of %d rounds, every pair measured in the same round on the same machine\n", rep.Rounds)
	hb, ja := median(rep.Heartbeat), median(rep.JudgeActions)
	fmt.Fprintf(w, "  heartbeat GET /healthz      %8.0f req/s\n", hb)
	fmt.Fprintf(w, "  judge actions next->finish  %8.0f /s      ratio %.3f (median of per-round ratios: %s)\n", ja, median(rep.Ratio), ratioList(rep.Ratio))
	if len(rep.ServerCPUAction) > 0 {
		sh, sa := median(rep.ServerCPUHeartbeat), median(rep.ServerCPUAction)
		fmt.Fprintf(w, "  CPU µs per request (medians): server %.1f per heartbeat, %.1f per judge action (%.1f×); load generator %.1f and %.1f\n",
			sh, sa, sa/sh, median(rep.LoadgenCPUHeartbeat), median(rep.LoadgenCPUAction))
	}
	if len(rep.IdleAction) > 0 {
		fmt.Fprintf(w, "  machine CPU idle (medians, idle + iowait): %.1f%% during heartbeats, %.1f%% during judge actions\n",
			median(rep.IdleHeartbeat), median(rep.IdleAction))
	}
	row := func(name string, p, b []float64) {
		var ratios []float64
		for i := range min(len(p), len(b)) {
			if b[i] > 0 {
				ratios = append(ratios, p[i]/b[i])
			}
		}
		fmt.Fprintf(w, "  %-28s %10.2f %10.2f %8.2f   per round: %s\n", name, r2(median(p)), r2(median(b)), r2(median(ratios)), ratioList(ratios))
	}
	if len(rep.PodiumWSKiB) > 0 {
		fmt.Fprintf(w, "  %-28s %10s %10s %8s\n", "websockets (medians)", "podium", "baseline", "ratio*")
		row("KiB RSS per idle socket", rep.PodiumWSKiB, rep.BaselineWSKiB)
		row("broadcast p50 ms", rep.PodiumP50, rep.BaselineP50)
		row("broadcast p99 ms", rep.PodiumP99, rep.BaselineP99)
		row("server CPU µs per delivery", rep.PodiumCPU, rep.BaselineCPU)
		fmt.Fprintf(w, "  deliveries missed: podium %d, baseline %d\n", rep.PodiumMissed, rep.BaselineMissed)
		fmt.Fprintf(w, "  * ratio: median of the per-round ratios podium/baseline\n")
	}
	fmt.Fprintf(w, "  load average per round: %s\n", strings.Join(rep.LoadAvg, " | "))
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

func ratioList(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, " ")
}

// WriteJSON writes the report as JSON.
func (rep *RatioReport) WriteJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
