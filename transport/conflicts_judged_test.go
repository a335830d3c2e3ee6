package transport

import (
	"strings"
	"testing"
)

// TestConflictAfterJudgementThroughHTTP (docs/behaviour.md#a-conflict-found-after-the-judgement):
// the import lists the pairs already judged, the conflicts list marks them, and DELETE
// .../judgement takes the judgement out of the seen counts, stars and the judge's
// ranking, writes the audit log, refuses what it cannot do with a 4xx, and survives a
// restart.
func TestConflictAfterJudgementThroughHTTP(t *testing.T) {
	dir := t.TempDir()
	ts := startServerIn(t, dir)
	ts.addProject("Alpha", "")
	ts.addProject("Beta", "")
	ts.addProject("Gamma", "")
	ada, adaCode := ts.addJudge("Ada", "ada@example.com", "")
	bob, _ := ts.addJudge("Bob", "bob@example.com", "")
	tok := ts.login(adaCode)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	first := nextOf(t, ts, tok)["project_id"].(string)
	ts.must(200, "POST", "/api/judge/finish", map[string]any{"notes": "friend's team", "starred": true}, asJudge(tok), nil)
	second := nextOf(t, ts, tok)["project_id"].(string)
	ts.must(200, "POST", "/api/judge/finish", nil, asJudge(tok), nil)
	ts.must(200, "POST", "/api/judge/rank", map[string]any{"ranking": []string{first, second}}, asJudge(tok), nil)
	name := projectField(t, ts, first, "name").(string)

	var res struct {
		OK, Added int
		Judged    []map[string]string
	}
	ts.mustUploadCSV(200, "/api/admin/conflicts/csv", []byte("ada@example.com,"+name+"\nbob@example.com,"+name+"\n"), nil, &res)
	if res.Added != 2 || len(res.Judged) != 1 || res.Judged[0]["judge_id"] != ada || res.Judged[0]["project_id"] != first ||
		res.Judged[0]["judge_name"] != "Ada" || res.Judged[0]["project_name"] != name {
		t.Fatalf("import answer %+v, want Ada's judged pair", res)
	}
	for _, c := range conflictsOf(ts) {
		if c["judged"] != (c["judge_id"] == ada) {
			t.Fatalf("conflicts list %v", c)
		}
	}
	if seen, stars := projectField(t, ts, first, "seen"), projectField(t, ts, first, "stars"); seen != 1.0 || stars != 1.0 {
		t.Fatalf("before: seen %v stars %v", seen, stars)
	}

	path := "/api/admin/conflicts/" + ada + "/" + first + "/judgement"
	ts.must(401, "DELETE", path, nil, anon, nil)
	ts.must(400, "DELETE", "/api/admin/conflicts/nope/"+first+"/judgement", nil, asAdmin, nil)
	ts.must(404, "DELETE", "/api/admin/conflicts/000000000000000000000abc/"+first+"/judgement", nil, asAdmin, nil)
	ts.must(409, "DELETE", "/api/admin/conflicts/"+bob+"/"+first+"/judgement", nil, asAdmin, nil)  // conflict, no judgement
	ts.must(409, "DELETE", "/api/admin/conflicts/"+ada+"/"+second+"/judgement", nil, asAdmin, nil) // judgement, no conflict
	ts.must(200, "DELETE", path, nil, asAdmin, nil)
	ts.must(409, "DELETE", path, nil, asAdmin, nil)

	check := func(when string) {
		t.Helper()
		if seen, stars := projectField(t, ts, first, "seen"), projectField(t, ts, first, "stars"); seen != 0.0 || stars != 0.0 {
			t.Fatalf("%s: seen %v stars %v, want 0 and 0", when, seen, stars)
		}
		var judged []map[string]any
		ts.must(200, "GET", "/api/judge/projects", nil, asJudge(tok), &judged)
		var me struct {
			Seen     int
			Rankings []string
		}
		ts.must(200, "GET", "/api/judge", nil, asJudge(tok), &me)
		if len(judged) != 1 || judged[0]["project_id"] != second || me.Seen != 1 || len(me.Rankings) != 1 || me.Rankings[0] != second {
			t.Fatalf("%s: Ada's views %v, seen %d, ranking %v", when, judged, me.Seen, me.Rankings)
		}
		for _, c := range conflictsOf(ts) {
			if c["judged"] != false {
				t.Fatalf("%s: conflicts list %v", when, c)
			}
		}
		var log struct{ Log string }
		ts.must(200, "GET", "/api/admin/log", nil, asAdmin, &log)
		if !strings.Contains(log.Log, "[ADMIN] removed the judgement of project "+name) {
			t.Fatalf("%s: audit log:\n%s", when, log.Log)
		}
	}
	check("after removal")
	ts.Stop()
	ts = startServerIn(t, dir)
	check("after a restart")
}

// projectField reads one field of a project from the admin's project list.
func projectField(t *testing.T, ts *testServer, id, field string) any {
	t.Helper()
	var list []map[string]any
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &list)
	for _, p := range list {
		if p["id"] == id {
			return p[field]
		}
	}
	t.Fatalf("project %s not listed", id)
	return nil
}
