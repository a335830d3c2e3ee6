package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A judge finishes by name only a project the server offered it, and the offer survives
// a SIGKILL (docs/behaviour.md#offered-projects-only).
func TestSIGKILLKeepsOfferedProjects(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, dir)
	for i := 0; i < 6; i++ {
		p.must("POST", "/api/project/new", map[string]any{"name": fmt.Sprint("Project ", i), "description": "d"}, "")
	}
	var projects []struct{ ID string }
	json.Unmarshal(p.must("GET", "/api/project/list", nil, ""), &projects)
	tokens := map[string]string{}
	for _, n := range []string{"Ada", "Bob"} {
		p.must("POST", "/api/judge/new", map[string]any{"name": n, "email": strings.ToLower(n) + "@example.com", "no_send": true}, "")
	}
	var judges []struct{ Name, Code string }
	json.Unmarshal(p.must("GET", "/api/judge/list", nil, ""), &judges)
	for _, j := range judges {
		var login struct{ Token string }
		json.Unmarshal(p.must("POST", "/api/judge/login", map[string]string{"code": j.Code}, "x"), &login)
		tokens[j.Name] = login.Token
	}
	p.must("POST", "/api/admin/clock/unpause", nil, "")

	// Bob never asked for a project: naming one is refused in words.
	finish := func(base, who, project, key string) keyedAnswer {
		return keyedCall(t, base, "POST", "/api/judge/finish", `{"project":"`+project+`"}`, tokens[who], key)
	}
	if a := finish(p.base, "Bob", projects[5].ID, "bob-1"); a.code != 409 || !strings.Contains(a.body, "did not send you") {
		t.Fatalf("finish of a project never offered: %+v", a)
	}
	var next struct {
		ProjectID string   `json:"project_id"`
		Upcoming  []string `json:"upcoming"`
	}
	if a := keyedCall(t, p.base, "POST", "/api/judge/next", "", tokens["Ada"], "ada-1"); a.code != 200 {
		t.Fatalf("next: %+v", a)
	} else {
		json.Unmarshal([]byte(a.body), &next)
	}
	if len(next.Upcoming) != 2 {
		t.Fatalf("next: %+v", next)
	}
	if a := finish(p.base, "Ada", next.ProjectID, "ada-2"); a.code != 200 {
		t.Fatalf("finish of the current project: %+v", a)
	}
	var other string // neither the first project nor an upcoming one
	for _, pr := range projects {
		if pr.ID != next.ProjectID && !slices.Contains(next.Upcoming, pr.ID) {
			other = pr.ID
		}
	}
	p.kill()

	p2 := startBinary(t, dir)
	if a := finish(p2.base, "Ada", other, "ada-3"); a.code != 409 || !strings.Contains(a.body, "did not send you") {
		t.Fatalf("after SIGKILL, finish of a project not offered: %+v", a)
	}
	if a := finish(p2.base, "Ada", next.Upcoming[0], "ada-4"); a.code != 200 {
		t.Fatalf("after SIGKILL, finish of an upcoming project: %+v", a)
	}
	if a := keyedCall(t, p2.base, "POST", "/api/judge/at", `{"project":"`+next.Upcoming[1]+`"}`, tokens["Ada"], "ada-5"); a.code != 200 {
		t.Fatalf("after SIGKILL, at an upcoming project: %+v", a)
	}
	if s, cur := judgeSeen(t, p2.base, tokens["Ada"]); s != 2 || cur != next.Upcoming[1] {
		t.Fatalf("seen %d current %s, want 2 and %s", s, cur, next.Upcoming[1])
	}
	var log struct{ Log string }
	json.Unmarshal(p2.must("GET", "/api/admin/log", nil, ""), &log)
	if n := strings.Count(log.Log, "visited offline project"); n != 2 {
		t.Fatalf("%d visited-offline lines in the audit log, want 2:\n%s", n, log.Log)
	}
}
