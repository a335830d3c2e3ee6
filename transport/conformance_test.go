package transport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// Conformance tests: each checks sentences of docs/behaviour.md (#conventions to
// #admin-operations, #state-durability-and-recovery, #operations) and the field names of
// Jury's judging API through the real server.

// keysOf decodes a JSON object and returns its sorted keys.
func keysOf(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not an object: %s", raw)
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func wantKeys(t *testing.T, what string, raw json.RawMessage, want ...string) {
	t.Helper()
	sort.Strings(want)
	got := keysOf(t, raw)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s keys:\n got %v\nwant %v", what, got, want)
	}
}

// jsonKind names the JSON type of a raw value.
func jsonKind(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "bool"
	case strings.HasPrefix(s, `"`):
		return "string"
	case strings.HasPrefix(s, "["):
		return "array"
	case strings.HasPrefix(s, "{"):
		return "object"
	case strings.ContainsAny(s, ".eE"):
		return "float"
	default:
		return "int"
	}
}

func wantKinds(t *testing.T, what string, raw json.RawMessage, kinds map[string]string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: not an object: %s", what, raw)
	}
	for k, want := range kinds {
		if got := jsonKind(m[k]); got != want {
			t.Errorf("%s.%s is %s (%s), want %s", what, k, got, m[k], want)
		}
	}
}

// TestConformanceJudgeFields: GET /api/judge and GET /api/judge/list items have exactly
// the seed's fields plus flagged (docs/behaviour.md#resources); current is null, last_location -1, group a number, lists arrays.
func TestConformanceJudgeFields(t *testing.T) {
	ts := startServer(t)
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	tok := ts.login(code)
	var list []json.RawMessage
	ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &list)
	var self json.RawMessage
	ts.must(200, "GET", "/api/judge", nil, asJudge(tok), &self)
	fields := []string{"id", "token", "code", "name", "email", "active", "track", "group", "read_welcome",
		"notes", "current", "last_location", "seen", "group_seen", "seen_projects", "flagged", "rankings", "last_activity"}
	kinds := map[string]string{
		"id": "string", "code": "string", "active": "bool", "group": "int", "read_welcome": "bool",
		"current": "null", "last_location": "int", "seen": "int", "group_seen": "int",
		"seen_projects": "array", "flagged": "array", "rankings": "array", "last_activity": "int",
	}
	for what, raw := range map[string]json.RawMessage{"judge list item": list[0], "GET /api/judge": self} {
		if what == "judge list item" {
			wantKeys(t, what, raw, append(fields, "reliability", "disagreement", "compared")...) // docs/behaviour.md#ratings
			wantKinds(t, what, raw, kinds)
			continue
		}
		wantKeys(t, what, raw, fields...)
		wantKinds(t, what, raw, kinds)
	}
	var j struct {
		LastLocation int    `json:"last_location"`
		Code         string `json:"code"`
	}
	json.Unmarshal(self, &j)
	if j.LastLocation != -1 || !regexp.MustCompile(`^[0-9]{8}$`).MatchString(j.Code) {
		t.Errorf("new judge: last_location %d, code %q", j.LastLocation, j.Code)
	}
}

// TestConformanceProjectAndOptionFields checks the admin project view, the public view,
// the options (seed fields plus track_views) with the defaults of docs/behaviour.md#resources, and the clock bodies.
func TestConformanceProjectAndOptionFields(t *testing.T) {
	ts := startServer(t)
	ts.addProject("Alpha", "AI, Web")
	var list []json.RawMessage
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &list)
	wantKeys(t, "admin project", list[0], "id", "name", "location", "description", "url", "try_link", "video_link",
		"challenge_list", "seen", "track_seen", "score", "stars", "track_stars", "active", "prioritized", "group", "last_activity",
		"rating", "rating_sd", "rank", "p_top", // docs/behaviour.md#ratings
		"contact_emails") // docs/behaviour.md#after-judging
	wantKinds(t, "admin project", list[0], map[string]string{"location": "int", "challenge_list": "array",
		"track_seen": "object", "track_stars": "object", "score": "int", "stars": "int", "group": "int", "last_activity": "int",
		"rank": "int"})

	var pub []json.RawMessage
	ts.must(200, "GET", "/api/project/list/public", nil, anon, &pub)
	// The seed's public fields (id is a documented addition for expo "remove" events).
	wantKeys(t, "public project", pub[0], "id", "name", "location", "description", "url", "try_link", "video_link", "challenge_list", "group")

	var opts json.RawMessage
	ts.must(200, "GET", "/api/admin/options", nil, asAdmin, &opts)
	wantKeys(t, "options", opts, "id", "ref", "clock", "judging_timer", "min_views", "clock_sync", "deliberation",
		"judge_tracks", "tracks", "track_views", "multi_group", "num_groups", "group_sizes", "switching_mode",
		"auto_switch_prop", "manual_switches", "qr_code", "track_qr_codes", "group_names", "ignore_tracks",
		"max_req_per_min", "block_reqs", "event_name", "assignment_mode", "focus_top", "assignment_goal")
	var o map[string]json.RawMessage
	json.Unmarshal(opts, &o)
	defaults := map[string]string{
		"judging_timer": "300", "min_views": "1", "clock_sync": "true", "deliberation": "false",
		"judge_tracks": "false", "tracks": "[]", "track_views": "[]", "multi_group": "false", "num_groups": "3",
		"group_sizes": "[30,30,30]", "switching_mode": `"auto"`, "auto_switch_prop": "0.1", "manual_switches": "0",
		"qr_code": `""`, "track_qr_codes": "{}", "group_names": `["Group 1","Group 2","Group 3"]`,
		"ignore_tracks": "[]", "max_req_per_min": "100", "block_reqs": "false", "event_name": `"Podium"`,
		"assignment_mode": `"focus"`, "focus_top": "10", "assignment_goal": `"podium"`,
		"clock": `{"start_time":0,"pause_time":0,"running":false}`,
	}
	for k, want := range defaults {
		if string(o[k]) != want {
			t.Errorf("default %s = %s, want %s", k, o[k], want)
		}
	}

	var clk json.RawMessage
	ts.must(200, "GET", "/api/admin/clock", nil, asAdmin, &clk)
	wantKeys(t, "clock", clk, "running", "time")
	wantKinds(t, "clock", clk, map[string]string{"running": "bool", "time": "int"})
	for _, p := range []string{"pause", "unpause", "reset"} {
		var r map[string]json.RawMessage
		ts.must(200, "POST", "/api/admin/clock/"+p, nil, asAdmin, &r)
		if string(r["ok"]) != "1" {
			t.Errorf("clock/%s ok = %s", p, r["ok"])
		}
		wantKeys(t, "clock/"+p+" clock", r["clock"], "start_time", "pause_time", "running")
	}

	var gi json.RawMessage
	ts.must(200, "GET", "/api/group-info", nil, anon, &gi)
	// event_name is an addition (docs/behaviour.md, "Dashboard and expo").
	if string(gi) != `{"names":["Group 1","Group 2","Group 3"],"enabled":false,"event_name":"Podium"}` {
		t.Errorf("group-info = %s", gi)
	}
	for _, path := range []string{"/api/admin/stats", "/api/project/stats", "/api/judge/stats"} {
		var st json.RawMessage
		ts.must(200, "GET", path, nil, asAdmin, &st)
		if path == "/api/admin/stats" {
			wantKeys(t, path, st, "projects", "avg_project_seen", "avg_judge_seen", "judges")
		} else {
			wantKeys(t, path, st, "num", "num_active", "avg_seen")
		}
	}
	var tm json.RawMessage
	ts.must(200, "GET", "/api/admin/timer", nil, asAdmin, &tm)
	if string(tm) != `{"judging_timer":300}` {
		t.Errorf("timer = %s", tm)
	}
	var lg json.RawMessage
	ts.must(200, "GET", "/api/admin/log", nil, asAdmin, &lg)
	wantKeys(t, "log", lg, "log")
	wantKinds(t, "log", lg, map[string]string{"log": "string"})
}

// TestConformanceEmptyListsAreArrays: every list route answers [] on a new server.
func TestConformanceEmptyListsAreArrays(t *testing.T) {
	ts := startServer(t)
	for path, a := range map[string]auth{
		"/api/judge/list": asAdmin, "/api/project/list": asAdmin, "/api/project/list/public": anon,
		"/api/challenges": anon, "/api/admin/flags": asAdmin,
	} {
		if b := ts.must(200, "GET", path, nil, a, nil); string(b) != "[]" {
			t.Errorf("%s = %s, want []", path, b)
		}
	}
}

// TestConformanceRouteAuthLevels checks the auth level of every admin route (a judge
// token is 401 too) and the decided levels of docs/behaviour.md#authentication.
func TestConformanceRouteAuthLevels(t *testing.T) {
	ts := startServer(t)
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	tok := ts.login(code)
	id := "0123456789abcdef01234567"
	admin := []struct{ method, path string }{
		{"POST", "/api/judge/new"}, {"GET", "/api/judge/list"}, {"GET", "/api/judge/stats"},
		{"PUT", "/api/judge/" + id}, {"DELETE", "/api/judge/" + id}, {"PUT", "/api/judge/hide/" + id},
		{"POST", "/api/judge/hide"}, {"PUT", "/api/judge/move/group/" + id}, {"POST", "/api/judge/move/group"},
		{"POST", "/api/judge/reassign"}, {"POST", "/api/admin/groups/swap"},
		{"POST", "/api/project/new"}, {"GET", "/api/project/list"}, {"GET", "/api/project/stats"},
		{"PUT", "/api/project/" + id}, {"DELETE", "/api/project/" + id}, {"PUT", "/api/project/hide/" + id},
		{"POST", "/api/project/hide"}, {"PUT", "/api/project/move/" + id}, {"PUT", "/api/project/move/group/" + id},
		{"POST", "/api/project/move/group"}, {"PUT", "/api/project/prioritize/" + id}, {"POST", "/api/project/prioritize"},
		{"POST", "/api/project/reassign"}, {"POST", "/api/project/balance-groups"},
		{"GET", "/api/admin/clock"}, {"POST", "/api/admin/clock/pause"}, {"POST", "/api/admin/clock/unpause"},
		{"POST", "/api/admin/clock/reset"}, {"POST", "/api/admin/clock/backup"},
		{"GET", "/api/admin/options"}, {"POST", "/api/admin/options"}, {"POST", "/api/admin/tracks"},
		{"POST", "/api/admin/track-views"}, {"POST", "/api/admin/num-groups"}, {"POST", "/api/admin/group-sizes"},
		{"POST", "/api/admin/block-reqs"}, {"POST", "/api/admin/max-reqs"}, {"POST", "/api/admin/deliberation"},
		{"GET", "/api/admin/stats"}, {"GET", "/api/admin/stats/AI"}, {"GET", "/api/admin/flags"},
		{"DELETE", "/api/admin/flag/" + id}, {"GET", "/api/admin/log"}, {"POST", "/api/admin/reset"},
		{"POST", "/api/admin/backup"}, {"GET", "/api/admin/backup/x"}, {"POST", "/api/admin/auth"},
		{"POST", "/api/admin/logout"},
		{"GET", "/api/admin/content/faq"}, {"POST", "/api/admin/content/faq"}, {"PUT", "/api/admin/content"},
		{"PUT", "/api/admin/content/faq/" + id}, {"DELETE", "/api/admin/content/faq/" + id},
	}
	for _, r := range admin {
		for who, a := range map[string]auth{"anonymous": anon, "judge": asJudge(tok)} {
			if c, b := ts.do(r.method, r.path, "{}", a); c != 401 || !strings.Contains(string(b), `"error"`) {
				t.Errorf("%s %s as %s: %d %s, want 401", r.method, r.path, who, c, b)
			}
		}
	}
	judge := []struct{ method, path string }{{"GET", "/api/judge"}, {"POST", "/api/judge/auth"},
		{"GET", "/api/judge/deliberation"}, {"POST", "/api/judge/logout"}}
	for _, r := range judge {
		for who, a := range map[string]auth{"anonymous": anon, "admin": asAdmin} {
			if c, _ := ts.do(r.method, r.path, nil, a); c != 401 {
				t.Errorf("%s %s as %s: %d, want 401", r.method, r.path, who, c)
			}
		}
	}
	// docs/behaviour.md#authentication decisions: started needs none, timer judge or admin.
	ts.must(200, "GET", "/api/admin/started", nil, anon, nil)
	ts.must(401, "GET", "/api/admin/timer", nil, anon, nil)
	ts.must(200, "GET", "/api/admin/timer", nil, asJudge(tok), nil)
	ts.must(200, "GET", "/api/admin/timer", nil, asAdmin, nil)
	for _, p := range []string{"/api/", "/api/project/list/public", "/api/challenges", "/api/group-info", "/healthz", "/readyz"} {
		ts.must(200, "GET", p, nil, anon, nil)
	}
	if b := ts.must(200, "GET", "/api/", nil, anon, nil); string(b) != `{"ok":1}` {
		t.Errorf("heartbeat = %s", b)
	}
	ts.must(200, "GET", "/api/judge/deliberation", nil, asJudge(tok), nil)
}

// TestConformanceIDRules: on every :id route a malformed id is 400 and a well-formed
// unknown id is 404; bulk routes apply the same rules to items.
func TestConformanceIDRules(t *testing.T) {
	ts := startServer(t)
	unknown := "0123456789abcdef01234567"
	malformed := []string{"123", "0123456789ABCDEF01234567", "0123456789abcdef0123456g", "0123456789abcdef012345678"}
	routes := []struct {
		method, path string
		body         any
	}{
		{"PUT", "/api/judge/", map[string]any{"name": "x"}},
		{"DELETE", "/api/judge/", nil},
		{"PUT", "/api/judge/hide/", nil},
		{"PUT", "/api/judge/move/group/", map[string]any{"group": 0}},
		{"PUT", "/api/project/", map[string]any{"name": "x"}},
		{"DELETE", "/api/project/", nil},
		{"PUT", "/api/project/hide/", nil},
		{"PUT", "/api/project/move/", map[string]any{"location": 5}},
		{"PUT", "/api/project/move/group/", map[string]any{"group": 0}},
		{"PUT", "/api/project/prioritize/", map[string]any{"prioritize": true}},
		{"DELETE", "/api/admin/flag/", nil},
	}
	for _, r := range routes {
		for _, bad := range malformed {
			if c, b := ts.do(r.method, r.path+bad, r.body, asAdmin); c != 400 {
				t.Errorf("%s %s%s: %d %s, want 400", r.method, r.path, bad, c, b)
			}
		}
		if c, b := ts.do(r.method, r.path+unknown, r.body, asAdmin); c != 404 {
			t.Errorf("%s %s<unknown>: %d %s, want 404", r.method, r.path, c, b)
		}
	}
	bulk := []struct {
		path  string
		extra map[string]any
	}{
		{"/api/judge/hide", map[string]any{"hide": true}},
		{"/api/project/hide", map[string]any{"hide": true}},
		{"/api/judge/move/group", map[string]any{"group": 0}},
		{"/api/project/move/group", map[string]any{"group": 0}},
		{"/api/project/prioritize", map[string]any{"prioritize": true}},
	}
	pid := ts.addProject("Alpha", "")
	jid, _ := ts.addJudge("Ada", "ada@example.com", "")
	for _, r := range bulk {
		known := pid
		if strings.HasPrefix(r.path, "/api/judge") {
			known = jid
		}
		for items, want := range map[string]int{"bad": 400, unknown: 404} {
			body := map[string]any{"items": []string{known, items}}
			for k, v := range r.extra {
				body[k] = v
			}
			if c, b := ts.do("POST", r.path, body, asAdmin); c != want {
				t.Errorf("POST %s with %s item: %d %s, want %d", r.path, items, c, b, want)
			}
		}
	}
	// Nothing changed: the judge and project are still visible and unprioritized.
	var ps []struct {
		Active, Prioritized bool
	}
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &ps)
	var js []struct{ Active bool }
	ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &js)
	if !ps[0].Active || ps[0].Prioritized || !js[0].Active {
		t.Fatalf("a refused bulk call changed state: %+v %+v", ps, js)
	}
}

var auditLine = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z \[(SYSTEM|ADMIN|JUDGE [^\]]+)\] \S.*$`)

// TestConformanceAuditLogFormat: every line is "<RFC3339 ms UTC> [SYSTEM|ADMIN|JUDGE
// <name>] <message>", oldest first, and no secret appears in it.
func TestConformanceAuditLogFormat(t *testing.T) {
	ts := startServer(t)
	_, code := ts.addJudge("Ada Lovelace", "ada@example.com", "")
	tok := ts.login(code)
	ts.must(200, "POST", "/api/judge/logout", nil, asJudge(tok), nil)
	ts.must(200, "POST", "/api/admin/login", map[string]string{"password": testPassword}, anon, nil)
	ts.addProject("Alpha", "")
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	var lg struct{ Log string }
	ts.must(200, "GET", "/api/admin/log", nil, asAdmin, &lg)
	lines := strings.Split(lg.Log, "\n")
	if len(lines) < 5 {
		t.Fatalf("log too short: %q", lg.Log)
	}
	for _, l := range lines {
		if !auditLine.MatchString(l) {
			t.Errorf("bad audit line %q", l)
		}
	}
	for i := 1; i < len(lines); i++ {
		if lines[i][:24] < lines[i-1][:24] {
			t.Errorf("log not oldest first: %q before %q", lines[i-1], lines[i])
		}
	}
	if !strings.Contains(lg.Log, "[JUDGE Ada Lovelace] ") {
		t.Errorf("judge actions are not attributed: %q", lg.Log)
	}
	for _, secret := range []string{code, tok, testPassword} {
		if strings.Contains(lg.Log, secret) {
			t.Errorf("audit log contains a secret")
		}
	}
}

// TestConformanceCookiesAndRetryAfter checks the admin cookie attributes and that every
// 429 carries Retry-After.
func TestConformanceCookiesAndRetryAfter(t *testing.T) {
	ts := startServer(t)
	resp, err := http.Post(ts.URL+"/api/admin/login", "application/json", strings.NewReader(`{"password":"`+testPassword+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "admin_session" {
			ck = c
		}
	}
	if ck == nil || ck.Path != "/" || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.MaxAge != 86400 || len(ck.Value) < 32 {
		t.Fatalf("admin cookie = %+v", ck)
	}

	ts.must(200, "POST", "/api/admin/max-reqs", map[string]int{"max_req_per_min": 1}, asAdmin, nil)
	ts.do("POST", "/api/judge/login", map[string]string{"code": "12345678"}, anon)
	check429 := func(what string, c int, h http.Header, body []byte) {
		t.Helper()
		if c != 429 || h.Get("Retry-After") == "" || !strings.Contains(string(body), `"error"`) {
			t.Errorf("%s: %d Retry-After=%q %s", what, c, h.Get("Retry-After"), body)
		}
	}
	req, _ := http.NewRequest("POST", ts.URL+"/api/judge/login", strings.NewReader(`{"code":"12345678"}`))
	r, _ := http.DefaultClient.Do(req)
	b := readAll(r)
	check429("judge login over max_req_per_min", r.StatusCode, r.Header, b)

	ts.must(200, "POST", "/api/admin/block-reqs", map[string]bool{"block_reqs": true}, asAdmin, nil)
	req, _ = http.NewRequest("POST", ts.URL+"/api/judge/login", strings.NewReader(`{"code":"12345678"}`))
	r, _ = http.DefaultClient.Do(req)
	check429("judge login blocked", r.StatusCode, r.Header, readAll(r))
	// block_reqs never blocks admin login.
	ts.must(200, "POST", "/api/admin/login", map[string]string{"password": testPassword}, anon, nil)
	for i := 0; i < 10; i++ {
		ts.must(400, "POST", "/api/admin/login", map[string]string{"password": "wrong"}, anon, nil)
	}
	req, _ = http.NewRequest("POST", ts.URL+"/api/admin/login", strings.NewReader(`{"password":"wrong"}`))
	r, _ = http.DefaultClient.Do(req)
	check429("11th failed admin login", r.StatusCode, r.Header, readAll(r))
}

func readAll(r *http.Response) []byte {
	defer r.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := r.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			return []byte(sb.String())
		}
	}
}

// TestConformanceJudgeGroups: a general judge joins the group with the fewest active
// general judges (ties: lowest index); a judge that is not general when created starts
// in group 0 and does not count.
func TestConformanceJudgeGroups(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/options", map[string]any{"tracks": []string{"AI"}, "judge_tracks": true}, asAdmin, nil)
	groupOf := func(id string) int {
		var list []struct {
			ID    string
			Group int
		}
		ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &list)
		for _, j := range list {
			if j.ID == id {
				return j.Group
			}
		}
		t.Fatalf("judge %s missing", id)
		return -1
	}
	a, _ := ts.addJudge("A", "a@example.com", "")
	b, _ := ts.addJudge("B", "b@example.com", "")
	tj, _ := ts.addJudge("T", "t@example.com", "AI")
	c, _ := ts.addJudge("C", "c@example.com", "")
	if g := []int{groupOf(a), groupOf(b), groupOf(tj), groupOf(c)}; g[0] != 0 || g[1] != 1 || g[2] != 0 || g[3] != 2 {
		t.Fatalf("groups of A, B, track judge, C = %v, want [0 1 0 2]", g)
	}
	ts.must(200, "PUT", "/api/judge/hide/"+b, nil, asAdmin, nil) // hidden judges do not count
	d, _ := ts.addJudge("D", "d@example.com", "")
	if g := groupOf(d); g != 1 {
		t.Fatalf("D joined group %d, want 1 (B is hidden)", g)
	}
	// With judge_tracks off every judge is general, whatever its track.
	ts.must(200, "POST", "/api/admin/options", map[string]any{"judge_tracks": false}, asAdmin, nil)
	e, _ := ts.addJudge("E", "e@example.com", "AI")
	if g := groupOf(e); g != 1 && g != 2 {
		t.Fatalf("general track judge E joined group %d", g)
	}
}

// TestConformanceInvalidOptionsChangeNothing: any invalid field refuses the whole
// request (400) and the options, ref included, stay as they were.
func TestConformanceInvalidOptionsChangeNothing(t *testing.T) {
	ts := startServer(t)
	before := string(ts.must(200, "GET", "/api/admin/options", nil, asAdmin, nil))
	for _, body := range []string{
		`{"min_views": 5, "judging_timer": -1}`, `{"min_views": 5, "judging_timer": 86401}`,
		`{"min_views": 1001}`, `{"min_views": 5, "num_groups": 0}`, `{"num_groups": 65}`,
		`{"group_sizes": [1, 2]}`, `{"group_sizes": [1, 0, 2]}`, `{"switching_mode": "sometimes"}`,
		`{"auto_switch_prop": 0}`, `{"auto_switch_prop": 1.5}`, `{"group_names": ["a"]}`,
		`{"max_req_per_min": 0}`, `{"max_req_per_min": 100001}`, `{"tracks": ["a", "a"]}`,
		`{"tracks": [""]}`, `{"assignment_mode": "random"}`, `{"assignment_goal": "winners"}`, `{"focus_top": 0}`, `{"focus_top": 1001}`, `{"min_views": 5, "judging_timer": "300"}`, `{"min_views": 2.5}`,
	} {
		if c, b := ts.do("POST", "/api/admin/options", body, asAdmin); c != 400 {
			t.Errorf("options %s: %d %s, want 400", body, c, b)
		}
	}
	for _, r := range []struct{ path, body string }{
		{"/api/admin/num-groups", `{"num_groups": 0}`}, {"/api/admin/num-groups", `{}`},
		{"/api/admin/group-sizes", `{"group_sizes": [5]}`}, {"/api/admin/track-views", `{"track_views": [3]}`},
		{"/api/admin/max-reqs", `{"max_req_per_min": 0}`}, {"/api/admin/block-reqs", `{}`},
		{"/api/admin/tracks", `{}`}, {"/api/admin/deliberation", `{}`},
	} {
		if c, b := ts.do("POST", r.path, r.body, asAdmin); c != 400 {
			t.Errorf("%s %s: %d %s, want 400", r.path, r.body, c, b)
		}
	}
	if after := string(ts.must(200, "GET", "/api/admin/options", nil, asAdmin, nil)); after != before {
		t.Fatalf("refused requests changed the options:\n%s\n%s", before, after)
	}
	// A valid change bumps ref by exactly one.
	ts.must(200, "POST", "/api/admin/options", map[string]any{"min_views": 5, "judging_timer": 60}, asAdmin, nil)
	var o struct {
		Ref          int `json:"ref"`
		MinViews     int `json:"min_views"`
		JudgingTimer int `json:"judging_timer"`
	}
	ts.must(200, "GET", "/api/admin/options", nil, asAdmin, &o)
	var o0 struct {
		Ref int `json:"ref"`
	}
	json.Unmarshal([]byte(before), &o0)
	if o.Ref != o0.Ref+1 || o.MinViews != 5 || o.JudgingTimer != 60 {
		t.Fatalf("after a valid change: %+v (ref before %d)", o, o0.Ref)
	}
}

// loginCookies logs a judge and the admin in over client/base with extra headers and
// returns the two cookies.
func loginCookies(t *testing.T, client *http.Client, base, code string, hdr map[string]string) (judge, admin *http.Cookie) {
	t.Helper()
	for _, r := range []struct{ path, body string }{
		{"/api/judge/login", `{"code":"` + code + `"}`},
		{"/api/admin/login", `{"password":"` + testPassword + `"}`},
	} {
		req, _ := http.NewRequest("POST", base+r.path, strings.NewReader(r.body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", r.path, resp.StatusCode)
		}
		for _, c := range resp.Cookies() {
			switch c.Name {
			case "podium_judge":
				judge = c
			case "admin_session":
				admin = c
			}
		}
	}
	if judge == nil || admin == nil {
		t.Fatal("login set no cookie")
	}
	return judge, admin
}

// TestConformanceSecureCookies: cookies are Secure when the request came over TLS, here
// through a TLS-terminating proxy listed in TRUSTED_PROXIES (X-Forwarded-Proto: https),
// and not when an untrusted peer merely claims it.
func TestConformanceSecureCookies(t *testing.T) {
	trusted := startServer(t, func(c *Config) { c.TrustedProxies = []string{"127.0.0.1"} })
	_, code := trusted.addJudge("Ada", "ada@example.com", "")
	j, a := loginCookies(t, http.DefaultClient, trusted.URL, code, map[string]string{"X-Forwarded-Proto": "https"})
	if !j.Secure || !a.Secure {
		t.Errorf("behind a trusted TLS proxy: judge Secure=%v admin Secure=%v, want both", j.Secure, a.Secure)
	}
	j, a = loginCookies(t, http.DefaultClient, trusted.URL, code, nil)
	if j.Secure || a.Secure {
		t.Errorf("plain HTTP through the proxy: cookies are Secure")
	}
	untrusted := startServer(t)
	_, code = untrusted.addJudge("Ada", "ada@example.com", "")
	j, a = loginCookies(t, http.DefaultClient, untrusted.URL, code, map[string]string{"X-Forwarded-Proto": "https"})
	if j.Secure || a.Secure {
		t.Errorf("an untrusted peer's X-Forwarded-Proto made cookies Secure")
	}
}

// selfSignedTLS returns a server TLS config and a client trusting it, for 127.0.0.1.
func selfSignedTLS(t *testing.T) (*tls.Config, *http.Client) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	srvCfg := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return srvCfg, client
}

// TestConformanceSecureCookiesOverTLS: served directly over TLS, both cookies are Secure.
func TestConformanceSecureCookiesOverTLS(t *testing.T) {
	ts := startServer(t)
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	srvCfg, client := selfSignedTLS(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srvCfg)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ts.Srv.Listen(ln) }()
	j, a := loginCookies(t, client, "https://"+ln.Addr().String(), code, nil)
	if !j.Secure || !a.Secure {
		t.Fatalf("over TLS: judge Secure=%v admin Secure=%v, want both", j.Secure, a.Secure)
	}
}

type confProject struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Location int    `json:"location"`
	Group    int    `json:"group"`
	Active   bool   `json:"active"`
}

func (ts *testServer) projects() []confProject {
	ts.t.Helper()
	var ps []confProject
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &ps)
	return ps
}

// TestConformanceProjectTablesAndGroups: new projects get table max+1 and that table's
// group; group_sizes[i] consecutive tables form group i from table 1, tables beyond the
// sum fall in the last group; moves into a full group are 409 and change nothing;
// balance-groups sets sizes that split the active projects evenly without renumbering.
func TestConformanceProjectTablesAndGroups(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/group-sizes", map[string]any{"group_sizes": []int{2, 2, 2}}, asAdmin, nil)
	ids := []string{}
	for _, n := range []string{"A", "B", "C", "D", "E", "F", "G", "H"} {
		ids = append(ids, ts.addProject(n, ""))
	}
	ps := ts.projects()
	wantGroups := []int{0, 0, 1, 1, 2, 2, 2, 2}
	for i, p := range ps {
		if p.Location != i+1 || p.Group != wantGroups[i] {
			t.Fatalf("project %s at table %d group %d, want table %d group %d", p.Name, p.Location, p.Group, i+1, wantGroups[i])
		}
	}
	// Group 0 (tables 1-2) is full: 409 and nothing moves.
	before := string(ts.must(200, "GET", "/api/project/list", nil, asAdmin, nil))
	ts.must(409, "PUT", "/api/project/move/group/"+ids[4], map[string]int{"group": 0}, asAdmin, nil)
	ts.must(409, "POST", "/api/project/move/group", map[string]any{"items": []string{ids[4]}, "group": 1}, asAdmin, nil)
	ts.must(400, "PUT", "/api/project/move/group/"+ids[4], map[string]int{"group": 3}, asAdmin, nil)
	ts.must(400, "PUT", "/api/project/move/group/"+ids[4], map[string]int{"group": -1}, asAdmin, nil)
	if after := string(ts.must(200, "GET", "/api/project/list", nil, asAdmin, nil)); after != before {
		t.Fatalf("refused group moves changed projects")
	}
	// Free table 2 and move E there.
	ts.must(200, "DELETE", "/api/project/"+ids[1], nil, asAdmin, nil)
	ts.must(200, "PUT", "/api/project/move/group/"+ids[4], map[string]int{"group": 0}, asAdmin, nil)
	for _, p := range ts.projects() {
		if p.ID == ids[4] && (p.Location != 2 || p.Group != 0) {
			t.Fatalf("E moved to table %d group %d, want table 2 group 0", p.Location, p.Group)
		}
	}
	// Table moves: taken is 409, below 1 is 400, the group follows the table.
	ts.must(409, "PUT", "/api/project/move/"+ids[0], map[string]int{"location": 2}, asAdmin, nil)
	ts.must(400, "PUT", "/api/project/move/"+ids[0], map[string]int{"location": 0}, asAdmin, nil)
	ts.must(200, "PUT", "/api/project/move/"+ids[0], map[string]int{"location": 100}, asAdmin, nil)
	for _, p := range ts.projects() {
		if p.ID == ids[0] && (p.Location != 100 || p.Group != 2) {
			t.Fatalf("A at table %d group %d, want 100 / 2", p.Location, p.Group)
		}
	}
	// A new project gets max + 1.
	nid := ts.addProject("New", "")
	for _, p := range ts.projects() {
		if p.ID == nid && p.Location != 101 {
			t.Fatalf("new project at table %d, want 101", p.Location)
		}
	}
	// Balance: hide one, then the 7 active projects split 3/2/2 over the groups.
	ts.must(200, "PUT", "/api/project/hide/"+ids[2], nil, asAdmin, nil)
	locs := map[string]int{}
	for _, p := range ts.projects() {
		locs[p.ID] = p.Location
	}
	ts.must(200, "POST", "/api/project/balance-groups", nil, asAdmin, nil)
	count := map[int]int{}
	for _, p := range ts.projects() {
		if p.Location != locs[p.ID] {
			t.Fatalf("balance-groups renumbered %s", p.Name)
		}
		if p.Active {
			count[p.Group]++
		}
	}
	if count[0] != 3 || count[1] != 2 || count[2] != 2 {
		t.Fatalf("active projects per group after balance = %v, want 3/2/2", count)
	}
	// Reassign renumbers 1..N in table order.
	ts.must(200, "POST", "/api/project/reassign", nil, asAdmin, nil)
	for i, p := range ts.projects() {
		if p.Location != i+1 {
			t.Fatalf("after reassign %s is at table %d, want %d", p.Name, p.Location, i+1)
		}
	}
}

// TestConformanceGroupLayoutChanges: num-groups resizes names and sizes, regroups
// projects from their tables and rebalances judges of removed groups; swap moves every
// active general judge to the next group and counts a manual switch.
func TestConformanceGroupLayoutChanges(t *testing.T) {
	ts := startServer(t)
	var js []string
	for _, n := range []string{"a", "b", "c", "d"} {
		id, _ := ts.addJudge(n, n+"@example.com", "")
		js = append(js, id)
	}
	ts.must(200, "PUT", "/api/judge/hide/"+js[3], nil, asAdmin, nil) // d (group 0) hidden
	ts.must(200, "POST", "/api/admin/num-groups", map[string]int{"num_groups": 5}, asAdmin, nil)
	var o struct {
		GroupNames     []string `json:"group_names"`
		GroupSizes     []int    `json:"group_sizes"`
		ManualSwitches int      `json:"manual_switches"`
		Ref            int      `json:"ref"`
	}
	ts.must(200, "GET", "/api/admin/options", nil, asAdmin, &o)
	if strings.Join(o.GroupNames, ",") != "Group 1,Group 2,Group 3,Group 4,Group 5" || len(o.GroupSizes) != 5 {
		t.Fatalf("after num-groups 5: names %v sizes %v", o.GroupNames, o.GroupSizes)
	}
	groups := func() map[string]int {
		var list []struct {
			ID        string
			Group     int
			GroupSeen int `json:"group_seen"`
		}
		ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &list)
		out := map[string]int{}
		for _, j := range list {
			out[j.ID] = j.Group
		}
		return out
	}
	g := groups()
	if g[js[0]] != 0 || g[js[1]] != 1 || g[js[2]] != 2 || g[js[3]] != 0 {
		t.Fatalf("groups before swap: %v", g)
	}
	ref := o.Ref
	ts.must(200, "POST", "/api/admin/groups/swap", nil, asAdmin, nil)
	g = groups()
	if g[js[0]] != 1 || g[js[1]] != 2 || g[js[2]] != 3 || g[js[3]] != 0 {
		t.Fatalf("groups after swap: %v (hidden d must stay in 0)", g)
	}
	ts.must(200, "GET", "/api/admin/options", nil, asAdmin, &o)
	if o.ManualSwitches != 1 || o.Ref != ref+1 {
		t.Fatalf("swap: manual_switches %d ref %d (was %d)", o.ManualSwitches, o.Ref, ref)
	}
	// Shrink to 2 groups: judge c (group 3) must land in an existing group.
	ts.must(200, "POST", "/api/admin/num-groups", map[string]int{"num_groups": 2}, asAdmin, nil)
	g = groups()
	for id, grp := range g {
		if grp < 0 || grp > 1 {
			t.Fatalf("judge %s left in removed group %d", id, grp)
		}
	}
	ts.must(200, "GET", "/api/admin/options", nil, asAdmin, &o)
	if strings.Join(o.GroupNames, ",") != "Group 1,Group 2" || len(o.GroupSizes) != 2 {
		t.Fatalf("after num-groups 2: names %v sizes %v", o.GroupNames, o.GroupSizes)
	}
	ts.must(400, "PUT", "/api/judge/move/group/"+js[0], map[string]int{"group": 2}, asAdmin, nil)
	ts.must(200, "PUT", "/api/judge/move/group/"+js[0], map[string]int{"group": 0}, asAdmin, nil)
}

// TestConformanceHugeTableNumbers: table numbers and group sizes beyond any expo are
// 400, so max+1 can never wrap to a negative table.
func TestConformanceHugeTableNumbers(t *testing.T) {
	ts := startServer(t)
	id := ts.addProject("A", "")
	ts.must(400, "PUT", "/api/project/move/"+id, `{"location": 9223372036854775807}`, asAdmin, nil)
	ts.must(400, "PUT", "/api/project/move/"+id, `{"location": 9223372036854775808}`, asAdmin, nil)
	ts.must(400, "POST", "/api/admin/group-sizes", `{"group_sizes": [9223372036854775807, 1, 1]}`, asAdmin, nil)
	ts.addProject("B", "")
	for _, p := range ts.projects() {
		if p.Location < 1 || p.Location > 2 {
			t.Fatalf("project %s at table %d", p.Name, p.Location)
		}
	}
}

// TestConformancePublicListing: challenge_list is split on commas, trimmed, empties
// dropped; a project in an ignored track is 400; hidden projects leave the public
// listing and /api/challenges; challenges are distinct and in byte order.
func TestConformancePublicListing(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/options", map[string]any{"ignore_tracks": []string{"Skip"}}, asAdmin, nil)
	a := ts.addProject("A", " web ,,AI, ")
	ts.addProject("B", "Zeta,AI,Émoji")
	c := ts.addProject("C", "Hidden only")
	ts.must(400, "POST", "/api/project/new", map[string]any{"name": "D", "challenge_list": "AI, Skip"}, asAdmin, nil)
	ts.must(400, "PUT", "/api/project/"+a, map[string]any{"challenge_list": "Skip"}, asAdmin, nil)
	ts.must(200, "PUT", "/api/project/hide/"+c, nil, asAdmin, nil)
	var pub []struct {
		Name          string   `json:"name"`
		ChallengeList []string `json:"challenge_list"`
	}
	ts.must(200, "GET", "/api/project/list/public", nil, anon, &pub)
	if len(pub) != 2 || pub[0].Name != "A" || strings.Join(pub[0].ChallengeList, "|") != "web|AI" {
		t.Fatalf("public listing %+v", pub)
	}
	b := ts.must(200, "GET", "/api/challenges", nil, anon, nil)
	if string(b) != `["AI","Zeta","web","Émoji"]` {
		t.Fatalf("challenges = %s", b)
	}
	ts.must(200, "PUT", "/api/project/hide/"+c, map[string]bool{"hide": false}, asAdmin, nil)
	ts.must(200, "GET", "/api/project/list/public", nil, anon, &pub)
	if len(pub) != 3 {
		t.Fatalf("unhidden project not listed: %+v", pub)
	}
}

// TestConformanceBackupRoutes: POST /api/admin/backup writes a file under
// DATA_DIR/backups and names it; GET /api/admin/backup/:name downloads it as an
// attachment; unknown or path-like names are 404; read-only mode still allows backups
// but not the forced snapshot of POST /api/admin/clock/backup (503).
func TestConformanceBackupRoutes(t *testing.T) {
	ts := startServer(t)
	ts.addProject("A", "")
	var r struct {
		OK     int    `json:"ok"`
		Backup string `json:"backup"`
	}
	ts.must(200, "POST", "/api/admin/backup", nil, asAdmin, &r)
	if r.OK != 1 || r.Backup == "" || strings.ContainsAny(r.Backup, `/\`) {
		t.Fatalf("backup answer %+v", r)
	}
	if _, err := os.Stat(filepath.Join(ts.Dir, "backups", r.Backup)); err != nil {
		t.Fatalf("backup file: %v", err)
	}
	req, _ := http.NewRequest("GET", ts.URL+"/api/admin/backup/"+r.Backup, nil)
	req.SetBasicAuth("admin", testPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(resp)
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") || len(body) < 20 || body[0] != 0x1f || body[1] != 0x8b {
		t.Fatalf("download: %d %q %d bytes", resp.StatusCode, resp.Header.Get("Content-Disposition"), len(body))
	}
	for _, name := range []string{"nope.json.gz", "..%2fadmin_password", "..%2F..%2Fetc%2Fpasswd", "podium-20200101T000000.000Z-1.json.gz"} {
		if c, b := ts.do("GET", "/api/admin/backup/"+name, nil, asAdmin); c != 404 || !strings.Contains(string(b), `"error"`) {
			t.Errorf("GET backup %q: %d %s", name, c, b)
		}
	}
	ts.must(200, "POST", "/api/admin/clock/backup", nil, asAdmin, nil)
	ts.failJournal(errors.New("no space left on device"))
	ts.must(503, "POST", "/api/project/new", map[string]string{"name": "During"}, asAdmin, nil)
	if ps := ts.projects(); len(ps) != 1 {
		t.Fatalf("the refused project is visible: %+v", ps)
	}
	ts.must(503, "POST", "/api/admin/clock/backup", nil, asAdmin, nil)
	ts.must(200, "POST", "/api/admin/backup", nil, asAdmin, nil)
}
