package transport

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The judge app on the floor (docs/behaviour.md#judge-app): installable, opens without
// a network, queues every action with its idempotency key and sends it once.

// TestWebServiceWorker checks the worker and the manifest are served so that the
// browser revalidates them, that the build id is stamped in, and that the app shell the
// worker keeps holds every module the judge page loads.
func TestWebServiceWorker(t *testing.T) {
	ts := startServer(t)
	resp, err := http.Get(ts.URL + "/sw.js")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct, cc := resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"); !strings.HasPrefix(ct, "text/javascript") || cc != "no-cache" {
		t.Errorf("/sw.js: Content-Type %q, Cache-Control %q", ct, cc)
	}
	_, sw := ts.do("GET", "/sw.js", nil, anon)
	if strings.Contains(string(sw), swBuildMark) || !regexp.MustCompile(`const VERSION = '[0-9a-f]{16}'`).Match(sw) {
		t.Errorf("/sw.js has no build id: %.200s", sw)
	}
	resp, err = http.Get(ts.URL + "/manifest.webmanifest")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/manifest+json" {
		t.Errorf("manifest Content-Type %q", ct)
	}
	var man struct {
		StartURL string `json:"start_url"`
		Scope    string
		Display  string
		Icons    []struct{ Src, Sizes string }
	}
	ts.must(200, "GET", "/manifest.webmanifest", nil, anon, &man)
	if man.StartURL != "/" || man.Scope != "/" || man.Display != "standalone" || len(man.Icons) < 2 {
		t.Errorf("manifest = %+v", man)
	}
	for _, ic := range man.Icons {
		if code, b := ts.do("GET", ic.Src, nil, anon); code != 200 || len(b) == 0 {
			t.Errorf("icon %s: %d", ic.Src, code)
		}
	}
	shell := regexp.MustCompile(`'(/[^']*)'`).FindAllStringSubmatch(string(sw[strings.Index(string(sw), "const SHELL"):]), -1)
	listed := map[string]bool{}
	for _, m := range shell {
		listed[m[1]] = true
		if code, _ := ts.do("GET", m[1], nil, anon); code != 200 {
			t.Errorf("shell file %s: %d", m[1], code)
		}
	}
	// Every module reachable from judge.js, and every file judge.html links, is kept.
	_, page := ts.do("GET", "/", nil, anon)
	todo := regexp.MustCompile(`(?:href|src)="(/[^"]+)"`).FindAllStringSubmatch(string(page), -1)
	seen := map[string]bool{}
	for len(todo) > 0 {
		p := todo[0][1]
		todo = todo[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		if !listed[p] {
			t.Errorf("the judge page loads %s but the service worker does not keep it", p)
		}
		if strings.HasSuffix(p, ".js") {
			_, js := ts.do("GET", p, nil, anon)
			for _, m := range regexp.MustCompile(`from '\./([^']+)'`).FindAllStringSubmatch(string(js), -1) {
				todo = append(todo, []string{"", "/static/" + m[1]})
			}
		}
	}
	// A change to any file gives another build id (the id hashes every other file).
	a := loadWebAssets()
	stampServiceWorker(a)
	b := loadWebAssets()
	b["static/app.css"].etag = `W/"changed"`
	stampServiceWorker(b)
	if a["static/sw.js"].etag == b["static/sw.js"].etag {
		t.Error("the service worker did not change with the app shell")
	}
}

// shotAt saves a screenshot at one size (a laptop at 1400×900, say) and goes back to
// the phone.
func (b *webBrowser) shotAt(t *testing.T, ctx context.Context, name string, w, h int64) {
	t.Helper()
	run(t, ctx, "resize", chromedp.EmulateViewport(w, h))
	waitJS(t, ctx, "layout", fmt.Sprintf("window.innerWidth === %d", w))
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, fmt.Sprintf("%s-%d.png", name, w)), png, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "phone size", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	waitJS(t, ctx, "layout", "window.innerWidth === 390")
}

// floorPrefs is how the test judge likes the projects, best first; it answers every
// "Which one was better?" from it.
var floorPrefs = []string{"Beacon", "Comet", "Aurora", "Dynamo"}

// floorStars are the projects the test judge stars.
var floorStars = map[string]bool{"Beacon": true, "Aurora": true}

// judgeVisit finishes the project on screen as the test judge would: Done, notes, a
// star when it likes it, then the placement questions. It returns the project's name.
// reloadMidway reloads the page with the form half filled (drafts must survive).
func judgeVisit(t *testing.T, ctx context.Context, reloadMidway bool) string {
	t.Helper()
	waitJS(t, ctx, "a project", `!document.querySelector('#view-project').hidden && document.querySelector('#project-name').textContent !== ''`)
	name := evalJS[string](t, ctx, `document.querySelector('#project-name').textContent`)
	run(t, ctx, "done "+name, chromedp.Click(chromedp.CSS("#btn-done")), chromedp.WaitVisible(chromedp.CSS("#finish-notes")),
		chromedp.SendKeys(chromedp.CSS("#finish-notes"), "notes on "+name))
	if floorStars[name] {
		run(t, ctx, "star "+name, chromedp.Click(chromedp.CSS("#finish-star")))
	}
	if reloadMidway {
		run(t, ctx, "reload mid-visit", chromedp.Reload())
		waitJS(t, ctx, "draft back after reload", fmt.Sprintf(`!document.querySelector('#finish-form').hidden && document.querySelector('#finish-notes').value === %s && document.querySelector('#project-name').textContent === %s`, jsq("notes on "+name), jsq(name)))
		if got := evalJS[string](t, ctx, `document.querySelector('#finish-star').getAttribute('aria-pressed')`); got != fmt.Sprint(floorStars[name]) {
			t.Errorf("star of %s after reload: %s", name, got)
		}
	}
	run(t, ctx, "submit "+name, chromedp.Click(chromedp.CSS("#finish-submit")))
	rank := func(n string) int { return slices.Index(floorPrefs, n) }
	for range 6 {
		st := evalJS[[]string](t, ctx, `(() => { const f = document.querySelector('#place-form'); return f.hidden ? [] : [document.querySelector('#place-new .place-name').textContent, document.querySelector('#place-old .place-name').textContent]; })()`)
		if len(st) == 0 {
			break
		}
		pick := "#place-old"
		if rank(st[0]) < rank(st[1]) {
			pick = "#place-new"
		}
		run(t, ctx, "compare", chromedp.Click(chromedp.CSS(pick)))
	}
	waitJS(t, ctx, "visit submitted", fmt.Sprintf(`document.querySelector('#place-form').hidden && (document.querySelector('#view-project').hidden || document.querySelector('#project-name').textContent !== %s)`, jsq(name)))
	return name
}

// appState is the judge's judging as names (ids differ between servers): what it saw
// with notes and stars, its ranking, and the views each project got.
type appState struct {
	Seen      []string
	Notes     map[string]string
	Stars     map[string]bool
	Ranking   []string
	Views     map[string]int
	JudgeSeen int
	Flags     int
}

func readAppState(ts *testServer, jid string) appState {
	names := map[string]string{}
	st := appState{Notes: map[string]string{}, Stars: map[string]bool{}, Views: map[string]int{}}
	for _, p := range ts.projectList() {
		names[p.ID] = p.Name
	}
	var list []map[string]any
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &list)
	for _, p := range list {
		st.Views[p["name"].(string)] = int(p["seen"].(float64))
	}
	j := judgeState(ts, jid)
	for _, s := range j["seen_projects"].([]any) {
		sp := s.(map[string]any)
		n := names[sp["project_id"].(string)]
		st.Seen = append(st.Seen, n)
		st.Notes[n] = sp["notes"].(string)
		st.Stars[n] = sp["starred"].(bool)
	}
	slices.Sort(st.Seen) // the order of the visits may differ; each must be there once
	for _, id := range j["rankings"].([]any) {
		st.Ranking = append(st.Ranking, names[id.(string)])
	}
	st.JudgeSeen = int(j["seen"].(float64))
	var flags []any
	ts.must(200, "GET", "/api/admin/flags", nil, asAdmin, &flags)
	st.Flags = len(flags)
	return st
}

// floorServer starts a server with three projects, an event name and a judge who read
// the welcome; the clock runs.
func floorServer(t *testing.T) (ts *testServer, jid, code string) {
	ts = startServer(t)
	for _, n := range floorPrefs[:3] {
		ts.addProject(n, "")
	}
	ts.must(200, "POST", "/api/admin/options", map[string]any{"event_name": "Hack the Hall"}, asAdmin, nil)
	jid, code = ts.addJudge("Flo Floor", "flo@example.com", "")
	ts.must(200, "PUT", "/api/judge/welcome", nil, asJudge(ts.login(code)), nil)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	return ts, jid, code
}

// spaced writes an 8-digit code as people read it out: "7970 5407".
func spaced(code string) string { return code[:4] + " " + code[4:] }

// openJudgeApp logs the judge in with a spaced code and waits for its first project,
// with the service worker in control and the upcoming projects kept on the phone.
func openJudgeApp(t *testing.T, ctx context.Context, base, code string) {
	t.Helper()
	run(t, ctx, "open app", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-code")),
		chromedp.SendKeys(chromedp.CSS("#login-code"), spaced(code)), chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, "first project", `!document.querySelector('#view-project').hidden && document.querySelector('#project-name').textContent !== ''`)
	waitJS(t, ctx, "service worker in control", `!!navigator.serviceWorker.controller`)
	waitJS(t, ctx, "upcoming kept", `(() => { const k = Object.keys(localStorage).find(k => k.endsWith('.upcoming')); const p = Object.keys(localStorage).find(k => k.endsWith('.projects'));
		return k && p && JSON.parse(localStorage.getItem(k)).every(id => JSON.parse(localStorage.getItem(p))[id]) && JSON.parse(localStorage.getItem(k)).length === 2; })()`)
	waitJS(t, ctx, "event name and count in the header", `document.querySelector('#event-name').textContent === 'Hack the Hall' && document.querySelector('#seen-count').textContent === '0 seen'`)
}

func TestWebJudgeOffline(t *testing.T) {
	b := startChromium(t)

	// The reference: the same judge's decisions made online.
	var online appState
	t.Run("Online", func(t *testing.T) {
		ts, jid, code := floorServer(t)
		ctx := b.tab(t)
		openJudgeApp(t, ctx, ts.URL, code)
		for range 3 {
			judgeVisit(t, ctx, false)
		}
		waitJS(t, ctx, "all done", `!document.querySelector('#view-status').hidden && document.querySelector('#status-title').textContent === 'All done!'`)
		waitJS(t, ctx, "all saved", `document.querySelector('#sync').textContent === '✓ All saved'`)
		online = readAppState(ts, jid)
		want := appState{
			Seen:    []string{"Aurora", "Beacon", "Comet"},
			Notes:   map[string]string{"Aurora": "notes on Aurora", "Beacon": "notes on Beacon", "Comet": "notes on Comet"},
			Stars:   map[string]bool{"Aurora": true, "Beacon": true, "Comet": false},
			Ranking: []string{"Beacon", "Comet", "Aurora"},
			Views:   map[string]int{"Aurora": 1, "Beacon": 1, "Comet": 1}, JudgeSeen: 3,
		}
		if !reflect.DeepEqual(online, want) {
			t.Errorf("online judging gave\n%+v, want\n%+v", online, want)
		}
	})

	t.Run("NetworkCut", func(t *testing.T) {
		if online.JudgeSeen == 0 {
			t.Skip("no online reference")
		}
		ts, jid, code := floorServer(t)
		wifi := startNetCut(t, ts)
		ctx := b.tab(t)
		run(t, ctx, "phone size", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		openJudgeApp(t, ctx, wifi.URL, code)
		wifi.set(true)
		waitJS(t, ctx, "connection-lost banner", `!document.querySelector('#notice-offline').hidden && document.querySelector('#notice-offline').textContent.includes('kept on this phone')`)
		first := judgeVisit(t, ctx, false)
		waitJS(t, ctx, "queued", `/^[0-9]+ actions? waiting to send$/.test(document.querySelector('#sync').textContent)`)
		b.shot(t, ctx, "judge-offline-queued")
		b.shotAt(t, ctx, "judge-offline-queued", 1400, 900)
		second := judgeVisit(t, ctx, false) // at an upcoming project: the server never assigned it
		third := judgeVisit(t, ctx, true)   // reloaded offline halfway: the app opens from the service worker
		if first == second || second == third || first == third {
			t.Fatalf("visits %s, %s, %s: want three different projects", first, second, third)
		}
		waitJS(t, ctx, "waiting for the connection", `!document.querySelector('#view-status').hidden && document.querySelector('#status-title').textContent === 'Waiting for the connection'`)
		n := evalJS[string](t, ctx, `document.querySelector('#sync').textContent`)
		b.shot(t, ctx, "judge-offline-waiting")
		b.shotAt(t, ctx, "judge-offline-waiting", 1400, 900)
		if st := readAppState(ts, jid); st.JudgeSeen != 0 {
			t.Fatalf("the server saw %d visits while the phone was offline", st.JudgeSeen)
		}
		// Closing the tab and opening the app again, still offline: the queue is intact.
		run(t, ctx, "reload offline", chromedp.Reload())
		waitJS(t, ctx, "queue intact after reload", fmt.Sprintf(`document.querySelector('#sync').textContent === %s`, jsq(n)))
		waitJS(t, ctx, "seen count from the phone", `document.querySelector('#seen-count').textContent === '3 seen'`)
		wifi.set(false)
		waitJS(t, ctx, "all saved", `document.querySelector('#sync').textContent === '✓ All saved'`)
		waitJS(t, ctx, "all done", `!document.querySelector('#view-status').hidden && document.querySelector('#status-title').textContent === 'All done!'`)
		b.shotAt(t, ctx, "judge-back-online", 1400, 900)
		if got := readAppState(ts, jid); !reflect.DeepEqual(got, online) {
			t.Errorf("after the network came back the server holds\n%+v; the same actions online gave\n%+v", got, online)
		}
	})

	t.Run("RefusedShown", func(t *testing.T) {
		ts, jid, code := floorServer(t)
		wifi := startNetCut(t, ts)
		ctx := b.tab(t)
		run(t, ctx, "phone size", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		openJudgeApp(t, ctx, wifi.URL, code)
		wifi.set(true)
		first := judgeVisit(t, ctx, false)
		waitJS(t, ctx, "an upcoming project", `!document.querySelector('#view-project').hidden`)
		second := evalJS[string](t, ctx, `document.querySelector('#project-name').textContent`)
		// The organisers hide the project the judge walked on to, while it is offline.
		for _, p := range ts.projectList() {
			if p.Name == second {
				ts.must(200, "PUT", "/api/project/hide/"+p.ID, nil, asAdmin, nil)
			}
		}
		judgeVisit(t, ctx, false)
		wifi.set(false)
		waitJS(t, ctx, "all sent", `document.querySelector('#sync').textContent === '✓ All saved'`)
		waitJS(t, ctx, "refusal shown", fmt.Sprintf(`(() => { const r = document.querySelector('#refused'); return !r.hidden && r.textContent.includes(%s) && r.textContent.includes(%s); })()`, jsq("“"+second+"”"), jsq("notes on "+second)))
		b.shot(t, ctx, "judge-refused")
		st := readAppState(ts, jid)
		if st.JudgeSeen != 1 || !slices.Equal(st.Seen, []string{first}) || !slices.Equal(st.Ranking, []string{first}) {
			t.Errorf("after the refused visit: %+v, want only %s seen and ranked", st, first)
		}
		run(t, ctx, "dismiss", chromedp.Click(chromedp.CSS("#refused button")))
		waitJS(t, ctx, "refusal dismissed", `document.querySelector('#refused').hidden`)
	})

	t.Run("SessionEnded", func(t *testing.T) {
		ts, jid, code := floorServer(t)
		ctx := b.tab(t)
		openJudgeApp(t, ctx, ts.URL, code)
		ts.login(code) // a login elsewhere replaces the phone's session
		name := judgeVisit(t, ctx, false)
		waitJS(t, ctx, "asked to log in again", `!document.querySelector('#view-login').hidden && document.querySelector('#login-error').textContent.startsWith('Your session ended')`)
		b.shot(t, ctx, "judge-session-ended")
		evalJS[any](t, ctx, `document.querySelector('#login-code').value = ''`)
		run(t, ctx, "log in again", chromedp.SendKeys(chromedp.CSS("#login-code"), code), chromedp.KeyEvent(kb.Enter))
		waitJS(t, ctx, "sent after the login", `!document.querySelector('#view-app').hidden && document.querySelector('#sync').textContent === '✓ All saved'`)
		if st := readAppState(ts, jid); st.JudgeSeen != 1 || !slices.Equal(st.Seen, []string{name}) {
			t.Errorf("after logging in again: %+v, want %s seen once", st, name)
		}
	})

	t.Run("LostAnswer", func(t *testing.T) {
		ts, jid, code := floorServer(t)
		ctx := b.tab(t)
		openJudgeApp(t, ctx, ts.URL, code)
		// The server applies the first finish but its answer is lost on the way back
		// (the Wi-Fi drops): the phone sends it again with the same key, and the server
		// answers from its record instead of counting the visit twice.
		paused := chromedp.Events(ctx, fetch.RequestPaused)
		if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/api/judge/finish", RequestStage: fetch.RequestStageResponse}}}); err != nil {
			t.Fatal(err)
		}
		var answers atomic.Int32
		go func() {
			for ev, err := range paused {
				if err != nil {
					return
				}
				if answers.Add(1) == 1 {
					_, _ = chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonConnectionReset})
				} else {
					_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
				}
			}
		}()
		name := judgeVisit(t, ctx, false)
		waitJS(t, ctx, "sent", `document.querySelector('#sync').textContent === '✓ All saved'`)
		st := readAppState(ts, jid)
		if n := answers.Load(); n < 2 || st.JudgeSeen != 1 || st.Views[name] != 1 || !slices.Equal(st.Seen, []string{name}) {
			t.Errorf("after a lost answer and %d sends: %+v, want %s seen once", n, st, name)
		}
	})

	t.Run("Undo", func(t *testing.T) {
		ts, jid, code := floorServer(t)
		ctx := b.tab(t)
		run(t, ctx, "phone size", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		openJudgeApp(t, ctx, ts.URL, code)
		name := judgeVisit(t, ctx, false)
		waitJS(t, ctx, "undo offered", `!document.querySelector('#undo-bar').hidden`)
		waitJS(t, ctx, "saved", `document.querySelector('#sync').textContent === '✓ All saved'`)
		b.shot(t, ctx, "judge-undo-offered")
		if st := readAppState(ts, jid); st.JudgeSeen != 1 {
			t.Fatalf("before undo the judge has %d visits", st.JudgeSeen)
		}
		run(t, ctx, "undo", chromedp.Click(chromedp.CSS("#undo")))
		waitJS(t, ctx, "back at the project with its notes", fmt.Sprintf(`document.querySelector('#project-name').textContent === %s && !document.querySelector('#finish-form').hidden && document.querySelector('#finish-notes').value === %s`, jsq(name), jsq("notes on "+name)))
		waitJS(t, ctx, "undo sent", `document.querySelector('#sync').textContent === '✓ All saved'`)
		st := readAppState(ts, jid)
		j := judgeState(ts, jid)
		if st.JudgeSeen != 0 || len(st.Ranking) != 0 || st.Views[name] != 0 || j["current"] == nil {
			t.Errorf("after undo: %+v, current %v", st, j["current"])
		}
		// Submitting again counts it once.
		run(t, ctx, "submit again", chromedp.Click(chromedp.CSS("#finish-submit")))
		waitJS(t, ctx, "saved again", fmt.Sprintf(`document.querySelector('#project-name').textContent !== %s && document.querySelector('#sync').textContent === '✓ All saved'`, jsq(name)))
		if st := readAppState(ts, jid); st.JudgeSeen != 1 || st.Views[name] != 1 || len(st.Ranking) != 1 {
			t.Errorf("after submitting again: %+v", st)
		}
	})

	t.Run("RankingNames", func(t *testing.T) {
		ts := startServer(t)
		long := []string{"Telemetryscope Dashboard for Hospital Logistics", "Wayfinding Companion for Blind Commuters"}
		for _, n := range long {
			ts.addProject(n, "")
		}
		_, code := ts.addJudge("Nia", "nia@example.com", "")
		tok := ts.login(code)
		ts.must(200, "PUT", "/api/judge/welcome", nil, asJudge(tok), nil)
		ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
		var ids []any
		for range long {
			var nx struct {
				ProjectID string `json:"project_id"`
			}
			ts.must(200, "POST", "/api/judge/next", nil, asJudge(tok), &nx)
			ts.must(200, "POST", "/api/judge/finish", map[string]any{"notes": "", "starred": false}, asJudge(tok), nil)
			ids = append(ids, nx.ProjectID)
		}
		ts.must(200, "POST", "/api/judge/rank", map[string]any{"ranking": ids}, asJudge(tok), nil)
		ctx := b.tab(t)
		run(t, ctx, "open list", chromedp.Navigate(ts.URL+"/?code="+code), chromedp.WaitVisible(chromedp.CSS("#nav-list")), chromedp.Click(chromedp.CSS("#nav-list")))
		waitJS(t, ctx, "two ranked", `document.querySelectorAll('#ranked > li').length === 2`)
		// Each word of a name sits on one line (its pieces share one top).
		broken := `(() => { const bad = []; for (const el of document.querySelectorAll('#ranked .name')) {
			const tn = el.firstChild; let i = 0;
			for (const w of tn.textContent.split(' ')) { const r = document.createRange(); r.setStart(tn, i); r.setEnd(tn, i + w.length);
				if (new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1) bad.push(w); i += w.length + 1; } }
			return bad; })()`
		for _, w := range []int64{320, 390, 768, 1400} {
			run(t, ctx, "resize", chromedp.EmulateViewport(w, 900, chromedp.EmulateMobile))
			waitJS(t, ctx, "layout", fmt.Sprintf("window.innerWidth === %d", w))
			if bad := evalJS[[]string](t, ctx, broken); len(bad) > 0 {
				t.Errorf("at %d px these words break mid-word: %v", w, bad)
			}
			if sw := evalJS[int64](t, ctx, "document.documentElement.scrollWidth"); sw > w {
				t.Errorf("at %d px the page is %d px wide", w, sw)
			}
		}
		b.shot(t, ctx, "judge-ranking-long-names")
	})

	t.Run("ConflictSkip", func(t *testing.T) {
		ts, _, code := floorServer(t)
		ctx := b.tab(t)
		openJudgeApp(t, ctx, ts.URL, code)
		name := evalJS[string](t, ctx, `document.querySelector('#project-name').textContent`)
		run(t, ctx, "skip", chromedp.Click(chromedp.CSS("#btn-skip")), chromedp.WaitVisible(chromedp.CSS("#skip-form")),
			chromedp.Click(chromedp.CSS(`#skip-form input[value="conflict"]`)))
		b.shot(t, ctx, "judge-skip-conflict")
		run(t, ctx, "submit skip", chromedp.Click(chromedp.CSS("#skip-submit")))
		waitJS(t, ctx, "next project", fmt.Sprintf(`document.querySelector('#project-name').textContent !== %s && document.querySelector('#sync').textContent === '✓ All saved'`, jsq(name)))
		var flags []map[string]any
		ts.must(200, "GET", "/api/admin/flags", nil, asAdmin, &flags)
		if len(flags) != 1 || flags[0]["reason"] != "conflict" || flags[0]["project_name"] != name {
			t.Errorf("flags = %v, want one conflict flag on %s", flags, name)
		}
	})
}
