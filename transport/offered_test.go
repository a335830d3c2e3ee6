package transport

import (
	"strings"
	"testing"
)

// TestOfferedProjectsOnlyThroughHTTP: finish and at name only a project the latest
// next offered (docs/behaviour.md#offered-projects-only); at makes it the judge's
// current project on the dashboard's judge list; bad input is a 400.
func TestOfferedProjectsOnlyThroughHTTP(t *testing.T) {
	ts, tok, judge, ps := judgingSetup(t, 5)
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	for _, body := range []string{`{}`, `{"project":"nope"}`, `{"project":12}`, `[`} {
		if r := ts.doKeyed("POST", "/api/judge/at", body, tok, "-"); r.code != 400 {
			t.Fatalf("at %s: %+v", body, r)
		}
	}
	// Never offered: 409 in words, for finish and at alike.
	for _, path := range []string{"/api/judge/finish", "/api/judge/at"} {
		if r := ts.doKeyed("POST", path, `{"project":"`+ps[4]+`"}`, tok, "-"); r.code != 409 || !strings.Contains(r.body, "did not send you to project Project E") {
			t.Fatalf("%s of a project never offered: %+v", path, r)
		}
	}
	first := nextOf(t, ts, tok)
	up := first["upcoming"].([]any)
	ts.must(200, "POST", "/api/judge/finish", map[string]any{"project": first["project_id"]}, asJudge(tok), nil)
	ts.must(200, "POST", "/api/judge/at", map[string]any{"project": up[0]}, asJudge(tok), nil)
	var list []struct {
		ID      string  `json:"id"`
		Current *string `json:"current"`
	}
	ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &list)
	for _, j := range list {
		if j.ID == judge && (j.Current == nil || *j.Current != up[0]) {
			t.Fatalf("judge list current %v, want %v", j.Current, up[0])
		}
	}
	// Another project is current now: at elsewhere is refused with why.
	if r := ts.doKeyed("POST", "/api/judge/at", `{"project":"`+up[1].(string)+`"}`, tok, "-"); r.code != 409 || !strings.Contains(r.body, "meanwhile") {
		t.Fatalf("at with another project current: %+v", r)
	}
	ts.must(200, "POST", "/api/judge/finish", map[string]any{"project": up[0]}, asJudge(tok), nil)
}
