package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// jsonField returns field name of the first element of a JSON array body.
func jsonField(t *testing.T, body []byte, name string) string {
	t.Helper()
	var list []map[string]any
	if err := json.Unmarshal(body, &list); err != nil || len(list) == 0 {
		t.Fatalf("want a non-empty array, got %s", body)
	}
	v, _ := list[0][name].(string)
	return v
}

// TestOpenAPIServedDocument checks GET /api/openapi.json serves the embedded document,
// without auth, and that the document is a valid OpenAPI 3.1 description.
func TestOpenAPIServedDocument(t *testing.T) {
	_, _ = newOpenAPIValidator(t)
	ts := startServer(t)
	code, body := ts.do("GET", "/api/openapi.json", nil, anon)
	if code != 200 || !bytes.Equal(body, openAPIDoc) {
		t.Fatalf("GET /api/openapi.json: %d, %d bytes (want the %d embedded bytes)", code, len(body), len(openAPIDoc))
	}
}

// TestOpenAPIResponsesValidate drives an event through the real server (admin setup,
// judges judging, content, exports, errors) and validates every response against
// openapi.json with libopenapi-validator.
func TestOpenAPIResponsesValidate(t *testing.T) {
	ts := startOpenAPIServer(t)
	v, model := newOpenAPIValidator(t)
	c := &apiCheck{ts: ts, v: v, model: model, covered: map[string]bool{}}
	key := auth{hdr: map[string]string{"X-API-Key": "public-key"}}
	var id struct{ ID string }
	decode := func(b []byte, out any) {
		t.Helper()
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
	}

	// Operations and auth.
	c.call(200, "GET", "/healthz", nil, anon)
	c.call(200, "GET", "/readyz", nil, anon)
	c.call(200, "GET", "/metrics", nil, anon)
	c.call(200, "GET", "/api/openapi.json", nil, anon)
	c.call(200, "GET", "/api/", nil, anon)
	c.call(400, "POST", "/api/admin/login", map[string]int{"password": 1}, anon)
	c.call(200, "POST", "/api/admin/login", map[string]string{"password": testPassword}, anon)
	c.call(200, "POST", "/api/admin/auth", nil, asAdmin)
	c.call(401, "POST", "/api/admin/auth", nil, anon)

	// Options, tracks, groups.
	c.call(200, "POST", "/api/admin/options", map[string]any{"min_views": 1, "judging_timer": 600}, asAdmin)
	c.call(400, "POST", "/api/admin/options", map[string]any{"switching_mode": "sideways"}, asAdmin)
	c.call(200, "POST", "/api/admin/tracks", map[string]any{"tracks": []string{"AI"}}, asAdmin)
	c.call(200, "POST", "/api/admin/track-views", map[string]any{"track_views": []int{2}}, asAdmin)
	c.call(200, "POST", "/api/admin/num-groups", map[string]any{"num_groups": 2}, asAdmin)
	c.call(200, "POST", "/api/admin/group-sizes", map[string]any{"group_sizes": []int{10, 10}}, asAdmin)
	c.call(200, "POST", "/api/admin/max-reqs", map[string]any{"max_req_per_min": 1000}, asAdmin)
	c.call(200, "POST", "/api/admin/block-reqs", map[string]any{"block_reqs": false}, asAdmin)
	c.call(200, "GET", "/api/admin/options", nil, asAdmin)
	c.call(200, "GET", "/api/group-info", nil, anon)

	// Projects.
	decode(c.call(200, "POST", "/api/project/new", map[string]any{"name": "Rover", "description": "d", "url": "https://github.com/a/rover", "challenge_list": "AI, Web", "contact_emails": "rover@example.com"}, asAdmin), &id)
	p1 := id.ID
	decode(c.call(200, "POST", "/api/project/new", map[string]any{"name": "Kiln"}, asAdmin), &id)
	p2 := id.ID
	c.call(200, "POST", "/api/project/csv", form(t, "name,description,url\nLoom,woven,https://loom.dev\nFern,,\n", map[string]string{"hasHeader": "true"}), asAdmin)
	c.call(400, "POST", "/api/project/csv", form(t, "name,description,url\n,no name,\n", map[string]string{"hasHeader": "true"}), asAdmin)
	c.call(200, "POST", "/api/project/submissions", form(t, "Project Title,Submission Url,Project Status\nOrbit,https://x.dev/orbit,Submitted\nDraft one,,Draft\n", nil), asAdmin)
	c.call(200, "POST", "/api/project/devpost", form(t, "Project Title,Project Status\nOnly drafts,Draft\n", nil), asAdmin)
	c.call(200, "PUT", "/api/project/"+p2, map[string]any{"description": "kilns"}, asAdmin)
	c.call(200, "PUT", "/api/project/move/"+p2, map[string]any{"location": 9}, asAdmin)
	c.call(409, "PUT", "/api/project/move/"+p1, map[string]any{"location": 9}, asAdmin)
	c.call(200, "POST", "/api/project/reassign", nil, asAdmin)
	c.call(200, "PUT", "/api/project/move/group/"+p2, map[string]any{"group": 1}, asAdmin)
	c.call(200, "POST", "/api/project/move/group", map[string]any{"items": []string{p2}, "group": 0}, asAdmin)
	c.call(200, "POST", "/api/project/balance-groups", nil, asAdmin)
	c.call(200, "PUT", "/api/project/prioritize/"+p2, map[string]any{"prioritize": true}, asAdmin)
	c.call(200, "POST", "/api/project/prioritize", map[string]any{"items": []string{p2}, "prioritize": false}, asAdmin)
	c.call(200, "PUT", "/api/project/hide/"+p2, map[string]any{"hide": true}, asAdmin)
	c.call(200, "POST", "/api/project/hide", map[string]any{"items": []string{p2}, "hide": false}, asAdmin)
	c.call(200, "GET", "/api/project/list", nil, asAdmin)
	c.call(200, "GET", "/api/project/list/public", nil, anon)
	c.call(200, "GET", "/api/project/stats", nil, asAdmin)
	c.call(200, "GET", "/api/challenges", nil, anon)
	c.call(401, "GET", "/api/project/not-an-id", nil, asJudge("x"))

	// Judges.
	decode(c.call(200, "POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@x.co", "notes": "", "no_send": true}, asAdmin), &id)
	j1 := id.ID
	c.call(409, "POST", "/api/judge/new", map[string]any{"name": "Ada 2", "email": "ADA@x.co", "no_send": true}, asAdmin)
	c.call(400, "POST", "/api/judge/new", map[string]any{"name": "No email"}, asAdmin)
	c.call(200, "POST", "/api/judge/csv", form(t, "Bo,bo@x.co\nCy,cy@x.co,AI\n", map[string]string{"noSend": "true"}), asAdmin)
	c.call(200, "PUT", "/api/judge/"+j1, map[string]any{"notes": "early"}, asAdmin)
	c.call(200, "PUT", "/api/judge/move/group/"+j1, map[string]any{"group": 1}, asAdmin)
	c.call(200, "POST", "/api/judge/move/group", map[string]any{"items": []string{j1}, "group": 0}, asAdmin)
	c.call(200, "POST", "/api/judge/reassign", nil, asAdmin)
	c.call(200, "POST", "/api/admin/groups/swap", nil, asAdmin)
	c.call(200, "PUT", "/api/judge/hide/"+j1, nil, asAdmin)
	c.call(200, "POST", "/api/judge/hide", map[string]any{"items": []string{j1}, "hide": false}, asAdmin)
	c.call(200, "GET", "/api/judge/stats", nil, asAdmin)
	c.call(400, "PUT", "/api/judge/not-an-id", map[string]any{"notes": "x"}, asAdmin)
	c.call(404, "DELETE", "/api/judge/000000000000000000000abc", nil, asAdmin)
	c.call(200, "POST", "/api/judge/email", map[string]any{"items": []string{j1}}, asAdmin)
	c.call(404, "POST", "/api/judge/email", map[string]any{"items": []string{"000000000000000000000abc"}}, asAdmin)
	c.call(400, "POST", "/api/judge/email", map[string]any{}, asAdmin)
	var judges []struct{ ID, Code, Email string }
	decode(c.call(200, "GET", "/api/judge/list", nil, asAdmin), &judges)
	code := ""
	for _, j := range judges {
		if j.ID == j1 {
			code = j.Code
		}
	}

	// QR self-signup.
	var qr struct {
		QRCode string `json:"qr_code"`
	}
	decode(c.call(200, "POST", "/api/admin/qr", nil, asAdmin), &qr)
	c.call(200, "GET", "/api/admin/qr", nil, asAdmin)
	c.call(200, "POST", "/api/admin/qr/AI", nil, asAdmin)
	c.call(200, "GET", "/api/admin/qr/AI", nil, asAdmin)
	c.call(404, "POST", "/api/admin/qr/Nope", nil, asAdmin)
	c.call(200, "GET", "/api/admin/qr.png", nil, asAdmin)
	c.call(200, "GET", "/api/admin/qr/AI.png", nil, asAdmin)
	c.call(200, "POST", "/api/qr/check", map[string]string{"code": qr.QRCode}, anon)
	c.call(200, "POST", "/api/qr/check/AI", map[string]string{"code": "wrong"}, anon)
	c.call(200, "POST", "/api/qr/add", map[string]string{"name": "Di", "email": "di@x.co", "notes": "", "code": qr.QRCode}, anon)
	c.call(401, "POST", "/api/qr/add", map[string]string{"name": "Ed", "email": "ed@x.co", "notes": "", "code": "wrong"}, anon)

	// A judge judges.
	c.call(400, "POST", "/api/judge/login", map[string]int{"code": 1}, anon)
	var tok struct{ Token string }
	decode(c.call(200, "POST", "/api/judge/login", map[string]string{"code": code}, anon), &tok)
	judge := asJudge(tok.Token)
	c.call(200, "POST", "/api/judge/auth", nil, judge)
	c.call(200, "GET", "/api/judge", nil, judge)
	c.call(200, "GET", "/api/judge/welcome", nil, judge)
	c.call(200, "PUT", "/api/judge/welcome", nil, judge)
	c.call(200, "POST", "/api/judge/welcome", nil, judge)
	c.call(200, "GET", "/api/admin/timer", nil, judge)
	c.call(200, "GET", "/api/project/count", nil, judge)
	c.call(200, "POST", "/api/judge/next", nil, judge) // {"reason":"paused"}
	c.call(200, "GET", "/api/admin/started", nil, anon)
	c.call(200, "POST", "/api/admin/clock/unpause", nil, asAdmin)
	c.call(200, "GET", "/api/admin/clock", nil, asAdmin)
	c.call(200, "POST", "/api/judge/next", nil, judge)
	c.call(200, "POST", "/api/judge/skip", map[string]string{"reason": "cannot-demo"}, judge)
	c.call(400, "POST", "/api/judge/skip", map[string]string{"reason": "bored"}, judge)
	var next struct {
		ProjectID string `json:"project_id"`
	}
	decode(c.call(200, "POST", "/api/judge/next", nil, judge), &next)
	c.call(200, "POST", "/api/judge/finish", map[string]any{"notes": "solid", "starred": true}, judge)
	c.call(409, "POST", "/api/judge/finish", nil, judge)
	c.call(200, "GET", "/api/judge/projects", nil, judge)
	c.call(200, "GET", "/api/judge/project/"+next.ProjectID, nil, judge)
	c.call(200, "GET", "/api/project/"+next.ProjectID, nil, judge)
	c.call(200, "PUT", "/api/judge/star/"+next.ProjectID, map[string]any{"starred": false}, judge)
	c.call(200, "PUT", "/api/judge/notes/"+next.ProjectID, map[string]any{"notes": "very solid"}, judge)
	c.call(404, "PUT", "/api/judge/notes/000000000000000000000abc", map[string]any{"notes": "x"}, judge)
	c.call(200, "POST", "/api/judge/rank", map[string]any{"ranking": []string{next.ProjectID}}, judge)
	c.call(200, "POST", "/api/judge/undo", nil, judge)
	c.call(409, "POST", "/api/judge/undo", nil, judge)
	c.call(200, "POST", "/api/judge/finish", map[string]any{"project": next.ProjectID, "notes": "solid"}, judge)
	c.call(200, "GET", "/api/admin/conflicts", nil, asAdmin)
	c.call(404, "DELETE", "/api/admin/conflicts/"+next.ProjectID+"/"+next.ProjectID, nil, asAdmin)
	c.call(404, "DELETE", "/api/admin/conflicts/"+next.ProjectID+"/"+next.ProjectID+"/judgement", nil, asAdmin)
	c.call(200, "GET", "/api/judge/deliberation", nil, judge)
	c.call(401, "GET", "/api/judge/list", nil, judge)
	c.call(200, "POST", "/api/admin/deliberation", map[string]any{"start": true}, asAdmin)
	c.call(409, "POST", "/api/judge/rank", map[string]any{"ranking": []string{}}, judge)
	c.call(200, "POST", "/api/admin/deliberation", map[string]any{"start": false}, asAdmin)
	c.call(200, "POST", "/api/admin/clock/pause", nil, asAdmin)
	c.call(200, "POST", "/api/admin/clock/backup", nil, asAdmin)

	// Statistics, flags, log, exports.
	c.call(200, "GET", "/api/admin/stats", nil, asAdmin)
	c.call(200, "GET", "/api/admin/stats/AI", nil, asAdmin)
	var flags []struct{ ID string }
	decode(c.call(200, "GET", "/api/admin/flags", nil, asAdmin), &flags)
	if len(flags) == 0 {
		t.Fatal("no flag after a skip")
	}
	c.call(200, "DELETE", "/api/admin/flag/"+flags[0].ID, nil, asAdmin)
	c.call(200, "GET", "/api/admin/log", nil, asAdmin)
	for _, e := range []string{"judges", "projects", "rankings", "challenges"} {
		c.call(200, "GET", "/api/admin/export/"+e, nil, asAdmin)
	}

	// Content.
	c.call(200, "GET", "/api/admin/public-api", nil, asAdmin)
	c.call(200, "POST", "/api/admin/content/schedule", map[string]any{"event_name": "Opening", "start_time": "2026-03-01T09:00:00Z", "end_time": "2026-03-01T09:30:00Z", "tags": []string{"main"}}, asAdmin)
	c.call(400, "POST", "/api/admin/content/schedule", map[string]any{"event_name": "Backwards", "start_time": "2026-03-01T09:00:00Z", "end_time": "2026-03-01T08:00:00Z"}, asAdmin)
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	decode(c.call(200, "POST", "/api/admin/content/sponsors", map[string]any{"name": "Acme", "tier": "gold", "logo_data": png, "logo_content_type": "image/png"}, asAdmin), &id)
	c.call(200, "PUT", "/api/admin/content/sponsors/"+id.ID, map[string]any{"display_order": 2}, asAdmin)
	decode(c.call(200, "POST", "/api/admin/content/faq", map[string]any{"question": "Wifi?", "answer": "Yes"}, asAdmin), &id)
	c.call(200, "DELETE", "/api/admin/content/faq/"+id.ID, nil, asAdmin)
	c.call(404, "DELETE", "/api/admin/content/faq/"+id.ID, nil, asAdmin)
	for _, k := range []string{"schedule", "sponsors", "faq"} {
		c.call(200, "GET", "/api/admin/content/"+k, nil, asAdmin)
		c.call(200, "GET", "/v1/public/"+k, nil, key)
	}
	c.call(401, "GET", "/v1/public/faq", nil, anon)
	c.call(200, "PUT", "/api/admin/content", map[string]any{"schedule": []any{}, "sponsors": []any{map[string]any{"name": "Solo"}}, "faq": []any{}}, asAdmin)

	// After judging: results, prizes, winners, feedback, team links and pages.
	c.call(200, "PUT", "/api/judge/feedback/"+next.ProjectID, map[string]any{"feedback": "Great demo; show the latency numbers."}, judge)
	c.call(404, "PUT", "/api/judge/feedback/000000000000000000000abc", map[string]any{"feedback": "x"}, judge)
	c.call(200, "GET", "/api/admin/results", nil, asAdmin)
	c.call(200, "GET", "/api/admin/floor-https", nil, asAdmin)
	c.call(200, "PUT", "/api/admin/prizes", []map[string]any{{"name": "Best overall", "places": 3}, {"name": "Best AI", "track": "AI", "places": 1}}, asAdmin)
	c.call(400, "PUT", "/api/admin/prizes", []map[string]any{{"name": "Best Web", "track": "Web3", "places": 1}}, asAdmin)
	var prizes []struct{ ID, Name string }
	decode(c.call(200, "GET", "/api/admin/prizes", nil, asAdmin), &prizes)
	c.call(200, "GET", "/api/admin/winners", nil, asAdmin)
	c.call(200, "GET", "/api/winners", nil, anon)
	c.call(200, "GET", "/v1/public/winners", nil, key)
	c.call(400, "POST", "/api/admin/winners/publish", map[string]any{"prizes": []any{map[string]any{"prize": prizes[0].ID, "winners": []string{"000000000000000000000abc"}}}}, asAdmin)
	c.call(200, "POST", "/api/admin/winners/publish", map[string]any{"feedback": true, "prizes": []any{map[string]any{"prize": prizes[0].ID, "winners": []string{next.ProjectID}}}}, asAdmin)
	c.call(200, "GET", "/api/admin/winners", nil, asAdmin)
	c.call(200, "GET", "/api/winners", nil, anon)
	c.call(200, "GET", "/v1/public/winners", nil, key)
	c.call(200, "GET", "/api/admin/feedback", nil, asAdmin)
	c.call(200, "GET", "/api/admin/export/feedback", nil, asAdmin)
	var links []struct{ ID, Link string }
	decode(c.call(200, "GET", "/api/admin/team-links", nil, asAdmin), &links)
	c.call(200, "GET", "/api/admin/export/team-links", nil, asAdmin)
	c.call(200, "GET", "/api/admin/team-links/qr/"+links[0].ID, nil, asAdmin)
	for _, l := range links {
		c.call(200, "GET", "/api/team/"+l.Link[strings.LastIndex(l.Link, "/")+1:], nil, anon)
	}
	c.call(404, "GET", "/api/team/not-a-team-token-at-all-0000", nil, anon)
	c.call(200, "POST", "/api/admin/team-links/rotate/"+links[0].ID, nil, asAdmin)
	c.call(200, "POST", "/api/admin/team-links/send", nil, asAdmin)
	c.call(200, "GET", "/api/admin/team-links", nil, asAdmin)
	c.call(200, "DELETE", "/api/admin/feedback/"+jsonField(t, c.call(200, "GET", "/api/admin/feedback", nil, asAdmin), "judge_id")+"/"+next.ProjectID, nil, asAdmin)
	c.call(200, "DELETE", "/api/admin/winners/publish", nil, asAdmin)
	c.call(409, "DELETE", "/api/admin/winners/publish", nil, asAdmin)

	// Web app and websocket endpoint (a plain GET is not an upgrade).
	for _, p := range []string{"/", "/join", "/admin", "/expo"} {
		c.call(200, "GET", p, nil, anon)
	}
	c.call(200, "GET", "/static/app.css", nil, anon)
	c.call(426, "GET", "/api/ws", nil, anon)

	// Backups, reset, deletes, logouts.
	var bk struct{ Backup string }
	decode(c.call(200, "POST", "/api/admin/backup", nil, asAdmin), &bk)
	c.call(200, "GET", "/api/admin/backup/"+bk.Backup, nil, asAdmin)
	c.call(200, "POST", "/api/judge/logout", nil, asJudge(ts.login(judges[1].Code)))
	c.call(200, "DELETE", "/api/project/"+p2, nil, asAdmin)
	c.call(200, "DELETE", "/api/judge/"+j1, nil, asAdmin)
	c.call(401, "POST", "/api/judge/auth", nil, judge)
	c.call(200, "POST", "/api/admin/reset", map[string]string{"type": "rankings"}, asAdmin)
	c.call(200, "POST", "/api/admin/reset", nil, asAdmin)
	c.call(200, "POST", "/api/admin/clock/reset", nil, asAdmin)
	c.call(200, "POST", "/api/admin/logout", nil, asAdmin)

	// Report what the run covered, per described operation.
	hit := map[string]bool{}
	for call := range c.covered {
		m, p, _ := strings.Cut(call, " ")
		for op := range openAPIOps(t) {
			om, opath, _ := strings.Cut(op, " ")
			if om == m && templateMatches(opath, p) {
				hit[op] = true
			}
		}
	}
	var missed []string
	for op := range openAPIOps(t) {
		if !hit[op] {
			missed = append(missed, op)
		}
	}
	sort.Strings(missed)
	t.Logf("validated %d requests covering %d of %d described operations; not exercised: %s",
		len(c.covered), len(hit), len(openAPIOps(t)), fmt.Sprint(missed))
}

// templateMatches reports whether a concrete path fits an OpenAPI path template.
func templateMatches(tmpl, path string) bool {
	ts, ps := strings.Split(tmpl, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i := range ts {
		if open := strings.Index(ts[i], "{"); open >= 0 {
			pre, suf := ts[i][:open], ts[i][strings.Index(ts[i], "}")+1:]
			if !strings.HasPrefix(ps[i], pre) || !strings.HasSuffix(ps[i], suf) || len(ps[i]) <= len(pre)+len(suf) {
				return false
			}
			continue
		}
		if ts[i] != ps[i] {
			return false
		}
	}
	return true
}
