package transport

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Layout of the organiser's screens as a new organiser meets them (docs/behaviour.md#dashboard-and-expo):
// the Results tab, the judges and projects tables and the door screen at a laptop's
// 1,400 × 900, a phone's 390 × 844, a full-HD screen, 1,280 × 800 and 1,024 × 768.
// Measured in the page: no element sticks out of
// its card or makes it scroll sideways, no table header breaks inside a word, and the
// figures that must stay on one line (login codes, "1.52 ± 0.90", "Page 1 of 4") do.

// layoutJS returns the layout problems inside every visible element matching a
// selector: an element outside the container's left/right edges, a container that
// scrolls sideways, a table header word split across lines, and a page that scrolls
// sideways.
const layoutJS = `((sel) => {
  const out = [];
  const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\s+/).join('.') : '') +
    ' "' + (el.textContent || '').trim().slice(0, 30) + '"';
  const boxes = [...document.querySelectorAll(sel)].filter((b) => b.getClientRects().length);
  if (!boxes.length) out.push('nothing visible matches ' + sel);
  for (const box of boxes) {
    const r = box.getBoundingClientRect();
    if (box.scrollWidth > box.clientWidth + 1) out.push(name(box) + ' scrolls sideways (' + box.scrollWidth + ' > ' + box.clientWidth + ')');
    for (const el of box.querySelectorAll('*')) {
      const e = el.getBoundingClientRect();
      if (!e.width && !e.height) continue;
      if (e.right > r.right + 1 || e.left < r.left - 1) {
        out.push(name(el) + ' sticks out of ' + name(box) + ' (' + Math.round(e.left) + '..' + Math.round(e.right) + ' outside ' + Math.round(r.left) + '..' + Math.round(r.right) + ')');
      }
    }
    for (const th of box.querySelectorAll('th')) {
      const w = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
      for (let n = w.nextNode(); n; n = w.nextNode()) {
        for (const m of n.data.matchAll(/\S+/g)) {
          const rg = document.createRange();
          rg.setStart(n, m.index);
          rg.setEnd(n, m.index + m[0].length);
          const tops = new Set([...rg.getClientRects()].map((q) => Math.round(q.top)));
          if (tops.size > 1) out.push('header word "' + m[0] + '" breaks across lines');
        }
      }
    }
  }
  if (document.documentElement.scrollWidth > innerWidth) out.push('page scrolls sideways (' + document.documentElement.scrollWidth + ' > ' + innerWidth + ')');
  return out;
})`

// wrappedJS returns the text of every visible element matching a selector that takes
// more than one line.
const wrappedJS = `((sel) => [...document.querySelectorAll(sel)].filter((e) => e.getClientRects().length).filter((e) => {
  const rg = document.createRange();
  rg.selectNodeContents(e);
  return new Set([...rg.getClientRects()].filter((q) => q.width > 0).map((q) => Math.round(q.top))).size > 1;
}).map((e) => e.textContent))`

func layoutProblems(t *testing.T, ctx context.Context, sel string) []string {
	t.Helper()
	return evalJS[[]string](t, ctx, layoutJS+"("+jsq(sel)+")")
}

func wrapped(t *testing.T, ctx context.Context, sel string) []string {
	t.Helper()
	return evalJS[[]string](t, ctx, wrappedJS+"("+jsq(sel)+")")
}

// screen is a browser window size the organiser's screens are checked at.
type screen struct {
	name   string
	w, h   int64
	mobile bool
}

var layoutScreens = []screen{{"1400", 1400, 900, false}, {"390", 390, 844, true}, {"1920", 1920, 1080, false}, {"1280", 1280, 800, false}, {"1024", 1024, 768, false}}

func (sc screen) apply(t *testing.T, ctx context.Context) {
	t.Helper()
	opts := []chromedp.EmulateViewportOption{}
	if sc.mobile {
		opts = append(opts, chromedp.EmulateMobile)
	}
	run(t, ctx, "resize to "+sc.name, chromedp.EmulateViewport(sc.w, sc.h, opts...))
	waitJS(t, ctx, "layout at "+sc.name, fmt.Sprintf("window.innerWidth === %d", sc.w))
}

// save writes a full-page screenshot named after the screen.
func (b *webBrowser) save(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

var layoutProjectNames = []string{
	"Aurora", "Tide Tables for Small Harbours", "Beacon", "Autonomous defibrillator drones for rural first responders",
	"Comet", "Dune", "Ember: a wildfire smoke forecaster", "Fjord", "Glacier", "Harbourmaster",
	"Iris", "Juniper", "Kelp Farm Monitor", "Lighthouse", "Mooring Line Strain Gauge", "Nautilus",
	"Orca Call Classifier with on-device inference", "Pier", "Quay", "Riptide",
}

// layoutEvent is an event part-way through judging: 20 projects (long names, some in
// the AI track), ten general judges with long addresses who ranked what they saw, one
// of them at random, a track judge who starred, and a judge who has not started.
func layoutEvent(t *testing.T) *testServer {
	ts := startRatedServer(t)
	ts.must(200, "POST", "/api/admin/options", `{"event_name": "Harbour Hack 2026", "tracks": ["AI"], "judge_tracks": true}`, asAdmin, nil)
	for i, n := range layoutProjectNames {
		ch := ""
		if i%3 == 0 {
			ch = "AI"
		}
		ts.addProject(n, ch)
	}
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	var toks []string
	for _, n := range []string{"Alexandra Montgomery-Smith", "Bartholomew Okonkwo", "Chidinma Adeyemi", "Dmitri Vasiliev",
		"Eleanor Fitzgerald-Hughes", "Farouk Haddad", "Guðrún Sigurðardóttir", "Hiroshi Tanaka", "Isabella Rossi", "Random Rick"} {
		email := fmt.Sprintf("%s@university-of-somewhere.example.org", strings.ToLower(strings.ReplaceAll(strings.Fields(n)[0], "ð", "d")))
		_, code := ts.addJudge(n, email, "")
		toks = append(toks, ts.login(code))
	}
	rng := rand.New(rand.NewPCG(7, 32))
	for round := 0; round < 3; round++ {
		for i, tok := range toks {
			if i == len(toks)-1 {
				ts.judgeAtRandom(tok, rng)
				continue
			}
			ts.judgeOnce(tok)
		}
	}
	for _, tok := range toks[:5] { // half the judges are at a table now
		ts.must(200, "POST", "/api/judge/next", nil, asJudge(tok), nil)
	}
	_, tc := ts.addJudge("Track Tess", "tess@example.com", "AI")
	tt := ts.login(tc)
	ts.must(200, "POST", "/api/judge/next", nil, asJudge(tt), nil)
	ts.must(200, "POST", "/api/judge/finish", map[string]any{"starred": true}, asJudge(tt), nil)
	ts.addJudge("Not Started Nora", "nora@example.com", "")
	return ts
}

// judgeAtRandom is judgeOnce for a careless judge: it ranks what it saw in random order.
func (ts *testServer) judgeAtRandom(token string, rng *rand.Rand) {
	ts.t.Helper()
	ts.must(200, "POST", "/api/judge/next", nil, asJudge(token), nil)
	ts.must(200, "POST", "/api/judge/finish", map[string]any{"starred": rng.IntN(2) == 0}, asJudge(token), nil)
	var seen []struct {
		ProjectID string `json:"project_id"`
	}
	ts.must(200, "GET", "/api/judge/projects", nil, asJudge(token), &seen)
	rk := []string{}
	for _, i := range rng.Perm(len(seen)) {
		rk = append(rk, seen[i].ProjectID)
	}
	ts.must(200, "POST", "/api/judge/rank", map[string]any{"ranking": rk}, asJudge(token), nil)
}

// TestWebDashboardLayout walks the Results tab, the judges table and the door screen at
// each screen size and measures them.
func TestWebDashboardLayout(t *testing.T) {
	b := startChromium(t)
	ts := layoutEvent(t)
	ctx := b.tab(t)
	adminLogin(t, ctx, ts)
	waitJS(t, ctx, "event name in the header", `document.querySelector('.topbar h1').textContent.startsWith('Harbour Hack 2026') && document.title === 'Admin · Harbour Hack 2026'`)
	seen := 0
	for _, p := range ts.projectList() {
		seen += p.Seen
	}
	avg := fmt.Sprintf("%.2f", float64(seen)/float64(len(layoutProjectNames)))
	waitJS(t, ctx, "average views to two decimals", `document.querySelector('#stat-avg-project').textContent === `+jsq(avg))
	waitJS(t, ctx, "no pause banner while judging runs", `document.querySelector('#pause-banner').hidden`)

	run(t, ctx, "judges tab", chromedp.Click(chromedp.CSS("#tab-judges")))
	waitJS(t, ctx, "judge rows", `document.querySelectorAll('#judges-table tbody tr').length === 12`)
	if heads := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#judges-table th')].map((th) => th.textContent.trim())`); strings.Contains(strings.Join(heads, "|"), "Group") {
		t.Errorf("judges table has a Group column with groups off: %q", heads)
	}
	groupHead := `[...document.querySelectorAll('#judges-table th')].some((th) => th.textContent.trim().startsWith('Group'))`
	ts.must(200, "POST", "/api/admin/options", `{"multi_group": true}`, asAdmin, nil)
	waitJS(t, ctx, "Group column with groups on", groupHead)
	ts.must(200, "POST", "/api/admin/options", `{"multi_group": false}`, asAdmin, nil)
	waitJS(t, ctx, "no Group column with groups off", "!"+groupHead)
	for _, sc := range layoutScreens {
		sc.apply(t, ctx)
		if p := layoutProblems(t, ctx, "#judges-table .table-wrap"); len(p) > 0 {
			t.Errorf("judges table at %s: %s", sc.name, strings.Join(p, "; "))
		}
		if w := wrapped(t, ctx, "#judges-table .code"); len(w) > 0 {
			t.Errorf("login codes wrap at %s: %q", sc.name, w)
		}
		if !evalJS[bool](t, ctx, `(() => { const b = document.querySelector('#judges-table tbody tr:last-child button.danger'); const r = b.getBoundingClientRect(); const w = document.querySelector('#judges-table .table-wrap').getBoundingClientRect(); return r.width > 0 && r.right <= w.right; })()`) {
			t.Errorf("judges table at %s: the Delete button is not visible inside the card", sc.name)
		}
		b.save(t, ctx, "dash-judges-"+sc.name)
	}
	run(t, ctx, "projects tab", chromedp.Click(chromedp.CSS("#tab-projects")))
	waitJS(t, ctx, "project rows", `document.querySelectorAll('#projects-table tbody tr').length === 20`)
	for _, sc := range layoutScreens {
		sc.apply(t, ctx)
		if p := layoutProblems(t, ctx, "#projects-table .table-wrap"); len(p) > 0 {
			t.Errorf("projects table at %s: %s", sc.name, strings.Join(p, "; "))
		}
		b.save(t, ctx, "dash-projects-"+sc.name)
	}

	ctx = b.tab(t) // a fresh tab: each has its own time budget
	adminLogin(t, ctx, ts)
	run(t, ctx, "results tab", chromedp.Click(chromedp.CSS("#tab-results")))
	waitJS(t, ctx, "ranked rows", `document.querySelectorAll('#results-table tbody tr').length === 20`)
	waitJS(t, ctx, "ratings fitted", `[...document.querySelectorAll('#results-table tbody tr')].some(r => !r.children[3].textContent.includes('0.00 ±'))`)
	waitJS(t, ctx, "judges listed", `document.querySelectorAll('#results-judges tbody tr').length === 12`)
	if h := evalJS[string](t, ctx, `document.querySelector('#results-ptop-h').textContent`); h != "P(top 10)" {
		t.Errorf("P(top) header %q, want it to name N", h)
	}
	// The track lists count the same general stars as the ranking.
	if bad := evalJS[[]string](t, ctx, `(() => {
		const main = new Map([...document.querySelectorAll('#results-table tbody tr')].map((r) => [r.dataset.id, r.querySelector('td[data-label="Stars"]').textContent]));
		return [...document.querySelectorAll('#results-tracks tbody tr')].filter((r) => main.get(r.dataset.id) !== r.children[3].textContent).map((r) => r.textContent);
	})()`); len(bad) > 0 {
		t.Errorf("track lists' stars differ from the ranking's: %q", bad)
	}
	if got := evalJS[string](t, ctx, `document.querySelector('#results-judges tbody tr:last-child').textContent`); !strings.Contains(got, "not rated yet") && !strings.Contains(got, "track judge") {
		t.Errorf("a judge without a fit shows %q, want it said", got)
	}
	for _, sc := range layoutScreens {
		sc.apply(t, ctx)
		if p := layoutProblems(t, ctx, "#panel-results .card"); len(p) > 0 {
			t.Errorf("results tab at %s: %s", sc.name, strings.Join(p, "; "))
		}
		if w := wrapped(t, ctx, "#results-table td.rating .nowrap"); len(w) > 0 {
			t.Errorf("rating ± sd wraps at %s: %q", sc.name, w)
		}
		if sc.w >= 1400 {
			if share := evalJS[float64](t, ctx, `document.querySelector('#results-table th:nth-child(2)').getBoundingClientRect().width / document.querySelector('#results-table').getBoundingClientRect().width`); share > 0.4 {
				t.Errorf("results at %s: the project column takes %.0f%% of the table", sc.name, share*100)
			}
		}
		b.save(t, ctx, "dash-results-"+sc.name)
	}

	// A paused clock: the banner says so on every tab, and fits a phone.
	ts.must(200, "POST", "/api/admin/clock/pause", nil, asAdmin, nil)
	run(t, ctx, "overview", chromedp.Click(chromedp.CSS("#tab-overview")))
	waitJS(t, ctx, "pause banner", `!document.querySelector('#pause-banner').hidden`)
	for _, sc := range layoutScreens[:2] {
		sc.apply(t, ctx)
		if p := layoutProblems(t, ctx, "#pause-banner"); len(p) > 0 {
			t.Errorf("pause banner at %s: %s", sc.name, strings.Join(p, "; "))
		}
		b.save(t, ctx, "dash-paused-"+sc.name)
	}
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)

	k := b.tab(t)
	run(t, k, "open kiosk", chromedp.Navigate(ts.URL+"/expo?kiosk=1&seconds=300"))
	for _, sc := range layoutScreens {
		sc.apply(t, k)
		run(t, k, "reload kiosk", chromedp.Reload())
		waitJS(t, k, "kiosk cards", `document.querySelectorAll('#projects > li').length === 20 && document.querySelector('#projects').dataset.pages !== undefined`)
		if p := layoutProblems(t, k, "#projects > li:not([hidden])"); len(p) > 0 {
			t.Errorf("kiosk at %s: %s", sc.name, strings.Join(p, "; "))
		}
		if clipped := evalJS[[]string](t, k, `[...document.querySelectorAll('#projects > li')].filter((li) => li.getClientRects().length && li.scrollHeight > li.clientHeight + 1).map((li) => li.textContent)`); len(clipped) > 0 {
			t.Errorf("kiosk at %s: clipped cards %q", sc.name, clipped)
		}
		if w := wrapped(t, k, "#kiosk-page, #expo-clock-time, .table-no .num"); len(w) > 0 {
			t.Errorf("kiosk at %s: wrapped %q", sc.name, w)
		}
		waitJS(t, k, "page shown", `document.getAnimations().length === 0`)
		if sc.mobile { // on a phone the kiosk is the list: every project, scrolled by hand
			waitJS(t, k, "phone kiosk lists every project", `[...document.querySelectorAll('#projects > li')].every((li) => !li.hidden) && getComputedStyle(document.querySelector('#kiosk-foot')).display === 'none'`)
		}
		b.save(t, k, "kiosk-"+sc.name)
	}
}
