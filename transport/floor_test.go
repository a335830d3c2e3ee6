package transport

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"podium/persist"
)

// Tests of docs/behaviour.md#on-the-floor through HTTP.

// startServerClock starts a server whose command times come from now (the engine's
// server time), on dir.
func startServerClock(t *testing.T, dir string, now func() time.Time) *testServer {
	t.Helper()
	node, err := persist.Open(dir, persist.Options{Log: zerolog.Nop(), Now: now})
	if err != nil {
		t.Fatalf("open node: %v", err)
	}
	srv := New(Config{DataDir: dir, AdminPassword: testPassword}, node, zerolog.Nop())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Listen(ln) }()
	ts := &testServer{t: t, URL: "http://" + ln.Addr().String(), Dir: dir, Node: node, Srv: srv, ln: ln}
	t.Cleanup(ts.Stop)
	return ts
}

// keyedReply is an answer to a keyed request.
type keyedReply struct {
	code     int
	body     string
	replayed bool
}

// doKeyed sends a judge's request with an Idempotency-Key (none when key is "-").
func (ts *testServer) doKeyed(method, path, body, tok, key string) keyedReply {
	ts.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if key != "-" {
		req.Header["Idempotency-Key"] = []string{key}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return keyedReply{code: resp.StatusCode, body: string(b), replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
}

// judgeState is what a judge's writes change, as the API shows it.
func floorState(t *testing.T, ts *testServer, tok string) string {
	t.Helper()
	me := ts.must(200, "GET", "/api/judge", nil, asJudge(tok), nil)
	projects := ts.must(200, "GET", "/api/judge/projects", nil, asJudge(tok), nil)
	var all []map[string]any
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &all)
	seen := ""
	for _, p := range all {
		seen += p["name"].(string) + "=" + jsonString(p["seen"]) + " "
	}
	return string(me) + string(projects) + seen
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestIdempotencyKeyOnJudgeWrites(t *testing.T) {
	dir := t.TempDir()
	ts := startServerIn(t, dir)
	ps := []string{ts.addProject("Alpha", ""), ts.addProject("Beta", ""), ts.addProject("Gamma", "")}
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	tok := ts.login(code)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)

	// Bad keys: 400, nothing changed.
	before := floorState(t, ts, tok)
	for _, k := range []string{"", strings.Repeat("k", 256), "has space", "tab\tkey", "é"} {
		if r := ts.doKeyed("POST", "/api/judge/next", "", tok, k); r.code != 400 {
			t.Fatalf("key %q: %d %s, want 400", k, r.code, r.body)
		}
	}
	if floorState(t, ts, tok) != before {
		t.Fatal("a refused key changed the state")
	}

	next := ts.doKeyed("POST", "/api/judge/next", "", tok, "n-1")
	if next.code != 200 || next.replayed || !strings.Contains(next.body, `"upcoming":[`) {
		t.Fatalf("keyed next: %+v", next)
	}
	var cur struct {
		ProjectID string `json:"project_id"`
	}
	_ = json.Unmarshal([]byte(next.body), &cur)
	fin := ts.doKeyed("POST", "/api/judge/finish", `{"notes":"good","starred":true}`, tok, "f-1")
	if fin.code != 200 || fin.body != `{"ok":1}` || fin.replayed {
		t.Fatalf("keyed finish: %+v", fin)
	}
	star := ts.doKeyed("PUT", "/api/judge/star/"+cur.ProjectID, `{"starred":false}`, tok, "s-1")
	notes := ts.doKeyed("PUT", "/api/judge/notes/"+cur.ProjectID, `{"notes":"edited"}`, tok, "no-1")
	rank := ts.doKeyed("POST", "/api/judge/rank", `{"ranking":["`+cur.ProjectID+`"]}`, tok, "r-1")
	for _, r := range []keyedReply{star, notes, rank} {
		if r.code != 200 || r.replayed {
			t.Fatalf("keyed write: %+v", r)
		}
	}
	after := floorState(t, ts, tok)

	// Repeats: the kept answers, flagged, and nothing changes (a second next would
	// assign the next project; a second finish would be a 409).
	repeats := []struct {
		method, path, body, key string
		want                    keyedReply
	}{
		{"POST", "/api/judge/next", "", "n-1", next},
		{"POST", "/api/judge/finish", `{"notes":"good","starred":true}`, "f-1", fin},
		{"PUT", "/api/judge/star/" + cur.ProjectID, `{"starred":false}`, "s-1", star},
		{"PUT", "/api/judge/notes/" + cur.ProjectID, `{"notes":"edited"}`, "no-1", notes},
		{"POST", "/api/judge/rank", `{"ranking":["` + cur.ProjectID + `"]}`, "r-1", rank},
	}
	check := func(when string) {
		t.Helper()
		for _, rp := range repeats {
			got := ts.doKeyed(rp.method, rp.path, rp.body, tok, rp.key)
			if got.code != rp.want.code || got.body != rp.want.body || !got.replayed {
				t.Fatalf("%s: repeat of %s %s: %+v, want %+v replayed", when, rp.method, rp.path, got, rp.want)
			}
		}
		if s := floorState(t, ts, tok); s != after {
			t.Fatalf("%s: repeats changed the state:\n%s\nwant\n%s", when, s, after)
		}
	}
	check("live")

	// The same key for another body or route: 422, nothing changed.
	for _, rq := range []struct{ method, path, body string }{
		{"POST", "/api/judge/finish", `{"notes":"other","starred":true}`},
		{"POST", "/api/judge/next", ""},
		{"PUT", "/api/judge/star/" + ps[2], `{"starred":false}`},
	} {
		if r := ts.doKeyed(rq.method, rq.path, rq.body, tok, "f-1"); r.code != 422 || !strings.Contains(r.body, "Idempotency-Key") {
			t.Fatalf("key reused on %s %s: %+v, want 422", rq.method, rq.path, r)
		}
	}
	if floorState(t, ts, tok) != after {
		t.Fatal("a reused key changed the state")
	}

	// A refusal is not kept: the same key is judged afresh once the state allows it.
	if r := ts.doKeyed("POST", "/api/judge/skip", `{"reason":"busy"}`, tok, "sk-1"); r.code != 409 || r.replayed {
		t.Fatalf("skip without a current project: %+v", r)
	}

	// Without a key nothing changes from before (Jury's client sends none).
	if r := ts.doKeyed("POST", "/api/judge/next", "", tok, "-"); r.code != 200 || r.replayed {
		t.Fatalf("next without a key: %+v", r)
	}
	after = floorState(t, ts, tok)

	// After a restart (journal replay) the answers are still there.
	ts.Stop()
	ts = startServerIn(t, dir)
	check("after restart")
	// And after a snapshot and another restart.
	if err := ts.Node.Snapshot(); err != nil {
		t.Fatal(err)
	}
	ts.Stop()
	ts = startServerIn(t, dir)
	check("after snapshot and restart")
}

func TestUndoThroughHTTP(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC).UnixMilli())
	ts := startServerClock(t, t.TempDir(), func() time.Time { return time.UnixMilli(now.Load()) })
	for _, n := range []string{"Alpha", "Beta", "Gamma"} {
		ts.addProject(n, "")
	}
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	tok := ts.login(code)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	if r := ts.doKeyed("POST", "/api/judge/undo", "", tok, "-"); r.code != 409 {
		t.Fatalf("undo with nothing to undo: %+v", r)
	}
	a := nextOf(t, ts, tok)["project_id"].(string)
	ts.must(200, "POST", "/api/judge/finish", map[string]any{"notes": "first try", "starred": true}, asJudge(tok), nil)
	nextOf(t, ts, tok)
	now.Add(59_000)
	var res struct {
		OK        int    `json:"ok"`
		ProjectID string `json:"project_id"`
		Notes     string `json:"notes"`
		Starred   bool   `json:"starred"`
	}
	ts.must(200, "POST", "/api/judge/undo", nil, asJudge(tok), &res)
	if res.OK != 1 || res.ProjectID != a || res.Notes != "first try" || !res.Starred {
		t.Fatalf("undo: %+v, want %s", res, a)
	}
	var me struct {
		Current      string `json:"current"`
		Seen         int    `json:"seen"`
		SeenProjects []any  `json:"seen_projects"`
	}
	ts.must(200, "GET", "/api/judge", nil, asJudge(tok), &me)
	if me.Current != a || me.Seen != 0 || len(me.SeenProjects) != 0 {
		t.Fatalf("judge after undo: %+v", me)
	}
	if r := ts.doKeyed("POST", "/api/judge/undo", "", tok, "-"); r.code != 409 {
		t.Fatalf("second undo: %+v", r)
	}
	ts.must(200, "POST", "/api/judge/finish", map[string]any{"notes": "again"}, asJudge(tok), nil)
	now.Add(60_001)
	if r := ts.doKeyed("POST", "/api/judge/undo", "", tok, "-"); r.code != 409 || !strings.Contains(r.body, "60 seconds") {
		t.Fatalf("undo after a minute: %+v", r)
	}
}

func TestFinishNamingAProjectThroughHTTP(t *testing.T) {
	ts, tok, _, _ := judgingSetup(t, 4)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	first := nextOf(t, ts, tok)
	up := first["upcoming"].([]any)
	if len(up) != 2 {
		t.Fatalf("upcoming %v", up)
	}
	ts.must(200, "POST", "/api/judge/finish", map[string]any{"project": first["project_id"]}, asJudge(tok), nil)
	ts.must(200, "POST", "/api/judge/finish", map[string]any{"project": up[0], "notes": "offline"}, asJudge(tok), nil)
	if r := ts.doKeyed("POST", "/api/judge/finish", `{"project":"`+up[0].(string)+`"}`, tok, "-"); r.code != 409 || !strings.Contains(r.body, "already judged") {
		t.Fatalf("finish of a judged project: %+v", r)
	}
	if r := ts.doKeyed("POST", "/api/judge/finish", `{"project":"nope"}`, tok, "-"); r.code != 400 {
		t.Fatalf("finish with a bad id: %+v", r)
	}
	var me struct{ Seen int }
	ts.must(200, "GET", "/api/judge", nil, asJudge(tok), &me)
	if me.Seen != 2 {
		t.Fatalf("seen %d, want 2", me.Seen)
	}
}

func TestConflictsThroughHTTP(t *testing.T) {
	ts := startServer(t)
	ps := []string{ts.addProject("Alpha", ""), ts.addProject("Beta", ""), ts.addProject("Gamma", "")}
	ada, adaCode := ts.addJudge("Ada", "ada@example.com", "")
	bob, _ := ts.addJudge("Bob", "bob@example.com", "")
	var tables []struct {
		ID       string
		Location int
	}
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &tables)
	betaTable := 0
	for _, p := range tables {
		if p.ID == ps[1] {
			betaTable = p.Location
		}
	}
	list := func() []map[string]any {
		var out []map[string]any
		ts.must(200, "GET", "/api/admin/conflicts", nil, asAdmin, &out)
		return out
	}
	// Unknown judge or project: 400 naming the row, nothing imported.
	for file, row := range map[string]string{
		"judge,project\nada@example.com,Alpha\nnobody@example.com,Beta\n": "row 3",
		"judge,project\nADA@example.com,Alpha\nbob@example.com,Delta\n":   "row 3",
		"judge,project\nada@example.com,99\n":                             "row 2",
	} {
		code, b := ts.uploadCSV("/api/admin/conflicts/csv", []byte(file), map[string]string{"hasHeader": "1"}, asAdmin)
		if code != 400 || !strings.Contains(string(b), row) {
			t.Fatalf("import %q: %d %s, want 400 naming %s", file, code, b, row)
		}
	}
	if l := list(); len(l) != 0 {
		t.Fatalf("a refused import changed the conflicts: %v", l)
	}
	// Email (any case) or code with a space; name (any case) or table number.
	spaced := adaCode[:4] + " " + adaCode[4:]
	file := "ADA@example.com,alpha\n" + spaced + "," + itoaTest(betaTable) + "\nbob@example.com,Gamma\n"
	var res struct{ OK, Added int }
	ts.mustUploadCSV(200, "/api/admin/conflicts/csv", []byte(file), nil, &res)
	if res.Added != 3 {
		t.Fatalf("added %d", res.Added)
	}
	l := list()
	if len(l) != 3 || l[0]["judge_id"] != ada || l[0]["project_id"] != ps[0] || l[0]["source"] != "admin" || l[2]["judge_name"] != "Bob" {
		t.Fatalf("conflicts %v", l)
	}
	// Ada can only be sent to Gamma; her conflict skip there is a conflict too.
	tok := ts.login(adaCode)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	if got := nextOf(t, ts, tok)["project_id"]; got != ps[2] {
		t.Fatalf("Ada sent to %v, want Gamma", got)
	}
	ts.must(200, "POST", "/api/judge/skip", map[string]string{"reason": "conflict"}, asJudge(tok), nil)
	if got := nextOf(t, ts, tok)["reason"]; got != "done" {
		t.Fatalf("Ada after her conflicts: %v", got)
	}
	if l := list(); len(l) != 4 || l[3]["source"] != "judge" {
		t.Fatalf("conflicts after the judge's skip %v", l)
	}
	// The judges export counts them.
	csvOut := string(ts.must(200, "GET", "/api/admin/export/judges", nil, asAdmin, nil))
	if !strings.Contains(strings.SplitN(csvOut, "\n", 2)[0], "Conflicts") || !strings.Contains(csvOut, ",3\n") && !strings.Contains(csvOut, ",3\r\n") {
		t.Fatalf("judges export:\n%s", csvOut)
	}
	// Removal: 400 for a bad id, 404 for none, then Ada may get Alpha again.
	ts.must(400, "DELETE", "/api/admin/conflicts/x/"+ps[0], nil, asAdmin, nil)
	ts.must(404, "DELETE", "/api/admin/conflicts/"+bob+"/"+ps[0], nil, asAdmin, nil)
	ts.must(200, "DELETE", "/api/admin/conflicts/"+ada+"/"+ps[0], nil, asAdmin, nil)
	if got := nextOf(t, ts, tok)["project_id"]; got != ps[0] {
		t.Fatalf("Ada after the removal: %v", got)
	}
}

// FuzzConflictsCSV: the conflicts CSV parser never panics, and what it accepts has a
// judge and a project on every row, numbered as the file numbers them.
func FuzzConflictsCSV(f *testing.F) {
	f.Add([]byte("judge,project\nada@example.com,Alpha\n"), true)
	f.Add([]byte("1234 5678,12\n\n\"a,b\",\"c\"\"d\"\n"), false)
	f.Add([]byte("x\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, hasHeader bool) {
		rows, err := parseConflictsCSV(data, hasHeader)
		if err != nil {
			return
		}
		last := 0
		for _, r := range rows {
			if r.judge == "" || r.project == "" || r.num <= last {
				t.Fatalf("row %+v after %d", r, last)
			}
			last = r.num
		}
		if lines := bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) + 1; lines < len(rows) {
			t.Fatalf("%d rows from %d lines", len(rows), lines)
		}
	})
}
