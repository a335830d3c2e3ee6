package transport

import (
	"testing"

	"podium/engine"
)

// TestWSJudgeToldWhenAdminHidesItsProject: an admin hides the project a judge is on; the
// judge's socket gets a `judge` message with no current project, and the judge's next
// `next` hands it another project.
func TestWSJudgeToldWhenAdminHidesItsProject(t *testing.T) {
	ts := startServer(t)
	p1 := ts.addProject("One", "")
	p2 := ts.addProject("Two", "")
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	tok := ts.login(code)
	ws, _ := ts.mustDialWS(cookieHeader(cookieJudge, tok))
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	cur := nextOf(t, ts, tok)["project_id"].(string)
	ts.must(200, "PUT", "/api/project/hide/"+cur, nil, asAdmin, nil)
	ev := decode[engine.JudgeEvent](t, ws.expect("judge").Data)
	if ev.Current != nil || ev.Reason != "project hidden" {
		t.Fatalf("judge event = %+v, want current null and reason \"project hidden\"", ev)
	}
	other := p1
	if cur == p1 {
		other = p2
	}
	if got := nextOf(t, ts, tok)["project_id"]; got != other {
		t.Fatalf("next after hide = %v, want %s", got, other)
	}
}

// TestMetricsFlagsMoveWithSkips: podium_flags{reason} follows the flags in state.
func TestMetricsFlagsMoveWithSkips(t *testing.T) {
	ts, _ := startMetricsServer(t)
	ts.addProject("One", "")
	ts.addProject("Two", "")
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	tok := ts.login(code)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	before, ok := sample(scrape(t, ts), "podium_flags", map[string]string{"reason": "cannot-demo"})
	if !ok || before != 0 {
		t.Fatalf("podium_flags{cannot-demo} before = %v (present %v)", before, ok)
	}
	nextOf(t, ts, tok)
	ts.must(200, "POST", "/api/judge/skip", map[string]string{"reason": "cannot-demo"}, asJudge(tok), nil)
	if after, _ := sample(scrape(t, ts), "podium_flags", map[string]string{"reason": "cannot-demo"}); after != 1 {
		t.Fatalf("podium_flags{cannot-demo} after one skip = %v, want 1", after)
	}
}
