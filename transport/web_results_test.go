package transport

import (
	"net"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rs/zerolog"

	"podium/persist"
	"podium/persist/worker"
)

// startRatedServer is startServer with the background ratings fit on, as the server runs.
func startRatedServer(t *testing.T) *testServer {
	t.Helper()
	dir := t.TempDir()
	node, err := persist.Open(dir, persist.Options{Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	fit := worker.RatingsStart(node, worker.RatingsOptions{Every: 1, Quiet: 100 * time.Millisecond})
	srv := New(Config{DataDir: dir, AdminPassword: testPassword}, node, zerolog.Nop())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Listen(ln) }()
	ts := &testServer{t: t, URL: "http://" + ln.Addr().String(), Dir: dir, Node: node, Srv: srv, ln: ln}
	t.Cleanup(ts.Stop)
	t.Cleanup(fit.Stop) // before the node closes
	return ts
}

// judgeOnce has the judge take its next project, finish it and rank all it saw.
func (ts *testServer) judgeOnce(token string) {
	ts.t.Helper()
	var nx struct {
		ProjectID string `json:"project_id"`
	}
	ts.must(200, "POST", "/api/judge/next", nil, asJudge(token), &nx)
	if nx.ProjectID == "" {
		ts.t.Fatal("no project to judge")
	}
	ts.must(200, "POST", "/api/judge/finish", map[string]any{"starred": false}, asJudge(token), nil)
	var seen []struct {
		ProjectID string `json:"project_id"`
	}
	ts.must(200, "GET", "/api/judge/projects", nil, asJudge(token), &seen)
	rk := []string{}
	for _, s := range seen {
		rk = append(rk, s.ProjectID)
	}
	ts.must(200, "POST", "/api/judge/rank", map[string]any{"ranking": rk}, asJudge(token), nil)
}

// TestWebResultsTab: the Results tab shows the fitted ranking, follows judging live
// over the websocket, and hides a judge with one click.
func TestWebResultsTab(t *testing.T) {
	b := startChromium(t)
	ts := startRatedServer(t)
	for _, n := range []string{"Aurora", "Beacon", "Comet", "Dune"} {
		ts.addProject(n, "")
	}
	j1, c1 := ts.addJudge("Careful Cat", "cat@example.com", "")
	_, c2 := ts.addJudge("Rushed Rob", "rob@example.com", "")
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	t1, t2 := ts.login(c1), ts.login(c2)
	for i := 0; i < 2; i++ {
		ts.judgeOnce(t1)
		ts.judgeOnce(t2)
	}

	ctx := b.tab(t)
	adminLogin(t, ctx, ts)
	run(t, ctx, "open results", chromedp.Click(chromedp.CSS("#tab-results")), chromedp.WaitVisible(chromedp.CSS("#panel-results")))
	waitJS(t, ctx, "ranked rows", `document.querySelectorAll('#results-table tbody tr').length === 4`)
	waitJS(t, ctx, "settledness", `/top 3 stable: [0-9]+%/.test(document.querySelector('#results-settled').textContent)`)
	views := `[...document.querySelectorAll('#results-table tbody tr')].reduce((s, r) => s + Number(r.lastElementChild.textContent), 0)`
	waitJS(t, ctx, "views so far", views+` === 4`)

	// Live: a judge finishes one more; the tab follows without a reload.
	ts.judgeOnce(t1)
	waitJS(t, ctx, "live update", views+` === 5`)
	waitJS(t, ctx, "ratings fitted", `[...document.querySelectorAll('#results-table tbody tr')].some(r => !r.children[3].textContent.includes('0.00 ±'))`)

	// Hide a judge from its row.
	run(t, ctx, "hide judge", chromedp.Click(chromedp.CSS(`#results-judges tr[data-id="`+j1+`"] button.hide-judge`)))
	eventually(t, "judge hidden", func() bool { return judgeState(ts, j1)["active"] == false })
	waitJS(t, ctx, "row says unhide", `document.querySelector('#results-judges tr[data-id="`+j1+`"] button.hide-judge').textContent === 'Unhide'`)
}
