package transport

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Tests for what Jury's own web client needs from Podium (docs/jury-client.md; docs/behaviour.md#conventions, #authentication, #resources, #judging-flow).

// judgeCookieOf returns the cookies named podium_judge and token that resp sets.
func judgeCookieOf(t *testing.T, resp *http.Response) (judge, old *http.Cookie) {
	t.Helper()
	for _, c := range resp.Cookies() {
		switch c.Name {
		case "podium_judge":
			judge = c
		case "token":
			old = c
		}
	}
	return judge, old
}

func postJSON(t *testing.T, url, body string, cookies ...*http.Cookie) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// The judge session cookie is podium_judge (never token, which Jury's client owns);
// Bearer decides when present; the pre-rename token cookie still works.
func TestJuryJudgeCookie(t *testing.T) {
	for _, tc := range []struct {
		name   string
		public string
		secure bool
	}{{"http", "", false}, {"https public url", "https://podium.example.org", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, func(c *Config) { c.PublicURL = tc.public })
			_, code := ts.addJudge("Ada", "ada@example.com", "")
			_, code2 := ts.addJudge("Bo", "bo@example.com", "")
			resp := postJSON(t, ts.URL+"/api/judge/login", `{"code":"`+code+`"}`)
			jc, old := judgeCookieOf(t, resp)
			if old != nil {
				t.Fatalf("login set a cookie named token: %+v", old)
			}
			if jc == nil || jc.Value == "" || !jc.HttpOnly || jc.Path != "/" || jc.SameSite != http.SameSiteLaxMode || jc.Secure != tc.secure {
				t.Fatalf("podium_judge cookie %+v (want Secure=%v)", jc, tc.secure)
			}
			tok := jc.Value
			other := ts.login(code2)
			// A login that carries a "token" cookie (a pre-rename HttpOnly session, which
			// would block Jury's client's own cookie) expires it.
			resp = postJSON(t, ts.URL+"/api/judge/login", `{"code":"`+code2+`"}`, &http.Cookie{Name: "token", Value: "stale"})
			_, old = judgeCookieOf(t, resp)
			if resp.StatusCode != 200 || old == nil || old.Value != "" || old.Expires.IsZero() || !old.Expires.Before(time.Now()) {
				t.Fatalf("login with a token cookie: %d, token cookie %+v", resp.StatusCode, old)
			}
			other = ts.login(code2) // that login replaced the token

			withCookie := func(name, value string, bearer string) auth {
				a := auth{hdr: map[string]string{"Cookie": name + "=" + value}}
				if bearer != "" {
					a.hdr["Authorization"] = "Bearer " + bearer
				}
				return a
			}
			var me struct{ Name string }
			ts.must(200, "GET", "/api/judge", nil, withCookie("podium_judge", tok, ""), &me)
			if me.Name != "Ada" {
				t.Fatalf("podium_judge cookie is judge %q", me.Name)
			}
			ts.must(200, "GET", "/api/judge", nil, withCookie("token", tok, ""), &me)
			if me.Name != "Ada" {
				t.Fatalf("old token cookie is judge %q", me.Name)
			}
			// Bearer decides: a valid cookie does not rescue a bad Bearer, and a Bearer of
			// another judge wins over the cookie.
			ts.must(401, "GET", "/api/judge", nil, withCookie("podium_judge", tok, "undefined"), nil)
			ts.must(200, "GET", "/api/judge", nil, withCookie("podium_judge", tok, other), &me)
			if me.Name != "Bo" {
				t.Fatalf("Bearer did not decide: judge %q", me.Name)
			}
			// podium_judge wins over the old cookie.
			ts.must(200, "GET", "/api/judge", nil, auth{hdr: map[string]string{"Cookie": "token=" + other + "; podium_judge=" + tok}}, &me)
			if me.Name != "Ada" {
				t.Fatalf("podium_judge did not win over token: judge %q", me.Name)
			}
			ts.must(401, "GET", "/api/judge", nil, withCookie("podium_judge", "", ""), nil)

			// Logging out by the old cookie expires both cookies; logging out with a
			// Bearer leaves a token cookie of someone else (Jury's client's) alone.
			resp = postJSON(t, ts.URL+"/api/judge/logout", "", &http.Cookie{Name: "token", Value: tok})
			jc, old = judgeCookieOf(t, resp)
			expired := func(c *http.Cookie) bool {
				return c != nil && c.Value == "" && !c.Expires.IsZero() && c.Expires.Before(time.Now())
			}
			if resp.StatusCode != 200 || !expired(jc) || !expired(old) {
				t.Fatalf("logout by old cookie: %d podium_judge=%+v token=%+v", resp.StatusCode, jc, old)
			}
			ts.must(401, "GET", "/api/judge", nil, withCookie("token", tok, ""), nil)
			req, _ := http.NewRequest("POST", ts.URL+"/api/judge/logout", nil)
			req.Header.Set("Authorization", "Bearer "+other)
			req.AddCookie(&http.Cookie{Name: "token", Value: "jury-client-own"})
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if _, old = judgeCookieOf(t, resp); resp.StatusCode != 200 || old != nil {
				t.Fatalf("logout by Bearer: %d, token cookie %+v", resp.StatusCode, old)
			}
		})
	}
}

// A wrong judge code or admin password is 400 (Jury's client shows its own message only
// on 400), and changes nothing.
func TestJuryWrongCodeAndPasswordAre400(t *testing.T) {
	ts := startServer(t)
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	wrong := "00000000"
	if wrong == code {
		wrong = "00000001"
	}
	for _, c := range []string{wrong, "", "  ", "not-a-code"} {
		if b := ts.must(400, "POST", "/api/judge/login", map[string]string{"code": c}, anon, nil); string(b) != `{"error":"invalid code"}` {
			t.Fatalf("code %q: body %s", c, b)
		}
	}
	b := ts.must(400, "POST", "/api/admin/login", map[string]string{"password": "wrong"}, anon, nil)
	if msg := errorText(b); msg == "" || strings.Contains(msg, testPassword) {
		t.Fatalf("wrong password body %s", b)
	}
	// Still 401 for a missing credential on a judge or admin route.
	ts.must(401, "GET", "/api/judge", nil, anon, nil)
	ts.must(401, "GET", "/api/judge/list", nil, anon, nil)
	ts.login(code)
}

// flagged lists the projects skipped with a reason other than busy or absent, in order;
// it is in GET /api/judge, the judge list, judges.csv, and survives a restart.
func TestJuryFlaggedAfterSkips(t *testing.T) {
	ts := startServer(t)
	for i := 0; i < 7; i++ {
		ts.addProject("P"+string(rune('A'+i)), "")
	}
	jid, code := ts.addJudge("Ada", "ada@example.com", "")
	tok := ts.login(code)
	var me struct{ Flagged []string }
	b := ts.must(200, "GET", "/api/judge", nil, asJudge(tok), &me)
	if !strings.Contains(string(b), `"flagged":[]`) {
		t.Fatalf("new judge: %s", b)
	}
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	want := []string{}
	for _, reason := range []string{"busy", "cannot-demo", "absent", "too-complex", "offensive"} {
		cur := nextOf(t, ts, tok)["project_id"].(string)
		ts.must(200, "POST", "/api/judge/skip", map[string]string{"reason": reason}, asJudge(tok), nil)
		if reason != "busy" && reason != "absent" {
			want = append(want, cur)
		}
		ts.must(200, "GET", "/api/judge", nil, asJudge(tok), &me)
		if !slices.Equal(me.Flagged, want) {
			t.Fatalf("after %s: flagged %v, want %v", reason, me.Flagged, want)
		}
	}
	listed := func(ts *testServer) []string {
		var list []struct {
			ID      string
			Flagged []string
		}
		ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &list)
		for _, j := range list {
			if j.ID == jid {
				return j.Flagged
			}
		}
		t.Fatal("judge not listed")
		return nil
	}
	if got := listed(ts); !slices.Equal(got, want) {
		t.Fatalf("judge list flagged %v, want %v", got, want)
	}
	tables := map[string]string{}
	for _, p := range ts.projectList() {
		tables[p.ID] = itoaTest(p.Location)
	}
	wantCells := make([]string, len(want))
	for i, id := range want {
		wantCells[i] = tables[id]
	}
	rows := ts.getCSV("/api/admin/export/judges", "judges.csv")
	if rows[0][10] != "Flagged" || rows[1][10] != strings.Join(wantCells, ", ") {
		t.Fatalf("judges.csv flagged %q %q, want tables %v", rows[0][10], rows[1][10], wantCells)
	}

	// Recovery: the list comes back from the journal (and from a snapshot).
	dir := ts.Dir
	ts.Stop()
	ts2 := startServerIn(t, dir)
	if got := listed(ts2); !slices.Equal(got, want) {
		t.Fatalf("after restart flagged %v, want %v", got, want)
	}
	if err := ts2.Node.Snapshot(); err != nil {
		t.Fatal(err)
	}
	ts2.Stop()
	ts3 := startServerIn(t, dir)
	if got := listed(ts3); !slices.Equal(got, want) {
		t.Fatalf("after snapshot and restart flagged %v, want %v", got, want)
	}
	// A judging-data reset clears it.
	ts3.must(200, "POST", "/api/admin/reset", map[string]string{"type": "judging-data"}, asAdmin, nil)
	if got := listed(ts3); got == nil || len(got) != 0 {
		t.Fatalf("after reset flagged %#v, want []", got)
	}
}

func itoaTest(n int) string { b, _ := json.Marshal(n); return string(b) }

// The judge view of a project carries url and group.
func TestJuryJudgeProjectViewURLAndGroup(t *testing.T) {
	ts := startServer(t)
	var res struct{ ID string }
	ts.must(200, "POST", "/api/project/new", map[string]any{"name": "Linked", "description": "d", "url": "github.com/team/app", "challenge_list": ""}, asAdmin, &res)
	ts.must(200, "PUT", "/api/project/move/group/"+res.ID, map[string]int{"group": 2}, asAdmin, nil)
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	tok := ts.login(code)
	var v map[string]any
	ts.must(200, "GET", "/api/project/"+res.ID, nil, asJudge(tok), &v)
	if v["url"] != "https://github.com/team/app" || v["group"] != float64(2) {
		t.Fatalf("judge view url %v group %v", v["url"], v["group"])
	}
}

// headerRow is another name for hasHeader in both CSV imports.
func TestJuryHeaderRowAlias(t *testing.T) {
	ts := startServer(t)
	var res importResult
	ts.mustUploadCSV(200, "/api/judge/csv", csvFixture(t, "judges.csv"), map[string]string{"headerRow": "true", "noSend": "true"}, &res)
	js := ts.judgeList()
	if res.Added != len(js) || js[0].Name != "Ada Lovelace" {
		t.Fatalf("judges with headerRow: %+v %+v", res, js)
	}
	ts.mustUploadCSV(200, "/api/project/csv", []byte("name,description,url\nRocket,Goes up,https://r.example.com\n"), map[string]string{"headerRow": "True"}, &res)
	ps := ts.projectList()
	if res.Added != 1 || len(ps) != 1 || ps[0].Name != "Rocket" {
		t.Fatalf("projects with headerRow: %+v %+v", res, ps)
	}
	// Without either name the header is data (and here a bad URL): refused, nothing added.
	ts.mustUploadCSV(400, "/api/project/csv", []byte("name,description,url\nRocket,Goes up,https://r.example.com\n"), map[string]string{"headerRow": "no"}, nil)
	if n := len(ts.projectList()); n != 1 {
		t.Fatalf("%d projects after a refused upload", n)
	}
}

// A URL typed as a host name with a path gets https:// in forms, CSV and Devpost imports;
// javascript: and other schemes are still refused.
func TestJuryURLWithoutScheme(t *testing.T) {
	ts := startServer(t)
	var res struct{ ID string }
	ts.must(200, "POST", "/api/project/new", map[string]any{"name": "Form", "url": "github.com/team/app", "try_link": "demo.example.org/try", "video_link": "youtu.be/abc", "challenge_list": ""}, asAdmin, &res)
	ts.must(200, "PUT", "/api/project/"+res.ID, map[string]any{"url": "www.example.com"}, asAdmin, nil)
	ts.mustUploadCSV(200, "/api/project/csv", []byte("Csv,d,gitlab.com/a/b,,,\n"), nil, nil)
	sub := "Project Title,Submission Url,Project Status,About The Project,Try it out Links,Video Demo Link,Opt-In Prizes\n" +
		"Dev,devpost.com/software/dev,Submitted (Gallery/Visible),about,dev.example.com,,\n"
	ts.mustUploadCSV(200, "/api/project/devpost", []byte(sub), nil, nil)
	got := map[string]listedProject{}
	for _, p := range ts.projectList() {
		got[p.Name] = p
	}
	for name, want := range map[string][3]string{
		"Form": {"https://www.example.com", "https://demo.example.org/try", "https://youtu.be/abc"},
		"Csv":  {"https://gitlab.com/a/b", "", ""},
		"Dev":  {"https://devpost.com/software/dev", "https://dev.example.com", ""},
	} {
		p := got[name]
		if [3]string{p.URL, p.TryLink, p.VideoLink} != want {
			t.Errorf("%s: url %q try %q video %q, want %v", name, p.URL, p.TryLink, p.VideoLink, want)
		}
	}
	before := len(got)
	for _, bad := range []string{"javascript:alert(1)", "JAVASCRIPT:alert(1)", "data:text/html,x", "ftp://files.example.com/x", "//github.com/x"} {
		ts.must(400, "POST", "/api/project/new", map[string]any{"name": "Bad", "url": bad, "challenge_list": ""}, asAdmin, nil)
		ts.must(400, "PUT", "/api/project/"+res.ID, map[string]any{"try_link": bad}, asAdmin, nil)
		ts.mustUploadCSV(400, "/api/project/csv", []byte("Bad,d,"+bad+"\n"), nil, nil)
		ts.mustUploadCSV(400, "/api/project/devpost", []byte("Project Title,Submission Url\nBad,"+bad+"\n"), nil, nil)
	}
	if n := len(ts.projectList()); n != before {
		t.Fatalf("%d projects after refused ones, want %d", n, before)
	}
	if p := ts.projectList()[0]; p.TryLink != "https://demo.example.org/try" {
		t.Fatalf("refused edit changed the project: %+v", p)
	}
	// Sponsors' website_url follows the same rule.
	var sp struct{ ID string }
	ts.must(200, "POST", "/api/admin/content/sponsors", map[string]any{"name": "Acme", "website_url": "acme.example.com/hack"}, asAdmin, &sp)
	var list struct {
		Data []struct {
			WebsiteURL string `json:"website_url"`
		} `json:"data"`
	}
	ts.must(200, "GET", "/api/admin/content/sponsors", nil, asAdmin, &list)
	if len(list.Data) != 1 || list.Data[0].WebsiteURL != "https://acme.example.com/hack" {
		t.Fatalf("sponsor website_url %+v", list)
	}
	ts.must(400, "POST", "/api/admin/content/sponsors", map[string]any{"name": "Bad", "website_url": "javascript:alert(1)"}, asAdmin, nil)
}

// PUT /api/judge/star {project, starred} is the :id form with the id in the body; it
// must never fall through to the admin route PUT /api/judge/:id.
func TestJuryStarBodyForm(t *testing.T) {
	ts, tok, _, projects := judgingSetup(t, 3)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	pid := nextOf(t, ts, tok)["project_id"].(string)
	ts.must(200, "POST", "/api/judge/finish", `{"notes":"","starred":false}`, asJudge(tok), nil)
	starred := func() bool {
		var jp struct{ Starred bool }
		ts.must(200, "GET", "/api/judge/project/"+pid, nil, asJudge(tok), &jp)
		return jp.Starred
	}
	ts.must(200, "PUT", "/api/judge/star", map[string]any{"project": pid, "starred": true}, asJudge(tok), nil)
	if !starred() {
		t.Fatal("body-form star did not star")
	}
	ts.must(200, "PUT", "/api/judge/star", map[string]any{"project": pid, "starred": false}, asJudge(tok), nil)
	if starred() {
		t.Fatal("body-form star did not unstar")
	}
	ts.must(400, "PUT", "/api/judge/star", map[string]any{"starred": true}, asJudge(tok), nil)
	ts.must(400, "PUT", "/api/judge/star", map[string]any{"project": pid}, asJudge(tok), nil)
	ts.must(400, "PUT", "/api/judge/star", map[string]any{"project": "nope", "starred": true}, asJudge(tok), nil)
	ts.must(400, "PUT", "/api/judge/star", map[string]any{"project": 5, "starred": true}, asJudge(tok), nil)
	ts.must(400, "PUT", "/api/judge/star", "", asJudge(tok), nil)
	other := projects[0]
	if other == pid {
		other = projects[1]
	}
	ts.must(404, "PUT", "/api/judge/star", map[string]any{"project": other, "starred": true}, asJudge(tok), nil)
	ts.must(401, "PUT", "/api/judge/star", map[string]any{"project": pid, "starred": true}, anon, nil)
	ts.must(401, "PUT", "/api/judge/star", map[string]any{"project": pid, "starred": true}, asAdmin, nil)
	ts.must(200, "POST", "/api/admin/deliberation", map[string]bool{"start": true}, asAdmin, nil)
	ts.must(409, "PUT", "/api/judge/star", map[string]any{"project": pid, "starred": true}, asJudge(tok), nil)
}

// routeMatches reports whether Fiber's route pattern matches the concrete path (segment
// by segment: ":name" takes one non-empty segment, ":name.ext" one ending in ".ext",
// "*" the rest; static segments compare case-insensitively, as Fiber does by default).
func routeMatches(pattern, path string) bool {
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	xs := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range ps {
		if p == "*" || strings.HasPrefix(p, "*") {
			return true
		}
		if i >= len(xs) {
			return strings.HasSuffix(p, "?")
		}
		switch {
		case strings.HasPrefix(p, ":"):
			name := strings.TrimSuffix(p[1:], "?")
			if dot := strings.IndexByte(name, '.'); dot >= 0 {
				suffix := name[dot:]
				if !strings.HasSuffix(xs[i], suffix) || len(xs[i]) == len(suffix) {
					return false
				}
			} else if xs[i] == "" {
				return false
			}
		case !strings.EqualFold(p, xs[i]):
			return false
		}
	}
	return len(ps) == len(xs)
}

// concrete turns a route pattern into a request path, with a well-formed id for every
// parameter.
func concrete(pattern string) string {
	segs := strings.Split(pattern, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") {
			segs[i] = "0123456789abcdef01234567"
		}
	}
	return strings.Join(segs, "/")
}

// TestJudgeRoutesBeforeAdminRoutes walks Fiber's route table: every judge-level route,
// and every judge call Jury's client makes, must be the first route its path matches
// (Fiber takes the first registered match), so that no judge path can fall through to an
// admin route of the same shape such as PUT /api/judge/:id. Each is then sent to the
// real server with a judge token, which must never be refused as 401.
func TestJudgeRoutesBeforeAdminRoutes(t *testing.T) {
	ts := startServer(t)
	srv := ts.Srv
	// A route's level is read off its first handler. Method values share one code
	// pointer per method; adminIDRoute's closures do not (they may be inlined per call
	// site), so a route is "judge", "admin" (adminAuth) or "other" (public routes and
	// adminIDRoute's, which are admin-level too).
	level := map[uintptr]string{
		reflect.ValueOf(srv.judgeAuth).Pointer():    "judge",
		reflect.ValueOf(srv.judgeOrAdmin).Pointer(): "judge",
		reflect.ValueOf(srv.adminAuth).Pointer():    "admin",
	}
	type route struct{ method, path, level string }
	var routes []route
	for _, r := range srv.app.GetRoutes(true) {
		lv := "other"
		if len(r.Handlers) > 0 {
			if l, ok := level[reflect.ValueOf(r.Handlers[0]).Pointer()]; ok {
				lv = l
			}
		}
		routes = append(routes, route{r.Method, r.Path, lv})
	}
	first := func(method, path string) (route, bool) {
		for _, r := range routes {
			if r.method == method && routeMatches(r.path, path) {
				return r, true
			}
		}
		return route{}, false
	}
	type call struct{ method, path string }
	var calls []call
	nJudge := 0
	for _, r := range routes {
		if r.level == "judge" && r.method != fiber.MethodHead {
			calls = append(calls, call{r.method, concrete(r.path)})
			nJudge++
		}
	}
	if nJudge < 15 {
		t.Fatalf("only %d judge-level routes recognised; the handler classification is broken", nJudge)
	}
	// Jury's client's judge-level calls (client/src, hackutd/jury).
	for _, c := range []string{
		"GET /api/judge", "GET /api/judge/project/:id", "GET /api/judge/deliberation", "GET /api/judge/welcome",
		"GET /api/project/:id", "GET /api/project/count", "GET /api/admin/timer", "POST /api/judge/next",
		"POST /api/judge/auth", "POST /api/judge/finish", "POST /api/judge/rank", "POST /api/judge/skip",
		"POST /api/judge/welcome", "PUT /api/judge/star", "PUT /api/judge/notes/:id", "GET /api/judge/projects",
	} {
		m, p, _ := strings.Cut(c, " ")
		calls = append(calls, call{m, concrete(p)})
	}
	adminIDShadows := 0
	for _, c := range calls {
		r, ok := first(c.method, c.path)
		if !ok {
			t.Errorf("%s %s: no route", c.method, c.path)
			continue
		}
		if r.level != "judge" {
			t.Errorf("%s %s is taken first by the %s-level route %s", c.method, c.path, r.level, r.path)
		}
		for _, a := range routes {
			if a.method == c.method && a.level != "judge" && strings.Contains(a.path, ":id") && routeMatches(a.path, c.path) {
				adminIDShadows++ // allowed only because the judge route comes first (checked above)
			}
		}
	}
	if adminIDShadows == 0 {
		t.Error("no judge path has an admin :id route of the same shape; the check above tests nothing")
	}

	// Through the real server: a judge is never refused on a judge-level path.
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	tok := ts.login(code)
	for _, c := range calls {
		if strings.HasSuffix(c.path, "/logout") {
			continue
		}
		if st, b := ts.do(c.method, c.path, "{}", asJudge(tok)); st == 401 || st == 405 || st >= 500 {
			t.Errorf("%s %s as a judge: %d %s", c.method, c.path, st, b)
		}
	}
}
