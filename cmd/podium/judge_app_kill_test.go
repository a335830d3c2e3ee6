package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The judge app against the real binary (docs/behaviour.md#judge-app): the server is
// killed with SIGKILL mid-visit and restarted on the same port and data directory; later
// it is killed while the judge keeps judging, the page is reloaded with no server at all
// (it opens from the service worker), and when the server is back every queued action
// lands exactly once.

// appBrowser starts a headless Chromium (skipped when none is installed, outside CI)
// with any extra options and returns a tab whose uncaught exceptions fail the test.
func appBrowser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path := os.Getenv("PODIUM_CHROME")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path == "" {
			path, _ = exec.LookPath(name)
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium found")
		}
		t.Skip("no Chromium found; browser tests skipped outside CI")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")),
		chromedp.Flag("disable-background-networking", true), chromedp.NoFirstRun)
	opts = append(opts, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	var bad []string
	done := make(chan struct{})
	msgs := chromedp.Console(ctx)
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.IsException() {
				bad = append(bad, m.String())
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		<-done
		for _, m := range bad {
			t.Errorf("browser exception: %s", m)
		}
	})
	return ctx
}

func appRun(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func appWait(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[any](expr, chromedp.WithPollingTimeout(45*time.Second), chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#main').innerText.slice(0, 600)`))
		t.Fatalf("waiting for %s (%s): %v; page shows:\n%s", what, expr, err, state)
	}
}

func appEval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

func jsStr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// appPrefs answers the placement questions (best first); appStars are starred.
var (
	appPrefs = []string{"Beacon", "Comet", "Aurora"}
	appStars = map[string]bool{"Beacon": true, "Aurora": true}
)

// appVisit finishes the project on screen: notes, star, placement; reload reloads the
// page with the form half filled.
func appVisit(t *testing.T, ctx context.Context, reload bool) string {
	t.Helper()
	appWait(t, ctx, "a project", `!document.querySelector('#view-project').hidden && document.querySelector('#project-name').textContent !== ''`)
	name := appEval[string](t, ctx, `document.querySelector('#project-name').textContent`)
	appRun(t, ctx, "done "+name, chromedp.Click(chromedp.CSS("#btn-done")), chromedp.WaitVisible(chromedp.CSS("#finish-notes")),
		chromedp.SendKeys(chromedp.CSS("#finish-notes"), "notes on "+name))
	if appStars[name] {
		appRun(t, ctx, "star", chromedp.Click(chromedp.CSS("#finish-star")))
	}
	if reload {
		appRun(t, ctx, "reload with no server", chromedp.Reload())
		appWait(t, ctx, "draft after reload", fmt.Sprintf(`!document.querySelector('#finish-form').hidden && document.querySelector('#finish-notes').value === %s`, jsStr("notes on "+name)))
	}
	appRun(t, ctx, "submit", chromedp.Click(chromedp.CSS("#finish-submit")))
	for range 4 {
		st := appEval[[]string](t, ctx, `document.querySelector('#place-form').hidden ? [] : [document.querySelector('#place-new .place-name').textContent, document.querySelector('#place-old .place-name').textContent]`)
		if len(st) == 0 {
			break
		}
		pick := "#place-old"
		if slices.Index(appPrefs, st[0]) < slices.Index(appPrefs, st[1]) {
			pick = "#place-new"
		}
		appRun(t, ctx, "compare", chromedp.Click(chromedp.CSS(pick)))
	}
	appWait(t, ctx, "next screen", fmt.Sprintf(`document.querySelector('#place-form').hidden && (document.querySelector('#view-project').hidden || document.querySelector('#project-name').textContent !== %s)`, jsStr(name)))
	return name
}

func TestSIGKILLJudgeAppKeepsQueue(t *testing.T) {
	ctx := appBrowser(t)
	dir := t.TempDir()
	p := startBinary(t, dir)
	port := p.base[strings.LastIndex(p.base, ":")+1:]
	restart := func() {
		p.kill()
		p = startBinary(t, dir, "PORT="+port)
	}
	for _, n := range appPrefs {
		p.must("POST", "/api/project/new", map[string]any{"name": n, "description": "d"}, "")
	}
	p.must("POST", "/api/admin/options", map[string]any{"event_name": "Hack the Hall", "clock_sync": true}, "") // the clock runs on across restarts
	p.must("POST", "/api/judge/new", map[string]any{"name": "Kim", "email": "kim@example.com", "notes": "", "no_send": true}, "")
	var judges []struct{ ID, Code string }
	json.Unmarshal(p.must("GET", "/api/judge/list", nil, ""), &judges)
	code := judges[0].Code
	p.must("POST", "/api/admin/clock/unpause", nil, "")

	appRun(t, ctx, "log in with a spaced code", chromedp.Navigate(p.base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-code")),
		chromedp.SendKeys(chromedp.CSS("#login-code"), code[:4]+" "+code[4:]), chromedp.KeyEvent(kb.Enter))
	appRun(t, ctx, "welcome", chromedp.WaitVisible(chromedp.CSS("#welcome-ok")), chromedp.Click(chromedp.CSS("#welcome-ok")))
	appWait(t, ctx, "first project", `!document.querySelector('#view-project').hidden && document.querySelector('#project-name').textContent !== ''`)
	appWait(t, ctx, "service worker and upcoming", `!!navigator.serviceWorker.controller && Object.keys(localStorage).some(k => k.endsWith('.upcoming') && JSON.parse(localStorage.getItem(k)).length === 2) && Object.keys(JSON.parse(localStorage.getItem(Object.keys(localStorage).find(k => k.endsWith('.projects'))) || '{}')).length === 3`)
	appWait(t, ctx, "welcome saved", `document.querySelector('#sync').textContent === '✓ All saved'`)
	first := appEval[string](t, ctx, `document.querySelector('#project-name').textContent`)
	starts := `JSON.stringify(JSON.parse(localStorage.getItem(Object.keys(localStorage).find(k => k.endsWith('.starts')))))`
	timerStart := appEval[string](t, ctx, starts)

	// SIGKILL mid-visit and restart: the same project and the same countdown.
	restart()
	appRun(t, ctx, "reload after restart", chromedp.Reload())
	appWait(t, ctx, "same project after restart", fmt.Sprintf(`!document.querySelector('#view-project').hidden && document.querySelector('#project-name').textContent === %s`, jsStr(first)))
	if got := appEval[string](t, ctx, starts); got != timerStart {
		t.Errorf("countdown start %s after the restart, %s before", got, timerStart)
	}

	// SIGKILL and stay down: the judge keeps going from the phone.
	p.kill()
	appWait(t, ctx, "connection lost", `!document.querySelector('#notice-offline').hidden`)
	var names []string
	names = append(names, appVisit(t, ctx, false))
	names = append(names, appVisit(t, ctx, false))
	names = append(names, appVisit(t, ctx, true))
	appWait(t, ctx, "waiting for the server", `document.querySelector('#status-title').textContent === 'Waiting for the connection' && /waiting to send$/.test(document.querySelector('#sync').textContent)`)
	slices.Sort(names)
	if !slices.Equal(names, []string{"Aurora", "Beacon", "Comet"}) {
		t.Fatalf("visits %v, want the three projects", names)
	}
	p = startBinary(t, dir, "PORT="+port)
	appWait(t, ctx, "all saved", `document.querySelector('#sync').textContent === '✓ All saved'`)
	appWait(t, ctx, "all done", `document.querySelector('#status-title').textContent === 'All done!'`)

	// What the same actions made online give (TestWebJudgeOffline's reference).
	type seen struct {
		Name, Notes string
		Starred     bool
	}
	var j []struct {
		Seen         int
		Rankings     []string
		SeenProjects []struct {
			ProjectID string `json:"project_id"`
			Name      string
			Notes     string
			Starred   bool
		} `json:"seen_projects"`
	}
	json.Unmarshal(p.must("GET", "/api/judge/list", nil, ""), &j)
	var projects []struct {
		ID, Name string
		Seen     int
	}
	json.Unmarshal(p.must("GET", "/api/project/list", nil, ""), &projects)
	byID := map[string]string{}
	for _, pr := range projects {
		byID[pr.ID] = pr.Name
		if pr.Seen != 1 {
			t.Errorf("%s has %d views, want 1", pr.Name, pr.Seen)
		}
	}
	var got []seen
	for _, s := range j[0].SeenProjects {
		got = append(got, seen{s.Name, s.Notes, s.Starred})
	}
	slices.SortFunc(got, func(a, b seen) int { return strings.Compare(a.Name, b.Name) })
	want := []seen{{"Aurora", "notes on Aurora", true}, {"Beacon", "notes on Beacon", true}, {"Comet", "notes on Comet", false}}
	var ranking []string
	for _, id := range j[0].Rankings {
		ranking = append(ranking, byID[id])
	}
	if j[0].Seen != 3 || !reflect.DeepEqual(got, want) || !slices.Equal(ranking, appPrefs) {
		t.Errorf("after the restart: seen %d, visits %+v, ranking %v; want 3, %+v, %v", j[0].Seen, got, ranking, want, appPrefs)
	}
}
