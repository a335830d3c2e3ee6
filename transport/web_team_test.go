package transport

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The event's ending from the team's side (docs/behaviour.md#after-judging): a judge's
// feedback for the team, written on the floor with or without a network, and the team
// page that shows it once the organisers publish the results, and nothing before.

// tpFeedback is one item of GET /api/admin/feedback.
type tpFeedback struct {
	JudgeID     string `json:"judge_id"`
	ProjectID   string `json:"project_id"`
	ProjectName string `json:"project_name"`
	Feedback    string `json:"feedback"`
}

func tpAdminFeedback(ts *testServer) []tpFeedback {
	ts.t.Helper()
	var out []tpFeedback
	ts.must(200, "GET", "/api/admin/feedback", nil, asAdmin, &out)
	return out
}

// tpIDs maps project names to ids.
func tpIDs(ts *testServer) map[string]string {
	out := map[string]string{}
	for _, p := range ts.projectList() {
		out[p.Name] = p.ID
	}
	return out
}

// tpTokens reads every project's team link and returns its token by project name.
func tpTokens(ts *testServer) map[string]string {
	ts.t.Helper()
	var links []struct {
		Name string `json:"name"`
		Link string `json:"link"`
	}
	ts.must(200, "GET", "/api/admin/team-links", nil, asAdmin, &links)
	out := map[string]string{}
	for _, l := range links {
		i := strings.LastIndex(l.Link, "/team/")
		if i < 0 {
			ts.t.Fatalf("team link %q of %s has no /team/", l.Link, l.Name)
		}
		out[l.Name] = l.Link[i+len("/team/"):]
	}
	return out
}

// tpPublish lists one overall prize and publishes its winners (names, best first).
func tpPublish(ts *testServer, winners []string, feedback bool) {
	ts.t.Helper()
	ts.must(200, "PUT", "/api/admin/prizes", []map[string]any{{"name": "Best in show", "track": "", "places": 2}}, asAdmin, nil)
	var w struct {
		Prizes []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"prizes"`
	}
	ts.must(200, "GET", "/api/admin/winners", nil, asAdmin, &w)
	if len(w.Prizes) != 1 {
		ts.t.Fatalf("winners answer has %d prizes, want 1", len(w.Prizes))
	}
	ids := tpIDs(ts)
	list := []string{}
	for _, n := range winners {
		list = append(list, ids[n])
	}
	ts.must(200, "POST", "/api/admin/winners/publish", map[string]any{
		"prizes": []map[string]any{{"prize": w.Prizes[0].ID, "winners": list}}, "feedback": feedback,
	}, asAdmin, nil)
}

// tpJudgeAll has one judge visit every project through the API, leaving feedback[name]
// for the team (none when missing).
func tpJudgeAll(ts *testServer, token string, n int, feedback map[string]string) {
	ts.t.Helper()
	names := map[string]string{}
	for _, p := range ts.projectList() {
		names[p.ID] = p.Name
	}
	for range n {
		var nx struct {
			ProjectID string `json:"project_id"`
		}
		ts.must(200, "POST", "/api/judge/next", nil, asJudge(token), &nx)
		if nx.ProjectID == "" {
			ts.t.Fatal("no project to judge")
		}
		body := map[string]any{"notes": "private notes on " + names[nx.ProjectID], "starred": false}
		if f, ok := feedback[names[nx.ProjectID]]; ok {
			body["feedback"] = f
		}
		ts.must(200, "POST", "/api/judge/finish", body, asJudge(token), nil)
	}
}

// openTeamPage opens a team page and waits until it shows one of its views.
func openTeamPage(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	run(t, ctx, "open team page", chromedp.Navigate(base+"/team/"+token))
	waitJS(t, ctx, "team page loaded", `document.querySelector('#loading').hidden`)
}

// mainText is what the page shows (innerText: visible text only).
const mainText = `document.querySelector('main').innerText`

// allText is every text in the page, shown or not.
const allText = `document.documentElement.textContent`

func TestWebTeam(t *testing.T) {
	b := startChromium(t)

	t.Run("FeedbackOffline", func(t *testing.T) {
		ts, jid, code := floorServer(t)
		wifi := startNetCut(t, ts)
		ctx := b.tab(t)
		run(t, ctx, "phone size", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		openJudgeApp(t, ctx, wifi.URL, code)

		// The field, at a phone's width, and its counter near the limit.
		first := evalJS[string](t, ctx, `document.querySelector('#project-name').textContent`)
		run(t, ctx, "done", chromedp.Click(chromedp.CSS("#btn-done")), chromedp.WaitVisible(chromedp.CSS("#finish-feedback")))
		if got := evalJS[string](t, ctx, `document.querySelector('label[for=finish-feedback]').textContent + ' | ' + document.querySelector('#finish-feedback-help').textContent`); !strings.Contains(got, "Feedback for the team") || !strings.Contains(got, "Shared with the team after the results") || !strings.Contains(got, "notes above stay private") {
			t.Errorf("feedback field says %q", got)
		}
		if evalJS[bool](t, ctx, `document.querySelector('#finish-feedback').required`) {
			t.Error("the feedback field is required")
		}
		if !evalJS[bool](t, ctx, `document.querySelector('#finish-feedback-count').hidden`) {
			t.Error("the counter shows on an empty field")
		}
		evalJS[any](t, ctx, `(() => { const f = document.querySelector('#finish-feedback'); f.value = 'x'.repeat(1900); f.dispatchEvent(new Event('input')); })()`)
		waitJS(t, ctx, "counter near the limit", `!document.querySelector('#finish-feedback-count').hidden && document.querySelector('#finish-feedback-count').textContent === '100 characters left'`)
		b.shotAt(t, ctx, "judge-feedback-counter", 390, 844)
		evalJS[any](t, ctx, `(() => { const f = document.querySelector('#finish-feedback'); f.value = ''; f.dispatchEvent(new Event('input')); })()`)
		waitJS(t, ctx, "counter gone", `document.querySelector('#finish-feedback-count').hidden`)

		// Written with the network cut, kept through a reload, sent once it returns.
		wifi.set(true)
		waitJS(t, ctx, "connection-lost banner", `!document.querySelector('#notice-offline').hidden`)
		fb1 := "Loved the live demo. Next time, show the map first: it is the best part!"
		run(t, ctx, "write offline", chromedp.SendKeys(chromedp.CSS("#finish-notes"), "private: weak on testing"),
			chromedp.SendKeys(chromedp.CSS("#finish-feedback"), fb1))
		b.shotAt(t, ctx, "judge-feedback-field", 390, 844)
		run(t, ctx, "reload offline", chromedp.Reload())
		waitJS(t, ctx, "feedback draft back after reload", fmt.Sprintf(`!document.querySelector('#finish-form').hidden && document.querySelector('#finish-feedback').value === %s && document.querySelector('#finish-notes').value === 'private: weak on testing' && document.querySelector('#project-name').textContent === %s`, jsq(fb1), jsq(first)))
		run(t, ctx, "submit", chromedp.Click(chromedp.CSS("#finish-submit")))
		waitJS(t, ctx, "next project", fmt.Sprintf(`document.querySelector('#place-form').hidden && (document.querySelector('#view-project').hidden || document.querySelector('#project-name').textContent !== %s)`, jsq(first)))
		// A second visit with no feedback, then feedback added from My projects, offline.
		second := judgeVisit(t, ctx, false)
		waitJS(t, ctx, "queued", `/^[0-9]+ actions? waiting to send$/.test(document.querySelector('#sync').textContent)`)
		ids := tpIDs(ts)
		fb2 := "Clear pitch. A short video would help judges who arrive late."
		run(t, ctx, "my projects", chromedp.Click(chromedp.CSS("#nav-list")))
		sel := fmt.Sprintf(`li[data-id=%q]`, ids[second])
		waitJS(t, ctx, "second project listed", fmt.Sprintf(`!!document.querySelector(%s)`, jsq(sel)))
		if got := evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector(%s).textContent`, jsq(fmt.Sprintf(`li[data-id=%q]`, ids[first])))); !strings.Contains(got, "Feedback for the team") {
			t.Errorf("the first project's list entry does not offer its feedback: %q", got)
		}
		run(t, ctx, "open feedback editor", chromedp.Click(chromedp.CSS(sel+" details:last-of-type summary")),
			chromedp.SendKeys(chromedp.CSS("#feedback-"+ids[second]), fb2),
			chromedp.Click(chromedp.CSS(sel+" details:last-of-type button")))
		b.shotAt(t, ctx, "judge-feedback-list", 390, 844)
		if got := tpAdminFeedback(ts); len(got) != 0 {
			t.Fatalf("the server has feedback while the phone is offline: %+v", got)
		}
		wifi.set(false)
		waitJS(t, ctx, "all saved", `document.querySelector('#sync').textContent === '✓ All saved'`)
		got := tpAdminFeedback(ts)
		slices.SortFunc(got, func(a, b tpFeedback) int { return strings.Compare(a.Feedback, b.Feedback) })
		want := []tpFeedback{{JudgeID: jid, ProjectID: ids[second], ProjectName: second, Feedback: fb2}, {JudgeID: jid, ProjectID: ids[first], ProjectName: first, Feedback: fb1}}
		slices.SortFunc(want, func(a, b tpFeedback) int { return strings.Compare(a.Feedback, b.Feedback) })
		if !slices.Equal(got, want) {
			t.Errorf("feedback on the server after the network returned:\n%+v\nwant\n%+v", got, want)
		}
		st := readAppState(ts, jid)
		if st.JudgeSeen != 2 || st.Views[first] != 1 || st.Views[second] != 1 || st.Notes[first] != "private: weak on testing" {
			t.Errorf("after the network returned: %+v, want two visits, one each", st)
		}
		// The judge's own list has it from the server too.
		waitJS(t, ctx, "feedback in the list from the server", fmt.Sprintf(`document.querySelector('#feedback-%s').value === %s`, ids[first], jsq(fb1)))
	})

	t.Run("Page", func(t *testing.T) {
		ts := startServer(t)
		for _, n := range []string{"Aurora", "Beacon", "Comet"} {
			ts.addProject(n, "")
		}
		ts.must(200, "POST", "/api/admin/options", map[string]any{"event_name": "Hack the Hall"}, asAdmin, nil)
		_, code := ts.addJudge("Jo Judge", "jo@example.com", "")
		jtok := ts.login(code)
		ts.must(200, "PUT", "/api/judge/welcome", nil, asJudge(jtok), nil)
		tok := tpTokens(ts)
		ids := tpIDs(ts)

		// The page is served as the other pages are.
		resp, err := http.Get(ts.URL + "/team/" + tok["Aurora"])
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") || resp.Header.Get("X-Frame-Options") != "DENY" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("GET /team/<token>: %d, headers %v", resp.StatusCode, resp.Header)
		}

		ctx := b.tab(t)
		run(t, ctx, "phone size", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		openTeamPage(t, ctx, ts.URL, tok["Aurora"])
		waitJS(t, ctx, "project shown", `!document.querySelector('#view-team').hidden && document.querySelector('#project-name').textContent === 'Aurora' && document.querySelector('#event-name').textContent === 'Hack the Hall'`)
		waitJS(t, ctx, "not started", `document.querySelector('#judging-text').textContent.startsWith("Judging hasn't started")`)
		b.shotAt(t, ctx, "team-not-started", 390, 844)

		// Judging starts: the page follows the clock by itself.
		ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
		waitJS(t, ctx, "judging on", `document.querySelector('#judging-text').textContent.startsWith('Judges are visiting')`)
		fbA := "Aurora: the demo was clear and the map is lovely. Add an offline mode."
		fbB := "Beacon: strong idea; the battery story needs numbers."
		tpJudgeAll(ts, jtok, 3, map[string]string{"Aurora": fbA, "Beacon": fbB})
		run(t, ctx, "reload", chromedp.Reload())
		waitJS(t, ctx, "one visit", `document.querySelector('#judging-text').textContent === 'Judges are visiting: 1 visit so far.'`)
		waitJS(t, ctx, "results not out", `!document.querySelector('#results-wait').hidden && document.querySelector('#results-wait').textContent === "Results aren't out yet — this page updates when they are."`)
		for _, s := range []string{fbA, fbB, "Congratulations", "Beacon", "Comet", "What the judges wrote"} {
			if strings.Contains(evalJS[string](t, ctx, mainText), s) {
				t.Errorf("before publishing the team page shows %q", s)
			}
		}
		for _, s := range []string{fbA, fbB, "private notes"} {
			if strings.Contains(evalJS[string](t, ctx, allText), s) {
				t.Errorf("before publishing the team page holds %q", s)
			}
		}
		b.shotAt(t, ctx, "team-before-publish", 390, 844)
		b.shot(t, ctx, "team-before-publish")

		// Published with feedback: the open page updates by itself.
		tpPublish(ts, []string{"Aurora", "Comet"}, true)
		waitJS(t, ctx, "results shown", `document.querySelector('#results-wait').hidden && !document.querySelector('#won').hidden`)
		if got := evalJS[string](t, ctx, `document.querySelector('#won').textContent`); !strings.Contains(got, "Your project won 1st place in “Best in show”.") {
			t.Errorf("the prize Aurora won reads %q", got)
		}
		if got := evalJS[[]string](t, ctx, `[...document.querySelectorAll('.prize-winners li')].map(li => li.innerText.replace(/\s+/g, ' ').trim())`); len(got) != 2 || !strings.HasPrefix(got[0], "1st Aurora") || !strings.HasPrefix(got[1], "2nd Comet") {
			t.Errorf("winners listed %q", got)
		}
		// The winners come with the websocket event; the team's own feedback with the
		// page's next read, within a quarter of a minute.
		waitJS(t, ctx, "feedback shown", `!document.querySelector('#feedback').hidden`)
		feedbackShown := `[...document.querySelectorAll('#feedback-list li')].map(li => li.textContent)`
		if got := evalJS[[]string](t, ctx, feedbackShown); !slices.Equal(got, []string{fbA}) {
			t.Errorf("Aurora's page shows feedback %q, want only its own", got)
		}
		for _, s := range []string{fbB, "private notes", "Jo Judge", "jo@example.com"} {
			if strings.Contains(evalJS[string](t, ctx, allText), s) {
				t.Errorf("Aurora's page holds %q", s)
			}
		}
		b.shotAt(t, ctx, "team-after-publish", 390, 844)
		b.shot(t, ctx, "team-after-publish")

		openTeamPage(t, ctx, ts.URL, tok["Beacon"])
		waitJS(t, ctx, "Beacon's results", `document.querySelector('#project-name').textContent === 'Beacon' && document.querySelector('#results-wait').hidden`)
		if got := evalJS[[]string](t, ctx, feedbackShown); !slices.Equal(got, []string{fbB}) {
			t.Errorf("Beacon's page shows feedback %q, want only its own", got)
		}
		if !evalJS[bool](t, ctx, `document.querySelector('#won').hidden`) || strings.Contains(evalJS[string](t, ctx, allText), fbA) {
			t.Error("Beacon's page shows a prize it did not win or Aurora's feedback")
		}
		b.shotAt(t, ctx, "team-after-publish-no-prize", 390, 844)

		openTeamPage(t, ctx, ts.URL, tok["Comet"])
		waitJS(t, ctx, "Comet's results", `document.querySelector('#project-name').textContent === 'Comet' && !document.querySelector('#won').hidden`)
		if got := evalJS[string](t, ctx, `document.querySelector('#won').textContent`); !strings.Contains(got, "2nd place") {
			t.Errorf("Comet's prize reads %q", got)
		}
		waitJS(t, ctx, "no feedback written", `!document.querySelector('#feedback-none').hidden && document.querySelector('#feedback-off').hidden && document.querySelectorAll('#feedback-list li').length === 0`)

		// Published without feedback: no team sees any.
		tpPublish(ts, []string{"Aurora", "Comet"}, false)
		openTeamPage(t, ctx, ts.URL, tok["Aurora"])
		waitJS(t, ctx, "feedback not shared", `document.querySelector('#results-wait').hidden && !document.querySelector('#feedback-off').hidden && document.querySelector('#feedback-none').hidden`)
		if strings.Contains(evalJS[string](t, ctx, allText), fbA) {
			t.Error("feedback shows though the organisers chose not to share it")
		}
		b.shotAt(t, ctx, "team-feedback-not-shared", 390, 844)

		// Taken back: the open page forgets the results.
		ts.must(200, "DELETE", "/api/admin/winners/publish", nil, asAdmin, nil)
		waitJS(t, ctx, "results taken back", `!document.querySelector('#results-wait').hidden && document.querySelector('#won').hidden && document.querySelectorAll('.prize-winners li').length === 0 && document.querySelector('#feedback').hidden`)

		// A hidden project's page says only that it is not judged, even with feedback
		// published.
		tpPublish(ts, []string{"Aurora", "Comet"}, true)
		ts.must(200, "PUT", "/api/project/hide/"+ids["Beacon"], nil, asAdmin, nil)
		openTeamPage(t, ctx, ts.URL, tok["Beacon"])
		waitJS(t, ctx, "hidden project", `!document.querySelector('#view-hidden').hidden && document.querySelector('#view-team').hidden`)
		if got := strings.Join(strings.Fields(evalJS[string](t, ctx, mainText)), " "); got != "Your project Beacon This project is not being judged. If you think that's a mistake, please talk to the organisers." {
			t.Errorf("a hidden project's page shows %q", got)
		}
		for _, s := range []string{fbB, fbA, "Aurora", "Comet", "Best in show"} {
			if strings.Contains(evalJS[string](t, ctx, allText), s) {
				t.Errorf("a hidden project's page holds %q", s)
			}
		}
		b.shotAt(t, ctx, "team-hidden", 390, 844)

		// An unknown link, and one the organisers replaced.
		openTeamPage(t, ctx, ts.URL, "NoSuchTeamToken0000000000000")
		waitJS(t, ctx, "invalid link", `!document.querySelector('#view-invalid').hidden && document.querySelector('main').innerText.includes("This link isn't valid") && document.querySelector('main').innerText.includes('Ask the organisers for a new one.')`)
		b.shotAt(t, ctx, "team-invalid", 390, 844)
		ts.must(200, "POST", "/api/admin/team-links/rotate/"+ids["Aurora"], nil, asAdmin, nil)
		openTeamPage(t, ctx, ts.URL, tok["Aurora"])
		waitJS(t, ctx, "replaced link invalid", `!document.querySelector('#view-invalid').hidden`)
		openTeamPage(t, ctx, ts.URL, tpTokens(ts)["Aurora"])
		waitJS(t, ctx, "new link works", `!document.querySelector('#view-team').hidden && document.querySelector('#project-name').textContent === 'Aurora'`)
	})
}
