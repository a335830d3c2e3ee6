package transport

import (
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
