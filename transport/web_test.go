package transport

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Browser tests: the real server, driven through Debian's Chromium with chromedp. One
// Chromium process serves every subtest; each subtest gets its own browser context
// (separate cookies), and any console error or uncaught exception fails it.

// findChromium returns the browser to drive: $PODIUM_CHROME or the first of the usual
// names on PATH.
func findChromium() string {
	if p := os.Getenv("PODIUM_CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

type webBrowser struct {
	ctx   context.Context // the browser's root context (has run once)
	shots string          // screenshot directory
}

// startChromium starts one headless Chromium for the test. Without a browser the test
// is skipped outside CI and fails under CI=true.
func startChromium(t *testing.T) *webBrowser {
	t.Helper()
	path := findChromium()
	if path == "" {
		msg := "no Chromium found (install Debian's chromium: apt-get install -y chromium, or set PODIUM_CHROME)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; browser tests skipped outside CI")
	}
	dir := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.WindowSize(1366, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err != nil {
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("start chromium %s: %v", path, err)
	}
	if v, err := chromedp.Call(ctx, browser.GetVersion, cdp.Empty{}); err == nil {
		chromiumVersion.Store(v.Product)
		t.Logf("browser %s", v.Product)
	}
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	shots := os.Getenv("PODIUM_SCREENSHOTS")
	if shots == "" {
		shots = filepath.Join(dir, "screenshots")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)
	return &webBrowser{ctx: ctx, shots: shots}
}

// tab opens a page in a fresh browser context (own cookies). Console errors, uncaught
// exceptions and security (CSP) errors fail the test at its end.
func (b *webBrowser) tab(t *testing.T) context.Context {
	t.Helper()
	ctx, cancelTab := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
		cancelTab()
		t.Fatalf("open tab: %v", err)
	}
	var mu sync.Mutex
	var bad []string
	done := make(chan struct{})
	msgs := chromedp.Console(ctx)
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			isErr := m.IsException() ||
				(m.Type == chromedp.ConsoleError && (m.Source == "" || m.Source == "javascript" || m.Source == "security"))
			if isErr {
				mu.Lock()
				bad = append(bad, fmt.Sprintf("%s (%s:%d)", m.String(), m.URL, m.Line))
				mu.Unlock()
			}
		}
	}()
	tctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, m := range bad {
			t.Errorf("browser console: %s", m)
		}
	})
	return tctx
}

// run runs browser actions and fails the test on error.
func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	for i, step := range steps {
		err := runStep(ctx, step)
		if err != nil {
			if len(steps) > 1 {
				what = fmt.Sprintf("%s (step %d of %d)", what, i+1, len(steps))
			}
			t.Fatalf("%s: %v", what, explainCDP(err))
		}
	}
}

// runStep runs one step with its own deadline. A step that failed because the page
// re-rendered the element between finding and using it (a live update) did nothing,
// and is tried again.
func runStep(ctx context.Context, step chromedp.Action[chromedp.Void]) error {
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err := chromedp.Do(sctx, step)
	for try := 0; err != nil && strings.Contains(err.Error(), "Could not find node with given id") && try < 3; try++ {
		err = chromedp.Do(sctx, step)
	}
	return err
}

// waitJS waits until the JavaScript expression is truthy.
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[any](expr, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("waiting for %s (%s): %v", what, expr, explainCDP(err))
	}
}

// evalJS evaluates an expression and returns its value.
func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, explainCDP(err))
	}
	return v
}

// jsq quotes s as a JavaScript string literal.
func jsq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// shot saves full-page screenshots of the current page at phone and desktop size, and
// checks that nothing overflows sideways at 320 px.
func (b *webBrowser) shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	sizes := []struct {
		suffix string
		w, h   int64
		mobile bool
	}{{"phone", 390, 844, true}, {"desktop", 1366, 900, false}}
	for _, s := range sizes {
		opts := []chromedp.EmulateViewportOption{}
		if s.mobile {
			opts = append(opts, chromedp.EmulateMobile)
		}
		run(t, ctx, "resize", chromedp.EmulateViewport(s.w, s.h, opts...))
		waitJS(t, ctx, "layout at new size", fmt.Sprintf("window.innerWidth === %d", s.w))
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(b.shots, name+"-"+s.suffix+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, ctx, "resize to 320", chromedp.EmulateViewport(320, 640, chromedp.EmulateMobile))
	waitJS(t, ctx, "layout at 320", "window.innerWidth === 320")
	if w := evalJS[int](t, ctx, "document.documentElement.scrollWidth"); w > 320 {
		t.Errorf("%s: page is %d px wide at a 320 px viewport (sideways scrolling)", name, w)
	}
	run(t, ctx, "resize back", chromedp.EmulateViewport(1366, 900))
}

// adminLogin logs the admin in through the dashboard's login form.
func adminLogin(t *testing.T, ctx context.Context, ts *testServer) {
	t.Helper()
	// A wrong password first: the server answers 400 and the form says so.
	run(t, ctx, "admin wrong password",
		chromedp.Navigate(ts.URL+"/admin"),
		chromedp.WaitVisible(chromedp.CSS("#login-password")),
		chromedp.SendKeys(chromedp.CSS("#login-password"), "not-the-password"),
		chromedp.Click(chromedp.CSS("#login-form button[type=submit]")),
	)
	waitJS(t, ctx, "wrong-password message", `(() => { const e = document.querySelector('#login-error'); return !e.hidden && e.textContent === 'Wrong password.'; })()`)
	evalJS[any](t, ctx, `document.querySelector('#login-password').value = ''`)
	run(t, ctx, "admin login",
		chromedp.SendKeys(chromedp.CSS("#login-password"), testPassword),
		chromedp.Click(chromedp.CSS("#login-form button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#view-dash")),
	)
}

// eventually polls cond (server state) until it holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// judgeState reads one judge from the admin API.
func judgeState(ts *testServer, id string) map[string]any {
	var list []map[string]any
	ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &list)
	for _, j := range list {
		if j["id"] == id {
			return j
		}
	}
	ts.t.Fatalf("judge %s not found", id)
	return nil
}

// TestWebStatic checks the embedded pages and files are served with their types, ETag
// revalidation and the pages' security headers.
func TestWebStatic(t *testing.T) {
	ts := startServer(t)
	for _, p := range []string{"/", "/join", "/admin", "/expo", "/static/app.css", "/static/lib.js"} {
		code, body := ts.do("GET", p, nil, anon)
		if code != 200 || len(body) == 0 {
			t.Errorf("GET %s: %d", p, code)
		}
	}
	if code, _ := ts.do("GET", "/static/nope.js", nil, anon); code != 404 {
		t.Errorf("GET unknown static file: %d, want 404", code)
	}
	resp, err := http.Get(ts.URL + "/static/judge.js")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("judge.js Content-Type = %q", ct)
	}
	etag := resp.Header.Get("ETag")
	if code, _ := ts.do("GET", "/static/judge.js", nil, auth{hdr: map[string]string{"If-None-Match": etag}}); etag == "" || code != 304 {
		t.Errorf("revalidation with ETag %q: %d, want 304", etag, code)
	}
	// Compressed for clients that accept gzip, identical once decompressed.
	code, gz := ts.do("GET", "/static/admin.js", nil, auth{hdr: map[string]string{"Accept-Encoding": "gzip"}})
	_, plain := ts.do("GET", "/static/admin.js", nil, auth{hdr: map[string]string{"Accept-Encoding": "identity"}})
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if code != 200 || err != nil {
		t.Fatalf("gzip admin.js: %d %v", code, err)
	}
	if unz, _ := io.ReadAll(zr); !bytes.Equal(unz, plain) || len(gz) >= len(plain) {
		t.Errorf("gzip admin.js: %d compressed bytes, %d plain, round trip equal %v", len(gz), len(plain), bytes.Equal(unz, plain))
	}
	resp, err = http.Get(ts.URL + "/admin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("admin page CSP = %q", csp)
	}
}

func TestWebApp(t *testing.T) {
	b := startChromium(t)

	t.Run("JudgeFlow", func(t *testing.T) {
		ts := startServer(t)
		for _, n := range []string{"Aurora", "Beacon", "Comet"} {
			ts.addProject(n, "Health")
		}
		jid, code := ts.addJudge("Jo Judge", "jo@example.com", "")
		ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
		ctx := b.tab(t)

		run(t, ctx, "open judge app", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#login-code")))
		b.shot(t, ctx, "judge-login")
		// A mistyped code is a 400 and says so.
		wrong := "00000000"
		if wrong == code {
			wrong = "00000001"
		}
		run(t, ctx, "wrong code", chromedp.SendKeys(chromedp.CSS("#login-code"), wrong), chromedp.KeyEvent(kb.Enter))
		waitJS(t, ctx, "wrong-code message", `(() => { const e = document.querySelector('#login-error'); return !e.hidden && e.textContent.includes('That code is not valid'); })()`)
		evalJS[any](t, ctx, `document.querySelector('#login-code').value = ''`)
		// Log in with the keyboard only: type the code, press Enter.
		run(t, ctx, "log in",
			chromedp.SendKeys(chromedp.CSS("#login-code"), code),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(chromedp.CSS("#welcome-ok")),
		)
		if f := evalJS[string](t, ctx, `document.activeElement.id`); f != "welcome-ok" {
			t.Errorf("focus after login is on %q, want the welcome button", f)
		}
		b.shot(t, ctx, "judge-welcome")
		run(t, ctx, "start", chromedp.Click(chromedp.CSS("#welcome-ok")), chromedp.WaitVisible(chromedp.CSS("#view-project")))
		waitJS(t, ctx, "first project", `document.querySelector('#project-name').textContent !== ''`)
		first := evalJS[string](t, ctx, `document.querySelector('#project-name').textContent`)
		waitJS(t, ctx, "countdown", `/^[0-9]+:[0-9]{2}$/.test(document.querySelector('#timer').textContent)`)
		b.shot(t, ctx, "judge-project")

		// Done with notes and a star.
		run(t, ctx, "finish with star",
			chromedp.Click(chromedp.CSS("#btn-done")),
			chromedp.WaitVisible(chromedp.CSS("#finish-notes")),
			chromedp.SendKeys(chromedp.CSS("#finish-notes"), "great demo"),
			chromedp.Click(chromedp.CSS("#finish-star")),
		)
		b.shot(t, ctx, "judge-finish-form")
		run(t, ctx, "submit", chromedp.Click(chromedp.CSS("#finish-submit")))
		waitJS(t, ctx, "second project", fmt.Sprintf(`(() => { const n = document.querySelector('#project-name').textContent; return n && n !== %s && !document.querySelector('#view-project').hidden; })()`, jsq(first)))
		second := evalJS[string](t, ctx, `document.querySelector('#project-name').textContent`)

		// Skip with a reason.
		run(t, ctx, "skip",
			chromedp.Click(chromedp.CSS("#btn-skip")),
			chromedp.WaitVisible(chromedp.CSS("#skip-form")),
			chromedp.Click(chromedp.CSS(`#skip-form input[value="cannot-demo"]`)),
		)
		b.shot(t, ctx, "judge-skip-form")
		run(t, ctx, "submit skip", chromedp.Click(chromedp.CSS("#skip-submit")))
		waitJS(t, ctx, "third project", fmt.Sprintf(`(() => { const n = document.querySelector('#project-name').textContent; return ![%s, %s].includes(n) && !document.querySelector('#view-project').hidden; })()`, jsq(first), jsq(second)))
		run(t, ctx, "finish third", chromedp.Click(chromedp.CSS("#btn-done")), chromedp.Click(chromedp.CSS("#finish-submit")))
		// Placement on submit: one comparison with the first project places the third.
		run(t, ctx, "placement", chromedp.WaitVisible(chromedp.CSS("#place-form")))
		b.shot(t, ctx, "judge-placement")
		run(t, ctx, "third is better", chromedp.Click(chromedp.CSS("#place-new")))
		waitJS(t, ctx, "all done", `!document.querySelector('#view-status').hidden && document.querySelector('#status-title').textContent === 'All done!'`)
		b.shot(t, ctx, "judge-done")

		// The flag of the skip reached the server.
		var flags []map[string]any
		ts.must(200, "GET", "/api/admin/flags", nil, asAdmin, &flags)
		if len(flags) != 1 || flags[0]["reason"] != "cannot-demo" || flags[0]["project_name"] != second {
			t.Errorf("flags after skip = %v, want one cannot-demo flag on %s", flags, second)
		}

		// The organiser sees the flag and dismisses it.
		actx := b.tab(t)
		adminLogin(t, actx, ts)
		waitJS(t, actx, "flag counted", `document.querySelector('#flag-count').textContent === '1'`)
		run(t, actx, "flags tab", chromedp.Click(chromedp.CSS("#tab-flags")))
		b.shot(t, actx, "admin-flags")
		run(t, actx, "dismiss", chromedp.Click(chromedp.CSS(`#flags-table button[aria-label^="Dismiss"]`)))
		eventually(t, "flag dismissed", func() bool {
			ts.must(200, "GET", "/api/admin/flags", nil, asAdmin, &flags)
			return len(flags) == 0
		})
		waitJS(t, actx, "flag list empty", `document.querySelector('#flag-count').textContent === '0'`)

		// Both judged projects were ranked on submit; take one out and rank it again,
		// then move the second up.
		run(t, ctx, "open list", chromedp.Click(chromedp.CSS("#nav-list")))
		waitJS(t, ctx, "two ranked on submit", `document.querySelectorAll('#ranked > li').length === 2`)
		run(t, ctx, "unrank second", chromedp.Click(chromedp.CSS(`#ranked > li:nth-child(2) button[aria-label^="Remove"]`)))
		waitJS(t, ctx, "one unranked", `document.querySelectorAll('#unranked > li').length === 1`)
		run(t, ctx, "rank it again", chromedp.Click(chromedp.CSS("#unranked > li:first-child .rank-buttons button")))
		waitJS(t, ctx, "two ranked", `document.querySelectorAll('#ranked > li').length === 2`)
		// The list re-renders when the server answers the ranking; the click waits for
		// that, so it never lands on an item the re-render replaces.
		eventually(t, "two ranked saved", func() bool {
			r, _ := judgeState(ts, jid)["rankings"].([]any)
			return len(r) == 2
		})
		ids := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#ranked > li')].map(li => li.dataset.id)`)
		run(t, ctx, "move up", chromedp.Click(chromedp.CSS(`#ranked > li:nth-child(2) button[aria-label^="Move"][aria-label$="up"]`)))
		want := []any{ids[1], ids[0]}
		eventually(t, "ranking saved", func() bool {
			r, _ := judgeState(ts, jid)["rankings"].([]any)
			return slices.Equal(r, want)
		})
		b.shot(t, ctx, "judge-ranking")

		// Drag with touch: the first ranked item's handle onto the second reorders back.
		box := evalJS[[]float64](t, ctx, `(() => { const hs = document.querySelectorAll('#ranked .drag-handle'); const r = [...hs].map(h => h.getBoundingClientRect()); return [r[0].x + r[0].width/2, r[0].y + r[0].height/2, r[1].x + r[1].width/2, r[1].y + r[1].height/2]; })()`)
		run(t, ctx, "touch drag", touchDrag(box[0], box[1], box[2], box[3]))
		want = []any{ids[0], ids[1]}
		eventually(t, "ranking after drag", func() bool {
			r, _ := judgeState(ts, jid)["rankings"].([]any)
			return slices.Equal(r, want)
		})

		// And with a mouse: drag the first handle onto the second again.
		box = evalJS[[]float64](t, ctx, `(() => { const hs = document.querySelectorAll('#ranked .drag-handle'); const r = [...hs].map(h => h.getBoundingClientRect()); return [r[0].x + r[0].width/2, r[0].y + r[0].height/2, r[1].x + r[1].width/2, r[1].y + r[1].height/2]; })()`)
		run(t, ctx, "mouse drag", mouseDrag(box[0], box[1], box[2], box[3]))
		want = []any{ids[1], ids[0]}
		eventually(t, "ranking after mouse drag", func() bool {
			r, _ := judgeState(ts, jid)["rankings"].([]any)
			return slices.Equal(r, want)
		})

		// The star and the notes of the first project were saved with it.
		j := judgeState(ts, jid)
		seen, _ := j["seen_projects"].([]any)
		if len(seen) != 2 {
			t.Fatalf("seen_projects = %v, want 2", seen)
		}
		p0 := seen[0].(map[string]any)
		if p0["name"] != first || p0["starred"] != true || p0["notes"] != "great demo" {
			t.Errorf("first judged project = %v, want %s starred with notes", p0, first)
		}

		// Editing notes in the list saves them.
		li := fmt.Sprintf(`#ranked > li[data-id="%s"]`, p0["project_id"])
		run(t, ctx, "edit notes",
			chromedp.Click(chromedp.CSS(li+` summary`)),
			chromedp.SendKeys(chromedp.CSS(li+` textarea`), " indeed"),
			chromedp.Click(chromedp.CSS(li+` details button`)),
		)
		eventually(t, "notes edited", func() bool {
			for _, s := range judgeState(ts, jid)["seen_projects"].([]any) {
				if s.(map[string]any)["notes"] == "great demo indeed" {
					return true
				}
			}
			return false
		})
	})

	t.Run("JudgeLiveStates", func(t *testing.T) {
		ts := startServer(t)
		ts.must(200, "POST", "/api/admin/options", map[string]any{"multi_group": true, "num_groups": 2, "group_sizes": []int{1, 1}, "group_names": []string{"North hall", "South hall"}}, asAdmin, nil)
		ts.addProject("Lumen", "")
		ts.addProject("Meteor", "")
		jid, code := ts.addJudge("Pat", "pat@example.com", "")
		tok := ts.login(code)
		ts.must(200, "PUT", "/api/judge/welcome", nil, asJudge(tok), nil)
		ctx := b.tab(t)

		// The clock is paused: the judge waits, and gets a project the moment it starts.
		run(t, ctx, "login by link", chromedp.Navigate(ts.URL+"/?code="+code))
		waitJS(t, ctx, "paused state", `!document.querySelector('#view-status').hidden && document.querySelector('#status-title').textContent === 'Judging is paused'`)
		b.shot(t, ctx, "judge-paused")
		ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
		waitJS(t, ctx, "project after unpause", `!document.querySelector('#view-project').hidden && document.querySelector('#project-name').textContent !== ''`)

		// Deliberation on and off.
		ts.must(200, "POST", "/api/admin/deliberation", map[string]any{"start": true}, asAdmin, nil)
		waitJS(t, ctx, "deliberation state", `!document.querySelector('#view-status').hidden && document.querySelector('#status-title').textContent === 'Deliberation'`)
		ts.must(200, "POST", "/api/admin/deliberation", map[string]any{"start": false}, asAdmin, nil)
		ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
		waitJS(t, ctx, "project after deliberation", `!document.querySelector('#view-project').hidden && document.querySelector('#project-name').textContent !== ''`)

		// The admin moves the judge to the other group: a notice names it.
		g := int(judgeState(ts, jid)["group"].(float64))
		ts.must(200, "PUT", "/api/judge/move/group/"+jid, map[string]any{"group": 1 - g}, asAdmin, nil)
		names := []string{"North hall", "South hall"}
		waitJS(t, ctx, "group notice", fmt.Sprintf(`!document.querySelector('#notice-group').hidden && document.querySelector('#notice-group').textContent.includes(%s)`, jsq(names[1-g])))
		b.shot(t, ctx, "judge-group-notice")
	})

	t.Run("AdminLive", func(t *testing.T) {
		ts := startServerWithOutbox(t) // the judge's mail state is shown
		p1 := ts.addProject("Nebula", "AI")
		ts.addProject("Orbit", "AI")
		_, code := ts.addJudge("Live Judge", "live@example.com", "")
		ctx := b.tab(t)
		adminLogin(t, ctx, ts)
		waitJS(t, ctx, "coverage with 2 unseen projects", `document.querySelector('#coverage').dataset.counts === '2'`)
		run(t, ctx, "mark page", chromedp.Evaluate[chromedp.Void](`window.__noReload = 1`))

		// Start the clock from the dashboard.
		run(t, ctx, "start clock", chromedp.Click(chromedp.CSS("#clock-start")))
		eventually(t, "clock running", func() bool {
			var r struct{ OK int }
			ts.must(200, "GET", "/api/admin/started", nil, anon, &r)
			return r.OK == 1
		})
		waitJS(t, ctx, "clock shows running", `document.querySelector('#clock-state').textContent === 'running'`)
		b.shot(t, ctx, "admin-overview")

		// A judge finishes a project: stats and chart follow without a reload.
		waitJS(t, ctx, "log loaded", `document.querySelector('#log').textContent.length > 0`)
		if evalJS[bool](t, ctx, `document.querySelector('#log').textContent.includes('[JUDGE Live Judge]')`) {
			t.Fatal("judge lines in the log before the judge acted")
		}
		tok := ts.login(code)
		var nx struct {
			ProjectID string `json:"project_id"`
		}
		ts.must(200, "POST", "/api/judge/next", nil, asJudge(tok), &nx)
		ts.must(200, "POST", "/api/judge/finish", map[string]any{"notes": "", "starred": true}, asJudge(tok), nil)
		waitJS(t, ctx, "coverage moved", `document.querySelector('#coverage').dataset.counts === '1,1'`)
		waitJS(t, ctx, "judge average moved", `document.querySelector('#stat-avg-judge').textContent === '1.00'`) // two decimals
		if evalJS[int](t, ctx, `window.__noReload || 0`) != 1 {
			t.Error("the dashboard reloaded")
		}
		// The audit log tails live: the judge's actions arrive without a reload.
		waitJS(t, ctx, "live log line", `document.querySelector('#log').textContent.includes('[JUDGE Live Judge]')`)
		rects := evalJS[int](t, ctx, `document.querySelectorAll('#coverage svg rect').length`)
		if rects != 2 {
			t.Errorf("coverage chart has %d bars, want 2 (0 and 1 views)", rects)
		}
		_ = p1
		// The judge flags the other project (its details list it below).
		ts.must(200, "POST", "/api/judge/next", nil, asJudge(tok), &nx)
		ts.must(200, "POST", "/api/judge/skip", map[string]string{"reason": "cannot-demo"}, asJudge(tok), nil)
		flaggedName := ""
		for _, p := range ts.projectList() {
			if p.ID == nx.ProjectID {
				flaggedName = fmt.Sprintf("%s (table %d)", p.Name, p.Location)
			}
		}

		// Deliberation switch with confirmation.
		run(t, ctx, "deliberation",
			chromedp.Click(chromedp.CSS("#deliberation")),
			chromedp.WaitVisible(chromedp.CSS("#dialog-ok")),
			chromedp.Click(chromedp.CSS("#dialog-ok")),
		)
		eventually(t, "deliberation on", func() bool {
			var o struct{ Deliberation bool }
			ts.must(200, "GET", "/api/admin/options", nil, asAdmin, &o)
			return o.Deliberation
		})
		waitJS(t, ctx, "deliberation button", `document.querySelector('#deliberation').getAttribute('aria-pressed') === 'true'`)

		// The tabs work from the keyboard (arrow keys move between them).
		run(t, ctx, "keyboard tabs", chromedp.Focus(chromedp.CSS("#tab-overview")), chromedp.KeyEvent(kb.ArrowRight))
		waitJS(t, ctx, "judges panel by keyboard", `!document.querySelector('#panel-judges').hidden && document.activeElement.id === 'tab-judges'`)

		// The judge's details show its notes and stars.
		run(t, ctx, "judges tab", chromedp.Click(chromedp.CSS("#tab-judges")))
		waitJS(t, ctx, "judge row", `document.querySelectorAll('#judges-table tbody tr').length === 1`)
		run(t, ctx, "details", chromedp.Click(chromedp.CSS(`#judges-table tbody tr button[aria-label^="Details"]`)))
		waitJS(t, ctx, "details dialog", `document.querySelector('#dialog').open && document.querySelector('#dialog-body').textContent.includes('starred')`)
		if body := evalJS[string](t, ctx, `document.querySelector('#dialog-body').textContent`); !strings.Contains(body, "Reported as a problem (1)") || !strings.Contains(body, flaggedName) || strings.Contains(body, "null") {
			t.Errorf("judge details do not list the flagged project: %q", body)
		}
		b.shot(t, ctx, "admin-judge-details")
		// The judge was added with no_send: "Email login code" in its details queues the
		// mail, recorded as not sent here (no SMTP), and the row shows it.
		if body := evalJS[string](t, ctx, `document.querySelector('#dialog-body').textContent`); !strings.Contains(body, "Login code email: –") {
			t.Errorf("details of a judge without a mail: %q", body)
		}
		run(t, ctx, "email login code", chromedp.Click(chromedp.CSS(`#dialog-body button[aria-label^="Email"]`)))
		run(t, ctx, "close details", chromedp.Click(chromedp.CSS("#dialog-ok")))
		waitJS(t, ctx, "mail state in the row", `document.querySelector('#judges-table tbody tr').textContent.includes('not sent (no SMTP)')`)

		run(t, ctx, "log tab", chromedp.Click(chromedp.CSS("#tab-log")))
		waitJS(t, ctx, "log lines", `document.querySelector('#log').textContent.length > 0`)
		b.shot(t, ctx, "admin-log")
		// Options: change the judging timer from the settings form.
		run(t, ctx, "settings tab", chromedp.Click(chromedp.CSS("#tab-settings")), chromedp.WaitVisible(chromedp.CSS("#o-judging_timer")))
		waitJS(t, ctx, "options loaded", `document.querySelector('#o-judging_timer').value === '300'`)
		b.shot(t, ctx, "admin-settings")
		run(t, ctx, "set timer",
			chromedp.SetValue(chromedp.CSS("#o-judging_timer"), "120"),
			chromedp.Click(chromedp.CSS("#options-form button[type=submit]")),
		)
		eventually(t, "timer saved", func() bool {
			var r struct {
				JudgingTimer int `json:"judging_timer"`
			}
			ts.must(200, "GET", "/api/admin/timer", nil, asAdmin, &r)
			return r.JudgingTimer == 120
		})

		// QR code image and backup.
		run(t, ctx, "data tab", chromedp.Click(chromedp.CSS("#tab-data")))
		waitJS(t, ctx, "qr cards", `document.querySelectorAll('#qr-list .card').length >= 1`)
		run(t, ctx, "make qr", chromedp.Click(chromedp.CSS("#qr-list .card button")))
		waitJS(t, ctx, "qr image", `(() => { const i = document.querySelector('#qr-list img'); return i && i.complete && i.naturalWidth > 0; })()`)
		run(t, ctx, "backup", chromedp.Click(chromedp.CSS("#backup")))
		waitJS(t, ctx, "backup link", `!!document.querySelector('#backup-result a[href^="/api/admin/backup/"]')`)
		b.shot(t, ctx, "admin-data")
	})

	t.Run("AdminCSV", func(t *testing.T) {
		ts := startServer(t)
		ctx := b.tab(t)
		adminLogin(t, ctx, ts)
		dir := t.TempDir()
		good := filepath.Join(dir, "projects.csv")
		if err := os.WriteFile(good, []byte("name,description,url\nQuasar,A telescope app,https://example.com/q\nPulsar,Beats,\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "projects tab", chromedp.Click(chromedp.CSS("#tab-projects")), chromedp.WaitVisible(chromedp.CSS("#pu-file")))
		run(t, ctx, "upload projects",
			chromedp.SetUploadFiles(chromedp.CSS("#pu-file"), []string{good}),
			chromedp.Click(chromedp.CSS("#project-upload button[type=submit]")),
		)
		waitJS(t, ctx, "imported rows", `(() => { const t = document.querySelector('#projects-table tbody').textContent; return t.includes('Quasar') && t.includes('Pulsar'); })()`)
		b.shot(t, ctx, "admin-projects")

		// A submission platform's export: the header box is off for it, and back on once
		// the form has reset to a Podium CSV.
		subs := filepath.Join(dir, "submissions.csv")
		if err := os.WriteFile(subs, []byte("Project Title,Project Status,About The Project\nNebula,Submitted,Stars\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "submissions kind", chromedp.SetValue(chromedp.CSS("#pu-kind"), "submissions"),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('#pu-kind').dispatchEvent(new Event('change'))`))
		waitJS(t, ctx, "header box off", `document.querySelector('#pu-header').disabled`)
		run(t, ctx, "upload submissions",
			chromedp.SetUploadFiles(chromedp.CSS("#pu-file"), []string{subs}),
			chromedp.Click(chromedp.CSS("#project-upload button[type=submit]")),
		)
		waitJS(t, ctx, "submission imported", `document.querySelector('#projects-table tbody').textContent.includes('Nebula')`)
		waitJS(t, ctx, "header box back on", `document.querySelector('#pu-kind').value === 'csv' && !document.querySelector('#pu-header').disabled`)

		projectByName := func(name string) map[string]any {
			var list []map[string]any
			ts.must(200, "GET", "/api/project/list", nil, asAdmin, &list)
			for _, p := range list {
				if p["name"] == name {
					return p
				}
			}
			return nil
		}

		// Select one row, prioritize it with the bulk action.
		run(t, ctx, "select Pulsar", chromedp.Click(chromedp.CSS(`#projects-table input[aria-label="Select Pulsar"]`)))
		run(t, ctx, "bulk prioritize", chromedp.Click(chromedp.CSS(`#projects-table button[data-bulk="prioritize"]`)))
		eventually(t, "Pulsar prioritized", func() bool { return projectByName("Pulsar")["prioritized"] == true })
		waitJS(t, ctx, "priority shown", `document.querySelector('#projects-table tbody').textContent.includes('priority')`)

		// Move a project to another table through the dialog.
		run(t, ctx, "move dialog",
			chromedp.Click(chromedp.CSS(`#projects-table button[aria-label="Move Pulsar to another table"]`)),
			chromedp.WaitVisible(chromedp.CSS("#dialog-input")),
			chromedp.SetValue(chromedp.CSS("#dialog-input"), "7"),
			chromedp.Click(chromedp.CSS("#dialog-ok")),
		)
		eventually(t, "Pulsar at table 7", func() bool { return projectByName("Pulsar")["location"] == 7.0 })
		// The table re-renders when the move's change arrives; a click on the row before
		// that can hit a node the render replaces ("Could not find node with given id").
		waitJS(t, ctx, "move shown", `[...document.querySelectorAll('#projects-table tbody tr')].some(r => {
			const c = [...r.cells].map(x => x.textContent.trim()); return c.includes('Pulsar') && c.includes('7'); })`)

		// Hide, then delete with confirmation.
		run(t, ctx, "hide", chromedp.Click(chromedp.CSS(`#projects-table button[aria-label="Hide Pulsar"]`)))
		eventually(t, "Pulsar hidden", func() bool { return projectByName("Pulsar")["active"] == false })
		waitJS(t, ctx, "unhide offered", `!!document.querySelector('#projects-table button[aria-label="Unhide Pulsar"]')`)
		run(t, ctx, "delete",
			chromedp.Click(chromedp.CSS(`#projects-table button[aria-label="Delete Pulsar"]`)),
			chromedp.WaitVisible(chromedp.CSS("#dialog-ok")),
		)
		b.shot(t, ctx, "admin-confirm-delete")
		run(t, ctx, "confirm delete", chromedp.Click(chromedp.CSS("#dialog-ok")))
		eventually(t, "Pulsar deleted", func() bool { return projectByName("Pulsar") == nil })
		waitJS(t, ctx, "row gone", `!document.querySelector('#projects-table tbody').textContent.includes('Pulsar')`)

		// Search filters the table.
		ts.addProject("Parsec", "")
		waitJS(t, ctx, "project added elsewhere shows up", `document.querySelector('#projects-table tbody').textContent.includes('Parsec')`)
		run(t, ctx, "search", chromedp.SendKeys(chromedp.CSS("#projects-search"), "quas"))
		waitJS(t, ctx, "filtered", `document.querySelectorAll('#projects-table tbody tr').length === 1`)

		// A bad judges CSV shows the row error and adds nothing.
		bad := filepath.Join(dir, "judges.csv")
		if err := os.WriteFile(bad, []byte("name,email\nAda,ada@example.com\nBob,not-an-email\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "judges tab", chromedp.Click(chromedp.CSS("#tab-judges")), chromedp.WaitVisible(chromedp.CSS("#ju-file")))
		run(t, ctx, "upload bad judges",
			chromedp.SetUploadFiles(chromedp.CSS("#ju-file"), []string{bad}),
			chromedp.Click(chromedp.CSS("#ju-nosend")),
			chromedp.Click(chromedp.CSS("#judge-upload button[type=submit]")),
		)
		waitJS(t, ctx, "row error shown", `!document.querySelector('#ju-error').hidden && document.querySelector('#ju-error').textContent.includes('3')`)
		var judges []map[string]any
		ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &judges)
		if len(judges) != 0 {
			t.Errorf("bad CSV added %d judges", len(judges))
		}

		// Add one judge by the form.
		run(t, ctx, "add judge",
			chromedp.SendKeys(chromedp.CSS("#ja-name"), "Grace"),
			chromedp.SendKeys(chromedp.CSS("#ja-email"), "grace@example.com"),
			chromedp.Click(chromedp.CSS("#ja-nosend")),
			chromedp.Click(chromedp.CSS("#judge-add button[type=submit]")),
		)
		waitJS(t, ctx, "judge row", `document.querySelector('#judges-table tbody').textContent.includes('grace@example.com')`)
		b.shot(t, ctx, "admin-judges")
	})

	t.Run("ExpoLive", func(t *testing.T) {
		ts := startServer(t)
		ts.addProject("Zephyr", "Climate")
		ctx := b.tab(t)
		run(t, ctx, "open expo", chromedp.Navigate(ts.URL+"/expo"))
		waitJS(t, ctx, "first project", `document.querySelector('#projects').textContent.includes('Zephyr')`)
		waitJS(t, ctx, "live link", `true`)
		run(t, ctx, "mark page", chromedp.Evaluate[chromedp.Void](`window.__noReload = 1`))
		// Give the websocket its hello before changing anything.
		waitJS(t, ctx, "socket open", `document.querySelector('#offline').hidden`)
		id := ts.addProject("Yonder", "Education, Climate")
		waitJS(t, ctx, "added project appears", `document.querySelector('#projects').textContent.includes('Yonder')`)
		if evalJS[int](t, ctx, `window.__noReload || 0`) != 1 {
			t.Error("the expo page reloaded")
		}
		run(t, ctx, "filter by challenge", chromedp.SetValue(chromedp.CSS("#challenge"), "Education"),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('#challenge').dispatchEvent(new Event('change'))`))
		waitJS(t, ctx, "filtered", `document.querySelectorAll('#projects > li').length === 1`)
		run(t, ctx, "clear filter", chromedp.SetValue(chromedp.CSS("#challenge"), ""),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('#challenge').dispatchEvent(new Event('change'))`))
		b.shot(t, ctx, "expo")
		ts.must(200, "PUT", "/api/project/hide/"+id, nil, asAdmin, nil)
		waitJS(t, ctx, "hidden project leaves", `!document.querySelector('#projects').textContent.includes('Yonder')`)
	})

	t.Run("QRJoin", func(t *testing.T) {
		ts := startServer(t)
		var qr struct {
			QRCode string `json:"qr_code"`
		}
		ts.must(200, "POST", "/api/admin/qr", nil, asAdmin, &qr)
		ctx := b.tab(t)
		run(t, ctx, "open join link", chromedp.Navigate(ts.URL+"/join?code="+qr.QRCode), chromedp.WaitVisible(chromedp.CSS("#join-name")))
		b.shot(t, ctx, "judge-join")
		run(t, ctx, "join",
			chromedp.SendKeys(chromedp.CSS("#join-name"), "Quinn"),
			chromedp.SendKeys(chromedp.CSS("#join-email"), "quinn@example.com"),
			chromedp.Click(chromedp.CSS("#join-form button[type=submit]")),
		)
		// The new judge's code is shown once first (TestWebQRSignupShowsCode).
		run(t, ctx, "code kept", chromedp.WaitVisible(chromedp.CSS("#joined-ok")), chromedp.Click(chromedp.CSS("#joined-ok")))
		waitJS(t, ctx, "logged in", `!document.querySelector('#view-app').hidden && document.querySelector('#who').textContent === 'Quinn'`)
		if loc := evalJS[string](t, ctx, `location.search`); strings.Contains(loc, "code") {
			t.Errorf("join code left in the address bar: %s", loc)
		}
		var judges []map[string]any
		ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &judges)
		if len(judges) != 1 || judges[0]["email"] != "quinn@example.com" {
			t.Fatalf("judges after QR join = %v", judges)
		}
		// The emailed link form (/?code=) logs in directly too.
		ctx2 := b.tab(t)
		run(t, ctx2, "login link", chromedp.Navigate(ts.URL+"/?code="+judges[0]["code"].(string)))
		waitJS(t, ctx2, "logged in by link", `!document.querySelector('#view-app').hidden && document.querySelector('#who').textContent === 'Quinn'`)
	})
}

// touchDrag drags one finger from (x1, y1) to (x2, y2) in small steps.
func touchDrag(x1, y1, x2, y2 float64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		point := func(x, y float64) []*input.TouchPoint {
			one, zero := 1.0, 0.0
			return []*input.TouchPoint{{X: x, Y: y, RadiusX: &one, RadiusY: &one, Force: &one, ID: &zero}}
		}
		send := func(typ input.DispatchTouchEventType, pts []*input.TouchPoint) error {
			_, err := cdp.Call(ctx, t, input.DispatchTouchEvent, input.DispatchTouchEventParams{Type: typ, TouchPoints: pts})
			return err
		}
		if err := send(input.DispatchTouchEventTypeTouchStart, point(x1, y1)); err != nil {
			return err
		}
		const steps = 8
		for i := 1; i <= steps; i++ {
			f := float64(i) / steps
			if err := send(input.DispatchTouchEventTypeTouchMove, point(x1+(x2-x1)*f, y1+(y2-y1)*f)); err != nil {
				return err
			}
		}
		return send(input.DispatchTouchEventTypeTouchEnd, []*input.TouchPoint{})
	})
}

// mouseDrag presses the left button at (x1, y1), moves to (x2, y2) in small steps and
// releases it there.
func mouseDrag(x1, y1, x2, y2 float64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		send := func(typ input.DispatchMouseEventType, x, y float64, buttons int64) error {
			p := input.DispatchMouseEventParams{Type: typ, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: buttons, ClickCount: 1}
			if typ == input.DispatchMouseEventTypeMouseMoved {
				p.ClickCount = 0
			}
			_, err := cdp.Call(ctx, t, input.DispatchMouseEvent, p)
			return err
		}
		if err := send(input.DispatchMouseEventTypeMouseMoved, x1, y1, 0); err != nil {
			return err
		}
		if err := send(input.DispatchMouseEventTypeMousePressed, x1, y1, 1); err != nil {
			return err
		}
		const steps = 8
		for i := 1; i <= steps; i++ {
			f := float64(i) / steps
			if err := send(input.DispatchMouseEventTypeMouseMoved, x1+(x2-x1)*f, y1+(y2-y1)*f, 1); err != nil {
				return err
			}
		}
		return send(input.DispatchMouseEventTypeMouseReleased, x2, y2, 0)
	})
}
