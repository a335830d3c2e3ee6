package transport

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Browser tests of the organiser kit: the "Site content" tab, the reset card, the
// coverage card without groups, and the expo on a screen at the door (kiosk mode).

const testPublicKey = "public-test-key"

// withPublicKey turns the public content API on.
func withPublicKey(c *Config) { c.PublicAPIKey = testPublicKey }

// publicContent reads /v1/public/{kind} as the event website would.
func publicContent(ts *testServer, kind string) []map[string]any {
	ts.t.Helper()
	var r struct {
		Data []map[string]any `json:"data"`
	}
	ts.must(200, "GET", "/v1/public/"+kind, nil, auth{hdr: map[string]string{"X-API-Key": testPublicKey}}, &r)
	return r.Data
}

// timezone makes the tab's clock run in the IANA zone id.
func timezone(id string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: id})
		return chromedp.Void{}, err
	}
}

// setInput sets a form field's value and fires input and change, as typing would.
func setInput(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%s); e.value = %s; e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); })()`, jsq(sel), jsq(value)))
}

// testPNG returns a small real PNG logo.
func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 60, 24))
	for x := 0; x < 60; x++ {
		for y := 0; y < 24; y++ {
			img.Set(x, y, color.RGBA{R: uint8(20 + x*3), G: 71, B: 184, A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// names returns field f of every entry.
func names(list []map[string]any, f string) []string {
	out := make([]string, len(list))
	for i, e := range list {
		out[i], _ = e[f].(string)
	}
	return out
}

func TestWebOrganiser(t *testing.T) {
	b := startChromium(t)

	t.Run("SiteContent", func(t *testing.T) {
		ts := startServer(t, withPublicKey)
		ctx := b.tab(t)
		run(t, ctx, "time zone", timezone("Europe/Berlin"))
		adminLogin(t, ctx, ts)
		run(t, ctx, "content tab", chromedp.Click(chromedp.CSS("#tab-content")), chromedp.WaitVisible(chromedp.CSS("#sc-add")))
		waitJS(t, ctx, "empty lists", `document.querySelector('#sc-list').textContent.includes('No schedule entries')`)

		// Schedule: an end before the start is refused in the page, nothing is sent.
		run(t, ctx, "new entry",
			chromedp.Click(chromedp.CSS("#sc-add")),
			chromedp.WaitVisible(chromedp.CSS("#sc-name")),
			chromedp.SendKeys(chromedp.CSS("#sc-name"), "Opening ceremony"),
			setInput("#sc-start", "2026-03-01T10:30"),
			setInput("#sc-end", "2026-03-01T09:00"),
			setInput("#sc-location", "Main hall"),
			setInput("#sc-tags", "ceremony, everyone"),
			chromedp.Click(chromedp.CSS("#sc-save")),
		)
		waitJS(t, ctx, "time error", `!document.querySelector('#sc-error').hidden && document.querySelector('#sc-error').textContent.includes('ends before it starts')`)
		if got := publicContent(ts, "schedule"); len(got) != 0 {
			t.Fatalf("schedule after a refused entry = %v", got)
		}
		b.shot(t, ctx, "admin-content-schedule-error")
		run(t, ctx, "fix end", setInput("#sc-end", "2026-03-01T11:15"), chromedp.Click(chromedp.CSS("#sc-save")))
		eventually(t, "schedule entry public", func() bool { return len(publicContent(ts, "schedule")) == 1 })
		e := publicContent(ts, "schedule")[0]
		// 10:30 in Berlin on 1 March is 09:30 UTC.
		if e["event_name"] != "Opening ceremony" || e["start_time"] != "2026-03-01T09:30:00Z" || e["end_time"] != "2026-03-01T10:15:00Z" ||
			e["location"] != "Main hall" || fmt.Sprint(e["tags"]) != "[ceremony everyone]" {
			t.Errorf("public schedule entry = %v", e)
		}
		// A second day: the list groups by day.
		run(t, ctx, "second entry",
			chromedp.Click(chromedp.CSS("#sc-add")),
			setInput("#sc-name", "Judging"),
			setInput("#sc-start", "2026-03-02T14:00"),
			setInput("#sc-end", "2026-03-02T16:00"),
			chromedp.Click(chromedp.CSS("#sc-save")),
		)
		waitJS(t, ctx, "two days", `document.querySelectorAll('#sc-list .sched-day').length === 2`)
		// Edit the first entry's name.
		run(t, ctx, "edit entry",
			chromedp.Click(chromedp.CSS(`#sc-list button[aria-label="Edit Opening ceremony"]`)),
			setInput("#sc-name", "Opening & welcome"),
			chromedp.Click(chromedp.CSS("#sc-save")),
		)
		eventually(t, "edited entry public", func() bool {
			s := publicContent(ts, "schedule")
			return len(s) == 2 && s[0]["event_name"] == "Opening & welcome" && s[0]["start_time"] == "2026-03-01T09:30:00Z"
		})

		// Sponsors: the logo picker refuses wrong types, oversized files and files that are
		// not what they claim, before anything is uploaded.
		dir := t.TempDir()
		logo := testPNG(t)
		run(t, ctx, "new sponsor",
			chromedp.Click(chromedp.CSS("#sp-add")),
			chromedp.WaitVisible(chromedp.CSS("#sp-name")),
			setInput("#sp-name", "Acme Cloud"),
			setInput("#sp-tier", "Gold"),
			setInput("#sp-website", "https://acme.example.com"),
		)
		for _, bad := range []struct{ name, want string }{
			{writeFile(t, dir, "notes.txt", []byte("hello")), "must be PNG, JPEG, WebP, GIF or SVG"},
			{writeFile(t, dir, "huge.png", append(append([]byte{}, logo...), make([]byte, 1<<20)...)), "at most 1 MiB"},
			{writeFile(t, dir, "fake.png", []byte("GIF89a not a png at all")), "does not contain a PNG image"},
		} {
			run(t, ctx, "pick "+bad.name, chromedp.SetUploadFiles(chromedp.CSS("#sp-logo"), []string{bad.name}))
			waitJS(t, ctx, "logo refused", fmt.Sprintf(`!document.querySelector('#sp-logo-error').hidden && document.querySelector('#sp-logo-error').textContent.includes(%s)`, jsq(bad.want)))
			if evalJS[bool](t, ctx, `!document.querySelector('#sp-preview').hidden`) {
				t.Errorf("%s: a refused logo is previewed", bad.name)
			}
		}
		b.shot(t, ctx, "admin-content-logo-refused")
		run(t, ctx, "pick good logo", chromedp.SetUploadFiles(chromedp.CSS("#sp-logo"), []string{writeFile(t, dir, "acme.png", logo)}))
		waitJS(t, ctx, "logo preview", `(() => { const i = document.querySelector('#sp-preview'); return !i.hidden && i.complete && i.naturalWidth === 60 && document.querySelector('#sp-logo-error').hidden; })()`)
		b.shot(t, ctx, "admin-content-sponsor-form")
		run(t, ctx, "save sponsor", chromedp.Click(chromedp.CSS("#sp-save")))
		eventually(t, "sponsor public", func() bool { return len(publicContent(ts, "sponsors")) == 1 })
		sp := publicContent(ts, "sponsors")[0]
		if sp["name"] != "Acme Cloud" || sp["tier"] != "Gold" || sp["website_url"] != "https://acme.example.com" ||
			sp["logo_content_type"] != "image/png" || sp["logo_data"] != base64.StdEncoding.EncodeToString(logo) || sp["display_order"] != 1.0 {
			t.Errorf("public sponsor = %v", sp)
		}
		waitJS(t, ctx, "logo in list", `(() => { const i = document.querySelector('#sp-list img'); return i && i.complete && i.naturalWidth === 60; })()`)
		run(t, ctx, "second sponsor",
			chromedp.Click(chromedp.CSS("#sp-add")),
			setInput("#sp-name", "Bolt Labs"),
			setInput("#sp-tier", "Silver"),
			chromedp.Click(chromedp.CSS("#sp-save")),
		)
		waitJS(t, ctx, "two sponsors", `document.querySelectorAll('#sp-list > li').length === 2`)
		run(t, ctx, "move Bolt up", chromedp.Click(chromedp.CSS(`#sp-list button[aria-label="Move Bolt Labs up"]`)))
		eventually(t, "sponsor order", func() bool {
			return fmt.Sprint(names(publicContent(ts, "sponsors"), "name")) == "[Bolt Labs Acme Cloud]"
		})

		// FAQ: add two, reorder, edit, delete with confirmation.
		for _, q := range [][2]string{{"Where do I park?", "Car park B, free all weekend."}, {"Is there food?", "Yes: lunch and dinner both days."}} {
			run(t, ctx, "add question "+q[0],
				chromedp.Click(chromedp.CSS("#faq-add")),
				setInput("#faq-question", q[0]),
				setInput("#faq-answer", q[1]),
				chromedp.Click(chromedp.CSS("#faq-save")),
			)
			waitJS(t, ctx, "question listed", fmt.Sprintf(`document.querySelector('#faq-list').textContent.includes(%s)`, jsq(q[0])))
		}
		run(t, ctx, "move food up", chromedp.Click(chromedp.CSS(`#faq-list button[aria-label="Move “Is there food?” up"]`)))
		eventually(t, "faq order", func() bool {
			return fmt.Sprint(names(publicContent(ts, "faq"), "question")) == "[Is there food? Where do I park?]"
		})
		run(t, ctx, "edit answer",
			chromedp.Click(chromedp.CSS(`#faq-list button[aria-label="Edit “Where do I park?”"]`)),
			setInput("#faq-answer", "Car park B."),
			chromedp.Click(chromedp.CSS("#faq-save")),
		)
		eventually(t, "faq edited", func() bool {
			f := publicContent(ts, "faq")
			return len(f) == 2 && f[1]["answer"] == "Car park B."
		})

		// A change made elsewhere (the API, another dashboard) shows up live.
		ts.must(200, "POST", "/api/admin/content/faq", map[string]any{"question": "Wi-Fi?", "answer": "podium-guest", "display_order": 9}, asAdmin, nil)
		waitJS(t, ctx, "live question", `document.querySelector('#faq-list').textContent.includes('Wi-Fi?')`)
		b.shot(t, ctx, "admin-content")
		run(t, ctx, "delete question",
			chromedp.Click(chromedp.CSS(`#faq-list button[aria-label="Delete “Wi-Fi?”"]`)),
			chromedp.WaitVisible(chromedp.CSS("#dialog-ok")),
			chromedp.Click(chromedp.CSS("#dialog-ok")),
		)
		eventually(t, "question deleted", func() bool { return len(publicContent(ts, "faq")) == 2 })

		// Export the whole document, then import a different one.
		run(t, ctx, "export", chromedp.Click(chromedp.CSS("#content-export")))
		waitJS(t, ctx, "export link", `!!document.querySelector('#content-export-link').blob`)
		exported, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#content-export-link').blob.text()`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string][]map[string]any
		if err := json.Unmarshal([]byte(exported), &doc); err != nil {
			t.Fatalf("export is not JSON: %v\n%s", err, exported)
		}
		if len(doc["schedule"]) != 2 || len(doc["sponsors"]) != 2 || len(doc["faq"]) != 2 || doc["sponsors"][1]["logo_data"] != base64.StdEncoding.EncodeToString(logo) {
			t.Errorf("exported document: %d schedule, %d sponsors, %d faq", len(doc["schedule"]), len(doc["sponsors"]), len(doc["faq"]))
		}
		if _, has := doc["faq"][0]["id"]; has {
			t.Error("export carries entry ids")
		}
		// The exported document imports back as it is (the CLI takes the same file).
		code, body := ts.do("PUT", "/api/admin/content", exported, asAdmin)
		if code != 200 {
			t.Fatalf("re-import of the export: %d %s", code, body)
		}

		// Remove a logo: the sponsor stays, without it. (The re-import gave new ids: wait
		// for the page to show them.)
		var acme string
		for _, s := range publicContent(ts, "sponsors") {
			if s["name"] == "Acme Cloud" {
				acme = s["id"].(string)
			}
		}
		waitJS(t, ctx, "page has the new ids", fmt.Sprintf(`!!document.querySelector('#sp-list li[data-id="%s"]')`, acme))
		run(t, ctx, "edit Acme",
			chromedp.Click(chromedp.CSS(`#sp-list button[aria-label="Edit Acme Cloud"]`)),
			chromedp.WaitVisible(chromedp.CSS("#sp-preview")),
			chromedp.Click(chromedp.CSS("#sp-clear-logo")),
			chromedp.Click(chromedp.CSS("#sp-save")),
		)
		eventually(t, "logo removed", func() bool {
			for _, s := range publicContent(ts, "sponsors") {
				if s["name"] == "Acme Cloud" {
					return s["logo_data"] == "" && s["logo_content_type"] == "" && s["tier"] == "Gold"
				}
			}
			return false
		})

		run(t, ctx, "bad import", chromedp.SetUploadFiles(chromedp.CSS("#content-import-file"), []string{writeFile(t, dir, "bad.json", []byte(`{"schedule": []}`))}))
		waitJS(t, ctx, "import error", `!document.querySelector('#content-import-error').hidden && document.querySelector('#content-import-error').textContent.includes('sponsors, faq')`)
		doc["schedule"] = doc["schedule"][:1]
		doc["sponsors"] = []map[string]any{}
		doc["faq"][0]["question"] = "Imported question?"
		newDoc, _ := json.Marshal(doc)
		run(t, ctx, "import",
			chromedp.SetUploadFiles(chromedp.CSS("#content-import-file"), []string{writeFile(t, dir, "content.json", newDoc)}),
			chromedp.WaitVisible(chromedp.CSS("#dialog-ok")),
		)
		if txt := evalJS[string](t, ctx, `document.querySelector('#dialog-body').textContent`); !strings.Contains(txt, "1 schedule entries, 0 sponsors and 2 questions") {
			t.Errorf("import dialog says %q", txt)
		}
		run(t, ctx, "confirm import", chromedp.Click(chromedp.CSS("#dialog-ok")))
		eventually(t, "imported", func() bool {
			return len(publicContent(ts, "schedule")) == 1 && len(publicContent(ts, "sponsors")) == 0 && publicContent(ts, "faq")[0]["question"] == "Imported question?"
		})
		waitJS(t, ctx, "page follows import", `document.querySelectorAll('#sp-list > li').length === 0 && document.querySelector('#faq-list').textContent.includes('Imported question?')`)
	})

	t.Run("ResetAndCoverage", func(t *testing.T) {
		ts := startServer(t)
		ts.addProject("Aurora", "")
		ts.addProject("Beacon", "")
		_, code := ts.addJudge("Jo", "jo@example.com", "")
		ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
		tok := ts.login(code)
		ts.must(200, "POST", "/api/judge/next", nil, asJudge(tok), nil)
		ts.must(200, "POST", "/api/judge/finish", map[string]any{"notes": "", "starred": false}, asJudge(tok), nil)

		ctx := b.tab(t)
		adminLogin(t, ctx, ts)
		// Groups are off: the coverage card has no "Views per group" chart.
		waitJS(t, ctx, "coverage", `document.querySelector('#coverage').dataset.counts === '1,1'`)
		if evalJS[bool](t, ctx, `!document.querySelector('#group-views').hidden || !document.querySelector('#grp-title').hidden`) {
			t.Error("views per group shown with groups off")
		}
		ts.must(200, "POST", "/api/admin/options", map[string]any{"multi_group": true}, asAdmin, nil)
		waitJS(t, ctx, "per-group chart with groups on", `!document.querySelector('#group-views').hidden && !document.querySelector('#grp-title').hidden`)
		ts.must(200, "POST", "/api/admin/options", map[string]any{"multi_group": false}, asAdmin, nil)
		waitJS(t, ctx, "per-group chart gone", `document.querySelector('#group-views').hidden`)

		// The event name from the settings form reaches the page title and the expo.
		if got := evalJS[string](t, ctx, `document.title`); got != "Admin · Podium" {
			t.Errorf("admin title %q", got)
		}
		run(t, ctx, "settings tab", chromedp.Click(chromedp.CSS("#tab-settings")), chromedp.WaitVisible(chromedp.CSS("#o-event_name")))
		waitJS(t, ctx, "options loaded", `document.querySelector('#o-event_name').value === 'Podium'`)
		run(t, ctx, "rename event", setInput("#o-event_name", "Dry Run Hack"), chromedp.Click(chromedp.CSS("#options-form button[type=submit]")))
		eventually(t, "event renamed", func() bool {
			var o struct {
				EventName string `json:"event_name"`
			}
			ts.must(200, "GET", "/api/admin/options", nil, asAdmin, &o)
			return o.EventName == "Dry Run Hack"
		})
		waitJS(t, ctx, "admin title follows", `document.title === 'Admin · Dry Run Hack'`)

		run(t, ctx, "data tab", chromedp.Click(chromedp.CSS("#tab-data")), chromedp.WaitVisible(chromedp.CSS("#reset-form")))
		if !evalJS[bool](t, ctx, `document.querySelector('#reset-go').disabled`) {
			t.Error("reset button enabled before anything was chosen")
		}
		run(t, ctx, "choose judging data", chromedp.Click(chromedp.CSS("#reset-judging-data")), chromedp.SendKeys(chromedp.CSS("#reset-confirm"), "reset"))
		if !evalJS[bool](t, ctx, `document.querySelector('#reset-go').disabled`) {
			t.Error("reset button enabled with the wrong word")
		}
		run(t, ctx, "type RESET", setInput("#reset-confirm", "RESET"))
		waitJS(t, ctx, "reset enabled", `!document.querySelector('#reset-go').disabled`)
		b.shot(t, ctx, "admin-reset")
		run(t, ctx, "reset", chromedp.Click(chromedp.CSS("#reset-go")))
		waitJS(t, ctx, "backup shown", `!document.querySelector('#reset-result').hidden && !!document.querySelector('#reset-backup-link')`)
		name := evalJS[string](t, ctx, `document.querySelector('#reset-backup-link').textContent`)
		href := evalJS[string](t, ctx, `document.querySelector('#reset-backup-link').getAttribute('href')`)
		if href != "/api/admin/backup/"+name || !strings.HasPrefix(evalJS[string](t, ctx, `document.querySelector('#reset-restore-cmd').textContent`), "podium restore "+name+" ") {
			t.Errorf("backup link %q / restore command for %q", href, name)
		}
		// The link downloads the backup (with the page's session, as the browser would).
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](fmt.Sprintf(`fetch(%s).then(async r => [r.status, r.headers.get('content-disposition') || '', (await r.arrayBuffer()).byteLength])`, jsq(href)), chromedp.EvalAwaitPromise))
		if err != nil || len(got) != 3 || got[0] != 200.0 || !strings.Contains(got[1].(string), name) || got[2].(float64) < 20 {
			t.Errorf("download of the backup: %v %v", got, err)
		}
		b.shot(t, ctx, "admin-reset-done")
		// Judging data is gone; judges and projects stay.
		var projects []map[string]any
		ts.must(200, "GET", "/api/project/list", nil, asAdmin, &projects)
		for _, p := range projects {
			if p["seen"] != 0.0 {
				t.Errorf("project %v still seen after the reset", p["name"])
			}
		}
		if len(projects) != 2 || len(judgeList(ts)) != 1 {
			t.Errorf("reset of judging data removed judges or projects")
		}
		waitJS(t, ctx, "coverage follows", `document.querySelector('#coverage').dataset.counts === '2'`)
	})

	t.Run("ExpoDoor", func(t *testing.T) {
		ts := startServer(t)
		ts.must(200, "POST", "/api/admin/options", map[string]any{"event_name": "Spring Hack 2026"}, asAdmin, nil)
		ts.addProject("Tiny", "")
		for i := 2; i <= 45; i++ {
			ts.addProject(fmt.Sprintf("Project number %d with a fairly long name to wrap", i), "Health, Climate")
		}
		// Three-digit tables (and more).
		var list []map[string]any
		ts.must(200, "GET", "/api/project/list", nil, asAdmin, &list)
		for i, p := range list[len(list)-4:] {
			ts.must(200, "PUT", "/api/project/move/"+p["id"].(string), map[string]any{"location": []int{100, 457, 999, 1000}[i]}, asAdmin, nil)
		}
		ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
		ctx := b.tab(t)
		run(t, ctx, "open expo", chromedp.Navigate(ts.URL+"/expo"))
		waitJS(t, ctx, "all projects", `document.querySelectorAll('#projects > li').length === 45`)
		waitJS(t, ctx, "event name", `document.querySelector('#event-name').textContent === 'Spring Hack 2026' && document.title.includes('Spring Hack 2026')`)
		// Every table number on one line at every width.
		oneLine := `[...document.querySelectorAll('#projects > li:not([hidden]) .table-no .num')].filter(n => { const r = document.createRange(); r.selectNodeContents(n); return r.getClientRects().length !== 1 || n.scrollWidth > n.clientWidth + 1; }).map(n => n.textContent)`
		for _, w := range []int64{320, 390, 768, 1366, 1400, 1920, 3840} {
			run(t, ctx, "resize", chromedp.EmulateViewport(w, 1080))
			waitJS(t, ctx, "layout", fmt.Sprintf("window.innerWidth === %d", w))
			if bad := evalJS[[]string](t, ctx, oneLine); len(bad) > 0 {
				t.Errorf("at %d px these table numbers wrap: %v", w, bad)
			}
			if w == 1366 || w == 1920 {
				png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
				if err == nil {
					err = os.WriteFile(filepath.Join(b.shots, fmt.Sprintf("expo-%d.png", w)), png, 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		// The event name follows live.
		ts.must(200, "POST", "/api/admin/options", map[string]any{"event_name": "Spring Hack Finals"}, asAdmin, nil)
		waitJS(t, ctx, "renamed", `document.querySelector('#event-name').textContent === 'Spring Hack Finals' && document.title === 'Expo · Spring Hack Finals'`)
		j := b.tab(t)
		run(t, j, "judge app", chromedp.Navigate(ts.URL+"/"))
		waitJS(t, j, "judge title", `document.title === 'Judging · Spring Hack Finals'`)

		// Kiosk: no controls, large type, the clock, and it pages by itself.
		k := b.tab(t)
		run(t, k, "kiosk size", chromedp.EmulateViewport(1920, 1080))
		run(t, k, "open kiosk", chromedp.Navigate(ts.URL+"/expo?kiosk=1&seconds=2"))
		waitJS(t, k, "paged", `+document.querySelector('#projects').dataset.pages > 1`)
		waitJS(t, k, "clock running", `!document.querySelector('#expo-clock').hidden && document.querySelector('#expo-clock-state').textContent === 'running'`)
		if evalJS[bool](t, k, `!document.querySelector('#filters').hidden`) {
			t.Error("kiosk shows the search controls")
		}
		pages := evalJS[int](t, k, `+document.querySelector('#projects').dataset.pages`)
		per := evalJS[int](t, k, `+document.querySelector('#projects').dataset.perPage`)
		if per < 6 || pages != (45+per-1)/per {
			t.Errorf("kiosk: %d per page, %d pages for 45 projects", per, pages)
		}
		// Readable from a distance, nothing scrolls, every shown card fits above the footer.
		fit := evalJS[[]float64](t, k, `(() => { const shown = [...document.querySelectorAll('#projects > li')].filter(li => !li.hidden); const foot = document.querySelector('#kiosk-foot').getBoundingClientRect().top; const num = parseFloat(getComputedStyle(shown[0].querySelector('.table-no')).fontSize); const name = parseFloat(getComputedStyle(shown[0].querySelector('h2')).fontSize); return [shown.length, Math.max(...shown.map(li => li.getBoundingClientRect().bottom)) - foot, document.documentElement.scrollHeight - innerHeight, num, name]; })()`)
		if int(fit[0]) != per || fit[1] > 0 || fit[2] > 0 || fit[3] < 64 || fit[4] < 28 {
			t.Errorf("kiosk page: %v shown (want %d), overlap with footer %v px, scroll %v px, table number %v px, name %v px", fit[0], per, fit[1], fit[2], fit[3], fit[4])
		}
		if bad := evalJS[[]string](t, k, oneLine); len(bad) > 0 {
			t.Errorf("kiosk: table numbers wrap: %v", bad)
		}
		run(t, k, "end the page fade", chromedp.Evaluate[chromedp.Void](`document.getAnimations().forEach(a => a.finish())`))
		png, err := chromedp.Run(k, chromedp.FullScreenshot(100))
		if err == nil {
			err = os.WriteFile(filepath.Join(b.shots, "expo-kiosk-1920.png"), png, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		// The page and its first project are read together: a slow screenshot can take
		// longer than a page's 2 s.
		first := evalJS[[]string](t, k, `[document.querySelector('#projects').dataset.page, document.querySelector('#projects > li:not([hidden])').dataset.id]`)
		waitJS(t, k, "next page", `(() => { const p = document.querySelector('#projects').dataset.page; return p !== `+jsq(first[0])+` && document.querySelector('#kiosk-page').textContent.startsWith('Page ' + p + ' of'); })()`)
		if evalJS[string](t, k, `document.querySelector('#projects > li:not([hidden])').dataset.id`) == first[1] {
			t.Errorf("the next page starts with the same project as page %s", first[0])
		}
		// And back to the first page after the last.
		waitJS(t, k, "wraps to page 1", `document.querySelector('#projects').dataset.page === '1'`)
		// Live updates as on the normal expo.
		ts.addProject("Late entry", "")
		waitJS(t, k, "live count", `document.querySelector('#count').textContent.startsWith('46 of 46')`)
	})
}

// TestWebKioskGroup: a kiosk per hall, ?group= presets the group filter.
func TestWebKioskGroup(t *testing.T) {
	b := startChromium(t)
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/options", map[string]any{"multi_group": true, "num_groups": 2, "group_sizes": []int{2, 2}, "group_names": []string{"North hall", "South hall"}}, asAdmin, nil)
	for _, n := range []string{"Ant", "Bee", "Cat", "Dog"} {
		ts.addProject(n, "")
	}
	ctx := b.tab(t)
	run(t, ctx, "kiosk size", chromedp.EmulateViewport(1920, 1080))
	run(t, ctx, "open kiosk for the south hall", chromedp.Navigate(ts.URL+"/expo?kiosk=1&group=1"))
	waitJS(t, ctx, "two projects", `document.querySelectorAll('#projects > li').length === 2 && document.querySelector('#count').textContent.startsWith('2 of 4')`)
	if got := evalJS[string](t, ctx, `[...document.querySelectorAll('#projects h2')].map(e => e.textContent).join(',')`); got != "Cat,Dog" {
		t.Errorf("south hall kiosk shows %s", got)
	}
	if evalJS[string](t, ctx, `document.querySelector('#kiosk-page').textContent`) != "" {
		t.Error("one page shows a page counter")
	}
}

// judgeList reads all judges from the admin API.
func judgeList(ts *testServer) []map[string]any {
	var list []map[string]any
	ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &list)
	return list
}
