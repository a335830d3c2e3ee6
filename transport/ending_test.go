package transport

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The event's ending through the real server (docs/behaviour.md#after-judging).

type teamPageBody struct {
	EventName string `json:"event_name"`
	Name      string
	Location  int
	Active    bool
	Judging   string
	Visits    int
	Published bool
	PrizesWon []struct {
		Prize string
		Place int
	} `json:"prizes_won"`
	Winners        []publicPrize
	Feedback       []string
	FeedbackShared bool `json:"feedback_shared"`
}

type publicPrize struct {
	Name    string
	Track   string
	Winners []struct {
		Place    int
		Name     string
		Location int
		URL      string
	}
}

type publicWinnersBody struct {
	Published bool
	Prizes    []publicPrize
}

// endingEvent is a small judged event: four projects (two in track "Hardware"), two
// general judges who judged all four with feedback, and a team link per project.
type endingEvent struct {
	ts       *testServer
	ids      map[string]string // project name -> id
	tokens   map[string]string // project name -> team token
	judges   []string          // judge tokens
	judgeIDs []string
}

func newEndingEvent(t *testing.T) *endingEvent {
	ts := startServer(t, withAPIKey)
	ev := &endingEvent{ts: ts, ids: map[string]string{}, tokens: map[string]string{}}
	ts.must(200, "POST", "/api/admin/tracks", map[string]any{"tracks": []string{"Hardware"}}, asAdmin, nil)
	for _, p := range []struct{ name, ch string }{{"Aurora", ""}, {"Beacon", "Hardware"}, {"Comet", "Hardware"}, {"Dynamo", ""}} {
		ev.ids[p.name] = ts.addProject(p.name, p.ch)
	}
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	for i, n := range []string{"Ada", "Bo"} {
		id, code := ts.addJudge(n, fmt.Sprintf("j%d@example.com", i), "")
		tok := ts.login(code)
		ev.judges, ev.judgeIDs = append(ev.judges, tok), append(ev.judgeIDs, id)
		for range 4 {
			var nx struct {
				ProjectID string `json:"project_id"`
			}
			ts.must(200, "POST", "/api/judge/next", nil, asJudge(tok), &nx)
			name := ev.nameOf(nx.ProjectID)
			ts.must(200, "POST", "/api/judge/finish", map[string]any{"notes": "private: " + name,
				"feedback": fmt.Sprintf("%s liked %s", n, name)}, asJudge(tok), nil)
		}
	}
	var links []struct{ Name, Link string }
	ts.must(200, "GET", "/api/admin/team-links", nil, asAdmin, &links)
	for _, l := range links {
		if !strings.Contains(l.Link, ts.URL+"/team/") {
			t.Fatalf("link %q is not under %s/team/", l.Link, ts.URL)
		}
		ev.tokens[l.Name] = l.Link[strings.LastIndex(l.Link, "/")+1:]
	}
	if len(ev.tokens) != 4 {
		t.Fatalf("team links: %v", links)
	}
	return ev
}

func (ev *endingEvent) nameOf(id string) string {
	for n, x := range ev.ids {
		if x == id {
			return n
		}
	}
	ev.ts.t.Fatalf("no project %s", id)
	return ""
}

func (ev *endingEvent) teamPage(name string) teamPageBody {
	var p teamPageBody
	ev.ts.must(200, "GET", "/api/team/"+ev.tokens[name], nil, anon, &p)
	return p
}

func (ev *endingEvent) prizes() map[string]string {
	var ps []struct{ ID, Name string }
	ev.ts.must(200, "GET", "/api/admin/prizes", nil, asAdmin, &ps)
	out := map[string]string{}
	for _, p := range ps {
		out[p.Name] = p.ID
	}
	return out
}

func TestFeedbackForTheTeam(t *testing.T) {
	ev := newEndingEvent(t)
	ts := ev.ts
	var seen []struct {
		ProjectID string `json:"project_id"`
		Notes     string
		Feedback  string
	}
	ts.must(200, "GET", "/api/judge/projects", nil, asJudge(ev.judges[0]), &seen)
	if len(seen) != 4 || seen[0].Feedback != "Ada liked "+ev.nameOf(seen[0].ProjectID) || !strings.HasPrefix(seen[0].Notes, "private: ") {
		t.Fatalf("judged projects: %+v", seen)
	}
	// Edited later, with an idempotency key: applied once, repeated answers replayed.
	pid := ev.ids["Aurora"]
	for range 2 {
		r := ts.doKeyed("PUT", "/api/judge/feedback/"+pid, `{"feedback":"Clear pitch; the demo crashed once."}`, ev.judges[0], "fb-1")
		if r.code != 200 {
			t.Fatalf("keyed feedback: %d %s", r.code, r.body)
		}
	}
	ts.refused(400, "PUT", "/api/judge/feedback/"+pid, map[string]any{"feedback": strings.Repeat("é", 2001)}, asJudge(ev.judges[0]))
	ts.refused(400, "PUT", "/api/judge/feedback/"+pid, map[string]any{}, asJudge(ev.judges[0]))
	ts.refused(401, "PUT", "/api/judge/feedback/"+pid, map[string]any{"feedback": "x"}, anon)
	var items []struct {
		JudgeID     string `json:"judge_id"`
		ProjectName string `json:"project_name"`
		Feedback    string
		Location    int
	}
	ts.must(200, "GET", "/api/admin/feedback", nil, asAdmin, &items)
	if len(items) != 8 || items[0].ProjectName != "Aurora" || items[0].Feedback != "Clear pitch; the demo crashed once." ||
		!slices.IsSortedFunc(items, func(a, b struct {
			JudgeID     string `json:"judge_id"`
			ProjectName string `json:"project_name"`
			Feedback    string
			Location    int
		}) int {
			return a.Location - b.Location
		}) {
		t.Fatalf("feedback list: %+v", items)
	}
	// Nothing of it shows on a team page before the results.
	if p := ev.teamPage("Aurora"); p.Published || len(p.Feedback) != 0 || len(p.Winners) != 0 || p.Judging != "in progress" || p.Visits != 2 || p.Name != "Aurora" {
		t.Fatalf("team page before publishing: %+v", p)
	}
	// The organiser removes one item before it goes out.
	ts.must(200, "DELETE", "/api/admin/feedback/"+ev.judgeIDs[1]+"/"+pid, nil, asAdmin, nil)
	ts.refused(404, "DELETE", "/api/admin/feedback/"+ev.judgeIDs[1]+"/"+pid, nil, asAdmin)
	rows := ts.getCSV("/api/admin/export/feedback", "feedback.csv")
	if !slices.Equal(rows[0], []string{"name", "location", "contact_emails", "feedback_1", "feedback_2"}) || len(rows) != 5 ||
		rows[1][0] != "Aurora" || rows[1][3] != "Clear pitch; the demo crashed once." || rows[1][4] != "" {
		t.Fatalf("feedback.csv: %q", rows)
	}
	_, log := ts.do("GET", "/api/admin/log", nil, asAdmin)
	if !strings.Contains(string(log), "removed the feedback of judge Bo on project Aurora") {
		t.Errorf("audit log has no line for the removal")
	}
}

func TestPrizesList(t *testing.T) {
	ev := newEndingEvent(t)
	ts := ev.ts
	ts.must(200, "PUT", "/api/admin/prizes", []map[string]any{{"name": "Best overall", "places": 3}, {"name": "Best Hardware", "track": "Hardware", "places": 1}}, asAdmin, nil)
	first := ev.prizes()
	// Reordered and one renamed by id: ids are kept.
	ts.must(200, "PUT", "/api/admin/prizes", []map[string]any{{"name": "Best Hardware", "track": "Hardware", "places": 2},
		{"id": first["Best overall"], "name": "Grand prize", "places": 3}}, asAdmin, nil)
	second := ev.prizes()
	if second["Best Hardware"] != first["Best Hardware"] || second["Grand prize"] != first["Best overall"] || len(second) != 2 {
		t.Fatalf("ids not kept: %v then %v", first, second)
	}
	before := ts.must(200, "GET", "/api/admin/prizes", nil, asAdmin, nil)
	for _, bad := range []struct {
		body any
		want string
	}{
		{[]map[string]any{{"name": "A", "places": 1}, {"name": "a", "places": 1}}, "already named"},
		{[]map[string]any{{"name": "A", "places": 0}}, "places"},
		{[]map[string]any{{"name": "A", "places": 11}}, "places"},
		{[]map[string]any{{"name": "A", "track": "Web3", "places": 1}}, "Web3"},
		{[]map[string]any{{"name": " ", "places": 1}}, "prize 1"},
		{[]map[string]any{{"places": 1}}, "name"},
		{map[string]any{"name": "A"}, ""},
		{"not json", ""},
	} {
		code, b := ts.do("PUT", "/api/admin/prizes", bad.body, asAdmin)
		if code != 400 || !strings.Contains(string(b), bad.want) {
			t.Errorf("PUT prizes %v: %d %s, want 400 naming %q", bad.body, code, b, bad.want)
		}
	}
	if after := ts.must(200, "GET", "/api/admin/prizes", nil, asAdmin, nil); string(after) != string(before) {
		t.Errorf("a refused list changed the prizes: %s -> %s", before, after)
	}
	ts.refused(401, "GET", "/api/admin/prizes", nil, asJudge(ev.judges[0]))
}

func TestPublishAnnouncedEverywhere(t *testing.T) {
	ev := newEndingEvent(t)
	ts := ev.ts
	ts.must(200, "PUT", "/api/admin/prizes", []map[string]any{{"name": "Best overall", "places": 2}, {"name": "Best Hardware", "track": "Hardware", "places": 1}}, asAdmin, nil)
	pz := ev.prizes()
	screen, _ := ts.mustDialWS(nil) // the expo display: no login
	key := map[string]string{"X-API-Key": testAPIKey}

	// Publishing a hidden, unknown or off-track project is refused and changes nothing.
	ts.must(200, "PUT", "/api/project/hide/"+ev.ids["Dynamo"], nil, asAdmin, nil)
	for _, bad := range []struct {
		winners []string
		prize   string
		want    string
	}{
		{[]string{ev.ids["Dynamo"]}, "Best overall", "Dynamo is hidden"},
		{[]string{"0000000000000000000000ab"}, "Best overall", "unknown project 0000000000000000000000ab"},
		{[]string{ev.ids["Aurora"]}, "Best Hardware", "Aurora is not in track Hardware"},
		{[]string{ev.ids["Aurora"], ev.ids["Beacon"], ev.ids["Comet"]}, "Best overall", "2 places, 3 winners"},
	} {
		code, b := ts.do("POST", "/api/admin/winners/publish", map[string]any{"prizes": []any{map[string]any{"prize": pz[bad.prize], "winners": bad.winners}}}, asAdmin)
		if code != 400 || !strings.Contains(string(b), bad.want) {
			t.Errorf("publish %v: %d %s, want 400 naming %q", bad.winners, code, b, bad.want)
		}
	}
	var pub publicWinnersBody
	ts.must(200, "GET", "/api/winners", nil, anon, &pub)
	if pub.Published || len(pub.Prizes) != 0 {
		t.Fatalf("winners before publishing: %+v", pub)
	}

	// The organiser publishes an order of its own, with feedback for the teams.
	var proposal struct {
		Prizes []struct {
			Name     string
			Proposed []struct {
				ID string
				P  float64
			}
		}
	}
	ts.must(200, "GET", "/api/admin/winners", nil, asAdmin, &proposal)
	if len(proposal.Prizes) != 2 || len(proposal.Prizes[1].Proposed) != 2 { // the track's two projects
		t.Fatalf("proposal: %+v", proposal)
	}
	for _, pr := range proposal.Prizes {
		for _, e := range pr.Proposed {
			if e.P < 0 || e.P > 1 {
				t.Errorf("%s: p = %v", pr.Name, e.P)
			}
		}
	}
	publish := map[string]any{"feedback": true, "prizes": []any{
		map[string]any{"prize": pz["Best overall"], "winners": []string{ev.ids["Comet"], ev.ids["Aurora"]}},
		map[string]any{"prize": pz["Best Hardware"], "winners": []string{ev.ids["Comet"]}},
	}}
	ts.must(200, "POST", "/api/admin/winners/publish", publish, asAdmin, nil)

	want := []publicPrize{{Name: "Best overall"}, {Name: "Best Hardware", Track: "Hardware"}}
	for i, w := range [][]string{{"Comet", "Aurora"}, {"Comet"}} {
		for k, n := range w {
			loc := 0
			for _, p := range ts.projectList() {
				if p.Name == n {
					loc = p.Location
				}
			}
			want[i].Winners = append(want[i].Winners, struct {
				Place    int
				Name     string
				Location int
				URL      string
			}{k + 1, n, loc, ""})
		}
	}
	ev2 := screen.expect("winners")
	var got publicWinnersBody
	if err := json.Unmarshal(ev2.Data, &got); err != nil || !got.Published || !reflect.DeepEqual(got.Prizes, want) {
		t.Fatalf("websocket winners event %s, want %+v", ev2.Data, want)
	}
	ts.must(200, "GET", "/api/winners", nil, anon, &pub)
	if !pub.Published || !reflect.DeepEqual(pub.Prizes, want) {
		t.Errorf("GET /api/winners %+v, want %+v", pub, want)
	}
	resp, body := ts.get("/v1/public/winners", key)
	var site struct {
		Data []struct {
			Prize, Track string
			Place        int
			Project      struct {
				Name          string
				Location      int
				ChallengeList []string `json:"challenge_list"`
			}
		}
	}
	if err := json.Unmarshal(body, &site); resp.StatusCode != 200 || err != nil || len(site.Data) != 3 ||
		site.Data[0].Prize != "Best overall" || site.Data[0].Project.Name != "Comet" || site.Data[1].Place != 2 ||
		site.Data[2].Track != "Hardware" || !slices.Equal(site.Data[2].Project.ChallengeList, []string{"Hardware"}) {
		t.Errorf("/v1/public/winners: %d %s", resp.StatusCode, body)
	}
	// The content API's rules: key, ETag and 304, gzip.
	if r, _ := ts.get("/v1/public/winners", nil); r.StatusCode != 401 {
		t.Errorf("/v1/public/winners without a key: %d", r.StatusCode)
	}
	if r, _ := ts.get("/v1/public/winners", map[string]string{"X-API-Key": testAPIKey, "If-None-Match": resp.Header.Get("ETag")}); r.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", r.StatusCode)
	}
	if r, _ := ts.get("/v1/public/winners", map[string]string{"X-API-Key": testAPIKey, "Accept-Encoding": "gzip"}); r.Header.Get("Content-Encoding") != "gzip" && len(body) > 200 {
		t.Errorf("no gzip for %d bytes", len(body))
	}

	// Team pages: the winner's prizes, its own feedback and never another team's.
	comet := ev.teamPage("Comet")
	if !comet.Published || comet.Judging != "closed" || !reflect.DeepEqual(comet.Winners, want) || len(comet.PrizesWon) != 2 ||
		comet.PrizesWon[0].Prize != "Best overall" || comet.PrizesWon[0].Place != 1 || !comet.FeedbackShared ||
		!slices.Equal(comet.Feedback, []string{"Ada liked Comet", "Bo liked Comet"}) {
		t.Errorf("Comet's page: %+v", comet)
	}
	beacon := ev.teamPage("Beacon")
	if len(beacon.PrizesWon) != 0 || !slices.Equal(beacon.Feedback, []string{"Ada liked Beacon", "Bo liked Beacon"}) {
		t.Errorf("Beacon's page: %+v", beacon)
	}
	raw := ts.must(200, "GET", "/api/team/"+ev.tokens["Beacon"], nil, anon, nil)
	for _, leak := range []string{"private:", `"Ada"`, "j0@example.com", "Dynamo", ev.judgeIDs[0]} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("Beacon's page shows %q: %s", leak, raw)
		}
	}
	if strings.Contains(strings.ReplaceAll(string(raw), `"name":"Comet"`, ""), "liked Comet") {
		t.Errorf("Beacon's page shows Comet's feedback: %s", raw)
	}
	if d := ev.teamPage("Dynamo"); d.Active || d.Location != 0 || d.Published || len(d.Feedback) != 0 || len(d.Winners) != 0 || d.Visits != 0 {
		t.Errorf("a hidden project's page: %+v", d)
	}
	ts.refused(404, "GET", "/api/team/"+strings.Repeat("x", 24), nil, anon)

	// Published without feedback: the pages keep it to themselves.
	publish["feedback"] = false
	ts.must(200, "POST", "/api/admin/winners/publish", publish, asAdmin, nil)
	screen.expect("winners")
	if p := ev.teamPage("Comet"); len(p.Feedback) != 0 || p.FeedbackShared || !p.Published {
		t.Errorf("feedback shown though not shared: %+v", p)
	}
	_, log := ts.do("GET", "/api/admin/log", nil, asAdmin)
	if !strings.Contains(string(log), "published the winners") || !strings.Contains(string(log), "prize Best overall, place 1: Comet") {
		t.Errorf("audit log of the publication:\n%s", log)
	}

	// Taken back: empty everywhere at once.
	ts.must(200, "DELETE", "/api/admin/winners/publish", nil, asAdmin, nil)
	if m := screen.expect("winners"); !strings.Contains(string(m.Data), `"published":false`) {
		t.Errorf("take-back event: %s", m.Data)
	}
	ts.must(200, "GET", "/api/winners", nil, anon, &pub)
	_, body = ts.get("/v1/public/winners", key)
	if c := ev.teamPage("Comet"); pub.Published || len(pub.Prizes) != 0 || string(body) != `{"data":[]}` || c.Published || len(c.Winners) != 0 || len(c.Feedback) != 0 {
		t.Errorf("after take back: %+v, %s, %+v", pub, body, c)
	}
	ts.refused(409, "DELETE", "/api/admin/winners/publish", nil, asAdmin)
}

// TestTeamLinksRotateAndSurviveRestart: a rotated link stops working at once; the
// published state, feedback and links survive a restart on the same directory.
func TestTeamLinksRotateAndSurviveRestart(t *testing.T) {
	ev := newEndingEvent(t)
	ts := ev.ts
	var rot struct{ Link string }
	ts.must(200, "POST", "/api/admin/team-links/rotate/"+ev.ids["Aurora"], nil, asAdmin, &rot)
	ts.refused(404, "GET", "/api/team/"+ev.tokens["Aurora"], nil, anon)
	ev.tokens["Aurora"] = rot.Link[strings.LastIndex(rot.Link, "/")+1:]
	ts.must(200, "PUT", "/api/admin/prizes", []map[string]any{{"name": "Best overall", "places": 1}}, asAdmin, nil)
	ts.must(200, "POST", "/api/admin/winners/publish", map[string]any{"feedback": true, "prizes": []any{
		map[string]any{"prize": ev.prizes()["Best overall"], "winners": []string{ev.ids["Aurora"]}}}}, asAdmin, nil)
	before := ev.teamPage("Aurora")
	dir := ts.Dir
	ts.Stop()
	ev.ts = startServerIn(t, dir)
	if after := ev.teamPage("Aurora"); !reflect.DeepEqual(after, before) || !after.Published || len(after.Feedback) != 2 {
		t.Errorf("after a restart the team page is %+v, was %+v", after, before)
	}
	rows := ev.ts.getCSV("/api/admin/export/team-links", "team-links.csv")
	if !slices.Equal(rows[0], []string{"name", "location", "contact_emails", "link"}) || len(rows) != 5 || !strings.HasSuffix(rows[1][3], "/team/"+ev.tokens["Aurora"]) {
		t.Errorf("team-links.csv: %q", rows)
	}
	_, log := ev.ts.do("GET", "/api/admin/log", nil, asAdmin)
	for tok := range strings.SplitSeq(strings.Join(mapValues(ev.tokens), " "), " ") {
		if strings.Contains(string(log), tok) {
			t.Errorf("the audit log holds a team token")
		}
	}
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TestTeamPageThrottlesGuesses: unknown team links count against the address's budget
// (max_req_per_min) and are then refused with 429 and Retry-After, while valid links
// keep loading however often a hall of phones behind one address asks; block_reqs
// refuses every lookup.
func TestTeamPageThrottlesGuesses(t *testing.T) {
	ev := newEndingEvent(t)
	ts := ev.ts
	ts.must(200, "POST", "/api/admin/max-reqs", map[string]any{"max_req_per_min": 5}, asAdmin, nil)
	for range 20 { // valid links: never throttled
		ev.teamPage("Aurora")
	}
	for i := range 5 {
		ts.refused(404, "GET", fmt.Sprintf("/api/team/guess-%022d", i), nil, anon)
	}
	resp, body := ts.get("/api/team/guess-number-six-000000000000", nil)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("sixth unknown link: %d %s (Retry-After %q)", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	if r, _ := ts.get("/api/team/"+ev.tokens["Aurora"], nil); r.StatusCode != 429 {
		t.Errorf("an address that guessed too often still reads pages: %d", r.StatusCode)
	}
	ts.must(200, "POST", "/api/admin/block-reqs", map[string]any{"block_reqs": true}, asAdmin, nil)
	if r, _ := ts.get("/api/team/"+ev.tokens["Aurora"], nil); r.StatusCode != 429 {
		t.Errorf("block_reqs: %d", r.StatusCode)
	}
}

// TestTrackPrizeEvidence: a track prize's proposal says what it stands on, the track's
// active track judges and their views per project of the track
// (docs/behaviour.md#track-prizes); the overall prize says neither.
func TestTrackPrizeEvidence(t *testing.T) {
	ev := newEndingEvent(t)
	ts := ev.ts
	ts.must(200, "PUT", "/api/admin/prizes", []map[string]any{{"name": "Best overall", "places": 2}, {"name": "Best Hardware", "track": "Hardware", "places": 1}}, asAdmin, nil)
	type prizeEvidence struct {
		Name        string
		TrackJudges *int     `json:"track_judges"`
		TrackViews  *float64 `json:"track_views"`
	}
	evidence := func() []prizeEvidence {
		var w struct{ Prizes []prizeEvidence }
		ts.must(200, "GET", "/api/admin/winners", nil, asAdmin, &w)
		if len(w.Prizes) != 2 || w.Prizes[0].TrackJudges != nil || w.Prizes[0].TrackViews != nil || w.Prizes[1].TrackJudges == nil || w.Prizes[1].TrackViews == nil {
			t.Fatalf("prizes' evidence: %+v", w.Prizes)
		}
		return w.Prizes
	}
	if e := evidence()[1]; *e.TrackJudges != 0 || *e.TrackViews != 0 { // the general judges' views are not the track's
		t.Errorf("before a track judge: %d judges, %v views", *e.TrackJudges, *e.TrackViews)
	}
	ts.must(200, "POST", "/api/admin/options", map[string]any{"judge_tracks": true}, asAdmin, nil)
	_, code := ts.addJudge("Hana", "hana@example.com", "Hardware")
	hana := ts.login(code)
	ts.judgeOnce(hana) // one of the track's two projects
	if e := evidence()[1]; *e.TrackJudges != 1 || *e.TrackViews != 0.5 {
		t.Errorf("after one track visit: %d judges, %v views, want 1 and 0.5", *e.TrackJudges, *e.TrackViews)
	}
	_, code = ts.addJudge("Ivo", "ivo@example.com", "Hardware")
	ts.login(code)
	ts.judgeOnce(hana)
	if e := evidence()[1]; *e.TrackJudges != 2 || *e.TrackViews != 1 {
		t.Errorf("after two track visits: %d judges, %v views, want 2 and 1", *e.TrackJudges, *e.TrackViews)
	}
}
