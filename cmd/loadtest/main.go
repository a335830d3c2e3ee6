// Command loadtest drives a Podium server with realistic judging traffic, websocket
// watchers and expo readers, and reports throughput, latency percentiles, broadcast
// delivery, server memory and invariant violations. With -server it starts the server
// binary itself; with -crash N it SIGKILLs it N times under load and verifies that no
// acknowledged write was lost.
//
//	loadtest -server ./podium -judges 500 -projects 1000 -watchers 2000 -duration 60s
//	loadtest -url http://127.0.0.1:8080 -admin-password secret -judges 50 -duration 30s
//	loadtest -server ./podium -crash 5 -judges 100 -projects 300
//	loadtest -url http://127.0.0.1:8081,http://127.0.0.1:8082,http://127.0.0.1:8083 -admin-password secret -judges 90
//	loadtest -server ./podium -cluster 3 -kill-leader-after 10s -judges 90 -duration 30s
//	loadtest -server ./podium -ratio    (heartbeat vs judge actions, hub vs gorilla baseline)
//	loadtest -server ./podium -flush 5 -judges 500 -projects 1000    (500 phones back online at once)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"podium/loadtest/load"
	"podium/loadtest/ratio"
)

type envList []string

func (e *envList) String() string     { return strings.Join(*e, ",") }
func (e *envList) Set(v string) error { *e = append(*e, v); return nil }

// options are the command line.
type options struct {
	cfg          load.Config
	rc           ratio.Config
	jsonPath     string
	env          envList
	strict       bool
	urls         string
	killLeader   time.Duration
	ratio        bool
	baselineAddr string
}

func main() {
	var o options
	o.defineLoadFlags()
	o.defineRatioFlags()
	flag.Parse()
	if o.baselineAddr != "" {
		if err := ratio.ServeBaseline(o.baselineAddr); err != nil {
			fmt.Fprintln(os.Stderr, "loadtest:", err)
			os.Exit(1)
		}
		return
	}
	if o.ratio {
		os.Exit(runRatio(o.rc, o.jsonPath, o.env))
	}
	os.Exit(runLoad(&o))
}

// defineLoadFlags defines the flags of a load, cluster or crash run.
func (o *options) defineLoadFlags() {
	cfg := &o.cfg
	flag.StringVar(&cfg.URL, "url", "", "base URL of a running server (e.g. http://127.0.0.1:8080); a comma list for a cluster spreads the judges over its nodes")
	flag.StringVar(&o.urls, "urls", "", "same as a comma list in -url: the nodes of a cluster (judges spread round-robin, setup and checks through the first)")
	flag.IntVar(&cfg.ClusterNodes, "cluster", 0, "with -server: start this many nodes on loopback as one cluster (docs/behaviour.md#cluster) and spread the judges over them")
	flag.DurationVar(&o.killLeader, "kill-leader-after", 0, "with -cluster: SIGKILL the leader this long into the measured phase and report the write gap")
	flag.IntVar(&cfg.KillPID, "kill-pid", 0, "SIGKILL this process -kill-after into the measured phase (e.g. a node of a cluster you started)")
	flag.DurationVar(&cfg.KillAfter, "kill-after", 10*time.Second, "when to SIGKILL -kill-pid")
	flag.StringVar(&cfg.ServerBin, "server", "", "path to the podium binary: start it on a temp data dir (PORT=0) instead of using -url")
	flag.StringVar(&cfg.DataDir, "data-dir", "", "data directory for -server (default: a fresh temp dir)")
	flag.StringVar(&cfg.AdminPassword, "admin-password", os.Getenv("ADMIN_PASSWORD"), "admin password (ADMIN_PASSWORD); with -server a random one is used when empty")
	flag.StringVar(&cfg.APIKey, "api-key", "", "PUBLIC_API_KEY: readers also poll /v1/public/schedule|sponsors|faq (passed to a -server)")
	flag.IntVar(&cfg.Projects, "projects", 1000, "projects to create")
	flag.IntVar(&cfg.Judges, "judges", 500, "judges to create and drive")
	flag.IntVar(&cfg.Watchers, "watchers", 2000, "websocket connections (a few admins, up to 10% judges, the rest anonymous)")
	flag.IntVar(&cfg.Readers, "readers", 4, "expo/content readers")
	flag.DurationVar(&cfg.Duration, "duration", 60*time.Second, "length of the measured phase")
	flag.DurationVar(&cfg.Think, "think", 0, "judge think time between actions (0 = stress)")
	flag.DurationVar(&cfg.ReaderInterval, "reader-interval", 500*time.Millisecond, "pause between a reader's polls")
	flag.Float64Var(&cfg.SkipProb, "skip", 0.15, "probability that a judge skips instead of finishing")
	flag.Float64Var(&cfg.RankProb, "rank", 0.2, "probability of submitting a ranking after a finish")
	flag.DurationVar(&cfg.ClockInterval, "clock-every", 2*time.Second, "admin pauses and unpauses the clock this often (negative: never)")
	flag.DurationVar(&cfg.ClockPause, "clock-pause", 100*time.Millisecond, "how long each pause lasts")
	flag.DurationVar(&cfg.SampleInterval, "sample-every", 10*time.Second, "sample /api/judge/list for the hold invariant this often (negative: never)")
	flag.IntVar(&cfg.SetupWorkers, "setup-workers", 16, "concurrent setup requests")
	flag.Uint64Var(&cfg.Seed, "seed", 0, "random seed (0: from the clock)")
	flag.BoolVar(&cfg.NoCSV, "no-csv", false, "create projects and judges one by one even when the CSV imports exist")
	flag.StringVar(&cfg.ServerLogLevel, "server-log-level", "warn", "LOG_LEVEL of a -server")
	flag.StringVar(&cfg.ServerLog, "server-log", "", "file for a -server's output (default: a new temp file, kept)")
	flag.Var(&o.env, "server-env", "extra KEY=VALUE for a -server (repeatable)")
	flag.IntVar(&cfg.CrashCycles, "crash", 0, "crash mode: SIGKILL the -server this many times under load and verify acknowledged writes")
	flag.IntVar(&cfg.Flush, "flush", 0, "flush mode: every judge gets a project, then all come back online at once, each sending this many queued keyed actions (finishes naming the project, a ranking, notes; some sent twice) (docs/behaviour.md#on-the-floor)")
	flag.DurationVar(&cfg.CrashMin, "crash-min", 2*time.Second, "earliest kill after the load starts")
	flag.DurationVar(&cfg.CrashMax, "crash-max", 6*time.Second, "latest kill after the load starts")
	flag.IntVar(&cfg.Creators, "creators", 1, "crash mode: admin clients creating projects/judges during each cycle")
	flag.StringVar(&o.jsonPath, "json", "loadtest-report.json", "write the JSON report here (empty: don't)")
	flag.BoolVar(&o.strict, "strict", false, "exit 1 when there were errors, violations or lost writes")
}

// defineRatioFlags defines the flags of the ratio benchmark.
func (o *options) defineRatioFlags() {
	rc := &o.rc
	flag.BoolVar(&o.ratio, "ratio", false, "ratio benchmark: heartbeat vs judge actions, and the websocket hub vs a tuned gorilla/websocket broadcaster, median of -rounds")
	flag.IntVar(&rc.Rounds, "rounds", 5, "ratio: rounds (the median is reported)")
	flag.DurationVar(&rc.Phase, "phase", 4*time.Second, "ratio: length of each HTTP phase")
	flag.IntVar(&rc.Conns, "ratio-judges", 64, "ratio: judges (and heartbeat connections)")
	flag.IntVar(&rc.Projects, "ratio-projects", 2000, "ratio: projects")
	flag.IntVar(&rc.Sockets, "sockets", 10000, "ratio: idle websockets and broadcast watchers per side (-1: skip the websocket part)")
	flag.IntVar(&rc.Broadcasts, "broadcasts", 20, "ratio: broadcasts per round and side")
	flag.StringVar(&rc.WSDataRoot, "ws-data-root", "", "ratio: where the websocket servers keep their data (e.g. /dev/shm to take the disk's fsync out of the broadcast comparison)")
	flag.StringVar(&rc.ProfileDir, "profile-dir", "", "ratio: after the rounds, write server CPU profiles of a heartbeat and a judge-action phase here (heartbeat.pprof, judge.pprof) and the load generator's own (<phase>.loadgen.pprof), with /metrics and cumulative allocation profiles before and after each phase (<phase>.allocs.before, <phase>.allocs: go tool pprof -diff_base)")
	flag.DurationVar(&rc.ProfileFor, "profile-for", 10*time.Second, "ratio: length of each profiled phase")
	flag.StringVar(&o.baselineAddr, "baseline-ws", "", "serve the gorilla/websocket baseline broadcaster on this address (used by -ratio)")
}

// runLoad runs a load, cluster or crash run and returns the exit code.
func runLoad(o *options) int {
	cfg := o.cfg
	cfg.ServerEnv = o.env
	if o.urls != "" {
		cfg.URL = o.urls
	}
	if list := strings.Split(cfg.URL, ","); len(list) > 1 {
		cfg.URL, cfg.MoreURLs = strings.TrimSpace(list[0]), nil
		for _, u := range list[1:] {
			if u = strings.TrimSpace(u); u != "" {
				cfg.MoreURLs = append(cfg.MoreURLs, u)
			}
		}
	}
	switch {
	case o.killLeader > 0:
		cfg.KillLeader, cfg.KillAfter = true, o.killLeader
	case cfg.KillPID == 0:
		cfg.KillAfter = 0
	}
	cfg.Log = logf
	if cfg.ServerBin == "" && cfg.URL == "" {
		fmt.Fprintln(os.Stderr, "loadtest: give -url of a running server or -server <podium binary>")
		return 2
	}
	if cfg.ServerBin == "" && cfg.AdminPassword == "" {
		fmt.Fprintln(os.Stderr, "loadtest: -admin-password (or ADMIN_PASSWORD) is needed for -url")
		return 2
	}

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	rep, err := load.Run(ctx, cfg)
	if rep != nil {
		rep.Print(os.Stdout)
		if o.jsonPath != "" {
			if werr := rep.WriteJSON(o.jsonPath); werr != nil {
				fmt.Fprintln(os.Stderr, "loadtest:", werr)
			} else {
				fmt.Fprintf(os.Stdout, "JSON report: %s\n", o.jsonPath)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		return 1
	}
	if o.strict && rep.Failed() {
		return 1
	}
	return 0
}

// logf writes a progress line to stderr, stamped with the time of day (UTC).
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().UTC().Format("15:04:05 ")+format+"\n", args...)
}

// runRatio runs the ratio benchmark and returns the exit code.
func runRatio(rc ratio.Config, jsonPath string, env []string) int {
	if flagServer := flag.Lookup("server").Value.String(); flagServer != "" {
		rc.ServerBin = flagServer
	}
	if rc.ServerBin == "" {
		fmt.Fprintln(os.Stderr, "loadtest: -ratio needs -server <podium binary>")
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		return 1
	}
	rc.BaselineCmd = []string{self, "-baseline-ws", "127.0.0.1:0"}
	rc.LogLevel = flag.Lookup("server-log-level").Value.String()
	if !isFlagSet("server-log-level") {
		rc.LogLevel = "info" // production default: the request log line is part of the cost
	}
	rc.ServerEnv = env
	rc.Log = logf
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	rep, err := ratio.Run(ctx, rc)
	if rep != nil {
		rep.Print(os.Stdout)
		if jsonPath != "" && jsonPath != "loadtest-report.json" {
			if werr := rep.WriteJSON(jsonPath); werr != nil {
				fmt.Fprintln(os.Stderr, "loadtest:", werr)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		return 1
	}
	return 0
}

// isFlagSet reports whether the flag name was given on the command line.
func isFlagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
