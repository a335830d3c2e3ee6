package transport

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

type projectRow struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Location      int      `json:"location"`
	Description   string   `json:"description"`
	URL           string   `json:"url"`
	ChallengeList []string `json:"challenge_list"`
	Active        bool     `json:"active"`
	Prioritized   bool     `json:"prioritized"`
	Group         int      `json:"group"`
}

func (ts *testServer) projectRows() map[string]projectRow {
	ts.t.Helper()
	var list []projectRow
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &list)
	out := map[string]projectRow{}
	for i, p := range list {
		if i > 0 && list[i-1].Location >= p.Location {
			ts.t.Fatalf("project list not sorted by table: %+v", list)
		}
		out[p.ID] = p
	}
	return out
}

// publicNames returns the names in the public listing, in order.
func (ts *testServer) publicNames() string {
	ts.t.Helper()
	var list []projectRow
	ts.must(200, "GET", "/api/project/list/public", nil, anon, &list)
	var names []string
	for _, p := range list {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

// judgeToken adds a judge and returns its session token (for wrong-auth checks).
func (ts *testServer) judgeToken() string {
	ts.t.Helper()
	_, code := ts.addJudge("Jo", fmt.Sprintf("jo%d@example.com", len(ts.judgeRows())), "")
	return ts.login(code)
}

func TestProjectAdminEdit(t *testing.T) {
	ts := startServer(t)
	p1 := ts.addProject("Rocket", "AI")
	tok := ts.judgeToken()
	ts.must(200, "PUT", "/api/project/"+p1, map[string]any{"name": "Rocket 2", "url": "https://r.example", "challenge_list": "Web, , AI ,Hardware"}, asAdmin, nil)
	p := ts.projectRows()[p1]
	if p.Name != "Rocket 2" || p.URL != "https://r.example" || p.Description != "d" || !reflect.DeepEqual(p.ChallengeList, []string{"Web", "AI", "Hardware"}) {
		t.Fatalf("after edit %+v", p)
	}
	if got := ts.publicNames(); got != "Rocket 2" {
		t.Fatalf("public %q", got)
	}
	var ch []string
	ts.must(200, "GET", "/api/challenges", nil, anon, &ch)
	if !reflect.DeepEqual(ch, []string{"AI", "Hardware", "Web"}) {
		t.Fatalf("challenges %v", ch)
	}
	ts.must(200, "PUT", "/api/project/"+p1, nil, asAdmin, nil) // empty body = {}
	ts.must(200, "PUT", "/api/project/"+p1, map[string]any{"challenge_list": ""}, asAdmin, nil)
	if p := ts.projectRows()[p1]; len(p.ChallengeList) != 0 || p.Name != "Rocket 2" {
		t.Fatalf("after clearing challenges %+v", p)
	}

	u := "/api/project/" + p1
	ts.refused(400, "PUT", u, map[string]any{"name": ""}, asAdmin)
	ts.refused(400, "PUT", u, map[string]any{"name": strings.Repeat("x", 201)}, asAdmin)
	ts.refused(400, "PUT", u, map[string]any{"url": "javascript:alert(1)"}, asAdmin)
	ts.refused(400, "PUT", u, map[string]any{"try_link": "ftp://x.example"}, asAdmin)
	ts.refused(400, "PUT", u, map[string]any{"video_link": "/relative"}, asAdmin)
	ts.refused(400, "PUT", u, map[string]any{"description": strings.Repeat("x", 20001)}, asAdmin)
	ts.refused(400, "PUT", u, map[string]any{"challenge_list": []string{"AI"}}, asAdmin)
	ts.refused(400, "PUT", u, map[string]any{"name": true}, asAdmin)
	ts.refused(400, "PUT", u, "nonsense", asAdmin)
	ts.refused(400, "PUT", "/api/project/ABCDEF0123456789abcdef01", map[string]any{"name": "x"}, asAdmin)
	ts.refused(404, "PUT", "/api/project/"+unknownID, map[string]any{"name": "x"}, asAdmin)
	ts.refused(401, "PUT", u, map[string]any{"name": "x"}, anon)
	ts.refused(401, "PUT", u, map[string]any{"name": "x"}, asJudge(tok))
}

func TestProjectAdminDelete(t *testing.T) {
	ts := startServer(t)
	p1 := ts.addProject("One", "")
	p2 := ts.addProject("Two", "")
	p3 := ts.addProject("Three", "")
	tok := ts.judgeToken()
	ts.refused(401, "DELETE", "/api/project/"+p2, nil, anon)
	ts.refused(401, "DELETE", "/api/project/"+p2, nil, asJudge(tok))
	ts.refused(400, "DELETE", "/api/project/"+p2[:23], nil, asAdmin)
	ts.refused(404, "DELETE", "/api/project/"+unknownID, nil, asAdmin)

	ts.must(200, "DELETE", "/api/project/"+p2, nil, asAdmin, nil)
	rows := ts.projectRows()
	if _, ok := rows[p2]; ok || len(rows) != 2 {
		t.Fatalf("after delete %+v", rows)
	}
	if got := ts.publicNames(); got != "One,Three" {
		t.Fatalf("public %q", got)
	}
	ts.refused(404, "DELETE", "/api/project/"+p2, nil, asAdmin)
	// Table 2 is free again.
	ts.must(200, "PUT", "/api/project/move/"+p3, map[string]int{"location": 2}, asAdmin, nil)
	if r := ts.projectRows(); r[p1].Location != 1 || r[p3].Location != 2 {
		t.Fatalf("tables %+v", r)
	}
}

func TestProjectAdminHide(t *testing.T) {
	ts := startServer(t)
	p1 := ts.addProject("One", "AI")
	p2 := ts.addProject("Two", "Web")
	p3 := ts.addProject("Three", "")
	tok := ts.judgeToken()

	ts.must(200, "PUT", "/api/project/hide/"+p1, nil, asAdmin, nil)
	if got := ts.publicNames(); got != "Two,Three" {
		t.Fatalf("public %q", got)
	}
	var ch []string
	ts.must(200, "GET", "/api/challenges", nil, anon, &ch)
	if !reflect.DeepEqual(ch, []string{"Web"}) {
		t.Fatalf("challenges %v", ch)
	}
	if r := ts.projectRows(); r[p1].Active || !r[p2].Active {
		t.Fatalf("rows %+v", r)
	}
	ts.must(200, "PUT", "/api/project/hide/"+p1, map[string]bool{"hide": false}, asAdmin, nil)
	if got := ts.publicNames(); got != "One,Two,Three" {
		t.Fatalf("public %q", got)
	}
	ts.refused(400, "PUT", "/api/project/hide/"+p1, map[string]any{"hide": 1}, asAdmin)
	ts.refused(400, "PUT", "/api/project/hide/x", nil, asAdmin)
	ts.refused(404, "PUT", "/api/project/hide/"+unknownID, nil, asAdmin)
	ts.refused(401, "PUT", "/api/project/hide/"+p1, nil, anon)
	ts.refused(401, "PUT", "/api/project/hide/"+p1, nil, asJudge(tok))

	ts.must(200, "POST", "/api/project/hide", map[string]any{"items": []string{p1, p3}, "hide": true}, asAdmin, nil)
	if got := ts.publicNames(); got != "Two" {
		t.Fatalf("public %q", got)
	}
	ts.refused(404, "POST", "/api/project/hide", map[string]any{"items": []string{p1, unknownID}, "hide": false}, asAdmin)
	ts.refused(400, "POST", "/api/project/hide", map[string]any{"items": []string{p1}}, asAdmin)
	ts.refused(400, "POST", "/api/project/hide", map[string]any{"hide": false}, asAdmin)
	ts.refused(400, "POST", "/api/project/hide", map[string]any{"items": []string{"x"}, "hide": false}, asAdmin)
	ts.refused(400, "POST", "/api/project/hide", map[string]any{"items": []string{p1}, "hide": "no"}, asAdmin)
	ts.refused(400, "POST", "/api/project/hide", "", asAdmin)
	ts.refused(401, "POST", "/api/project/hide", map[string]any{"items": []string{p1}, "hide": false}, anon)
	ts.refused(401, "POST", "/api/project/hide", map[string]any{"items": []string{p1}, "hide": false}, asJudge(tok))
	ts.must(200, "POST", "/api/project/hide", map[string]any{"items": []string{p1, p3}, "hide": false}, asAdmin, nil)
	if got := ts.publicNames(); got != "One,Two,Three" {
		t.Fatalf("public %q", got)
	}
}

func TestProjectAdminMove(t *testing.T) {
	ts := startServer(t)
	p1 := ts.addProject("One", "")
	p2 := ts.addProject("Two", "")
	tok := ts.judgeToken()
	ts.must(200, "PUT", "/api/project/move/"+p1, map[string]int{"location": 45}, asAdmin, nil)
	r := ts.projectRows()
	if r[p1].Location != 45 || r[p1].Group != 1 || r[p2].Location != 2 {
		t.Fatalf("after move %+v", r)
	}
	if got := ts.publicNames(); got != "Two,One" {
		t.Fatalf("public %q", got)
	}
	// A new project goes after the highest table.
	p3 := ts.addProject("Three", "")
	if ts.projectRows()[p3].Location != 46 {
		t.Fatal("new project not at 46")
	}
	u := "/api/project/move/" + p2
	ts.refused(409, "PUT", u, map[string]int{"location": 45}, asAdmin)
	ts.refused(400, "PUT", u, map[string]int{"location": 0}, asAdmin)
	ts.refused(400, "PUT", u, map[string]int{"location": -3}, asAdmin)
	ts.refused(400, "PUT", u, map[string]any{"location": "4"}, asAdmin)
	ts.refused(400, "PUT", u, map[string]any{"location": 1e30}, asAdmin)
	ts.refused(400, "PUT", u, map[string]any{}, asAdmin)
	ts.refused(400, "PUT", u, nil, asAdmin)
	ts.refused(400, "PUT", "/api/project/move/-", map[string]int{"location": 4}, asAdmin)
	ts.refused(404, "PUT", "/api/project/move/"+unknownID, map[string]int{"location": 4}, asAdmin)
	ts.refused(401, "PUT", u, map[string]int{"location": 4}, anon)
	ts.refused(401, "PUT", u, map[string]int{"location": 4}, asJudge(tok))
	ts.must(200, "PUT", u, map[string]int{"location": 2}, asAdmin, nil) // its own table
}

func TestProjectAdminMoveGroupAndBalance(t *testing.T) {
	ts := startServer(t)
	var ps []string
	for i := 1; i <= 3; i++ {
		ps = append(ps, ts.addProject(fmt.Sprintf("P%d", i), ""))
	}
	tok := ts.judgeToken()
	// Default group sizes 30, 30, 30: group 1 starts at table 31, group 2 at 61.
	ts.must(200, "PUT", "/api/project/move/group/"+ps[0], map[string]int{"group": 1}, asAdmin, nil)
	ts.must(200, "POST", "/api/project/move/group", map[string]any{"items": []string{ps[2], ps[1]}, "group": 2}, asAdmin, nil)
	r := ts.projectRows()
	if r[ps[0]].Location != 31 || r[ps[0]].Group != 1 || r[ps[1]].Location != 61 || r[ps[2]].Location != 62 || r[ps[2]].Group != 2 {
		t.Fatalf("after group moves %+v", r)
	}
	// Already in the group: stays put.
	ts.must(200, "PUT", "/api/project/move/group/"+ps[2], map[string]int{"group": 2}, asAdmin, nil)
	if ts.projectRows()[ps[2]].Location != 62 {
		t.Fatal("project in its group moved")
	}

	u := "/api/project/move/group/" + ps[0]
	ts.refused(400, "PUT", u, map[string]int{"group": 3}, asAdmin)
	ts.refused(400, "PUT", u, map[string]int{"group": -1}, asAdmin)
	ts.refused(400, "PUT", u, map[string]any{"group": nil}, asAdmin)
	ts.refused(400, "PUT", u, map[string]any{"group": []int{1}}, asAdmin)
	ts.refused(400, "PUT", "/api/project/move/group/1", map[string]int{"group": 1}, asAdmin)
	ts.refused(404, "PUT", "/api/project/move/group/"+unknownID, map[string]int{"group": 1}, asAdmin)
	ts.refused(401, "PUT", u, map[string]int{"group": 0}, anon)
	ts.refused(401, "PUT", u, map[string]int{"group": 0}, asJudge(tok))
	ts.refused(404, "POST", "/api/project/move/group", map[string]any{"items": []string{ps[0], unknownID}, "group": 0}, asAdmin)
	ts.refused(400, "POST", "/api/project/move/group", map[string]any{"items": []string{ps[0]}, "group": 9}, asAdmin)
	ts.refused(400, "POST", "/api/project/move/group", map[string]any{"items": []string{ps[0]}}, asAdmin)
	ts.refused(400, "POST", "/api/project/move/group", map[string]any{"group": 0}, asAdmin)
	ts.refused(401, "POST", "/api/project/move/group", map[string]any{"items": []string{ps[0]}, "group": 0}, asJudge(tok))

	// Balance: active tables 31, 61, 62 over 3 groups -> one each, sizes 31, 30, 1.
	ts.must(200, "POST", "/api/project/balance-groups", nil, asAdmin, nil)
	var opts struct {
		GroupSizes []int `json:"group_sizes"`
	}
	ts.must(200, "GET", "/api/admin/options", nil, asAdmin, &opts)
	if !reflect.DeepEqual(opts.GroupSizes, []int{31, 30, 1}) {
		t.Fatalf("group sizes %v", opts.GroupSizes)
	}
	r = ts.projectRows()
	if r[ps[0]].Group != 0 || r[ps[1]].Group != 1 || r[ps[2]].Group != 2 || r[ps[0]].Location != 31 {
		t.Fatalf("after balance %+v", r)
	}
	// Group 1 is now tables 32-61 with one project at 61: 29 free tables, 30 won't fit.
	var many []string
	for i := 0; i < 30; i++ {
		many = append(many, ts.addProject(fmt.Sprintf("M%d", i), ""))
	}
	ts.refused(409, "POST", "/api/project/move/group", map[string]any{"items": many, "group": 1}, asAdmin)
	ts.must(200, "POST", "/api/project/move/group", map[string]any{"items": many[:29], "group": 1}, asAdmin, nil)
	ts.refused(409, "PUT", "/api/project/move/group/"+many[29], map[string]int{"group": 1}, asAdmin)
	ts.refused(401, "POST", "/api/project/balance-groups", nil, anon)
	ts.refused(401, "POST", "/api/project/balance-groups", nil, asJudge(tok))
}

func TestProjectAdminReassign(t *testing.T) {
	ts := startServer(t)
	p1 := ts.addProject("One", "")
	p2 := ts.addProject("Two", "")
	p3 := ts.addProject("Three", "")
	tok := ts.judgeToken()
	ts.must(200, "PUT", "/api/project/move/"+p1, map[string]int{"location": 70}, asAdmin, nil)
	ts.must(200, "PUT", "/api/project/move/"+p3, map[string]int{"location": 40}, asAdmin, nil)
	ts.must(200, "POST", "/api/project/reassign", nil, asAdmin, nil)
	r := ts.projectRows()
	if r[p2].Location != 1 || r[p3].Location != 2 || r[p1].Location != 3 || r[p1].Group != 0 || r[p3].Group != 0 {
		t.Fatalf("after reassign %+v", r)
	}
	if got := ts.publicNames(); got != "Two,Three,One" {
		t.Fatalf("public %q", got)
	}
	ts.refused(401, "POST", "/api/project/reassign", nil, anon)
	ts.refused(401, "POST", "/api/project/reassign", nil, asJudge(tok))
}

func TestProjectAdminPrioritize(t *testing.T) {
	ts := startServer(t)
	p1 := ts.addProject("One", "")
	p2 := ts.addProject("Two", "")
	tok := ts.judgeToken()
	ts.must(200, "PUT", "/api/project/prioritize/"+p1, map[string]bool{"prioritize": true}, asAdmin, nil)
	if r := ts.projectRows(); !r[p1].Prioritized || r[p2].Prioritized {
		t.Fatalf("rows %+v", r)
	}
	ts.must(200, "POST", "/api/project/prioritize", map[string]any{"items": []string{p1, p2}, "prioritize": false}, asAdmin, nil)
	if r := ts.projectRows(); r[p1].Prioritized || r[p2].Prioritized {
		t.Fatalf("rows %+v", r)
	}
	u := "/api/project/prioritize/" + p1
	ts.refused(400, "PUT", u, nil, asAdmin)
	ts.refused(400, "PUT", u, map[string]any{}, asAdmin)
	ts.refused(400, "PUT", u, map[string]any{"prioritize": "true"}, asAdmin)
	ts.refused(400, "PUT", "/api/project/prioritize/0", map[string]bool{"prioritize": true}, asAdmin)
	ts.refused(404, "PUT", "/api/project/prioritize/"+unknownID, map[string]bool{"prioritize": true}, asAdmin)
	ts.refused(401, "PUT", u, map[string]bool{"prioritize": true}, anon)
	ts.refused(401, "PUT", u, map[string]bool{"prioritize": true}, asJudge(tok))
	ts.refused(404, "POST", "/api/project/prioritize", map[string]any{"items": []string{p2, unknownID}, "prioritize": true}, asAdmin)
	ts.refused(400, "POST", "/api/project/prioritize", map[string]any{"items": []string{p2}}, asAdmin)
	ts.refused(400, "POST", "/api/project/prioritize", map[string]any{"prioritize": true}, asAdmin)
	ts.refused(400, "POST", "/api/project/prioritize", map[string]any{"items": "x", "prioritize": true}, asAdmin)
	ts.refused(401, "POST", "/api/project/prioritize", map[string]any{"items": []string{p2}, "prioritize": true}, asJudge(tok))
}

func TestProjectAdminStats(t *testing.T) {
	ts := startServer(t)
	p1 := ts.addProject("One", "")
	ts.addProject("Two", "")
	ts.must(200, "PUT", "/api/project/hide/"+p1, nil, asAdmin, nil)
	var st struct {
		Num       int     `json:"num"`
		NumActive int     `json:"num_active"`
		AvgSeen   float64 `json:"avg_seen"`
	}
	ts.must(200, "GET", "/api/project/stats", nil, asAdmin, &st)
	if st.Num != 2 || st.NumActive != 1 || st.AvgSeen != 0 {
		t.Fatalf("stats %+v", st)
	}
	ts.must(401, "GET", "/api/project/stats", nil, anon, nil)
	ts.must(401, "GET", "/api/project/stats", nil, asJudge(ts.judgeToken()), nil)
}

func TestEntityStatsAverage(t *testing.T) {
	var st entityStats
	st.add(true, 3)
	st.add(false, 10)
	st.add(true, 4)
	st.done()
	if st.Num != 3 || st.NumActive != 2 || st.AvgSeen != 3.5 {
		t.Fatalf("stats %+v", st)
	}
}

// TestEntityAdminSurvivesRestart checks that the admin commands' effects survive a
// restart on the same data directory.
func TestEntityAdminSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ts := startServerIn(t, dir)
	a, _ := ts.addJudge("Ann", "ann@example.com", "")
	b, _ := ts.addJudge("Bob", "bob@example.com", "")
	p1 := ts.addProject("One", "AI")
	p2 := ts.addProject("Two", "")
	p3 := ts.addProject("Three", "")
	ts.must(200, "PUT", "/api/judge/"+a, map[string]any{"name": "Ann B", "notes": "n"}, asAdmin, nil)
	ts.must(200, "PUT", "/api/judge/hide/"+b, nil, asAdmin, nil)
	ts.must(200, "POST", "/api/admin/groups/swap", nil, asAdmin, nil)
	ts.must(200, "PUT", "/api/project/"+p1, map[string]any{"challenge_list": "AI, Web"}, asAdmin, nil)
	ts.must(200, "PUT", "/api/project/move/"+p2, map[string]int{"location": 50}, asAdmin, nil)
	ts.must(200, "POST", "/api/project/balance-groups", nil, asAdmin, nil)
	ts.must(200, "POST", "/api/project/prioritize", map[string]any{"items": []string{p3}, "prioritize": true}, asAdmin, nil)
	ts.must(200, "DELETE", "/api/project/"+p3, nil, asAdmin, nil)
	before := ts.entLists()
	ts.Stop()
	ts2 := startServerIn(t, dir)
	if after := ts2.entLists(); string(after) != string(before) {
		t.Fatalf("lists differ after restart:\n%s\n%s", before, after)
	}
}

// TestEntityAdminGarbageBodies sends garbage, wrong types and oversize bodies to every
// judge/project/group admin route that reads a body: always 4xx, never 5xx, and nothing
// changes (except that routes whose body is optional may treat an empty body as {}).
func TestEntityAdminGarbageBodies(t *testing.T) {
	ts := startServer(t)
	j, _ := ts.addJudge("Ann", "ann@example.com", "")
	ts.addJudge("Bob", "bob@example.com", "")
	p := ts.addProject("One", "AI")
	ts.addProject("Two", "")
	type route struct {
		method, path string
		optional     bool
		bad          []string // wrong types and values for this route
	}
	bulk := func(field string) []string {
		return []string{
			`{"items": {}, "` + field + `": true}`,
			`{"items": "` + p + `", "` + field + `": true}`,
			`{"items": [null], "` + field + `": true}`,
			`{"items": [1], "` + field + `": true}`,
			`{"items": ["` + j + `", "` + p + `"], "` + field + `": true}`, // one id unknown here
		}
	}
	routes := []route{
		{"PUT", "/api/judge/" + j, true, []string{`{"name": 1}`, `{"email": []}`, `{"notes": {}}`, `{"track": 2}`, `{"name": ""}`, `{"email": "x"}`}},
		{"PUT", "/api/judge/hide/" + j, true, []string{`{"hide": "true"}`, `{"hide": 1}`, `{"hide": []}`}},
		{"POST", "/api/judge/hide", false, append(bulk("hide"), `{"items": [], "hide": "no"}`)},
		{"PUT", "/api/judge/move/group/" + j, false, []string{`{"group": "1"}`, `{"group": 1.5}`, `{"group": 1e400}`, `{"group": -1}`, `{"group": 3}`, `{"group": null}`}},
		{"POST", "/api/judge/move/group", false, append(bulk("x"), `{"items": [], "group": 9}`, `{"items": [], "group": "0"}`)},
		{"PUT", "/api/project/" + p, true, []string{`{"name": 1}`, `{"url": 5}`, `{"challenge_list": ["a"]}`, `{"description": false}`, `{"try_link": "javascript:x"}`}},
		{"PUT", "/api/project/hide/" + p, true, []string{`{"hide": "false"}`, `{"hide": 0}`}},
		{"POST", "/api/project/hide", false, append(bulk("hide"), `{"items": [], "hide": null}`)},
		{"PUT", "/api/project/move/" + p, false, []string{`{"location": "2"}`, `{"location": 2.5}`, `{"location": 1e400}`, `{"location": 0}`, `{"location": 2}`, `{"location": null}`}},
		{"PUT", "/api/project/move/group/" + p, false, []string{`{"group": "1"}`, `{"group": true}`, `{"group": 3}`}},
		{"POST", "/api/project/move/group", false, append(bulk("x"), `{"items": [], "group": -2}`)},
		{"PUT", "/api/project/prioritize/" + p, false, []string{`{"prioritize": "yes"}`, `{"prioritize": 1}`, `{"prioritize": null}`}},
		{"POST", "/api/project/prioritize", false, append(bulk("prioritize"), `{"items": [], "prioritize": 1}`)},
	}
	garbage := []string{
		`{`, `}`, `[]`, `[1,2]`, `"text"`, `123`, `true`, `{"a":}`, "\x00\xff", `{"hide": true} trailing`,
	}
	empty := []string{"", "   ", "null", "{}"}
	huge := `{"name": "` + strings.Repeat("x", 1<<20+10) + `"}`
	for _, r := range routes {
		for _, body := range append(garbage, r.bad...) {
			ts.refusedAny(r.method, r.path, body)
		}
		ts.refusedAny(r.method, r.path, huge)
		for _, body := range empty {
			before := ts.entLists()
			code, b := ts.do(r.method, r.path, body, asAdmin)
			switch {
			case code >= 500:
				t.Fatalf("%s %s %q: %d %s", r.method, r.path, body, code, b)
			case r.optional && code == 200:
			case code >= 400 && code < 500:
				if after := ts.entLists(); string(after) != string(before) {
					t.Fatalf("%s %s %q: refused but changed state", r.method, r.path, body)
				}
			default:
				t.Fatalf("%s %s %q: %d %s", r.method, r.path, body, code, b)
			}
		}
	}
}

// refusedAny is refused for any 4xx status.
func (ts *testServer) refusedAny(method, path, body string) {
	ts.t.Helper()
	before := ts.entLists()
	code, b := ts.do(method, path, body, asAdmin)
	if code < 400 || code >= 500 {
		ts.t.Fatalf("%s %s %.80q: status %d, want 4xx; body %.200s", method, path, body, code, b)
	}
	if after := ts.entLists(); string(after) != string(before) {
		ts.t.Fatalf("%s %s %.80q: refused request changed state", method, path, body)
	}
}
