package load

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"podium/loadtest/client"
	"podium/loadtest/internal/podiumbin"
	"podium/loadtest/stats"
)

// TestMain removes the podium binary the tests built (or runs as a test proxy).
func TestMain(m *testing.M) {
	if target := os.Getenv(proxyEnv); target != "" {
		runProxy(target) // a proxy process of TestJudgesSpreadOverURLsAndMoveOnKill
	}
	code := m.Run()
	podiumbin.Remove()
	os.Exit(code)
}

// buildPodium compiles ./cmd/podium once into a temp dir, as a real deployment would
// run it.
func buildPodium(t *testing.T) string { return podiumbin.Build(t, "../..") }

func testLog(t *testing.T) func(string, ...any) {
	return func(format string, args ...any) { t.Logf(format, args...) }
}

// TestCrashModeKeepsAcknowledgedWrites starts the real server binary, SIGKILLs it twice
// under judging load, restarts it on the same data directory and checks every write the
// clients saw acknowledged (judge/project creations, logins, finishes with notes and
// stars, skips, rankings), then does the same after a graceful stop.
func TestCrashModeKeepsAcknowledgedWrites(t *testing.T) {
	bin := buildPodium(t)
	cfg := Config{
		ServerBin: bin, DataDir: filepath.Join(t.TempDir(), "data"), ServerLog: filepath.Join(t.TempDir(), "server.log"),
		Projects: 40, Judges: 20, CrashCycles: 2,
		CrashMin: 1500 * time.Millisecond, CrashMax: 3 * time.Second,
		SampleInterval: 500 * time.Millisecond, Seed: 7, Log: testLog(t),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("crash run: %v", err)
	}
	var sb strings.Builder
	rep.Print(&sb)
	t.Log(sb.String())
	c := rep.Crash
	if c == nil || len(c.Cycles) != 2 || !c.GracefulCheck {
		t.Fatalf("crash report incomplete: %+v", c)
	}
	if c.Lost != 0 || c.Violations != 0 || rep.Invariants.Violations != 0 {
		t.Fatalf("lost %d acknowledged writes, %d violations: %v", c.Lost, c.Violations, rep.Invariants.Messages)
	}
	if c.AckedLogins != 20 {
		t.Errorf("acknowledged logins = %d, want 20", c.AckedLogins)
	}
	if c.AckedCreations <= 60 {
		t.Errorf("acknowledged creations = %d, want more than the 60 of the setup (creators run during the cycles)", c.AckedCreations)
	}
	if !rep.Judging.Available || c.AckedFinishes == 0 || c.AckedSkips == 0 {
		t.Errorf("judging load did not run: %+v, %d finishes, %d skips acknowledged", rep.Judging, c.AckedFinishes, c.AckedSkips)
	}
	if !rep.Invariants.SkipsChecked {
		t.Errorf("acknowledged skips were not checked against the flags")
	}
	if rep.Invariants.HoldSamples == 0 {
		t.Errorf("no hold samples taken")
	}
}

// TestLoadRunReportsAndChecksInvariants runs a short standard scenario against a server
// the tool starts and checks that the report is complete and clean.
func TestLoadRunReportsAndChecksInvariants(t *testing.T) {
	bin := buildPodium(t)
	cfg := Config{
		ServerBin: bin, ServerLog: filepath.Join(t.TempDir(), "server.log"), Projects: 30, Judges: 10, Watchers: 12, Readers: 2,
		Duration: 2500 * time.Millisecond, ClockInterval: 500 * time.Millisecond, ClockPause: 50 * time.Millisecond,
		SampleInterval: 700 * time.Millisecond, Seed: 11, Log: testLog(t),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("load run: %v", err)
	}
	var sb strings.Builder
	rep.Print(&sb)
	t.Log(sb.String())
	if !rep.Invariants.Checked || rep.Invariants.Violations != 0 {
		t.Fatalf("invariants: %+v", rep.Invariants)
	}
	if rep.Invariants.HoldSamples < 2 {
		t.Errorf("hold samples = %d, want at least 2", rep.Invariants.HoldSamples)
	}
	routes := map[string]stats.Route{}
	for _, r := range rep.Routes {
		routes[r.Route] = r
	}
	for _, want := range []string{"GET /api/project/list/public", "POST /api/admin/clock/pause", "POST /api/admin/clock/unpause"} {
		if r, ok := routes[want]; !ok || r.Count == 0 || len(r.Errors) != 0 {
			t.Errorf("route %s: %+v", want, r)
		}
	}
	if rep.RSS.End <= 0 || rep.RSS.Peak <= 0 {
		t.Errorf("server RSS not measured: %+v", rep.RSS)
	}
	if rep.Broadcast.Broadcasts < 2 {
		t.Errorf("clock broadcasts = %d, want at least 2", rep.Broadcast.Broadcasts)
	}
	if !rep.Judging.Available || rep.Judging.Finishes == 0 || rep.Invariants.AckedFinishes == 0 {
		t.Errorf("judging load did not run: %+v", rep.Judging)
	} else {
		for _, r := range []string{"POST /api/judge/next", "POST /api/judge/finish"} {
			if len(routes[r].Errors) != 0 {
				t.Errorf("%s errors: %v", r, routes[r].Errors)
			}
		}
	}
	if rep.Broadcast.Connected != 12 || rep.Broadcast.Delivered == 0 || rep.Broadcast.Missed != 0 {
		t.Errorf("broadcast: %+v", rep.Broadcast)
	}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	var back Report
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &back); err != nil || back.Scenario.Judges != 10 || len(back.Routes) != len(rep.Routes) {
		t.Fatalf("JSON report does not round-trip: %v", err)
	}
}

// TestBroadcastAnalysis checks the matching of received clock states to the admin's
// changes: only watchers subscribed before a change and open after it are expected.
func TestBroadcastAnalysis(t *testing.T) {
	t0 := time.Unix(1000, 0)
	k1 := clockKey{running: false, start: 1, pause: 2}
	k2 := clockKey{running: true, start: 3}
	mk := func(ready, closed time.Duration, got map[clockKey]time.Duration) *watcher {
		w := &watcher{got: map[clockKey]time.Time{}}
		w.ready.Store(t0.Add(ready).UnixNano())
		if closed > 0 {
			w.closed.Store(t0.Add(closed).UnixNano())
		}
		for k, d := range got {
			w.got[k] = t0.Add(d)
		}
		return w
	}
	ws := &watchers{list: []*watcher{
		mk(0, 0, map[clockKey]time.Duration{k1: 110 * time.Millisecond, k2: 1030 * time.Millisecond}),
		mk(0, 0, map[clockKey]time.Duration{k1: 150 * time.Millisecond}),                     // misses k2
		mk(500*time.Millisecond, 0, map[clockKey]time.Duration{k2: 1010 * time.Millisecond}), // subscribed after k1
		mk(0, 200*time.Millisecond, map[clockKey]time.Duration{k1: 120 * time.Millisecond}),  // closed before k2
	}}
	toggles := []toggle{
		{key: k1, sent: t0.Add(100 * time.Millisecond), ack: t0.Add(105 * time.Millisecond)},
		{key: k2, sent: t0.Add(time.Second), ack: t0.Add(1005 * time.Millisecond)},
	}
	rep := ws.analyze(4, toggles)
	if rep.Expected != 6 || rep.Delivered != 5 || rep.Missed != 1 || rep.ClientsMissed != 1 {
		t.Fatalf("analysis = %+v", rep)
	}
	if rep.Latency.Max != 50 || rep.Latency.P50 != 20 {
		t.Fatalf("latency = %+v", rep.Latency)
	}
}

// TestHoldAnalysis checks the "held by two judges while a free one existed" method on
// hand-made snapshots: a duplicate counts as a violation only when some project was
// certainly free for the later judge.
func TestHoldAnalysis(t *testing.T) {
	const T = int64(2_000_000_000_000) // ms
	id := func(n int) string { return fmt.Sprintf("%08x%016x", 1_000_000_000, n) }
	p1, p2 := id(1), id(2)
	cur := func(s string) *string { return &s }
	snapshot := func(aLast int64, bSeen ...string) []client.Judge {
		var seen []client.Seen
		for _, s := range bSeen {
			seen = append(seen, client.Seen{ProjectID: s})
		}
		return []client.Judge{
			{ID: id(100), Active: true, Current: cur(p1), LastActivity: aLast},
			{ID: id(101), Active: true, Current: cur(p1), LastActivity: T, SeenProjects: seen},
			{ID: id(102), Active: true},
		}
	}
	projects := []client.Project{{ID: p1, Active: true}, {ID: p2, Active: true}}
	cases := []struct {
		name        string
		judges      []client.Judge
		projects    []client.Project
		heldBy102   bool // our judge 102 may have held p2 around T
		dups, viols int
	}{
		{"free project existed", snapshot(T - 100), projects, false, 1, 1},
		{"other project held meanwhile", snapshot(T - 100), projects, true, 1, 0},
		{"other project already seen", snapshot(T-100, p2), projects, false, 1, 0},
		{"other project hidden", snapshot(T - 100), []client.Project{{ID: p1, Active: true}, {ID: p2}}, false, 1, 0},
		{"earlier assignment stale", snapshot(T - 600_001), projects, false, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lg := newLedger()
			for _, j := range tc.judges {
				lg.addJudge(&judgeRec{id: j.ID})
			}
			if tc.heldBy102 {
				lg.openHold(p2, id(102), T-50)
				lg.closeHold(p2, id(102), T+10)
			}
			h := &holdSampler{timerSec: 300}
			h.analyze(tc.judges, tc.projects, lg)
			if h.duplicates != tc.dups || h.violations != tc.viols {
				t.Fatalf("duplicates %d violations %d, want %d %d (%v)", h.duplicates, h.violations, tc.dups, tc.viols, h.messages)
			}
		})
	}
}

// TestVerifyDetectsLostWrites proves the checker fails when the server lacks writes the
// clients were told about: it checks a clean setup (no violations), then claims writes
// that never happened and expects each to be reported.
func TestVerifyDetectsLostWrites(t *testing.T) {
	cfg := Config{ServerBin: buildPodium(t), ServerLog: filepath.Join(t.TempDir(), "server.log"), Log: testLog(t)}
	cfg.defaults()
	r := &runner{cfg: &cfg, lg: newLedger(), jc: &judgeCounters{}, rep: &Report{}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cleanup, err := r.startManaged(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	r.connect(r.srv.URL(), stats.NewRoutes())
	if err := r.admin.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.setup(ctx, "v", 3, 2); err != nil {
		t.Fatal(err)
	}
	ir, err := verify(ctx, r.admin, r.lg, verifyOpts{logins: true})
	if err != nil || ir.Violations != 0 || ir.Judges != 2 || ir.Projects != 3 {
		t.Fatalf("clean setup: %v %+v", err, ir)
	}
	var project string
	for id := range r.lg.projects {
		project = id
	}
	js := r.lg.judgeList()
	js[0].finishes[project] = finishRec{notes: "never sent"}
	js[0].rankAcked = []string{project}
	js[1].token = "not-a-token"
	r.lg.addProject("0000000100000000000000aa", "ghost project")
	r.lg.addJudge(&judgeRec{id: "0000000100000000000000bb", name: "ghost judge"})
	ir, err = verify(ctx, r.admin, r.lg, verifyOpts{logins: true})
	if err != nil {
		t.Fatal(err)
	}
	if ir.LostFinishes != 1 || ir.RankMismatch != 1 || ir.LostLogins != 1 || ir.LostProjects != 1 || ir.LostJudges != 1 || ir.lost() != 5 {
		t.Fatalf("tampered ledger: %+v", ir)
	}
}

// TestFlushModeAppliesEveryQueuedActionOnce runs flush mode on the real binary: every
// judge comes back online at once with 6 queued keyed actions, some sent twice; every
// action is applied once, every repeat is answered from the kept answer, and the
// ledger's invariants hold.
func TestFlushModeAppliesEveryQueuedActionOnce(t *testing.T) {
	bin := buildPodium(t)
	cfg := Config{ServerBin: bin, ServerLog: filepath.Join(t.TempDir(), "server.log"), Projects: 40, Judges: 25, Flush: 6, Seed: 5, Log: testLog(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("flush run: %v", err)
	}
	var sb strings.Builder
	rep.Print(&sb)
	t.Log(sb.String())
	f := rep.Flush
	if f == nil || f.Actions != 25*6 || f.Errors != 0 || f.Mismatches != 0 || f.Replayed != f.Resent || f.Resent == 0 {
		t.Fatalf("flush report %+v", f)
	}
	if ir := rep.Invariants; ir.Violations != 0 || ir.AckedFinishes != 25*3 || ir.AckedRanks != 25 || rep.Failed() {
		t.Fatalf("invariants: %+v", ir)
	}
}
