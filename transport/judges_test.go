package transport

import (
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/rs/zerolog"

	"podium/persist"
)

// unknownID is well-formed but never used.
const unknownID = "0123456789abcdef01234567"

// entLists returns the admin judge and project lists, to compare before and after a
// refused request.
func (ts *testServer) entLists() []byte {
	ts.t.Helper()
	j := ts.must(200, "GET", "/api/judge/list", nil, asAdmin, nil)
	p := ts.must(200, "GET", "/api/project/list", nil, asAdmin, nil)
	return append(append(j, '\n'), p...)
}

// refused sends a request that must be refused with status want and change nothing.
func (ts *testServer) refused(want int, method, path string, body any, a auth) {
	ts.t.Helper()
	before := ts.entLists()
	code, b := ts.do(method, path, body, a)
	if code != want {
		ts.t.Fatalf("%s %s %v: status %d, want %d; body %s", method, path, body, code, want, b)
	}
	var e struct{ Error string }
	if err := json.Unmarshal(b, &e); err != nil || e.Error == "" {
		ts.t.Fatalf("%s %s: error body %s", method, path, b)
	}
	if after := ts.entLists(); !bytes.Equal(before, after) {
		ts.t.Fatalf("%s %s: refused request changed state:\n%s\n%s", method, path, before, after)
	}
}

type judgeRow struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Email     string  `json:"email"`
	Notes     string  `json:"notes"`
	Track     string  `json:"track"`
	Active    bool    `json:"active"`
	Group     int     `json:"group"`
	GroupSeen int     `json:"group_seen"`
	Current   *string `json:"current"`
}

func (ts *testServer) judgeRows() map[string]judgeRow {
	ts.t.Helper()
	var list []judgeRow
	ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &list)
	out := map[string]judgeRow{}
	for _, j := range list {
		out[j.ID] = j
	}
	return out
}

func TestJudgeAdminEdit(t *testing.T) {
	ts := startServer(t)
	ann, _ := ts.addJudge("Ann", "ann@example.com", "")
	ts.addJudge("Bob", "bob@example.com", "")
	_, code := ts.addJudge("Cy", "cy@example.com", "")
	tok := ts.login(code)

	ts.must(200, "PUT", "/api/judge/"+ann, map[string]any{"name": "Ann B", "notes": "table 3"}, asAdmin, nil)
	j := ts.judgeRows()[ann]
	if j.Name != "Ann B" || j.Notes != "table 3" || j.Email != "ann@example.com" {
		t.Fatalf("after edit %+v", j)
	}
	ts.must(200, "PUT", "/api/judge/"+ann, nil, asAdmin, nil) // empty body = {}
	ts.must(200, "PUT", "/api/judge/"+ann, map[string]any{"email": "ANN@example.com"}, asAdmin, nil)
	if j := ts.judgeRows()[ann]; j.Name != "Ann B" || j.Email != "ANN@example.com" {
		t.Fatalf("after email edit %+v", j)
	}

	p := "/api/judge/" + ann
	ts.refused(409, "PUT", p, map[string]any{"email": "bob@EXAMPLE.com"}, asAdmin)
	ts.refused(400, "PUT", p, map[string]any{"email": "not-an-email"}, asAdmin)
	ts.refused(400, "PUT", p, map[string]any{"name": "  "}, asAdmin)
	ts.refused(400, "PUT", p, map[string]any{"name": 5}, asAdmin)
	ts.refused(400, "PUT", p, map[string]any{"track": "no-such-track"}, asAdmin)
	ts.refused(400, "PUT", p, `{"name":`, asAdmin)
	ts.refused(400, "PUT", p, `["x"]`, asAdmin)
	ts.refused(400, "PUT", "/api/judge/not-an-id", map[string]any{"name": "x"}, asAdmin)
	ts.refused(404, "PUT", "/api/judge/"+unknownID, map[string]any{"name": "x"}, asAdmin)
	ts.refused(401, "PUT", p, map[string]any{"name": "x"}, anon)
	ts.refused(401, "PUT", p, map[string]any{"name": "x"}, asJudge(tok))
}

// TestAdminIDRouteHandsOn checks that PUT/DELETE .../:id routes leave other routes'
// static paths alone: a later route of the same shape still gets its requests (as the
// judge's PUT /api/judge/welcome does), and a wrong method on a static path is 405.
func TestAdminIDRouteHandsOn(t *testing.T) {
	dir := t.TempDir()
	node, err := persist.Open(dir, persist.Options{Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Config{DataDir: dir, AdminPassword: testPassword}, node, zerolog.Nop())
	// Registered after every real route, like a route of a later routesX function.
	srv.app.Put("/api/judge/later-route", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"later": 1}) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Listen(ln) }()
	ts := &testServer{t: t, URL: "http://" + ln.Addr().String(), Dir: dir, Node: node, Srv: srv, ln: ln}
	t.Cleanup(ts.Stop)

	if b := ts.must(200, "PUT", "/api/judge/later-route", nil, anon, nil); !strings.Contains(string(b), `"later":1`) {
		t.Fatalf("later route answered %s", b)
	}
	for _, r := range [][2]string{
		{"DELETE", "/api/judge/list"}, {"PUT", "/api/judge/new"}, {"PUT", "/api/judge/stats"},
		{"DELETE", "/api/project/list"}, {"PUT", "/api/project/stats"}, {"PUT", "/api/project/move/group"},
	} {
		ts.must(405, r[0], r[1], map[string]any{}, asAdmin, nil)
		ts.must(405, r[0], r[1], nil, anon, nil)
	}
	// Anything else that is not an id is still a malformed id.
	ts.must(400, "PUT", "/api/judge/nothing-here", map[string]any{}, asAdmin, nil)
	ts.must(401, "PUT", "/api/judge/nothing-here", map[string]any{}, anon, nil)
}

func TestJudgeAdminDelete(t *testing.T) {
	ts := startServer(t)
	ann, code := ts.addJudge("Ann", "ann@example.com", "")
	bob, _ := ts.addJudge("Bob", "bob@example.com", "")
	tok := ts.login(code)
	ts.must(200, "GET", "/api/judge", nil, asJudge(tok), nil)

	ts.refused(401, "DELETE", "/api/judge/"+ann, nil, anon)
	ts.refused(401, "DELETE", "/api/judge/"+ann, nil, asJudge(tok))
	ts.refused(400, "DELETE", "/api/judge/xyz", nil, asAdmin)
	ts.refused(404, "DELETE", "/api/judge/"+unknownID, nil, asAdmin)

	ts.must(200, "DELETE", "/api/judge/"+ann, nil, asAdmin, nil)
	rows := ts.judgeRows()
	if _, ok := rows[ann]; ok || len(rows) != 1 {
		t.Fatalf("after delete %+v", rows)
	}
	if _, ok := rows[bob]; !ok {
		t.Fatal("bob gone")
	}
	ts.must(401, "GET", "/api/judge", nil, asJudge(tok), nil)                            // session gone
	ts.must(400, "POST", "/api/judge/login", map[string]string{"code": code}, anon, nil) // code gone
	ts.refused(404, "DELETE", "/api/judge/"+ann, nil, asAdmin)
	// Its email is free again.
	ts.addJudge("Ann", "ann@example.com", "")
}

func TestJudgeAdminHide(t *testing.T) {
	ts := startServer(t)
	ann, code := ts.addJudge("Ann", "ann@example.com", "")
	bob, _ := ts.addJudge("Bob", "bob@example.com", "")
	cy, _ := ts.addJudge("Cy", "cy@example.com", "")
	tok := ts.login(code)
	active := func() []bool {
		r := ts.judgeRows()
		return []bool{r[ann].Active, r[bob].Active, r[cy].Active}
	}
	want := func(w ...bool) {
		t.Helper()
		got := active()
		for i := range w {
			if got[i] != w[i] {
				t.Fatalf("active %v, want %v", got, w)
			}
		}
	}

	ts.must(200, "PUT", "/api/judge/hide/"+ann, nil, asAdmin, nil) // no body: hide
	want(false, true, true)
	ts.must(200, "PUT", "/api/judge/hide/"+ann, map[string]bool{"hide": false}, asAdmin, nil)
	want(true, true, true)
	ts.must(200, "PUT", "/api/judge/hide/"+ann, map[string]bool{"hide": true}, asAdmin, nil)
	want(false, true, true)
	ts.refused(400, "PUT", "/api/judge/hide/"+ann, map[string]any{"hide": "yes"}, asAdmin)
	ts.refused(400, "PUT", "/api/judge/hide/nope", nil, asAdmin)
	ts.refused(404, "PUT", "/api/judge/hide/"+unknownID, nil, asAdmin)
	ts.refused(401, "PUT", "/api/judge/hide/"+bob, nil, anon)
	ts.refused(401, "PUT", "/api/judge/hide/"+bob, nil, asJudge(tok))

	ts.must(200, "POST", "/api/judge/hide", map[string]any{"items": []string{bob, cy}, "hide": true}, asAdmin, nil)
	want(false, false, false)
	ts.must(200, "POST", "/api/judge/hide", map[string]any{"items": []string{ann, bob, ann}, "hide": false}, asAdmin, nil)
	want(true, true, false)
	ts.must(200, "POST", "/api/judge/hide", map[string]any{"items": []string{}, "hide": true}, asAdmin, nil)
	want(true, true, false)

	ts.refused(404, "POST", "/api/judge/hide", map[string]any{"items": []string{ann, unknownID}, "hide": true}, asAdmin)
	ts.refused(400, "POST", "/api/judge/hide", map[string]any{"items": []string{ann, "bad"}, "hide": true}, asAdmin)
	ts.refused(400, "POST", "/api/judge/hide", map[string]any{"items": []string{ann}}, asAdmin)
	ts.refused(400, "POST", "/api/judge/hide", map[string]any{"hide": true}, asAdmin)
	ts.refused(400, "POST", "/api/judge/hide", map[string]any{"items": ann, "hide": true}, asAdmin)
	ts.refused(400, "POST", "/api/judge/hide", map[string]any{"items": []int{1}, "hide": true}, asAdmin)
	ts.refused(400, "POST", "/api/judge/hide", nil, asAdmin)
	ts.refused(401, "POST", "/api/judge/hide", map[string]any{"items": []string{ann}, "hide": true}, anon)
	ts.refused(401, "POST", "/api/judge/hide", map[string]any{"items": []string{ann}, "hide": true}, asJudge(tok))
}

func TestJudgeAdminMoveGroup(t *testing.T) {
	ts := startServer(t)
	ann, code := ts.addJudge("Ann", "ann@example.com", "")
	bob, _ := ts.addJudge("Bob", "bob@example.com", "")
	cy, _ := ts.addJudge("Cy", "cy@example.com", "")
	tok := ts.login(code)
	r := ts.judgeRows()
	if r[ann].Group != 0 || r[bob].Group != 1 || r[cy].Group != 2 {
		t.Fatalf("new judges' groups %d %d %d", r[ann].Group, r[bob].Group, r[cy].Group)
	}

	ts.must(200, "PUT", "/api/judge/move/group/"+ann, map[string]int{"group": 2}, asAdmin, nil)
	if g := ts.judgeRows()[ann]; g.Group != 2 || g.GroupSeen != 0 {
		t.Fatalf("ann %+v", g)
	}
	p := "/api/judge/move/group/" + ann
	ts.refused(400, "PUT", p, map[string]int{"group": 3}, asAdmin)
	ts.refused(400, "PUT", p, map[string]int{"group": -1}, asAdmin)
	ts.refused(400, "PUT", p, map[string]any{"group": "1"}, asAdmin)
	ts.refused(400, "PUT", p, map[string]any{"group": 1.5}, asAdmin)
	ts.refused(400, "PUT", p, map[string]any{}, asAdmin)
	ts.refused(400, "PUT", p, nil, asAdmin)
	ts.refused(400, "PUT", "/api/judge/move/group/zz", map[string]int{"group": 1}, asAdmin)
	ts.refused(404, "PUT", "/api/judge/move/group/"+unknownID, map[string]int{"group": 1}, asAdmin)
	ts.refused(401, "PUT", p, map[string]int{"group": 1}, anon)
	ts.refused(401, "PUT", p, map[string]int{"group": 1}, asJudge(tok))

	ts.must(200, "POST", "/api/judge/move/group", map[string]any{"items": []string{ann, bob}, "group": 0}, asAdmin, nil)
	if r := ts.judgeRows(); r[ann].Group != 0 || r[bob].Group != 0 || r[cy].Group != 2 {
		t.Fatalf("after bulk move %+v", r)
	}
	ts.refused(404, "POST", "/api/judge/move/group", map[string]any{"items": []string{cy, unknownID}, "group": 1}, asAdmin)
	ts.refused(400, "POST", "/api/judge/move/group", map[string]any{"items": []string{cy}, "group": 7}, asAdmin)
	ts.refused(400, "POST", "/api/judge/move/group", map[string]any{"items": []string{cy}}, asAdmin)
	ts.refused(400, "POST", "/api/judge/move/group", map[string]any{"group": 1}, asAdmin)
	ts.refused(400, "POST", "/api/judge/move/group", `{"items": [`, asAdmin)
	ts.refused(401, "POST", "/api/judge/move/group", map[string]any{"items": []string{cy}, "group": 1}, asJudge(tok))
}

func TestJudgeAdminSwapAndReassign(t *testing.T) {
	ts := startServer(t)
	var ids []string
	for _, n := range []string{"a", "b", "c", "d"} {
		id, _ := ts.addJudge(n, n+"@example.com", "")
		ids = append(ids, id)
	}
	_, code := ts.addJudge("e", "e@example.com", "")
	tok := ts.login(code)
	groups := func() []int {
		r := ts.judgeRows()
		var g []int
		for _, id := range ids {
			g = append(g, r[id].Group)
		}
		return g
	}
	eq := func(got []int, want ...int) {
		t.Helper()
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("groups %v, want %v", got, want)
			}
		}
	}
	eq(groups(), 0, 1, 2, 0)
	ts.must(200, "PUT", "/api/judge/hide/"+ids[3], nil, asAdmin, nil)
	ts.must(200, "POST", "/api/admin/groups/swap", nil, asAdmin, nil)
	eq(groups(), 1, 2, 0, 0) // the hidden judge stays
	var opts struct {
		ManualSwitches int `json:"manual_switches"`
	}
	ts.must(200, "GET", "/api/admin/options", nil, asAdmin, &opts)
	if opts.ManualSwitches != 1 {
		t.Fatalf("manual_switches %d", opts.ManualSwitches)
	}
	ts.refused(401, "POST", "/api/admin/groups/swap", nil, anon)
	ts.refused(401, "POST", "/api/admin/groups/swap", nil, asJudge(tok))

	ts.must(200, "POST", "/api/judge/move/group", map[string]any{"items": ids, "group": 2}, asAdmin, nil)
	ts.must(200, "POST", "/api/judge/reassign", nil, asAdmin, nil)
	// Active general judges a b c e round robin 0 1 2 0, then hidden d: 1.
	eq(groups(), 0, 1, 2, 1)
	ts.refused(401, "POST", "/api/judge/reassign", nil, anon)
	ts.refused(401, "POST", "/api/judge/reassign", nil, asJudge(tok))
}

func TestJudgeAdminStats(t *testing.T) {
	ts := startServer(t)
	var st struct {
		Num       *int     `json:"num"`
		NumActive *int     `json:"num_active"`
		AvgSeen   *float64 `json:"avg_seen"`
	}
	ts.must(200, "GET", "/api/judge/stats", nil, asAdmin, &st)
	if st.Num == nil || *st.Num != 0 || *st.NumActive != 0 || *st.AvgSeen != 0 {
		t.Fatalf("empty stats %+v", st)
	}
	a, code := ts.addJudge("a", "a@example.com", "")
	ts.addJudge("b", "b@example.com", "")
	ts.addJudge("c", "c@example.com", "")
	ts.must(200, "PUT", "/api/judge/hide/"+a, nil, asAdmin, nil)
	ts.must(200, "GET", "/api/judge/stats", nil, asAdmin, &st)
	if *st.Num != 3 || *st.NumActive != 2 || *st.AvgSeen != 0 {
		t.Fatalf("stats %d %d %v", *st.Num, *st.NumActive, *st.AvgSeen)
	}
	ts.must(401, "GET", "/api/judge/stats", nil, anon, nil)
	ts.must(401, "GET", "/api/judge/stats", nil, asJudge(ts.login(code)), nil)
}
