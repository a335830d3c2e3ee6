package transport

import (
	"net"
	"strings"
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
	j2, c2 := ts.addJudge("Rushed Rob", "rob@example.com", "")
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
	waitJS(t, ctx, "settledness", `/Top 3 stable: [0-9]+ %/.test(document.querySelector('#results-settled').textContent)`)
	if help := evalJS[string](t, ctx, `document.querySelector('#results-settled-help').textContent`); !strings.Contains(help, "judging can stop") {
		t.Errorf("stable is not explained: %q", help)
	}
	if dd := evalJS[string](t, ctx, `document.querySelector('#results-ptop-dd').textContent`); !strings.Contains(dd, "top 10") || !strings.Contains(dd, "not the chance of winning") {
		t.Errorf("P(top) is not explained: %q", dd)
	}
	// Everyone ranked what they saw: no warning.
	waitJS(t, ctx, "no warning", `document.querySelector('#results-warning').hidden`)
	views := `[...document.querySelectorAll('#results-table tbody tr')].reduce((s, r) => s + Number(r.querySelector('td[data-label="Views"]').textContent), 0)`
	waitJS(t, ctx, "views so far", views+` === 4`)

	// Live: a judge finishes one more; the tab follows without a reload.
	ts.judgeOnce(t1)
	waitJS(t, ctx, "live update", views+` === 5`)
	waitJS(t, ctx, "ratings fitted", `[...document.querySelectorAll('#results-table tbody tr')].some(r => !r.children[3].textContent.includes('0.00 ±'))`)

	// Each judge's disagreement says what it counts (docs/behaviour.md#judges-against-the-consensus).
	waitJS(t, ctx, "disagreement column", `!document.querySelector('#results-disagree-h').hidden && document.querySelectorAll('#results-judges td[data-label="Disagreed"]').length === 2`)
	if bad := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#results-judges td[data-label="Disagreed"]')]
		.filter((c) => !/^(–|\d+ of \d+ \(\d+ %\))$/.test(c.textContent) || !c.firstElementChild || !c.firstElementChild.title).map((c) => c.textContent)`); len(bad) > 0 {
		t.Errorf("disagreement cells without their meaning: %q", bad)
	}

	// The export button downloads the same ranking as CSV.
	csv, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => { const a = document.querySelector('#results-export'); const r = await fetch(a.href); return r.headers.get('Content-Disposition') + '\n' + await r.text(); })()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != 6 || !strings.Contains(lines[0], "results.csv") || strings.TrimSpace(lines[1]) != "Rank,Name,Table,Rating,RatingSD,PTop,Score,Stars,Views" {
		t.Errorf("export: %q", lines)
	}

	// The deciding column (docs/behaviour.md#results-the-deciding-column): no Copeland
	// column beside Rank; it is in each project's details, said not to decide.
	heads := evalJS[string](t, ctx, `[...document.querySelectorAll('#results-table th')].map((th) => th.textContent).join('|')`)
	if strings.Contains(heads, "Score") || !strings.Contains(evalJS[string](t, ctx, `document.querySelector('#results-table th.decides').textContent`), "Rating") {
		t.Errorf("results headers %q: want no Score and Rating marked as deciding", heads)
	}
	if note := evalJS[string](t, ctx, `document.querySelector('#results-decides').textContent`); !strings.Contains(note, "Ranked by rating") {
		t.Errorf("deciding note %q", note)
	}
	if !evalJS[bool](t, ctx, `[...document.querySelectorAll('#results-table tbody tr')].every((r, i, all) => i === 0 || Number(r.querySelector('td.rank').textContent) > Number(all[i-1].querySelector('td.rank').textContent))`) {
		t.Error("rows are not in rank order")
	}
	run(t, ctx, "details", chromedp.Click(chromedp.CSS(`#results-table tbody tr:first-child button.details`)))
	waitJS(t, ctx, "details dialog", `document.querySelector('#dialog').open && document.querySelector('#dialog-body').textContent.includes("Jury's Copeland score") && document.querySelector('#dialog-body').textContent.includes('does not decide the rank')`)
	b.shot(t, ctx, "admin-results-details")
	run(t, ctx, "close details", chromedp.Click(chromedp.CSS("#dialog-ok")))
	waitJS(t, ctx, "details closed", `!document.querySelector('#dialog').open`)

	// Hide a judge from its row: asked first, saying the judge stops getting projects.
	hideBtn := `#results-judges tr[data-id="` + j1 + `"] button.hide-judge`
	if hint := evalJS[string](t, ctx, `document.querySelector('#results-judges').closest('.card').querySelector('.hint').textContent`); !strings.Contains(hint, "stops getting projects") {
		t.Errorf("reliability hint %q does not say a hidden judge stops getting projects", hint)
	}
	run(t, ctx, "hide judge", chromedp.Click(chromedp.CSS(hideBtn)))
	waitJS(t, ctx, "asked", `document.querySelector('#dialog').open && document.querySelector('#dialog-body').textContent.includes('stops getting projects')`)
	run(t, ctx, "cancel", chromedp.Click(chromedp.CSS("#dialog-cancel")))
	waitJS(t, ctx, "dialog closed", `!document.querySelector('#dialog').open`)
	if judgeState(ts, j1)["active"] != true {
		t.Fatal("cancelling hid the judge")
	}
	// Asked about the other judge, Cancel, and this one at once (in one task, before the
	// first question's close event arrives): the answer to the second question is not
	// taken for the first's, nor the other way round.
	evalJS[bool](t, ctx, `(() => {
		document.querySelector('#results-judges tr[data-id="`+j2+`"] button.hide-judge').click();
		document.querySelector('#dialog-cancel').click();
		document.querySelector('`+hideBtn+`').click();
		return true; })()`)
	waitJS(t, ctx, "asked again", `document.querySelector('#dialog').open && document.querySelector('#dialog-title').textContent === 'Hide Careful Cat?'`)
	run(t, ctx, "confirm hide", chromedp.Click(chromedp.CSS("#dialog-ok")))
	eventually(t, "judge hidden", func() bool { return judgeState(ts, j1)["active"] == false })
	waitJS(t, ctx, "row says unhide", `document.querySelector('#results-judges tr[data-id="`+j1+`"] button.hide-judge').textContent === 'Unhide'`)
	if judgeState(ts, j2)["active"] != true {
		t.Fatal("the cancelled question about Rushed Rob hid Rushed Rob")
	}

	// After a rankings reset the order rests on stars alone, and the tab says so.
	ts.must(200, "POST", "/api/admin/reset", map[string]string{"type": "rankings"}, asAdmin, nil)
	waitJS(t, ctx, "stars-alone warning", `(() => { const w = document.querySelector('#results-warning'); return !w.hidden && w.textContent.includes('stars alone'); })()`)

	// A paused clock shows loudly on every tab, with a button to resume.
	ts.must(200, "POST", "/api/admin/clock/pause", nil, asAdmin, nil)
	waitJS(t, ctx, "pause banner", `(() => { const b = document.querySelector('#pause-banner'); return !b.hidden && b.textContent.includes('Judging is paused'); })()`)
	run(t, ctx, "resume from the banner", chromedp.Click(chromedp.CSS("#pause-resume")))
	eventually(t, "clock running", func() bool {
		var c struct{ Running bool }
		ts.must(200, "GET", "/api/admin/clock", nil, asAdmin, &c)
		return c.Running
	})
	waitJS(t, ctx, "banner gone", `document.querySelector('#pause-banner').hidden`)
}
