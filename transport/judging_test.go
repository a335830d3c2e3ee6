package transport

import (
	"encoding/json"
	"strings"
	"testing"

	"podium/engine"
)

// judgingSetup starts a server with n projects and one logged-in judge.
func judgingSetup(t *testing.T, n int) (ts *testServer, tok string, judge string, projects []string) {
	t.Helper()
	ts = startServer(t)
	for i := 0; i < n; i++ {
		projects = append(projects, ts.addProject("Project "+string(rune('A'+i)), ""))
	}
	judge, code := ts.addJudge("Ada", "ada@example.com", "")
	tok = ts.login(code)
	return ts, tok, judge, projects
}

func nextOf(t *testing.T, ts *testServer, tok string) map[string]any {
	t.Helper()
	var out map[string]any
	ts.must(200, "POST", "/api/judge/next", nil, asJudge(tok), &out)
	return out
}

func TestJudgingRoutesNeedJudge(t *testing.T) {
	ts, _, _, ps := judgingSetup(t, 1)
	routes := []struct{ method, path string }{
		{"POST", "/api/judge/next"}, {"POST", "/api/judge/skip"}, {"POST", "/api/judge/finish"},
		{"POST", "/api/judge/rank"}, {"PUT", "/api/judge/star/" + ps[0]}, {"PUT", "/api/judge/notes/" + ps[0]},
		{"GET", "/api/judge/projects"}, {"GET", "/api/judge/project/" + ps[0]}, {"GET", "/api/judge/welcome"},
		{"PUT", "/api/judge/welcome"}, {"POST", "/api/judge/welcome"}, {"GET", "/api/project/count"},
		{"GET", "/api/project/" + ps[0]},
	}
	if code, body := ts.do("GET", "/api/judge/next", nil, anon); code != 405 {
		t.Errorf("GET /api/judge/next: %d %s, want 405", code, body)
	}
	for _, r := range routes {
		for name, a := range map[string]auth{"anonymous": anon, "admin": asAdmin, "bad token": asJudge("not-a-token")} {
			code, body := ts.do(r.method, r.path, `{}`, a)
			if code != 401 || !strings.Contains(string(body), `"error"`) {
				t.Errorf("%s %s as %s: %d %s, want 401", r.method, r.path, name, code, body)
			}
		}
	}
}

func TestJudgingNextReasonsAndAssignment(t *testing.T) {
	ts, tok, _, ps := judgingSetup(t, 2)
	// Paused clock: 200 with a reason and no project_id key.
	b := ts.must(200, "POST", "/api/judge/next", nil, asJudge(tok), nil)
	if string(b) != `{"reason":"paused"}` {
		t.Fatalf("paused next: %s", b)
	}
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	first := nextOf(t, ts, tok)
	pid, _ := first["project_id"].(string)
	if pid != ps[0] && pid != ps[1] || len(first) != 2 || len(first["upcoming"].([]any)) != 1 {
		t.Fatalf("next: %v", first)
	}
	// Asking again returns the same current project.
	if again := nextOf(t, ts, tok); again["project_id"] != pid {
		t.Fatalf("second next %v, want %s", again, pid)
	}
	var me engine.JudgeView
	ts.must(200, "GET", "/api/judge", nil, asJudge(tok), &me)
	if me.Current == nil || me.Current.String() != pid || me.LastLocation < 1 {
		t.Fatalf("judge after next: %+v", me)
	}
	ts.must(200, "POST", "/api/judge/finish", nil, asJudge(tok), nil)
	nextOf(t, ts, tok)
	ts.must(200, "POST", "/api/judge/finish", `{"notes":"ok","starred":false}`, asJudge(tok), nil)
	if done := nextOf(t, ts, tok); done["reason"] != "done" || len(done) != 1 {
		t.Fatalf("next with nothing left: %v", done)
	}
}

func TestJudgingSkip(t *testing.T) {
	ts, tok, judge, ps := judgingSetup(t, 3)
	ts.must(409, "POST", "/api/judge/skip", `{"reason":"busy"}`, asJudge(tok), nil)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	first := nextOf(t, ts, tok)["project_id"].(string)
	for _, body := range []string{``, `{}`, `{"reason":"bored"}`, `{"reason":3}`, `not json`} {
		ts.must(400, "POST", "/api/judge/skip", body, asJudge(tok), nil)
	}
	ts.must(200, "POST", "/api/judge/skip", `{"reason":"cannot-demo"}`, asJudge(tok), nil)
	var me engine.JudgeView
	ts.must(200, "GET", "/api/judge", nil, asJudge(tok), &me)
	if me.Current == nil || me.Current.String() == first {
		t.Fatalf("skip did not move the judge on: %+v", me.Current)
	}
	var flags []engine.Flag
	ts.Node.Read(func(st *engine.State) { flags = append(flags, st.Flags...) })
	if len(flags) != 1 || flags[0].Reason != "cannot-demo" || flags[0].ProjectID.String() != first || flags[0].JudgeID.String() != judge || flags[0].JudgeName != "Ada" {
		t.Fatalf("flags %+v", flags)
	}
	_ = ps
}

func TestJudgingFinishRankStarNotes(t *testing.T) {
	ts, tok, _, ps := judgingSetup(t, 3)
	ts.must(409, "POST", "/api/judge/finish", nil, asJudge(tok), nil)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	var order []string
	for i := 0; i < 2; i++ {
		order = append(order, nextOf(t, ts, tok)["project_id"].(string))
		if i == 0 {
			ts.must(400, "POST", "/api/judge/finish", `{"notes": 5}`, asJudge(tok), nil)
			ts.must(400, "POST", "/api/judge/finish", `{"notes": "`+strings.Repeat("x", 20001)+`"}`, asJudge(tok), nil)
		}
		ts.must(200, "POST", "/api/judge/finish", map[string]any{"notes": "note " + string(rune('0'+i)), "starred": i == 0}, asJudge(tok), nil)
	}
	var unjudged string
	for _, p := range ps {
		if p != order[0] && p != order[1] {
			unjudged = p
		}
	}
	// Judged projects, in the order judged, with the project's url.
	var list []engine.JudgedProject
	ts.must(200, "GET", "/api/judge/projects", nil, asJudge(tok), &list)
	if len(list) != 2 || list[0].ProjectID.String() != order[0] || list[0].Notes != "note 0" || !list[0].Starred || list[1].Starred {
		t.Fatalf("judged projects %+v", list)
	}
	var one map[string]any
	ts.must(200, "GET", "/api/judge/project/"+order[1], nil, asJudge(tok), &one)
	for _, k := range []string{"project_id", "name", "location", "description", "notes", "starred", "url"} {
		if _, ok := one[k]; !ok {
			t.Fatalf("judged project view lacks %q: %v", k, one)
		}
	}
	ts.must(404, "GET", "/api/judge/project/"+unjudged, nil, asJudge(tok), nil)
	ts.must(400, "GET", "/api/judge/project/nope", nil, asJudge(tok), nil)

	// Rank.
	for _, body := range []any{``, `{}`, `{"ranking": "x"}`, map[string]any{"ranking": []string{"zz"}},
		map[string]any{"ranking": []string{unjudged}}, map[string]any{"ranking": []string{order[0], order[0]}}} {
		ts.must(400, "POST", "/api/judge/rank", body, asJudge(tok), nil)
	}
	ts.must(200, "POST", "/api/judge/rank", map[string]any{"ranking": []string{order[1], order[0]}}, asJudge(tok), nil)
	ts.must(200, "POST", "/api/judge/rank", map[string]any{"ranking": []string{}}, asJudge(tok), nil)
	ts.must(200, "POST", "/api/judge/rank", map[string]any{"ranking": []string{order[1], order[0]}}, asJudge(tok), nil)
	var me engine.JudgeView
	ts.must(200, "GET", "/api/judge", nil, asJudge(tok), &me)
	if len(me.Rankings) != 2 || me.Rankings[0].String() != order[1] {
		t.Fatalf("rankings %v", me.Rankings)
	}

	// Star.
	ts.must(404, "PUT", "/api/judge/star/"+unjudged, `{"starred":true}`, asJudge(tok), nil)
	ts.must(400, "PUT", "/api/judge/star/xyz", `{"starred":true}`, asJudge(tok), nil)
	ts.must(400, "PUT", "/api/judge/star/"+order[1], `{}`, asJudge(tok), nil)
	ts.must(400, "PUT", "/api/judge/star/"+order[1], `{"starred":"yes"}`, asJudge(tok), nil)
	ts.must(200, "PUT", "/api/judge/star/"+order[1], `{"starred":true}`, asJudge(tok), nil)
	// Notes.
	ts.must(404, "PUT", "/api/judge/notes/"+unjudged, `{"notes":"x"}`, asJudge(tok), nil)
	ts.must(400, "PUT", "/api/judge/notes/"+order[1], ``, asJudge(tok), nil)
	ts.must(400, "PUT", "/api/judge/notes/"+order[1], map[string]string{"notes": strings.Repeat("y", 20001)}, asJudge(tok), nil)
	ts.must(200, "PUT", "/api/judge/notes/"+order[1], `{"notes":"changed my mind"}`, asJudge(tok), nil)
	ts.must(200, "GET", "/api/judge/project/"+order[1], nil, asJudge(tok), &one)
	if one["notes"] != "changed my mind" || one["starred"] != true {
		t.Fatalf("after star and notes: %v", one)
	}

	// Scores as the admin sees them: the judge ranked order[1] > order[0] (rc = 2,
	// uc = 0): order[1] gets 2+0-1-0 = 1, order[0] gets 2+0-1-2 = -1; both starred.
	var admin []engine.ProjectAdminView
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &admin)
	got := map[string]engine.ProjectAdminView{}
	for _, p := range admin {
		got[p.ID.String()] = p
	}
	if got[order[1]].Score != 1 || got[order[0]].Score != -1 || got[unjudged].Score != 0 {
		t.Fatalf("scores %+v", admin)
	}
	if got[order[1]].Stars != 1 || got[order[0]].Stars != 1 || got[unjudged].Stars != 0 {
		t.Fatalf("stars %+v", admin)
	}
	// Crowd-BT in the judge view: one outcome, order[1] beat order[0]:
	// mu = +-9/22, sigma_sq = 403/484, votes 1 (see engine/scores_test.go).
	var pv map[string]any
	ts.must(200, "GET", "/api/project/"+order[1], nil, asJudge(tok), &pv)
	if pv["votes"].(float64) != 1 || pv["mu"].(float64) < 0.409 || pv["mu"].(float64) > 0.41 || pv["sigma_sq"].(float64) < 0.832 || pv["sigma_sq"].(float64) > 0.833 {
		t.Fatalf("judge view %v", pv)
	}
	ts.must(200, "GET", "/api/project/"+unjudged, nil, asJudge(tok), &pv)
	if pv["votes"].(float64) != 0 || pv["mu"].(float64) != 0 || pv["sigma_sq"].(float64) != 1 {
		t.Fatalf("unjudged judge view %v", pv)
	}
	for _, k := range []string{"id", "name", "location", "description", "url", "try_link", "video_link", "challenge_list", "seen", "votes", "mu", "sigma_sq", "active", "prioritized", "group", "last_activity"} {
		if _, ok := pv[k]; !ok {
			t.Fatalf("judge view lacks %q: %v", k, pv)
		}
	}
	ts.must(404, "GET", "/api/project/0123456789abcdef01234567", nil, asJudge(tok), nil)
	ts.must(400, "GET", "/api/project/not-an-id", nil, asJudge(tok), nil)
}

func TestJudgingWelcomeAndCount(t *testing.T) {
	ts := startServer(t)
	ts.addProject("One", "AI")
	ts.addProject("Two", "")
	ts.addProject("Three", "AI, Web")
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	tok := ts.login(code)
	b := ts.must(200, "GET", "/api/judge/welcome", nil, asJudge(tok), nil)
	if string(b) != `{"ok":0}` {
		t.Fatalf("welcome before: %s", b)
	}
	ts.must(200, "PUT", "/api/judge/welcome", nil, asJudge(tok), nil)
	b = ts.must(200, "GET", "/api/judge/welcome", nil, asJudge(tok), nil)
	if string(b) != `{"ok":1}` {
		t.Fatalf("welcome after: %s", b)
	}
	ts.must(200, "POST", "/api/judge/welcome", nil, asJudge(tok), nil)
	var cnt struct{ Count int }
	ts.must(200, "GET", "/api/project/count", nil, asJudge(tok), &cnt)
	if cnt.Count != 3 {
		t.Fatalf("count %d, want 3", cnt.Count)
	}
}

func TestJudgingSurvivesRestart(t *testing.T) {
	ts, tok, _, _ := judgingSetup(t, 4)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	nextOf(t, ts, tok)
	ts.must(200, "POST", "/api/judge/finish", `{"notes":"kept","starred":true}`, asJudge(tok), nil)
	cur := nextOf(t, ts, tok)["project_id"]
	ts.must(200, "POST", "/api/judge/rank", map[string]any{"ranking": []string{}}, asJudge(tok), nil)
	var before, after []byte
	ts.Node.Read(func(st *engine.State) { before, _ = json.Marshal(st.JudgedProjects(st.JudgeOrder[0])) })
	dir := ts.Dir
	ts.Stop()
	ts2 := startServerIn(t, dir)
	ts2.Node.Read(func(st *engine.State) { after, _ = json.Marshal(st.JudgedProjects(st.JudgeOrder[0])) })
	if string(before) != string(after) {
		t.Fatalf("judged projects after restart %s, want %s", after, before)
	}
	// The current assignment survives, and the flow continues where it was.
	if again := nextOf(t, ts2, tok); again["project_id"] != cur {
		t.Fatalf("current after restart %v, want %v", again, cur)
	}
	ts2.must(200, "POST", "/api/judge/skip", `{"reason":"absent"}`, asJudge(tok), nil)
}

func TestJudgingWithAdminActions(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/options", map[string]any{"tracks": []string{"AI"}, "judge_tracks": true}, asAdmin, nil)
	a := ts.addProject("Alpha", "AI")
	b := ts.addProject("Beta", "")
	c := ts.addProject("Gamma", "AI")
	j1, code1 := ts.addJudge("One", "one@example.com", "")
	j2, code2 := ts.addJudge("Two", "two@example.com", "")
	_, code3 := ts.addJudge("Tracy", "tracy@example.com", "AI")
	t1, t2, t3 := ts.login(code1), ts.login(code2), ts.login(code3)
	var cnt struct{ Count int }
	ts.must(200, "GET", "/api/project/count", nil, asJudge(t3), &cnt)
	if cnt.Count != 2 {
		t.Fatalf("track judge count %d, want 2 (AI projects)", cnt.Count)
	}
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)

	// Both general judges judge all three projects and rank them.
	for _, tok := range []string{t1, t2} {
		for i := 0; i < 3; i++ {
			nextOf(t, ts, tok)
			ts.must(200, "POST", "/api/judge/finish", `{"starred":true}`, asJudge(tok), nil)
		}
	}
	ts.must(200, "POST", "/api/judge/rank", map[string]any{"ranking": []string{a, b, c}}, asJudge(t1), nil)
	ts.must(200, "POST", "/api/judge/rank", map[string]any{"ranking": []string{c}}, asJudge(t2), nil)
	// The track judge judges an AI project and stars it.
	tp := nextOf(t, ts, t3)["project_id"].(string)
	ts.must(200, "POST", "/api/judge/finish", `{"starred":true}`, asJudge(t3), nil)
	scores := func() map[string]engine.ProjectAdminView {
		var list []engine.ProjectAdminView
		ts.must(200, "GET", "/api/project/list", nil, asAdmin, &list)
		out := map[string]engine.ProjectAdminView{}
		for _, p := range list {
			out[p.ID.String()] = p
		}
		return out
	}
	// j1: rc = 3, uc = 0: a 2, b 0, c -2.  j2: rc = 1, uc = 2: c 2, a -1, b -1.
	// Totals: a 1, b -1, c 0; every project starred by both general judges.
	sc := scores()
	if sc[a].Score != 1 || sc[b].Score != -1 || sc[c].Score != 0 || sc[a].Stars != 2 {
		t.Fatalf("scores %+v", sc)
	}
	if sc[tp].TrackStars["AI"] != 1 {
		t.Fatalf("track stars %+v", sc[tp].TrackStars)
	}
	// Hiding j2 leaves only j1's counts: a 2, b 0, c -2, one star each.
	ts.must(200, "PUT", "/api/judge/hide/"+j2, nil, asAdmin, nil)
	sc = scores()
	if sc[a].Score != 2 || sc[b].Score != 0 || sc[c].Score != -2 || sc[a].Stars != 1 {
		t.Fatalf("scores with j2 hidden %+v", sc)
	}
	b2 := ts.must(200, "POST", "/api/judge/next", nil, asJudge(t2), nil)
	if string(b2) != `{"reason":"inactive"}` {
		t.Fatalf("hidden judge next: %s", b2)
	}
	// Deleting j1 leaves nobody: all 0; unhiding j2 brings its counts back.
	ts.must(200, "DELETE", "/api/judge/"+j1, nil, asAdmin, nil)
	ts.must(200, "PUT", "/api/judge/hide/"+j2, `{"hide":false}`, asAdmin, nil)
	sc = scores()
	if sc[a].Score != -1 || sc[b].Score != -1 || sc[c].Score != 2 || sc[c].Stars != 1 {
		t.Fatalf("scores after delete and unhide %+v", sc)
	}

	// Deliberation: next says so; finish, rank and star are 409; notes still work.
	ts.must(200, "POST", "/api/admin/deliberation", `{"start":true}`, asAdmin, nil)
	if b := ts.must(200, "POST", "/api/judge/next", nil, asJudge(t2), nil); string(b) != `{"reason":"deliberation"}` {
		t.Fatalf("next in deliberation: %s", b)
	}
	ts.must(409, "POST", "/api/judge/rank", map[string]any{"ranking": []string{a}}, asJudge(t2), nil)
	ts.must(409, "PUT", "/api/judge/star/"+a, `{"starred":false}`, asJudge(t2), nil)
	ts.must(200, "PUT", "/api/judge/notes/"+a, `{"notes":"still allowed"}`, asJudge(t2), nil)
	ts.must(200, "POST", "/api/admin/deliberation", `{"start":false}`, asAdmin, nil)
	_ = j1
}

func TestJudgingAbsentFlagsHideProject(t *testing.T) {
	ts := startServer(t)
	p := ts.addProject("Ghost", "")
	var toks []string
	for i := 0; i < 3; i++ {
		_, code := ts.addJudge("J"+string(rune('A'+i)), "j"+string(rune('a'+i))+"@example.com", "")
		toks = append(toks, ts.login(code))
	}
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	for _, tok := range toks {
		if got := nextOf(t, ts, tok)["project_id"]; got != p {
			t.Fatalf("next %v", got)
		}
		ts.must(200, "POST", "/api/judge/skip", `{"reason":"absent"}`, asJudge(tok), nil)
	}
	var flags []engine.Flag
	ts.must(200, "GET", "/api/admin/flags", nil, asAdmin, &flags)
	if len(flags) != 1 || flags[0].Reason != "hidden-absent" || flags[0].JudgeName != "system" || !flags[0].JudgeID.IsZero() {
		t.Fatalf("flags %+v", flags)
	}
	var pub []engine.PublicProject
	ts.must(200, "GET", "/api/project/list/public", nil, anon, &pub)
	if len(pub) != 0 {
		t.Fatalf("hidden project still public: %+v", pub)
	}
	_, code := ts.addJudge("Late", "late@example.com", "")
	if b := ts.must(200, "POST", "/api/judge/next", nil, asJudge(ts.login(code)), nil); string(b) != `{"reason":"done"}` {
		t.Fatalf("hidden project assigned: %s", b)
	}
}

// TestJudgingConcurrentRankAndRead ranks and reads Crowd-BT values at the same time
// (run with -race): the values computed outside the engine lock must never race with
// the rankings that change them.
func TestJudgingConcurrentRankAndRead(t *testing.T) {
	ts, tok, _, ps := judgingSetup(t, 4)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	for range ps {
		nextOf(t, ts, tok)
		ts.must(200, "POST", "/api/judge/finish", nil, asJudge(tok), nil)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 30; i++ {
			order := []string{ps[i%4], ps[(i+1)%4], ps[(i+2)%4]}
			if code, body := ts.do("POST", "/api/judge/rank", map[string]any{"ranking": order}, asJudge(tok)); code != 200 {
				t.Errorf("rank: %d %s", code, body)
				return
			}
		}
	}()
	for i := 0; i < 60; i++ {
		if code, body := ts.do("GET", "/api/project/"+ps[i%4], nil, asJudge(tok)); code != 200 {
			t.Fatalf("read: %d %s", code, body)
		}
	}
	<-done
	// After the last ranking (ps[1] > ps[2] > ps[3], ps[0] unranked) every project was in
	// 3 outcomes.
	var pv struct{ Votes int }
	for _, p := range ps {
		ts.must(200, "GET", "/api/project/"+p, nil, asJudge(tok), &pv)
		if pv.Votes != 3 {
			t.Fatalf("votes %d, want 3", pv.Votes)
		}
	}
}
