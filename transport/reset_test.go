package transport

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"podium/engine"
	"podium/persist"
)

type resetAnswer struct {
	OK     int    `json:"ok"`
	Backup string `json:"backup"`
}

// settingsBackups lists the backup files on disk.
func settingsBackups(t *testing.T, ts *testServer) []string {
	t.Helper()
	ents, err := os.ReadDir(persist.BackupDir(ts.Dir))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := []string{}
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// settingsEvent sets up judges, projects and judging data (seen lists, rankings, a
// current assignment and a flag, written straight into the state as the judging flow
// would) and returns a judge token.
func settingsEvent(t *testing.T, ts *testServer) string {
	t.Helper()
	ts.must(200, "POST", "/api/admin/options", `{"tracks": ["AI"], "judging_timer": 99}`, asAdmin, nil)
	p1 := ts.addProject("P1", "AI")
	ts.addProject("P2", "")
	_, code := ts.addJudge("J1", "j1@ex.com", "")
	ts.addJudge("J2", "j2@ex.com", "AI")
	tok := ts.login(code)
	id1, _ := engine.ParseID(p1)
	ts.Node.Read(func(s *engine.State) {
		for _, j := range s.Judges {
			j.SeenProjects = []engine.SeenProject{{ProjectID: id1, Starred: true, Name: "P1", Location: 1}}
			j.Seen, j.Rankings, j.Current, j.LastLocation = 1, []engine.ID{id1}, id1, 1
		}
		for _, p := range s.Projects {
			p.Seen = 2
			p.TrackSeen["AI"] = 1
		}
		s.Flags = append(s.Flags, engine.Flag{ID: engine.ID{1}, ProjectID: id1, Time: 1, Reason: "busy"})
	})
	return tok
}

func TestResetAllKeepsAdminSession(t *testing.T) {
	ts := startServer(t)
	tok := settingsEvent(t, ts)
	// An admin logged in with the cookie stays logged in through a full reset.
	cookie := settingsAdminCookie(t, ts)
	asCookie := auth{hdr: map[string]string{"Cookie": cookie}}
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	ts.must(200, "POST", "/api/admin/deliberation", `{"start": true}`, asAdmin, nil)

	var res resetAnswer
	ts.must(200, "POST", "/api/admin/reset", nil, asCookie, &res)
	if res.OK != 1 || res.Backup == "" {
		t.Fatalf("reset answer %+v", res)
	}
	if b := ts.must(200, "GET", "/api/judge/list", nil, asCookie, nil); string(b) != "[]" {
		t.Fatalf("judges after reset %s", b)
	}
	if b := ts.must(200, "GET", "/api/project/list", nil, asAdmin, nil); string(b) != "[]" {
		t.Fatalf("projects after reset %s", b)
	}
	if b := ts.must(200, "GET", "/api/admin/flags", nil, asAdmin, nil); string(b) != "[]" {
		t.Fatalf("flags after reset %s", b)
	}
	o := settingsOptions(ts)
	want := engine.DefaultOptions(o.ID)
	want.Ref = o.Ref
	if o.Ref == 0 || !settingsSameOptions(o, want) {
		t.Fatalf("options after reset %+v", o)
	}
	var st clockState
	ts.must(200, "GET", "/api/admin/clock", nil, asAdmin, &st)
	if st.Running || st.Time != 0 {
		t.Fatalf("clock after reset %+v", st)
	}
	ts.must(401, "GET", "/api/judge", nil, asJudge(tok), nil)
	// The backup holds the state before the reset and can be downloaded.
	if b := ts.must(200, "GET", "/api/admin/backup/"+res.Backup, nil, asAdmin, nil); len(b) == 0 {
		t.Fatal("empty backup")
	}
	if got := settingsBackups(t, ts); len(got) != 1 || got[0] != res.Backup {
		t.Fatalf("backups on disk %v, answer %q", got, res.Backup)
	}
	var log struct{ Log string }
	ts.must(200, "GET", "/api/admin/log", nil, asAdmin, &log)
	if !strings.HasSuffix(log.Log, "[ADMIN] reset: all") {
		t.Fatalf("log ends %q", log.Log[max(0, len(log.Log)-80):])
	}
	// New entries start from scratch.
	ts.addProject("New", "")
	var ps []struct{ Location int }
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &ps)
	if len(ps) != 1 || ps[0].Location != 1 {
		t.Fatalf("new project %+v", ps)
	}
}

func settingsSameOptions(a, b engine.Options) bool {
	return a.JudgingTimer == b.JudgingTimer && a.MinViews == b.MinViews && a.Deliberation == b.Deliberation &&
		len(a.Tracks) == 0 && len(a.TrackViews) == 0 && a.NumGroups == b.NumGroups && a.Clock == b.Clock &&
		strings.Join(a.GroupNames, ",") == strings.Join(b.GroupNames, ",") && a.MaxReqPerMin == b.MaxReqPerMin
}

// settingsAdminCookie logs the admin in and returns the session cookie header value.
func settingsAdminCookie(t *testing.T, ts *testServer) string {
	t.Helper()
	req := strings.NewReader(`{"password":"` + testPassword + `"}`)
	resp, err := settingsPost(ts.URL+"/api/admin/login", req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "admin_session" && c.Value != "" {
			return c.Name + "=" + c.Value
		}
	}
	t.Fatal("no admin_session cookie")
	return ""
}

func TestResetTypes(t *testing.T) {
	type counts struct{ judges, projects, flags, seen, rankings, current int }
	measure := func(ts *testServer) counts {
		var c counts
		ts.Node.Read(func(s *engine.State) {
			c.judges, c.projects, c.flags = len(s.Judges), len(s.Projects), len(s.Flags)
			for _, j := range s.Judges {
				c.seen += len(j.SeenProjects)
				c.rankings += len(j.Rankings)
				if !j.Current.IsZero() {
					c.current++
				}
			}
			for _, p := range s.Projects {
				c.seen += p.Seen
			}
		})
		return c
	}
	for _, tc := range []struct {
		typ  string
		want counts
	}{
		{"projects", counts{judges: 2}},
		{"judges", counts{projects: 2}},
		{"judging-data", counts{judges: 2, projects: 2}},
		{"rankings", counts{judges: 2, projects: 2, flags: 1, seen: 6, current: 2}},
		{"all", counts{}},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			ts := startServer(t)
			tok := settingsEvent(t, ts)
			var res resetAnswer
			ts.must(200, "POST", "/api/admin/reset", map[string]string{"type": tc.typ}, asAdmin, &res)
			if res.OK != 1 || res.Backup == "" {
				t.Fatalf("answer %+v", res)
			}
			if got := measure(ts); got != tc.want {
				t.Fatalf("after %s reset: %+v, want %+v", tc.typ, got, tc.want)
			}
			keepsOptions := tc.typ != "all"
			if o := settingsOptions(ts); (o.JudgingTimer == 99) != keepsOptions {
				t.Fatalf("options after %s reset: timer %d", tc.typ, o.JudgingTimer)
			}
			keepsJudges := tc.typ != "all" && tc.typ != "judges"
			code, _ := ts.do("GET", "/api/judge", nil, asJudge(tok))
			if (code == 200) != keepsJudges {
				t.Fatalf("judge session after %s reset: %d", tc.typ, code)
			}
		})
	}
}

func TestResetValidation(t *testing.T) {
	ts := startServer(t)
	settingsEvent(t, ts)
	tok := settingsJudge2(t, ts)
	before := settingsState(ts)
	for _, b := range []string{`{"type": "everything"}`, `{"type": ""}`, `{"type": "ALL"}`, `{"type": 1}`, `{"type": ["all"]}`, `not json`, `null`, `[]`} {
		if code, resp := ts.do("POST", "/api/admin/reset", b, asAdmin); code != 400 {
			t.Errorf("reset %s: %d %s, want 400", b, code, resp)
		}
	}
	ts.must(401, "POST", "/api/admin/reset", `{"type": "all"}`, anon, nil)
	ts.must(401, "POST", "/api/admin/reset", `{"type": "all"}`, asJudge(tok), nil)
	if settingsState(ts) != before {
		t.Fatal("refused resets changed the state")
	}
	if got := settingsBackups(t, ts); len(got) != 0 {
		t.Fatalf("refused resets wrote backups %v", got)
	}
}

func settingsJudge2(t *testing.T, ts *testServer) string {
	t.Helper()
	_, code := ts.addJudge("J3", "j3@ex.com", "")
	return ts.login(code)
}

func settingsPost(url string, body *strings.Reader) (*http.Response, error) {
	return http.Post(url, "application/json", body)
}
