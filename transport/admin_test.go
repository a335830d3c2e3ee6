package transport

import (
	"context"
	"strings"
	"testing"

	"podium/engine"
)

type clockAnswer struct {
	OK    int          `json:"ok"`
	Clock engine.Clock `json:"clock"`
}

type clockState struct {
	Running bool  `json:"running"`
	Time    int64 `json:"time"`
}

func TestClockRoutes(t *testing.T) {
	ts := startServer(t)
	var st clockState
	ts.must(200, "GET", "/api/admin/clock", nil, asAdmin, &st)
	if st.Running || st.Time != 0 {
		t.Fatalf("new clock %+v", st)
	}
	if b := ts.must(200, "GET", "/api/admin/started", nil, anon, nil); string(b) != `{"ok":0}` {
		t.Fatalf("started %s", b)
	}
	var a clockAnswer
	// Pausing a paused clock changes nothing.
	ts.must(200, "POST", "/api/admin/clock/pause", nil, asAdmin, &a)
	if a.OK != 1 || a.Clock != (engine.Clock{}) {
		t.Fatalf("pause of paused clock %+v", a)
	}
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, &a)
	if a.OK != 1 || !a.Clock.Running || a.Clock.StartTime == 0 || a.Clock.PauseTime != 0 {
		t.Fatalf("unpause %+v", a)
	}
	start := a.Clock.StartTime
	if b := ts.must(200, "GET", "/api/admin/started", nil, anon, nil); string(b) != `{"ok":1}` {
		t.Fatalf("started %s", b)
	}
	ts.must(200, "GET", "/api/admin/clock", nil, asAdmin, &st)
	if !st.Running || st.Time < 0 {
		t.Fatalf("running clock %+v", st)
	}
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, &a)
	if a.Clock.StartTime != start {
		t.Fatalf("second unpause restarted the clock: %+v", a)
	}
	ts.must(200, "POST", "/api/admin/clock/pause", nil, asAdmin, &a)
	if a.Clock.Running || a.Clock.PauseTime < start {
		t.Fatalf("pause %+v", a)
	}
	elapsed := a.Clock.PauseTime - a.Clock.StartTime
	ts.must(200, "GET", "/api/admin/clock", nil, asAdmin, &st)
	if st.Running || st.Time != elapsed {
		t.Fatalf("paused clock %+v, want time %d", st, elapsed)
	}
	ts.must(200, "POST", "/api/admin/clock/reset", nil, asAdmin, &a)
	if a.OK != 1 || a.Clock != (engine.Clock{}) {
		t.Fatalf("reset %+v", a)
	}
	ts.must(200, "GET", "/api/admin/clock", nil, asAdmin, &st)
	if st.Running || st.Time != 0 {
		t.Fatalf("clock after reset %+v", st)
	}
	if o := settingsOptions(ts); o.Clock != (engine.Clock{}) {
		t.Fatalf("options clock %+v", o.Clock)
	}
	ts.must(200, "POST", "/api/admin/clock/backup", nil, asAdmin, nil)
}

// TestClockSurvivesRestart restarts the server on the same directory: with clock_sync
// the running clock keeps its start (it counted through the downtime); without it the
// startup recovery (what cmd/podium does with engine.ClockRecover) pauses it at the
// last moment the previous run was up.
func TestClockSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ts := startServerIn(t, dir)
	ts.must(200, "POST", "/api/admin/options", `{"clock_sync": true}`, asAdmin, nil)
	var a clockAnswer
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, &a)
	start := a.Clock.StartTime
	ts.Stop()

	ts = startServerIn(t, dir)
	settingsRecoverClock(t, ts)
	o := settingsOptions(ts)
	if !o.Clock.Running || o.Clock.StartTime != start {
		t.Fatalf("clock_sync on: clock after restart %+v, want running from %d", o.Clock, start)
	}
	// Now with clock_sync off.
	ts.must(200, "POST", "/api/admin/options", `{"clock_sync": false}`, asAdmin, nil)
	ts.Stop()

	ts = startServerIn(t, dir)
	lastUp := ts.Node.RecoveredAt()
	settingsRecoverClock(t, ts)
	o = settingsOptions(ts)
	if o.Clock.Running || o.Clock.StartTime != start || o.Clock.PauseTime != lastUp {
		t.Fatalf("clock_sync off: clock after restart %+v, want paused at %d", o.Clock, lastUp)
	}
	var st clockState
	ts.must(200, "GET", "/api/admin/clock", nil, asAdmin, &st)
	if st.Running || st.Time != lastUp-start {
		t.Fatalf("clock %+v, want %d ms", st, lastUp-start)
	}
	// The paused clock and the recovery survive another restart as they are.
	ts.Stop()
	ts = startServerIn(t, dir)
	settingsRecoverClock(t, ts)
	if o2 := settingsOptions(ts); o2.Clock != o.Clock {
		t.Fatalf("paused clock changed over a restart: %+v vs %+v", o2.Clock, o.Clock)
	}
}

// settingsRecoverClock does at startup what cmd/podium's recoverClock does.
func settingsRecoverClock(t *testing.T, ts *testServer) {
	t.Helper()
	need := false
	ts.Node.Read(func(s *engine.State) { need = s.Options.Clock.Running && !s.Options.ClockSync })
	if !need {
		return
	}
	if _, err := ts.Node.Submit(context.Background(), engine.System, &engine.ClockRecover{PauseAt: ts.Node.RecoveredAt()}); err != nil {
		t.Fatal(err)
	}
}

func TestDeliberationRoutes(t *testing.T) {
	ts := startServer(t)
	tok := settingsJudge(ts)
	if b := ts.must(200, "GET", "/api/judge/deliberation", nil, asJudge(tok), nil); string(b) != `{"ok":0}` {
		t.Fatalf("deliberation %s", b)
	}
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	ts.must(200, "POST", "/api/admin/deliberation", `{"start": true}`, asAdmin, nil)
	if b := ts.must(200, "GET", "/api/judge/deliberation", nil, asJudge(tok), nil); string(b) != `{"ok":1}` {
		t.Fatalf("deliberation %s", b)
	}
	o := settingsOptions(ts)
	if !o.Deliberation || o.Clock.Running {
		t.Fatalf("options %+v", o)
	}
	ts.must(200, "POST", "/api/admin/deliberation", `{"start": false}`, asAdmin, nil)
	if b := ts.must(200, "GET", "/api/judge/deliberation", nil, asJudge(tok), nil); string(b) != `{"ok":0}` {
		t.Fatalf("deliberation %s", b)
	}
	if o := settingsOptions(ts); o.Deliberation || o.Clock.Running {
		t.Fatalf("ending deliberation restarted the clock: %+v", o)
	}
	before := settingsState(ts)
	for _, b := range []string{``, `{}`, `{"start": "true"}`, `{"start": 1}`, `{"start": null}`, `[]`, `null`} {
		var body any
		if b != "" {
			body = b
		}
		if code, resp := ts.do("POST", "/api/admin/deliberation", body, asAdmin); code != 400 {
			t.Errorf("deliberation %q: %d %s", b, code, resp)
		}
	}
	if settingsState(ts) != before {
		t.Fatal("refused deliberation changed the state")
	}
}

func TestStatsRoutes(t *testing.T) {
	ts := startServer(t)
	var st engine.AdminStats
	ts.must(200, "GET", "/api/admin/stats", nil, asAdmin, &st)
	if st != (engine.AdminStats{}) {
		t.Fatalf("empty stats %+v", st)
	}
	ts.must(200, "POST", "/api/admin/options", `{"tracks": ["AI", "Best Hardware", "50% Club"], "judge_tracks": true}`, asAdmin, nil)
	ts.addProject("a", "AI")
	ts.addProject("b", "AI, Best Hardware")
	ts.addProject("c", "")
	ts.addJudge("g1", "g1@ex.com", "")
	ts.addJudge("g2", "g2@ex.com", "")
	ts.addJudge("t1", "t1@ex.com", "AI")
	ts.must(200, "GET", "/api/admin/stats", nil, asAdmin, &st)
	if want := (engine.AdminStats{Projects: 3, Judges: 2}); st != want {
		t.Fatalf("stats %+v want %+v", st, want)
	}
	ts.must(200, "GET", "/api/admin/stats/AI", nil, asAdmin, &st)
	if want := (engine.AdminStats{Projects: 2, Judges: 1}); st != want {
		t.Fatalf("AI stats %+v want %+v", st, want)
	}
	ts.must(200, "GET", "/api/admin/stats/Best%20Hardware", nil, asAdmin, &st)
	if want := (engine.AdminStats{Projects: 1}); st != want {
		t.Fatalf("hardware stats %+v want %+v", st, want)
	}
	ts.must(200, "GET", "/api/admin/stats/50%25%20Club", nil, asAdmin, &st)
	if want := (engine.AdminStats{}); st != want {
		t.Fatalf("50%% stats %+v want %+v", st, want)
	}
	// Seen counts (written by the judging flow) feed the averages.
	ts.Node.Read(func(s *engine.State) {
		for _, p := range s.Projects {
			p.Seen = p.Location // 1, 2, 3 -> 2
			p.TrackSeen["AI"] = 1
		}
		for _, j := range s.Judges {
			j.Seen = 3
		}
	})
	ts.must(200, "GET", "/api/admin/stats", nil, asAdmin, &st)
	if want := (engine.AdminStats{Projects: 3, AvgProjectSeen: 2, AvgJudgeSeen: 3, Judges: 2}); st != want {
		t.Fatalf("stats %+v want %+v", st, want)
	}
	code, b := ts.do("GET", "/api/admin/stats/Nope", nil, asAdmin)
	if code != 404 || !strings.Contains(string(b), "error") {
		t.Fatalf("unknown track: %d %s", code, b)
	}
}

func TestFlagsRoutes(t *testing.T) {
	ts := startServer(t)
	var flags []engine.Flag
	if b := ts.must(200, "GET", "/api/admin/flags", nil, asAdmin, &flags); string(b) != `[]` {
		t.Fatalf("no flags: %s", b)
	}
	jid, _ := ts.addJudge("J", "j@ex.com", "")
	pid := ts.addProject("P", "")
	j, _ := engine.ParseID(jid)
	p, _ := engine.ParseID(pid)
	// Flags are written by the judging flow's skip; put two in directly, out of order.
	f1, _ := engine.ParseID("aaaaaaaaaaaaaaaaaaaaaaa1")
	f2, _ := engine.ParseID("aaaaaaaaaaaaaaaaaaaaaaa2")
	ts.Node.Read(func(s *engine.State) {
		s.Flags = append(s.Flags,
			engine.Flag{ID: f1, ProjectID: p, JudgeID: j, Time: 2000, ProjectName: "P", ProjectLocation: 1, JudgeName: "J", Reason: "absent"},
			engine.Flag{ID: f2, ProjectID: p, JudgeID: engine.ZeroID, Time: 1000, ProjectName: "P", ProjectLocation: 1, JudgeName: "system", Reason: "hidden-absent"})
	})
	ts.must(200, "GET", "/api/admin/flags", nil, asAdmin, &flags)
	if len(flags) != 2 || flags[0].ID != f2 || flags[1].ID != f1 || flags[1].JudgeName != "J" || flags[1].Time != 2000 {
		t.Fatalf("flags %+v", flags)
	}
	before := settingsState(ts)
	ts.must(400, "DELETE", "/api/admin/flag/nothex", nil, asAdmin, nil)
	ts.must(400, "DELETE", "/api/admin/flag/AAAAAAAAAAAAAAAAAAAAAAA1", nil, asAdmin, nil)
	ts.must(404, "DELETE", "/api/admin/flag/aaaaaaaaaaaaaaaaaaaaaaa3", nil, asAdmin, nil)
	ts.must(404, "DELETE", "/api/admin/flag/"+pid, nil, asAdmin, nil)
	if settingsState(ts) != before {
		t.Fatal("refused dismissals changed the state")
	}
	ts.must(200, "DELETE", "/api/admin/flag/aaaaaaaaaaaaaaaaaaaaaaa1", nil, asAdmin, nil)
	ts.must(200, "GET", "/api/admin/flags", nil, asAdmin, &flags)
	if len(flags) != 1 || flags[0].ID != f2 {
		t.Fatalf("after dismiss %+v", flags)
	}
	ts.must(404, "DELETE", "/api/admin/flag/aaaaaaaaaaaaaaaaaaaaaaa1", nil, asAdmin, nil)
	var log struct{ Log string }
	ts.must(200, "GET", "/api/admin/log", nil, asAdmin, &log)
	if !strings.Contains(log.Log, `dismissed flag "absent" of judge J on project P`) {
		t.Fatalf("no audit line for the dismissal:\n%s", log.Log)
	}
}

func TestAuditLogRoute(t *testing.T) {
	ts := startServer(t)
	var log struct {
		Log *string `json:"log"`
	}
	ts.must(200, "GET", "/api/admin/log", nil, asAdmin, &log)
	if log.Log == nil || *log.Log != "" {
		t.Fatalf("new server log %v", log.Log)
	}
	_, code := ts.addJudge("Ada", "ada@ex.com", "")
	ts.login(code)
	ts.must(200, "POST", "/api/admin/options", `{"judging_timer": 42}`, asAdmin, nil)
	ts.must(200, "POST", "/api/admin/deliberation", `{"start": true}`, asAdmin, nil)
	ts.must(200, "GET", "/api/admin/log", nil, asAdmin, &log)
	lines := strings.Split(*log.Log, "\n")
	// Oldest first: the judge's lines come before the two settings lines, which are last.
	wantSuffix := []string{"[ADMIN] options changed: judging_timer", "[ADMIN] deliberation started"}
	if len(lines) < 4 || !strings.Contains(*log.Log, "[JUDGE Ada] ") {
		t.Fatalf("log lines %q", lines)
	}
	for i, w := range wantSuffix {
		if l := lines[len(lines)-2+i]; !strings.HasSuffix(l, w) {
			t.Fatalf("line %q, want suffix %q", l, w)
		}
	}
	for _, l := range lines {
		// "<RFC3339 ms UTC> [SYSTEM|ADMIN|JUDGE <name>] <message>"
		stamp, rest, _ := strings.Cut(l, " ")
		if len(stamp) != len("2006-01-02T15:04:05.000Z") || !strings.HasSuffix(stamp, "Z") || !strings.HasPrefix(rest, "[") {
			t.Fatalf("line %q", l)
		}
	}
	if strings.Contains(*log.Log, code) {
		t.Fatal("login code in the audit log")
	}
	// Only the newest MaxLogLines are served, oldest first.
	ts.Node.Read(func(s *engine.State) {
		extra := make([]string, engine.MaxLogLines+100)
		for i := range extra {
			extra[i] = "x"
		}
		extra[104] = "first kept" // 4 real lines + 50,100 extra: the newest 50,000 start here
		s.Log = append(extra, s.Log...)
	})
	ts.must(200, "GET", "/api/admin/log", nil, asAdmin, &log)
	lines = strings.Split(*log.Log, "\n")
	if len(lines) != engine.MaxLogLines || lines[0] != "first kept" || lines[1] != "x" || !strings.HasSuffix(lines[len(lines)-1], "deliberation started") {
		t.Fatalf("%d lines, first %q last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}
