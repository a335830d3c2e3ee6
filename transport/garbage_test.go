package transport

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
)

// garbageNoBody lists the write routes that take no body (docs/behaviour.md#conventions: they ignore one), by
// "METHOD path" as registered. Garbage sent to them must still never cause a 5xx, and
// an oversize body is still 413, but they may succeed and change the state. Routes of
// the seed API that other files add are listed here already.
var garbageNoBody = map[string]bool{
	"POST /api/judge/auth":                  true,
	"POST /api/admin/auth":                  true,
	"POST /api/judge/logout":                true,
	"POST /api/admin/logout":                true,
	"POST /api/admin/clock/pause":           true,
	"POST /api/admin/clock/unpause":         true,
	"POST /api/admin/clock/reset":           true,
	"POST /api/admin/clock/backup":          true,
	"POST /api/admin/backup":                true,
	"POST /api/admin/groups/swap":           true,
	"POST /api/judge/reassign":              true,
	"POST /api/project/reassign":            true,
	"POST /api/project/balance-groups":      true,
	"POST /api/admin/qr":                    true,
	"POST /api/admin/qr/:track":             true,
	"POST /api/judge/next":                  true,
	"PUT /api/judge/welcome":                true,
	"POST /api/judge/welcome":               true,
	"POST /api/admin/team-links/send":       true,
	"POST /api/admin/team-links/rotate/:id": true,
}

// garbageValid names, per route, the one garbage body that is a valid request there:
// an empty list of prizes removes them all (docs/behaviour.md#after-judging).
var garbageValid = map[string]string{"PUT /api/admin/prizes": "empty array"}

// garbageFields are the request fields of the whole API with their type. Fields whose
// type differs between routes are "any": they only get values no route accepts.
var garbageFields = map[string]string{
	"name": "string", "email": "string", "notes": "string", "track": "string", "code": "string",
	"password": "string", "reason": "string", "description": "string", "url": "string",
	"try_link": "string", "video_link": "string", "type": "string", "switching_mode": "string",
	"event_name": "string", "question": "string", "answer": "string", "tier": "string",
	"website_url": "string", "logo_data": "string", "logo_content_type": "string", "token": "string",
	"group": "int", "num_groups": "int", "max_req_per_min": "int", "judging_timer": "int",
	"min_views": "int", "display_order": "int", "focus_top": "int", "assignment_mode": "string", "assignment_goal": "string",
	"no_send": "bool", "hide": "bool", "starred": "bool", "prioritize": "bool", "start": "bool",
	"block_reqs": "bool", "clock_sync": "bool", "judge_tracks": "bool", "multi_group": "bool",
	"read_welcome": "bool",
	"items":        "strings", "tracks": "strings", "ranking": "strings", "group_names": "strings",
	"ignore_tracks": "strings", "tags": "strings",
	"track_views": "ints", "group_sizes": "ints",
	"auto_switch_prop": "float",
	"challenge_list":   "any", "location": "any", "start_time": "any", "end_time": "any",
	"schedule": "any", "sponsors": "any", "faq": "any", "id": "any",
}

// garbageWrong holds, per variant, a value of the wrong type for each field type.
var garbageWrong = []map[string]string{
	{"string": `{"o":{"p":[1]}}`, "int": `{"o":1}`, "bool": `{"o":true}`, "strings": `{"o":"x"}`, "ints": `{"o":1}`, "float": `{}`, "any": `{"o":{"p":[1]}}`},
	{"string": `12345`, "int": `"12"`, "bool": `"true"`, "strings": `"a,b"`, "ints": `[1.5]`, "float": `"0.5"`, "any": `{"nested":[{}]}`},
	{"string": `true`, "int": `99999999999999999999999`, "bool": `1`, "strings": `[1, 2]`, "ints": `["1"]`, "float": `1e400`, "any": `{}`},
	{"string": `[]`, "int": `1.5`, "bool": `[]`, "strings": `{}`, "ints": `[99999999999999999999999]`, "float": `[0.5]`, "any": `{"a":"b"}`},
	{"string": `["x"]`, "int": `-1e400`, "bool": `"false"`, "strings": `[[]]`, "ints": `[-1e400]`, "float": `true`, "any": `{"z":null}`},
}

// garbageBodies returns the named bodies sent to every write route.
func garbageBodies() []struct{ name, body string } {
	out := []struct{ name, body string }{
		{"not json", `not json`},
		{"truncated", `{"name": "x", "items": [`},
		{"trailing data", `{} {}`},
		{"null", `null`},
		{"empty array", `[]`},
		{"array of objects", `[{"name": "x", "hide": true}]`},
		{"string", `"hello"`},
		{"huge number", `123456789012345678901234567890e999`},
		{"bool", `true`},
		{"invalid utf-8", "\xff\xfe\xfd"},
		{"bom", "\xef\xbb\xbf{}"},
		{"deep nesting", strings.Repeat("[", 20000) + strings.Repeat("]", 20000)},
		{"nested objects", `{"a":` + strings.Repeat(`{"a":`, 20000) + `1` + strings.Repeat(`}`, 20001)},
	}
	names := make([]string, 0, len(garbageFields))
	for f := range garbageFields {
		names = append(names, f)
	}
	sort.Strings(names)
	stride := 7 // coprime with the number of fields, so that every field is sent
	for gcd(stride, len(names)) != 1 {
		stride++
	}
	for i, wrong := range garbageWrong {
		// Every field of the API with a value of the wrong type, in a different order
		// each time (the first wrong field is the one a decoder reports).
		parts := make([]string, 0, len(names))
		for k := range names {
			f := names[(k*stride+i*11)%len(names)]
			parts = append(parts, fmt.Sprintf("%q: %s", f, wrong[garbageFields[f]]))
		}
		out = append(out, struct{ name, body string }{fmt.Sprintf("wrong types %d", i), "{" + strings.Join(parts, ", ") + "}"})
		// The same fields inside an array instead of an object.
		out = append(out, struct{ name, body string }{fmt.Sprintf("array of wrong types %d", i), "[{" + strings.Join(parts, ", ") + "}]"})
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// garbageRoute is a write route found on the server.
type garbageRoute struct {
	method, path string // path as registered
	noBody       bool
}

// garbagePath fills a route's parameters with existing ids so that handlers get as far
// as parsing the body.
func garbagePath(path, judgeID, projectID string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if !strings.HasPrefix(s, ":") && s != "*" && !strings.HasPrefix(s, "+") {
			continue
		}
		name := strings.TrimRight(strings.TrimLeft(s, ":"), "?")
		switch {
		case name == "id" && (strings.Contains(path, "/project") || strings.Contains(path, "/star/") || strings.Contains(path, "/notes/")):
			segs[i] = projectID
		case name == "id":
			segs[i] = judgeID
		case name == "track":
			segs[i] = "AI"
		default:
			segs[i] = "x"
		}
	}
	return strings.Join(segs, "/")
}

// TestGarbageBodiesOnEveryWriteRoute sends malformed, mistyped and oversize bodies to
// every POST/PUT/PATCH route the server has (found from the router, so routes added
// later are covered too): always 4xx (413 when oversize), never 5xx, and the state the
// admin sees (judges, projects, options) unchanged.
func TestGarbageBodiesOnEveryWriteRoute(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/options", `{"tracks": ["AI"], "multi_group": true}`, asAdmin, nil)
	projectID := ts.addProject("Rocket", "AI")
	ts.addProject("Boat", "")
	judgeID, code := ts.addJudge("Gabe", "gabe@example.com", "")
	ts.addJudge("Tara", "tara@example.com", "AI")
	tok := ts.login(code)
	// Admin by Basic credentials and judge by cookie in the same request, so routes of
	// either level get past authentication to the body.
	both := auth{admin: true, hdr: map[string]string{"Cookie": "podium_judge=" + tok}}

	seen := map[string]bool{}
	var routes []garbageRoute
	for _, r := range ts.Srv.app.GetRoutes(true) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
			continue
		}
		key := r.Method + " " + r.Path
		if seen[key] {
			continue
		}
		seen[key] = true
		routes = append(routes, garbageRoute{method: r.Method, path: r.Path, noBody: garbageNoBody[key]})
	}
	// Routes that read a body first; then the ones that ignore it, logouts last (they
	// end the sessions the others use).
	sort.SliceStable(routes, func(a, b int) bool {
		ra, rb := routes[a], routes[b]
		if ra.noBody != rb.noBody {
			return !ra.noBody
		}
		la, lb := strings.HasSuffix(ra.path, "/logout"), strings.HasSuffix(rb.path, "/logout")
		if la != lb {
			return !la
		}
		return ra.method+ra.path < rb.method+rb.path
	})
	if len(routes) < 10 {
		t.Fatalf("only %d write routes found", len(routes))
	}

	bodies := garbageBodies()
	oversize := strings.Repeat("x", maxJSONBody+1)
	before := settingsState(ts)
	for _, r := range routes {
		path := garbagePath(r.path, judgeID, projectID)
		for _, b := range bodies {
			if garbageValid[r.method+" "+r.path] == b.name {
				continue
			}
			code, resp := ts.do(r.method, path, b.body, both)
			if code >= 500 || (!r.noBody && (code < 400 || code > 499)) {
				t.Errorf("%s %s with %s: %d %s", r.method, r.path, b.name, code, resp)
			}
		}
		code, resp := ts.do(r.method, path, oversize, both)
		wantOversize := 413
		if strings.HasPrefix(r.path, "/api/admin/content") {
			wantOversize = 0 // larger limits there: any 4xx
		}
		if (wantOversize != 0 && code != wantOversize) || code < 400 || code > 499 {
			t.Errorf("%s %s with a body over 1 MiB: %d %s", r.method, r.path, code, resp)
		}
		after := settingsState(ts)
		if !r.noBody && after != before {
			t.Fatalf("%s %s: garbage changed the state\nbefore %s\nafter  %s", r.method, r.path, before, after)
		}
		before = after
	}
	t.Logf("%d write routes, %d bodies each", len(routes), len(bodies)+1)
}
