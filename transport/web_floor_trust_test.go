package transport

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Trust on the floor (docs/behaviour.md#judge-app): the phone never claims a save that
// has not happened, a visit begun offline shows on the dashboard, a page without a
// service worker says not to reload offline, the judge stays signed in, a QR sign-up
// shows its code, and notices keep clear of buttons.

// cutProxy forwards TCP connections to a server; off() closes every connection and
// refuses new ones (they are accepted and closed at once) until on(): the phone's
// Wi-Fi gone, for the page and its service worker alike.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	off    bool
	conns  map[net.Conn]bool
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: strings.TrimPrefix(target, "http://"), conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.cut(true) })
	return p
}

// port is the proxy's port (the phone's URL is built on it).
func (p *cutProxy) port() string { return strconv.Itoa(p.ln.Addr().(*net.TCPAddr).Port) }

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.off {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *cutProxy) pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// cut turns the network off (true) or on again (false).
func (p *cutProxy) cut(off bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.off = off
	if off {
		for c := range p.conns {
			c.Close()
		}
	}
}

// floorBrowser is startChromium with extra Chromium options (a host name mapped to
// loopback, a profile directory kept across restarts).
func floorBrowser(t *testing.T, profile string, extra ...chromedp.ExecAllocatorOption) (*webBrowser, func()) {
	t.Helper()
	path := findChromium()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium found")
		}
		t.Skip("no Chromium found; browser tests skipped outside CI")
	}
	if profile == "" {
		profile = filepath.Join(t.TempDir(), "profile")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(profile),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.NoFirstRun,
		chromedp.WindowSize(1366, 900))
	opts = append(opts, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err != nil {
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	stop := sync.OnceFunc(func() { cancelBrowser(); cancelAlloc() })
	t.Cleanup(stop)
	shots := os.Getenv("PODIUM_SCREENSHOTS")
	if shots == "" {
		shots = filepath.Join(t.TempDir(), "screenshots")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	return &webBrowser{ctx: ctx, shots: shots}, stop
}

// phone is a tab at 390 px, a phone in portrait.
func (b *webBrowser) phone(t *testing.T) context.Context {
	t.Helper()
	ctx := b.tab(t)
	run(t, ctx, "phone size", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	return ctx
}

// phoneShot saves a screenshot at the phone's size.
func (b *webBrowser) phoneShot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+"-390.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// toastClear is true when the notice on screen covers no visible button, link or field.
const toastClear = `(() => {
	const t = document.querySelector('#toast');
	if (!t || t.hidden) return true;
	const a = t.getBoundingClientRect();
	return [...document.querySelectorAll('button, a[href], input, textarea, select')].every((el) => {
		const b = el.getBoundingClientRect();
		if (!b.width || !b.height || el.closest('[hidden]')) return true;
		return a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
	});
})()`

// loginAt logs the judge in at base (the phone's URL) and waits for its first
// project with the upcoming ones kept on the phone.
func loginAt(t *testing.T, ctx context.Context, base, code string) {
	t.Helper()
	run(t, ctx, "open app", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-code")),
		chromedp.SendKeys(chromedp.CSS("#login-code"), code), chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, "first project", `!document.querySelector('#view-project').hidden && document.querySelector('#project-name').textContent !== ''`)
	waitJS(t, ctx, "upcoming kept", `(() => { const k = Object.keys(localStorage).find(k => k.endsWith('.upcoming')); const p = Object.keys(localStorage).find(k => k.endsWith('.projects'));
		return k && p && JSON.parse(localStorage.getItem(k)).length === 2 && JSON.parse(localStorage.getItem(k)).every(id => JSON.parse(localStorage.getItem(p))[id]); })()`)
}

// projectID returns the id of the project named name.
func projectID(ts *testServer, name string) string {
	for _, p := range ts.projectList() {
		if p.Name == name {
			return p.ID
		}
	}
	ts.t.Fatalf("no project %s", name)
	return ""
}

// TestWebJudgeOfflineVisitAndWaitingSkip: offline, the judge submits its project, skips
// the next one ("Nobody at the table") and starts on the third. Back online the status
// line never says "✓ All saved" while the skip waits on the phone, and says so in
// words; the third visit becomes the judge's current project on the server, and the
// dashboard's Current column shows it.
func TestWebJudgeOfflineVisitAndWaitingSkip(t *testing.T) {
	b, _ := floorBrowser(t, "")
	ts, jid, code := floorServer(t)
	ts.addProject("Dynamo", "")
	proxy := startCutProxy(t, ts.URL)
	phoneURL := "http://127.0.0.1:" + proxy.port()
	ctx := b.phone(t)
	loginAt(t, ctx, phoneURL, code)
	waitJS(t, ctx, "all saved", `document.querySelector('#sync').textContent === '✓ All saved'`)

	proxy.cut(true)
	waitJS(t, ctx, "connection lost", `!document.querySelector('#notice-offline').hidden`)
	first := judgeVisit(t, ctx, false)
	waitJS(t, ctx, "an upcoming project", fmt.Sprintf(`!document.querySelector('#view-project').hidden && document.querySelector('#project-name').textContent !== %s`, jsq(first)))
	skipped := evalJS[string](t, ctx, `document.querySelector('#project-name').textContent`)
	run(t, ctx, "skip: nobody at the table", chromedp.Click(chromedp.CSS("#btn-skip")),
		chromedp.Click(chromedp.CSS(`#skip-form input[value=absent]`)), chromedp.Click(chromedp.CSS("#skip-submit")))
	waitJS(t, ctx, "the third project", fmt.Sprintf(`!document.querySelector('#view-project').hidden && ![%s, %s].includes(document.querySelector('#project-name').textContent)`, jsq(first), jsq(skipped)))
	third := evalJS[string](t, ctx, `document.querySelector('#project-name').textContent`)
	waitJS(t, ctx, "the skip counted in the status line", fmt.Sprintf(`document.querySelector('#sync').textContent.includes('1 skip waits until the server sends you “%s”')`, skipped))
	if !evalJS[bool](t, ctx, toastClear) {
		t.Error("the notice covers a button")
	}
	b.phoneShot(t, ctx, "judge-skip-waits-offline")

	// Back online: record every text the status line shows from now on.
	evalJS[any](t, ctx, `(() => { window.syncSeen = []; const el = document.querySelector('#sync');
		new MutationObserver(() => window.syncSeen.push(el.textContent)).observe(el, { childList: true, characterData: true, subtree: true }); })()`)
	proxy.cut(false)
	thirdID := projectID(ts, third)
	eventually(t, "the visit begun offline held by the server", func() bool { return judgeState(ts, jid)["current"] == thirdID })
	waitJS(t, ctx, "outbox drained", `/^1 skip waits until the server sends you “.*”$/.test(document.querySelector('#sync').textContent)`)
	if seen := evalJS[[]string](t, ctx, `window.syncSeen`); strings.Contains(strings.Join(seen, "|"), "All saved") {
		t.Errorf("the status line said all saved while a skip waited: %q", seen)
	}
	b.phoneShot(t, ctx, "judge-skip-waits-online")
	var log struct{ Log string }
	ts.must(200, "GET", "/api/admin/log", nil, asAdmin, &log)
	if !strings.Contains(log.Log, "visited offline project "+third) {
		t.Errorf("audit log has no offline visit of %s:\n%s", third, log.Log)
	}
	if strings.Contains(log.Log, "assigned project "+third) {
		t.Errorf("audit log says %s was assigned:\n%s", third, log.Log)
	}

	// The organiser's dashboard shows where the judge stands.
	admin := b.tab(t)
	adminLogin(t, admin, ts)
	run(t, admin, "judges tab", chromedp.Click(chromedp.CSS("#tab-judges")), chromedp.WaitVisible(chromedp.CSS("#judges-table")))
	waitJS(t, admin, "Current column", fmt.Sprintf(`[...document.querySelectorAll('#judges-table tbody tr')].some(r => r.offsetParent && r.textContent.includes('Flo Floor') && r.textContent.includes(%s))`, jsq(third+" (table ")))
	b.shotAt(t, admin, "dashboard-offline-visit", 1400, 900)
	b.shotAt(t, admin, "dashboard-offline-visit", 1920, 1080)
}

// TestWebJudgeNoServiceWorkerWarning: on plain http from another machine's address (a
// LAN name here, mapped to loopback) the browser gives the page no service worker,
// and the judge is told not to reload while offline.
func TestWebJudgeNoServiceWorkerWarning(t *testing.T) {
	b, _ := floorBrowser(t, "", chromedp.Flag("host-resolver-rules", "MAP judging.lan 127.0.0.1"))
	ts, _, code := floorServer(t)
	port := ts.URL[strings.LastIndex(ts.URL, ":")+1:]
	ctx := b.phone(t)
	loginAt(t, ctx, "http://judging.lan:"+port, code)
	if evalJS[bool](t, ctx, `window.isSecureContext`) {
		t.Fatal("http://judging.lan is a secure context: the test cannot show the warning")
	}
	waitJS(t, ctx, "the warning", `!document.querySelector('#notice-nosw').hidden && document.querySelector('#notice-nosw').textContent.includes('do not reload it')`)
	b.phoneShot(t, ctx, "judge-no-service-worker")

	// On localhost the service worker runs and there is no warning.
	ctx2 := b.phone(t)
	loginAt(t, ctx2, ts.URL, code)
	waitJS(t, ctx2, "service worker", `!!navigator.serviceWorker.controller`)
	if !evalJS[bool](t, ctx2, `document.querySelector('#notice-nosw').hidden`) {
		t.Error("the warning shows with a service worker")
	}
}

// TestWebJudgeStaysSignedIn: the judge's cookie lasts at least 7 days, so after the
// browser restarts (same profile) the judge is still signed in; logout ends it.
func TestWebJudgeStaysSignedIn(t *testing.T) {
	ts, _, code := floorServer(t)
	resp, err := http.Post(ts.URL+"/api/judge/login", "application/json", strings.NewReader(`{"code":"`+code+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == cookieJudge {
			ck = c
		}
	}
	if ck == nil || ck.MaxAge < 7*24*3600 || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
		t.Fatalf("judge cookie %+v: want HttpOnly, Lax, Max-Age ≥ 7 days", ck)
	}

	profile := filepath.Join(t.TempDir(), "profile")
	b, stop := floorBrowser(t, profile)
	ctx := b.ctx // the browser's first tab, in the default context: its cookies go to the profile
	run(t, ctx, "phone size", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	loginAt(t, ctx, ts.URL, code)
	// The browser closes (gracefully, so it writes its cookies to the profile), as a
	// phone restarting would.
	if err := chromedp.Cancel(b.ctx); err != nil {
		t.Fatal(err)
	}
	stop()

	b2, _ := floorBrowser(t, profile)
	ctx2 := b2.ctx
	run(t, ctx2, "phone size", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	run(t, ctx2, "open the app after the restart", chromedp.Navigate(ts.URL+"/"))
	waitJS(t, ctx2, "still signed in", `!document.querySelector('#view-app').hidden && document.querySelector('#who').textContent === 'Flo Floor'`)
	if me := judgeStatus(t, ctx2); me != 200 {
		t.Fatalf("GET /api/judge after the restart: %d", me)
	}
	run(t, ctx2, "log out", chromedp.Click(chromedp.CSS("#logout")))
	eventually(t, "the login page after logout", func() bool { // the page navigates meanwhile
		v, err := chromedp.Run(ctx2, chromedp.Evaluate[bool](`!!document.querySelector('#view-login') && !document.querySelector('#view-login').hidden`))
		return err == nil && v
	})
	if me := judgeStatus(t, ctx2); me != 401 {
		t.Fatalf("GET /api/judge after logout: %d", me)
	}
}

// judgeStatus is the status GET /api/judge answers the page (200 signed in, 401 not).
func judgeStatus(t *testing.T, ctx context.Context) int {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch('/api/judge', {credentials: 'same-origin'}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestWebQRSignupShowsCode: a judge who joins by QR sees its login code once, with a
// line to keep it, then judges; a conflict skip says what it does, clear of buttons.
func TestWebQRSignupShowsCode(t *testing.T) {
	b, _ := floorBrowser(t, "")
	ts := startServer(t)
	for _, n := range floorPrefs[:3] {
		ts.addProject(n, "")
	}
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	var qr struct {
		QRCode string `json:"qr_code"`
	}
	ts.must(200, "POST", "/api/admin/qr", nil, asAdmin, &qr)
	ctx := b.phone(t)
	run(t, ctx, "open join link", chromedp.Navigate(ts.URL+"/join?code="+qr.QRCode), chromedp.WaitVisible(chromedp.CSS("#join-name")),
		chromedp.SendKeys(chromedp.CSS("#join-name"), "Walk In"), chromedp.SendKeys(chromedp.CSS("#join-email"), "walk@example.com"),
		chromedp.Click(chromedp.CSS("#join-form button[type=submit]")))
	waitJS(t, ctx, "the code", `!document.querySelector('#view-joined').hidden && document.querySelector('#joined-code').textContent.length === 9`)
	var list []struct{ Name, Code string }
	ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &list)
	if len(list) != 1 || spaced(list[0].Code) != evalJS[string](t, ctx, `document.querySelector('#joined-code').textContent`) {
		t.Fatalf("shown %q, judges %+v", evalJS[string](t, ctx, `document.querySelector('#joined-code').textContent`), list)
	}
	if !strings.Contains(evalJS[string](t, ctx, `document.querySelector('#view-joined').textContent`), "Keep this code") {
		t.Error("no line telling the judge to keep the code")
	}
	b.phoneShot(t, ctx, "judge-qr-code")
	run(t, ctx, "start judging", chromedp.Click(chromedp.CSS("#joined-ok")))
	run(t, ctx, "welcome", chromedp.WaitVisible(chromedp.CSS("#welcome-ok")), chromedp.Click(chromedp.CSS("#welcome-ok")))
	waitJS(t, ctx, "a project", `!document.querySelector('#view-project').hidden && document.querySelector('#project-name').textContent !== ''`)
	run(t, ctx, "reload", chromedp.Reload())
	waitJS(t, ctx, "the app, not the code again", `!document.querySelector('#view-app').hidden && document.querySelector('#view-joined').hidden`)

	// "Skip project" with no reason, the button at the foot of the screen: the notice
	// covers no button.
	waitJS(t, ctx, "a project", `!document.querySelector('#view-project').hidden && document.querySelector('#project-name').textContent !== ''`)
	run(t, ctx, "skip form", chromedp.Click(chromedp.CSS("#btn-skip")), chromedp.WaitVisible(chromedp.CSS("#skip-submit")))
	evalJS[any](t, ctx, `(() => { const b = document.querySelector('#skip-submit'); b.scrollIntoView({ block: 'end' }); b.click(); })()`)
	waitJS(t, ctx, "pick a reason", `!document.querySelector('#toast').hidden && document.querySelector('#toast').textContent === 'Pick a reason first.'`)
	if !evalJS[bool](t, ctx, toastClear) {
		t.Error("the notice covers a button of the skip form")
	}
	b.phoneShot(t, ctx, "judge-skip-notice")
	// A conflict skip says what it does, in a notice that covers no button.
	known := evalJS[string](t, ctx, `document.querySelector('#project-name').textContent`)
	run(t, ctx, "skip: I know this team", chromedp.Click(chromedp.CSS(`#skip-form input[value=conflict]`)), chromedp.Click(chromedp.CSS("#skip-submit")))
	waitJS(t, ctx, "the conflict notice", `!document.querySelector('#toast').hidden && document.querySelector('#toast').textContent === 'You won’t be sent to this project again; it does not count against the team.'`)
	waitJS(t, ctx, "the next project", fmt.Sprintf(`!document.querySelector('#view-project').hidden && !document.querySelector('#actions').hidden && document.querySelector('#project-name').textContent !== %s`, jsq(known)))
	if !evalJS[bool](t, ctx, toastClear) {
		t.Error("the conflict notice covers a button")
	}
	b.phoneShot(t, ctx, "judge-conflict-notice")
	run(t, ctx, "desktop size", chromedp.EmulateViewport(1400, 900))
	run(t, ctx, "skip form at 1400", chromedp.Click(chromedp.CSS("#btn-skip")), chromedp.Click(chromedp.CSS("#skip-submit")))
	waitJS(t, ctx, "pick a reason at 1400", `!document.querySelector('#toast').hidden && document.querySelector('#toast').textContent === 'Pick a reason first.'`)
	if !evalJS[bool](t, ctx, toastClear) {
		t.Error("the notice covers a button at 1400 px")
	}
	b.shotAt(t, ctx, "judge-skip-notice", 1400, 900)
}
