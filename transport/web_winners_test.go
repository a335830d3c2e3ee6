package transport

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The event's ending through the browser (docs/behaviour.md#after-judging, issue 40): the
// organiser lists the prizes in Settings → Prizes, confirms and reorders Podium's
// proposal in the Winners tab and publishes; an expo display and a door screen already
// open show the same winners over the websocket without a reload, and taking them back
// returns them to the project list. Feedback review and the printable QR sheet too.

// winnersProjects are the event's projects; every third is in the Hardware track.
var winnersProjects = []string{
	"Aurora", "Tide Tables for Small Harbours", "Beacon", "Autonomous defibrillator drones for rural first responders",
	"Comet", "Dune", "Ember: a wildfire smoke forecaster", "Fjord", "Glacier", "Harbourmaster", "Iris", "Juniper",
}

// winnersEvent is an event at its end: twelve projects, four general judges and a
// Hardware judge who judged and ranked, and two feedback items for the teams.
func winnersEvent(t *testing.T) *testServer {
	ts := startRatedServer(t)
	ts.must(200, "POST", "/api/admin/options", `{"event_name": "Harbour Hack 2026", "tracks": ["Hardware"], "judge_tracks": true}`, asAdmin, nil)
	for i, n := range winnersProjects {
		ch := ""
		if i%3 == 1 {
			ch = "Hardware"
		}
		body := map[string]any{"name": n, "description": "d", "challenge_list": ch}
		if i == 0 {
			body["contact_emails"] = "aurora-team@example.com" // the only team with an address
		}
		ts.must(200, "POST", "/api/project/new", body, asAdmin, nil)
	}
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	var toks []string
	for i := 0; i < 4; i++ {
		_, code := ts.addJudge(fmt.Sprintf("Judge %d", i+1), fmt.Sprintf("j%d@example.com", i+1), "")
		toks = append(toks, ts.login(code))
	}
	_, hw := ts.addJudge("Hardware Hana", "hana@example.com", "Hardware")
	toks = append(toks, ts.login(hw))
	for round := 0; round < 4; round++ {
		for _, tok := range toks {
			ts.judgeOnce(tok)
		}
	}
	// Feedback for two teams, from the first judge's seen projects.
	var seen []struct {
		ProjectID string `json:"project_id"`
	}
	ts.must(200, "GET", "/api/judge/projects", nil, asJudge(toks[0]), &seen)
	for i, s := range seen[:2] {
		ts.must(200, "PUT", "/api/judge/feedback/"+s.ProjectID, map[string]string{"feedback": fmt.Sprintf("Feedback %d: a clear demo; the setup took long.", i+1)}, asJudge(toks[0]), nil)
	}
	ts.must(200, "POST", "/api/admin/clock/pause", nil, asAdmin, nil)
	// The ratings fit runs in the background: wait until the proposal stops moving.
	prev := ""
	eventually(t, "ratings settled", func() bool {
		time.Sleep(400 * time.Millisecond)
		var r struct {
			Ratings any `json:"projects"`
		}
		ts.must(200, "GET", "/api/admin/results", nil, asAdmin, &r)
		cur := fmt.Sprint(r.Ratings)
		same := cur == prev
		prev = cur
		return same
	})
	return ts
}

type webWinnersBody struct {
	Published bool `json:"published"`
	Prizes    []struct {
		Name    string `json:"name"`
		Track   string `json:"track"`
		Winners []struct {
			Place    int    `json:"place"`
			Name     string `json:"name"`
			Location int    `json:"location"`
		} `json:"winners"`
	} `json:"prizes"`
}

// winnerNames is "prize: name, name | prize: …" from GET /api/winners.
func (w webWinnersBody) names() string {
	var out []string
	for _, p := range w.Prizes {
		var ns []string
		for _, x := range p.Winners {
			ns = append(ns, x.Name)
		}
		out = append(out, p.Name+": "+strings.Join(ns, ", "))
	}
	return strings.Join(out, " | ")
}

// expoWinnersJS reads the expo's winners screen in the same form.
const expoWinnersJS = `[...document.querySelectorAll('#wn-grid > .wn-prize')].map((p) => p.querySelector('.wn-prize-name').textContent + ': ' + [...p.querySelectorAll('.wn-name')].map((n) => n.textContent).join(', ')).join(' | ')`

// tableWrapJS lists the winners' "Table n" that do not keep label and number on one line.
const tableWrapJS = `[...document.querySelectorAll('.wn-table')].filter((e) => e.getClientRects().length).filter((e) => {
  const l = e.querySelector('.wn-table-label').getBoundingClientRect();
  const n = e.querySelector('.wn-table-no').getBoundingClientRect();
  return n.left < l.right - 1 || n.top > l.bottom || l.top > n.bottom;
}).map((e) => e.textContent)`

func TestWebWinners(t *testing.T) {
	b := startChromium(t)
	start := time.Now()
	ts := winnersEvent(t)
	t.Logf("event ready in %v", time.Since(start))
	ctx := b.tab(t)
	adminLogin(t, ctx, ts)

	// Settings → Prizes: an overall prize, one per track, two more; a bad one is refused in words.
	run(t, ctx, "settings", chromedp.Click(chromedp.CSS("#tab-settings")))
	waitJS(t, ctx, "prizes card", `!!document.querySelector('#pz-add') && document.querySelector('#pz-empty') && !document.querySelector('#pz-empty').hidden`)
	run(t, ctx, "add overall", chromedp.Click(chromedp.CSS("#pz-add")))
	if v := evalJS[string](t, ctx, `document.querySelector('#pz-list > li:nth-child(1) input[type=text]').value`); v != "Best overall" {
		t.Errorf("first prize is named %q, want Best overall", v)
	}
	run(t, ctx, "one per track", chromedp.Click(chromedp.CSS("#pz-per-track")))
	run(t, ctx, "hardware places", setInput("#pz-list > li:nth-child(2) input[type=number]", "3"))
	for i, name := range []string{"Best design", "Best pitch"} {
		run(t, ctx, "add "+name, chromedp.Click(chromedp.CSS("#pz-add")))
		run(t, ctx, "name "+name, setInput(fmt.Sprintf("#pz-list > li:nth-child(%d) input[type=text]", i+3), name))
	}
	run(t, ctx, "too many places", setInput("#pz-list > li:nth-child(4) input[type=number]", "11"))
	run(t, ctx, "save bad", chromedp.Click(chromedp.CSS("#pz-save")))
	waitJS(t, ctx, "refused in words", `(() => { const e = document.querySelector('#pz-error'); return !e.hidden && e.textContent.includes('Best pitch') && e.textContent.includes('1 to 10'); })()`)
	run(t, ctx, "fix places", setInput("#pz-list > li:nth-child(4) input[type=number]", "3"))
	run(t, ctx, "save", chromedp.Click(chromedp.CSS("#pz-save")))
	waitJS(t, ctx, "saved", `document.querySelector('#pz-save').disabled && document.querySelector('#pz-error').hidden`)
	for _, sc := range []screen{{"1400", 1400, 900, false}, {"390", 390, 844, true}} {
		sc.apply(t, ctx)
		if p := layoutProblems(t, ctx, "#prizes-root"); len(p) > 0 {
			t.Errorf("prizes at %s: %s", sc.name, strings.Join(p, "; "))
		}
		b.save(t, ctx, "prizes-"+sc.name)
	}
	(screen{"1400", 1400, 900, false}).apply(t, ctx)
	var prizes []struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Track  string `json:"track"`
		Places int    `json:"places"`
	}
	ts.must(200, "GET", "/api/admin/prizes", nil, asAdmin, &prizes)
	got := []string{}
	for _, p := range prizes {
		got = append(got, fmt.Sprintf("%s/%s/%d", p.Name, p.Track, p.Places))
	}
	if want := []string{"Best overall//3", "Best Hardware/Hardware/3", "Best design//3", "Best pitch//3"}; !slices.Equal(got, want) {
		t.Fatalf("prizes saved = %v, want %v", got, want)
	}

	// Winners tab: Podium's proposal with how sure it is, in words.
	run(t, ctx, "winners tab", chromedp.Click(chromedp.CSS("#tab-winners")))
	waitJS(t, ctx, "prize cards", `document.querySelectorAll('#wn-prizes .prize-card').length === 4 && document.querySelectorAll('#wn-prizes .prize-card .place[data-id]').length === 12`)
	// The Hardware prize says what it stands on: one judge, 1.0 views per project (four
	// visits over the track's four projects), so its order is a shortlist; the overall
	// prize says neither.
	hints := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#wn-prizes .prize-card')].map((c) => [...c.querySelectorAll('.hint')].map((e) => e.textContent).join(' / '))`)
	if len(hints) != 4 || !strings.Contains(hints[1], "1 judge, 1.0 views per project") || !strings.Contains(hints[1], "shortlist") ||
		strings.Contains(hints[0], "views per project") || strings.Contains(hints[0], "shortlist") {
		t.Errorf("prize card hints = %q", hints)
	}
	words := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#wn-prizes .sure strong')].map((s) => s.textContent)`)
	for _, w := range words {
		if !(w == "Very likely" || w == "Likely" || w == "Uncertain" || strings.HasPrefix(w, "A coin toss")) {
			t.Errorf("certainty %q is not in words", w)
		}
	}
	if !evalJS[bool](t, ctx, `document.querySelector('#winners-state').dataset.state === 'draft'`) {
		t.Error("overview does not say the winners are not published")
	}
	// The organiser replaces the overall prize's third place, then swaps the first two.
	// The first change is made in one step with reading the list: until the organiser
	// changes a prize, its list follows the proposal, which moves as the fit refines.
	overall := `#wn-prizes .prize-card:nth-child(1)`
	listJS := `[...document.querySelectorAll('` + overall + ` .place[data-id]')].map((li) => li.dataset.id)`
	first := evalJS[[]string](t, ctx, `(() => {
	  const list = `+listJS+`;
	  const s = document.querySelector('`+overall+` .place:nth-child(3) select.replace');
	  const v = [...s.options].map((o) => o.value).find((x) => x) || '';
	  if (v) { s.value = v; s.dispatchEvent(new Event('change', {bubbles: true})); }
	  return [...list, v];
	})()`)
	if len(first) != 4 || first[3] == "" {
		t.Fatalf("overall list and a replacement: %v", first)
	}
	before, repl := first[:3], first[3]
	if got, want := evalJS[[]string](t, ctx, listJS), []string{before[0], before[1], repl}; !slices.Equal(got, want) {
		t.Fatalf("overall after replacing the third = %v, want %v", got, want)
	}
	run(t, ctx, "move first down", chromedp.Click(chromedp.CSS(overall+` .place:nth-child(1) button[aria-label$=" down"]`)))
	after := evalJS[[]string](t, ctx, listJS)
	if want := []string{before[1], before[0], repl}; !slices.Equal(after, want) {
		t.Fatalf("overall after the organiser's changes = %v, want %v", after, want)
	}

	// An expo display and a door screen are open before publishing.
	expo := b.tab(t)
	run(t, expo, "expo", chromedp.Navigate(ts.URL+"/expo"))
	waitJS(t, expo, "expo projects", `document.querySelectorAll('#projects > li').length === 12`)
	evalJS[any](t, expo, `window.__noReload = 1`)
	kiosk := b.tab(t)
	run(t, kiosk, "door screen", chromedp.Navigate(ts.URL+"/expo?kiosk=1"))
	(screen{"1920", 1920, 1080, false}).apply(t, kiosk)
	waitJS(t, kiosk, "kiosk projects", `document.querySelectorAll('#projects > li').length === 12`)
	evalJS[any](t, kiosk, `window.__noReload = 1`)

	// Publish, with feedback shared: the confirmation names what will happen.
	run(t, ctx, "share feedback", chromedp.Click(chromedp.CSS("#wn-feedback")))
	run(t, ctx, "publish", chromedp.Click(chromedp.CSS("#wn-publish-btn")))
	waitJS(t, ctx, "confirmation", `document.querySelector('#dialog').open`)
	text := evalJS[string](t, ctx, `document.querySelector('#dialog').textContent`)
	for _, want := range []string{"expo display", "door screens", "/v1/public/winners", "feedback judges wrote"} {
		if !strings.Contains(text, want) {
			t.Errorf("publish confirmation does not say %q: %s", want, text)
		}
	}
	run(t, ctx, "confirm", chromedp.Click(chromedp.CSS("#dialog-ok")))
	waitJS(t, ctx, "published state", `!!document.querySelector('#wn-status [data-state=published]') && document.querySelector('#winners-state').dataset.state === 'published'`)
	var pub webWinnersBody
	ts.must(200, "GET", "/api/winners", nil, anon, &pub)
	if !pub.Published || len(pub.Prizes) != 4 {
		t.Fatalf("GET /api/winners after publish = %+v", pub)
	}
	var admin struct {
		Published bool `json:"published"`
		Feedback  bool `json:"feedback"`
		Prizes    []struct {
			Winners []struct {
				ID string `json:"id"`
			} `json:"winners"`
		} `json:"prizes"`
	}
	ts.must(200, "GET", "/api/admin/winners", nil, asAdmin, &admin)
	var published []string
	for _, w := range admin.Prizes[0].Winners {
		published = append(published, w.ID)
	}
	if !admin.Feedback || !slices.Equal(published, after) {
		t.Errorf("published overall = %v (feedback %v), want the organiser's %v with feedback", published, admin.Feedback, after)
	}
	want := pub.names()
	for name, c := range map[string]context.Context{"expo": expo, "door screen": kiosk} {
		waitJS(t, c, name+" shows the winners", `document.body.classList.contains('winners-on') && `+expoWinnersJS+` === `+jsq(want))
		if !evalJS[bool](t, c, `window.__noReload === 1 && document.querySelector('#projects').getClientRects().length === 0`) {
			t.Errorf("%s: reloaded, or the project list still shows", name)
		}
	}
	// The door screen at 1,920 × 1,080: four prizes of three places on one page, no scrolling.
	time.Sleep(300 * time.Millisecond) // the type grows to fill the screen
	if p := evalJS[[]string](t, kiosk, `[document.documentElement.scrollHeight > innerHeight ? 'page scrolls (' + document.documentElement.scrollHeight + ')' : '', document.querySelector('#wn-grid').dataset.pages !== '1' ? 'pages: ' + document.querySelector('#wn-grid').dataset.pages : ''].filter(Boolean)`); len(p) > 0 {
		t.Errorf("door screen at 1920: %v", p)
	}
	if p := layoutProblems(t, kiosk, "#wn-grid"); len(p) > 0 {
		t.Errorf("door screen winners at 1920: %s", strings.Join(p, "; "))
	}
	if w := evalJS[[]string](t, kiosk, tableWrapJS); len(w) > 0 {
		t.Errorf("door screen: table numbers wrap: %q", w)
	}
	b.save(t, kiosk, "winners-kiosk-1920")
	// A fresh tab (in front) for the expo at a TV's and a phone's size.
	look := b.tab(t)
	run(t, look, "expo", chromedp.Navigate(ts.URL+"/expo"))
	for _, sc := range []screen{{"1920", 1920, 1080, false}, {"390", 390, 844, true}} {
		sc.apply(t, look)
		waitJS(t, look, "winners", `document.body.classList.contains('winners-on')`)
		time.Sleep(300 * time.Millisecond)
		if p := layoutProblems(t, look, "#wn-grid"); len(p) > 0 {
			t.Errorf("expo winners at %s: %s", sc.name, strings.Join(p, "; "))
		}
		if w := evalJS[[]string](t, look, tableWrapJS); len(w) > 0 {
			t.Errorf("expo at %s: table numbers wrap: %q", sc.name, w)
		}
		b.save(t, look, "winners-expo-"+sc.name)
	}
	// A visitor of the expo (not the door screen) can still find the project list.
	if evalJS[bool](t, kiosk, `!!document.querySelector('#wn-to-list')`) {
		t.Error("the door screen offers a button to leave the winners")
	}
	run(t, look, "all projects", chromedp.Click(chromedp.CSS("#wn-to-list")))
	waitJS(t, look, "project list", `!document.body.classList.contains('winners-on') && !document.querySelector('#wn-back').hidden && document.querySelector('#projects').getClientRects().length > 0`)
	run(t, look, "back to the winners", chromedp.Click(chromedp.CSS("#wn-back button")))
	waitJS(t, look, "winners again", `document.body.classList.contains('winners-on') && document.querySelector('#wn-back').hidden`)

	// The Winners tab at a laptop's width, published, in a fresh dashboard tab (in front:
	// a tab behind others is not resized). It says what is live.
	ctx = b.tab(t)
	adminLogin(t, ctx, ts)
	waitJS(t, ctx, "overview says published", `document.querySelector('#winners-state').dataset.state === 'published' && document.querySelector('#winners-state').textContent.includes('Live')`)
	b.save(t, ctx, "overview-published")
	run(t, ctx, "winners tab again", chromedp.Click(chromedp.CSS("#tab-winners")))
	waitJS(t, ctx, "published lists", `!!document.querySelector('#wn-status [data-state=published]') && document.querySelectorAll('#wn-prizes .place[data-id]').length === 12 && document.querySelector('#wn-feedback').checked`)
	for _, sc := range []screen{{"1400", 1400, 900, false}, {"390", 390, 844, true}, {"1024", 1024, 768, false}} {
		sc.apply(t, ctx)
		if p := layoutProblems(t, ctx, "#panel-winners .card"); len(p) > 0 {
			t.Errorf("winners tab at %s: %s", sc.name, strings.Join(p, "; "))
		}
		b.save(t, ctx, "winners-tab-"+sc.name)
	}
	(screen{"1400", 1400, 900, false}).apply(t, ctx)

	// Feedback review: both items listed; one removed after a confirmation.
	waitJS(t, ctx, "feedback rows", `document.querySelectorAll('#fb-card tbody tr').length === 2`)
	gone := evalJS[string](t, ctx, `document.querySelector('#fb-card tbody tr:first-child .feedback-text').textContent`)
	run(t, ctx, "remove feedback", chromedp.Click(chromedp.CSS(`#fb-card tbody tr:first-child button`)))
	waitJS(t, ctx, "remove confirmation", `document.querySelector('#dialog').open && document.querySelector('#dialog blockquote').textContent === `+jsq(gone))
	run(t, ctx, "confirm remove", chromedp.Click(chromedp.CSS("#dialog-ok")))
	waitJS(t, ctx, "one feedback row", `document.querySelectorAll('#fb-card tbody tr').length === 1`)
	var fb []map[string]any
	ts.must(200, "GET", "/api/admin/feedback", nil, asAdmin, &fb)
	if len(fb) != 1 || fb[0]["feedback"] == gone {
		t.Errorf("feedback after removing one = %v", fb)
	}

	// A team link that leaked is replaced from the list of links.
	var links []map[string]any
	ts.must(200, "GET", "/api/admin/team-links", nil, asAdmin, &links)
	waitJS(t, ctx, "links listed", `document.querySelectorAll('#tl-list tbody tr').length === 12`)
	run(t, ctx, "open the links", chromedp.Click(chromedp.CSS("#tl-list summary")))
	run(t, ctx, "new link", chromedp.Click(chromedp.CSS(`#tl-list tbody tr[data-id="`+fmt.Sprint(links[0]["id"])+`"] button`)))
	waitJS(t, ctx, "rotate confirmation", `document.querySelector('#dialog').open && document.querySelector('#dialog').textContent.includes('stop working')`)
	run(t, ctx, "confirm rotate", chromedp.Click(chromedp.CSS("#dialog-ok")))
	var links2 []map[string]any
	eventually(t, "link replaced", func() bool {
		ts.must(200, "GET", "/api/admin/team-links", nil, asAdmin, &links2)
		return links2[0]["link"] != links[0]["link"]
	})
	waitJS(t, ctx, "new link shown", `document.querySelector('#tl-list tbody tr:first-child .code').textContent === `+jsq(fmt.Sprint(links2[0]["link"])))
	for _, sc := range []screen{{"1400", 1400, 900, false}, {"390", 390, 844, true}} {
		sc.apply(t, ctx)
		if p := layoutProblems(t, ctx, "#tl-card, #fb-card"); len(p) > 0 {
			t.Errorf("team links at %s: %s", sc.name, strings.Join(p, "; "))
		}
		evalJS[any](t, ctx, `document.querySelector('#tl-card').scrollIntoView()`)
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(b.shots, "team-links-"+sc.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	(screen{"1400", 1400, 900, false}).apply(t, ctx)

	// Mailing the links is confirmed first; without a mail route the toast says what to do instead.
	run(t, ctx, "mail links", chromedp.Click(chromedp.CSS("#tl-send")))
	waitJS(t, ctx, "mail confirmation", `document.querySelector('#dialog').open && document.querySelector('#dialog').textContent.includes('Each of the 1 project') && document.querySelector('#dialog').textContent.includes('11 projects have no contact email')`)
	run(t, ctx, "confirm mail", chromedp.Click(chromedp.CSS("#dialog-ok")))
	waitJS(t, ctx, "mail outcome", `document.querySelector('#toast').textContent === '1 email queued; 11 projects have no contact email.'`)
	// The list shows the team's mail state (queued here: the test server runs no outbox).
	waitJS(t, ctx, "mail state", `[...document.querySelectorAll('#tl-list tbody tr')].some((r) => r.textContent.includes('aurora-team@example.com') && /queued|not sent|sent/.test(r.querySelector('td[data-label=Mail]').textContent))`)

	// Take back: confirmed; both screens return to the project list.
	run(t, ctx, "take back", chromedp.Click(chromedp.CSS("#wn-takeback")))
	waitJS(t, ctx, "take-back confirmation", `document.querySelector('#dialog').open && document.querySelector('#dialog').textContent.includes('project list')`)
	run(t, ctx, "confirm take back", chromedp.Click(chromedp.CSS("#dialog-ok")))
	waitJS(t, ctx, "draft state", `!!document.querySelector('#wn-status [data-state=draft]') && document.querySelector('#winners-state').dataset.state === 'draft'`)
	for name, c := range map[string]context.Context{"expo": expo, "door screen": kiosk} {
		waitJS(t, c, name+" back to the projects", `!document.body.classList.contains('winners-on') && document.querySelector('#winners-screen').hidden && document.querySelectorAll('#projects > li').length === 12 && document.querySelector('#projects').getClientRects().length > 0`)
	}
	ts.must(200, "GET", "/api/winners", nil, anon, &pub)
	if pub.Published {
		t.Errorf("GET /api/winners after take back = %+v", pub)
	}

	// The printable QR sheet: one card per table, each with its QR image, printed to PDF.
	sheet := b.tab(t)
	adminLogin(t, sheet, ts)
	run(t, sheet, "QR sheet", chromedp.Navigate(ts.URL+"/admin#team-sheet"))
	waitJS(t, sheet, "sheet cards", `document.querySelectorAll('.sheet-card').length === 12 && [...document.querySelectorAll('.sheet-card img')].every((i) => i.complete && i.naturalWidth > 0)`)
	if !evalJS[bool](t, sheet, `[...document.querySelectorAll('.sheet-card')].every((c) => /team\//.test(c.querySelector('.sheet-link').textContent) && c.textContent.includes('Scan to see how your project was received'))`) {
		t.Error("a sheet card lacks its link or the line for the team")
	}
	b.save(t, sheet, "team-qr-sheet-screen")
	pdf, err := chromedp.Run(sheet, chromedp.PrintToPDF(chromedp.PDFPaper(chromedp.PaperA4)))
	if err != nil {
		t.Fatalf("print the QR sheet: %v", explainCDP(err))
	}
	out := filepath.Join(b.shots, "team-qr-sheet.pdf")
	if err := os.WriteFile(out, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	if conv, err := exec.LookPath("pdftoppm"); err == nil {
		if o, err := exec.Command(conv, "-r", "60", "-png", out, filepath.Join(b.shots, "team-qr-sheet")).CombinedOutput(); err != nil {
			t.Errorf("pdftoppm: %v %s", err, o)
		}
	}
}

// TestWebWinnersPages: more prizes than a TV page holds turn by themselves on the door
// screen, every page fitting 1,920 × 1,080; a phone scrolls through them all.
func TestWebWinnersPages(t *testing.T) {
	b := startChromium(t)
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/options", `{"event_name": "Harbour Hack 2026"}`, asAdmin, nil)
	var ids []string
	for _, n := range winnersProjects {
		ids = append(ids, ts.addProject(n, ""))
	}
	names := []string{"Best overall", "Best design", "Best pitch", "Most technically impressive", "Best use of open data",
		"Social good", "Best first-time hackers", "People's choice", "Wildest idea"}
	var body []map[string]any
	for _, n := range names {
		body = append(body, map[string]any{"name": n, "track": "", "places": 3})
	}
	ts.must(200, "PUT", "/api/admin/prizes", body, asAdmin, nil)
	var prizes []struct {
		ID string `json:"id"`
	}
	ts.must(200, "GET", "/api/admin/prizes", nil, asAdmin, &prizes)
	var lists []map[string]any
	for i, p := range prizes {
		lists = append(lists, map[string]any{"prize": p.ID, "winners": []string{ids[i%12], ids[(i+3)%12], ids[(i+7)%12]}})
	}
	ts.must(200, "POST", "/api/admin/winners/publish", map[string]any{"prizes": lists, "feedback": false}, asAdmin, nil)

	wifi := startNetCut(t, ts)
	k := b.tab(t)
	run(t, k, "door screen", chromedp.Navigate(wifi.URL+"/expo?kiosk=1&seconds=4"))
	(screen{"1920", 1920, 1080, false}).apply(t, k)
	waitJS(t, k, "winners", `document.body.classList.contains('winners-on') && Number(document.querySelector('#wn-grid').dataset.pages) > 1`)
	pages := evalJS[int](t, k, `Number(document.querySelector('#wn-grid').dataset.pages)`)
	seen := map[string]bool{}
	for i := 0; i < pages; i++ {
		waitJS(t, k, fmt.Sprintf("page %d", i+1), fmt.Sprintf(`document.querySelector('#wn-grid').dataset.page === '%d'`, i+1))
		time.Sleep(200 * time.Millisecond)
		if p := layoutProblems(t, k, "#wn-grid"); len(p) > 0 {
			t.Errorf("door screen page %d: %s", i+1, strings.Join(p, "; "))
		}
		if over := evalJS[bool](t, k, `document.documentElement.scrollHeight > innerHeight || document.querySelector('#wn-grid').getBoundingClientRect().bottom > innerHeight`); over {
			t.Errorf("door screen page %d does not fit the screen", i+1)
		}
		for _, n := range evalJS[[]string](t, k, `[...document.querySelectorAll('#wn-grid > .wn-prize')].filter((p) => p.getClientRects().length).map((p) => p.querySelector('.wn-prize-name').textContent)`) {
			seen[n] = true
		}
		if i == 0 {
			time.Sleep(500 * time.Millisecond) // the page's fade-in
			b.save(t, k, "winners-kiosk-pages-1920")
		}
	}
	if len(seen) != len(names) {
		t.Errorf("the pages showed %d of %d prizes: %v", len(seen), len(names), seen)
	}
	(screen{"390", 390, 844, true}).apply(t, k)
	waitJS(t, k, "all prizes on a phone", fmt.Sprintf(`[...document.querySelectorAll('#wn-grid > .wn-prize')].filter((p) => p.getClientRects().length).length === %d`, len(names)))
	if p := layoutProblems(t, k, "#wn-grid"); len(p) > 0 {
		t.Errorf("door screen at 390: %s", strings.Join(p, "; "))
	}
	// Taken back while the screen's network is down: it catches up when it reconnects.
	wifi.set(true)
	waitJS(t, k, "offline", `!document.querySelector('#offline').hidden`)
	ts.must(200, "DELETE", "/api/admin/winners/publish", nil, asAdmin, nil)
	wifi.set(false)
	waitJS(t, k, "back to the projects", `!document.body.classList.contains('winners-on') && document.querySelectorAll('#projects > li').length === 12`)
	// And published again while it is down: the winners come back on reconnect.
	wifi.set(true)
	waitJS(t, k, "offline again", `!document.querySelector('#offline').hidden`)
	ts.must(200, "POST", "/api/admin/winners/publish", map[string]any{"prizes": lists[:2], "feedback": false}, asAdmin, nil)
	wifi.set(false)
	waitJS(t, k, "winners after reconnect", `document.body.classList.contains('winners-on') && document.querySelectorAll('#wn-grid > .wn-prize').length === 2`)
}
