package transport

import (
	"strings"
	"testing"
)

func TestSmokeLoginAndLists(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "GET", "/api/", nil, anon, nil)
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	tok := ts.login(code)
	var me struct {
		Name    string
		Current *string
	}
	ts.must(200, "GET", "/api/judge", nil, asJudge(tok), &me)
	if me.Name != "Ada" || me.Current != nil {
		t.Fatalf("judge = %+v", me)
	}
	ts.must(401, "GET", "/api/judge", nil, asJudge("nope"), nil)
	ts.must(401, "GET", "/api/judge/list", nil, asJudge(tok), nil)
	ts.addProject("Rocket", "AI, Web")
	b := ts.must(200, "GET", "/api/project/list/public", nil, anon, nil)
	if !strings.Contains(string(b), `"Rocket"`) {
		t.Fatalf("public list %s", b)
	}
	code2, b := ts.do("GET", "/api/nothing-here", nil, anon)
	if code2 != 404 || !strings.Contains(string(b), `"error"`) {
		t.Fatalf("unknown route: %d %s", code2, b)
	}
	code2, b = ts.do("DELETE", "/api/judge/list", nil, asAdmin)
	if code2 != 405 {
		t.Fatalf("wrong method: %d %s", code2, b)
	}
}
