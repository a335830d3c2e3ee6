package transport

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestWebConflicts: the dashboard's conflicts of interest (docs/behaviour.md#on-the-floor):
// a CSV naming an unknown judge is refused with its row and imports nothing; a good
// one lists the conflicts per judge; Remove takes one away on the server.
func TestWebConflicts(t *testing.T) {
	b := startChromium(t)
	ts := startServer(t)
	ts.addProject("Alpha", "")
	ts.addProject("Beta", "")
	ada, _ := ts.addJudge("Ada Lovelace", "ada@example.com", "")
	ts.addJudge("Bob", "bob@example.com", "")
	dir := t.TempDir()
	ctx := b.tab(t)
	adminLogin(t, ctx, ts)
	run(t, ctx, "judges tab", chromedp.Click(chromedp.CSS("#tab-judges")), chromedp.WaitVisible(chromedp.CSS("#cf-upload")))
	waitJS(t, ctx, "empty list", `document.querySelector('#cf-list').textContent.includes('No conflicts of interest')`)

	run(t, ctx, "bad import",
		chromedp.SetUploadFiles(chromedp.CSS("#cf-file"), []string{writeFile(t, dir, "bad.csv", []byte("judge,project\nada@example.com,Alpha\nnobody@example.com,Beta\n"))}),
		chromedp.Click(chromedp.CSS("#cf-upload button[type=submit]")))
	waitJS(t, ctx, "row named", `(() => { const e = document.querySelector('#cf-error'); return !e.hidden && e.textContent.includes('row 3'); })()`)
	if n := len(conflictsOf(ts)); n != 0 {
		t.Fatalf("a refused import left %d conflicts", n)
	}

	run(t, ctx, "good import",
		chromedp.SetUploadFiles(chromedp.CSS("#cf-file"), []string{writeFile(t, dir, "good.csv", []byte("judge,project\nada@example.com,Alpha\nADA@example.com,Beta\nbob@example.com,Alpha\n"))}),
		chromedp.Click(chromedp.CSS("#cf-upload button[type=submit]")))
	waitJS(t, ctx, "listed per judge", `document.querySelectorAll('#cf-list .cf-judge').length === 2 && document.querySelector('#cf-list').textContent.includes('Ada Lovelace (2)')`)
	b.shot(t, ctx, "admin-conflicts")
	run(t, ctx, "remove", chromedp.Click(chromedp.CSS(`#cf-list button[aria-label="Remove the conflict of Ada Lovelace with Beta"]`)))
	waitJS(t, ctx, "removed", `document.querySelector('#cf-list').textContent.includes('Ada Lovelace (1)')`)
	for _, c := range conflictsOf(ts) {
		if c["judge_id"] == ada && c["project_name"] == "Beta" {
			t.Fatal("the removed conflict is still on the server")
		}
	}
}

func conflictsOf(ts *testServer) []map[string]any {
	var out []map[string]any
	ts.must(200, "GET", "/api/admin/conflicts", nil, asAdmin, &out)
	return out
}

// TestWebConflictAfterJudgement (docs/behaviour.md#a-conflict-found-after-the-judgement):
// an import naming two judges who already judged the project lists both cases; Keep
// leaves that judgement counting (and the list still offers to remove it), Remove asks
// and then takes the other out on the server.
func TestWebConflictAfterJudgement(t *testing.T) {
	b := startChromium(t)
	ts := startServer(t)
	for _, n := range []string{"Alpha", "Beta", "Gamma"} {
		ts.addProject(n, "")
	}
	ada, adaCode := ts.addJudge("Ada Lovelace", "ada@example.com", "")
	bob, bobCode := ts.addJudge("Bob", "bob@example.com", "")
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	firstOf := func(code string) string {
		tok := ts.login(code)
		p := nextOf(t, ts, tok)["project_id"].(string)
		ts.must(200, "POST", "/api/judge/finish", map[string]any{"starred": true}, asJudge(tok), nil)
		return p
	}
	adaP, bobP := firstOf(adaCode), firstOf(bobCode)
	adaName, bobName := projectField(t, ts, adaP, "name").(string), projectField(t, ts, bobP, "name").(string)
	judged := func(judge string) bool {
		for _, c := range conflictsOf(ts) {
			if c["judge_id"] == judge {
				return c["judged"] == true
			}
		}
		t.Fatalf("no conflict of %s", judge)
		return false
	}

	ctx := b.tab(t)
	adminLogin(t, ctx, ts)
	run(t, ctx, "judges tab", chromedp.Click(chromedp.CSS("#tab-judges")), chromedp.WaitVisible(chromedp.CSS("#cf-upload")))
	file := writeFile(t, t.TempDir(), "late.csv", []byte("judge,project\nada@example.com,"+adaName+"\nbob@example.com,"+bobName+"\n"))
	run(t, ctx, "import", chromedp.SetUploadFiles(chromedp.CSS("#cf-file"), []string{file}), chromedp.Click(chromedp.CSS("#cf-upload button[type=submit]")))
	waitJS(t, ctx, "both cases listed", `(() => { const b = document.querySelector('#cf-judged'); return !b.hidden && b.querySelectorAll('li').length === 2 && b.textContent.includes('2 conflicts to decide'); })()`)
	waitJS(t, ctx, "the list marks them", `document.querySelectorAll('#cf-list .pill').length === 2`)
	for _, sc := range layoutScreens[:3] {
		sc.apply(t, ctx)
		if p := layoutProblems(t, ctx, "#conflicts-root"); len(p) > 0 {
			t.Errorf("conflicts at %s: %s", sc.name, strings.Join(p, "; "))
		}
		b.save(t, ctx, "conflicts-judged-"+sc.name)
	}
	layoutScreens[0].apply(t, ctx)

	keepBob := `#cf-judged button[aria-label="Keep Bob's judgement of ` + bobName + `"]`
	waitUncovered(t, ctx, keepBob)
	run(t, ctx, "keep Bob's", chromedp.Click(chromedp.CSS(keepBob)))
	waitJS(t, ctx, "one case left", `document.querySelectorAll('#cf-judged li').length === 1`)
	if !judged(bob) || projectField(t, ts, bobP, "seen") != 1.0 {
		t.Fatal("keeping changed Bob's judgement on the server")
	}
	// Remove asks first; Cancel changes nothing.
	removeAda := `#cf-judged button[aria-label="Remove Ada Lovelace's judgement of ` + adaName + `"]`
	waitUncovered(t, ctx, removeAda)
	run(t, ctx, "remove Ada's", chromedp.Click(chromedp.CSS(removeAda)))
	waitJS(t, ctx, "asked", `document.querySelector('#dialog').open && document.querySelector('#dialog-title').textContent.includes('Remove Ada Lovelace')`)
	b.save(t, ctx, "conflicts-judged-confirm-1400")
	run(t, ctx, "cancel", chromedp.Click(chromedp.CSS("#dialog-cancel")))
	waitJS(t, ctx, "closed", `!document.querySelector('#dialog').open`)
	if !judged(ada) {
		t.Fatal("cancel removed the judgement")
	}
	waitUncovered(t, ctx, removeAda)
	run(t, ctx, "remove Ada's again", chromedp.Click(chromedp.CSS(removeAda)))
	waitJS(t, ctx, "asked again", `document.querySelector('#dialog').open`)
	run(t, ctx, "confirm", chromedp.Click(chromedp.CSS("#dialog-ok")))
	waitJS(t, ctx, "no case left", `document.querySelector('#cf-judged').hidden`)
	eventually(t, "Ada's judgement removed", func() bool { return !judged(ada) })
	if projectField(t, ts, adaP, "seen") != 0.0 || projectField(t, ts, adaP, "stars") != 0.0 {
		t.Fatal("Ada's view and star still count")
	}
	waitJS(t, ctx, "only Bob's marked", `document.querySelectorAll('#cf-list .pill').length === 1 && document.querySelector('#cf-list .pill').closest('.cf-judge').textContent.startsWith('Bob')`)
	b.save(t, ctx, "conflicts-judged-after-1400")
}

// waitUncovered scrolls the element into view and waits until nothing (a toast) lies
// over its centre, so that a click lands on it.
func waitUncovered(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	waitJS(t, ctx, "nothing over "+sel, `(() => { const el = document.querySelector(`+jsq(sel)+`); if (!el) return false; el.scrollIntoView({ block: 'center' });
		const r = el.getBoundingClientRect(); const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); return at === el || el.contains(at); })()`)
}
