package transport

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestWebOrganisersDesk walks the screens of docs/behaviour.md#the-organisers-desk-at-a-glance
// at 390, 1,400 and 1,920 px: the Overview says whom "Active general judges" leaves out,
// a running clock offers Pause only, the header lines up with the content, the judges
// table keeps names and email words whole, a judge's details open at the top and count
// the same skips as the Flags tab, the planner's figures sit under their headers and
// the settings revision is explained, the audit log fills the screen, and the expo's
// names are larger than their descriptions with a readable count.
func TestWebOrganisersDesk(t *testing.T) {
	b := startChromium(t)
	ts := layoutEvent(t)
	// A judge who found tables empty twice and one project that could not demo, then
	// judged six.
	sam, samCode := ts.addJudge("Skipping Sam", "sam@example.com", "")
	tok := ts.login(samCode)
	for _, reason := range []string{"absent", "absent", "cannot-demo"} {
		ts.must(200, "POST", "/api/judge/next", nil, asJudge(tok), nil)
		ts.must(200, "POST", "/api/judge/skip", map[string]string{"reason": reason}, asJudge(tok), nil)
	}
	for range 6 { // and judged six: its details are longer than a screen
		ts.judgeOnce(tok)
	}
	var flags []map[string]any
	ts.must(200, "GET", "/api/admin/flags", nil, asAdmin, &flags)
	samFlags := 0
	for _, f := range flags {
		if f["judge_id"] == sam {
			samFlags++
		}
	}
	if samFlags != 3 {
		t.Fatalf("Sam has %d open flags, want 3", samFlags)
	}
	screens := layoutScreens[:3] // 1400, 390, 1920

	ctx := b.tab(t)
	adminLogin(t, ctx, ts)
	// Overview: 13 judges, one a track judge: 12 active general judges, and it says so.
	waitJS(t, ctx, "judge count said", `document.querySelector('#stat-judges').textContent === '12' && document.querySelector('#stat-judges-note').textContent === 'of 13 judges (not counted: 1 track judge)'`)
	if l := evalJS[string](t, ctx, `document.querySelector('#stat-judges').nextElementSibling.textContent`); l != "Active general judges" {
		t.Errorf("stat label %q", l)
	}
	// A running clock shows Pause, not a disabled Resume.
	waitJS(t, ctx, "running clock buttons", `document.querySelector('#clock-start').hidden && !document.querySelector('#clock-pause').hidden && document.querySelector('#clock-pause').getClientRects().length > 0`)
	for _, sc := range screens {
		sc.apply(t, ctx)
		if sc.w >= 1400 {
			if d := evalJS[float64](t, ctx, `document.querySelector('.topbar h1').getBoundingClientRect().left - document.querySelector('#panel-overview .stats').getBoundingClientRect().left`); d < -2 || d > 2 {
				t.Errorf("at %s the title is %.0f px off the content's left edge", sc.name, d)
			}
		}
		b.save(t, ctx, "desk-overview-"+sc.name)
	}
	ts.must(200, "POST", "/api/admin/clock/pause", nil, asAdmin, nil)
	waitJS(t, ctx, "paused clock buttons", `!document.querySelector('#clock-start').hidden && document.querySelector('#clock-start').textContent === 'Resume' && document.querySelector('#clock-pause').hidden`)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)

	// Judges: names and the words of an email never break at 1,400 and 1,920.
	run(t, ctx, "judges tab", chromedp.Click(chromedp.CSS("#tab-judges")))
	waitJS(t, ctx, "judge rows", `document.querySelectorAll('#judges-table tbody tr').length === 13`)
	for _, sc := range screens {
		sc.apply(t, ctx)
		if sc.w >= 1400 {
			if w := wrapped(t, ctx, "#judges-table td.name-cell"); len(w) > 0 {
				t.Errorf("names wrap at %s: %q", sc.name, w)
			}
			if w := wrapped(t, ctx, "#judges-table td.email .nw"); len(w) > 0 {
				t.Errorf("emails break inside a word at %s: %q", sc.name, w)
			}
			if p := layoutProblems(t, ctx, "#judges-table .table-wrap"); len(p) > 0 {
				t.Errorf("judges table at %s: %s", sc.name, strings.Join(p, "; "))
			}
		}
		b.save(t, ctx, "desk-judges-"+sc.name)
	}
	// Judge details: open at the top; the skips agree with the Flags tab.
	for _, sc := range screens {
		sc.apply(t, ctx)
		run(t, ctx, "details of Sam", chromedp.Click(chromedp.CSS(`#judges-table button[aria-label="Details of Skipping Sam"]`)))
		waitJS(t, ctx, "details", `document.querySelector('#dialog').open && document.querySelector('#dialog-body').textContent.includes('Skips and flags')`)
		body := evalJS[string](t, ctx, `document.querySelector('#dialog-body').textContent`)
		if !strings.Contains(body, fmt.Sprintf("Skips and flags (%d)", samFlags)) || !strings.Contains(body, "2 absent, 1 cannot-demo") || !strings.Contains(body, "Reported as a problem (1)") {
			t.Errorf("details at %s: %q", sc.name, body)
		}
		if top := evalJS[float64](t, ctx, `document.querySelector('#dialog').scrollTop`); top != 0 {
			t.Errorf("details at %s open scrolled by %.0f px", sc.name, top)
		}
		b.saveViewport(t, ctx, "desk-judge-details-"+sc.name)
		run(t, ctx, "close", chromedp.Click(chromedp.CSS("#dialog-ok")))
		waitJS(t, ctx, "closed", `!document.querySelector('#dialog').open`)
	}

	// Settings: the planner's headers right-aligned over their numbers, the revision said.
	run(t, ctx, "settings tab", chromedp.Click(chromedp.CSS("#tab-settings")))
	waitJS(t, ctx, "revision explained", `document.querySelector('#options-ref').textContent.includes('goes up by one each time anyone saves')`)
	run(t, ctx, "estimate", chromedp.Click(chromedp.CSS("#planner-run")))
	waitJS(t, ctx, "planner figures", `document.querySelectorAll('#planner-table tbody tr').length === 2`)
	for _, sc := range screens {
		sc.apply(t, ctx)
		if !sc.mobile {
			// Each header's right edge is within a few pixels of its column's numbers.
			if gap := evalJS[float64](t, ctx, `Math.max(...[2, 3, 4].map((i) => Math.abs(document.querySelector('#planner-table thead th:nth-child(' + i + ')').getBoundingClientRect().right - document.querySelector('#planner-table tbody tr td:nth-child(' + i + ')').getBoundingClientRect().right)))`); gap > 2 {
				t.Errorf("planner at %s: headers %.0f px from their numbers' edge", sc.name, gap)
			}
			if share := evalJS[float64](t, ctx, `document.querySelector('#planner-table').getBoundingClientRect().width / document.querySelector('#planner').getBoundingClientRect().width`); share > 0.8 {
				t.Errorf("planner at %s: the table spreads over %.0f%% of the card", sc.name, share*100)
			}
		}
		b.save(t, ctx, "desk-settings-"+sc.name)
	}

	// The audit log fills the screen below the tabs.
	run(t, ctx, "log tab", chromedp.Click(chromedp.CSS("#tab-log")))
	waitJS(t, ctx, "log lines", `document.querySelector('#log').textContent.includes('ADMIN')`)
	for _, sc := range screens {
		sc.apply(t, ctx)
		if bottom := evalJS[float64](t, ctx, `(innerHeight - document.querySelector('#panel-log .card').getBoundingClientRect().bottom) / innerHeight`); bottom > 0.15 {
			t.Errorf("audit log at %s leaves %.0f%% of the screen empty below it", sc.name, bottom*100)
		}
		b.save(t, ctx, "desk-log-"+sc.name)
	}

	// The expo: names larger than descriptions, a count one can read.
	x := b.tab(t)
	run(t, x, "expo", chromedp.Navigate(ts.URL+"/expo"))
	waitJS(t, x, "expo cards", `document.querySelectorAll('#projects > li').length === 20`)
	for _, sc := range screens {
		sc.apply(t, x)
		size := func(sel string) float64 {
			return evalJS[float64](t, x, `parseFloat(getComputedStyle(document.querySelector(`+jsq(sel)+`)).fontSize)`)
		}
		name, desc, count := size(".expo-card h2"), size(".expo-card .desc"), size("#count")
		if name <= desc*1.1 || count < 16 {
			t.Errorf("expo at %s: names %.0f px, descriptions %.0f px, count %.0f px", sc.name, name, desc, count)
		}
		b.save(t, x, "desk-expo-"+sc.name)
	}
}

// saveViewport saves what the window shows (a modal dialog stays where it is, unlike
// in a full-page screenshot).
func (b *webBrowser) saveViewport(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
