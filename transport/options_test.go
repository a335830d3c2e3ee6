package transport

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"podium/engine"
)

// settingsOptions reads GET /api/admin/options.
func settingsOptions(ts *testServer) engine.Options {
	ts.t.Helper()
	var o engine.Options
	ts.must(200, "GET", "/api/admin/options", nil, asAdmin, &o)
	return o
}

// settingsState is the observable state the garbage and validation tests compare.
func settingsState(ts *testServer) string {
	ts.t.Helper()
	var b strings.Builder
	for _, p := range []string{"/api/judge/list", "/api/project/list", "/api/admin/options"} {
		b.Write(ts.must(200, "GET", p, nil, asAdmin, nil))
		b.WriteByte('\n')
	}
	return b.String()
}

// settingsJudge creates a judge, logs it in and returns its token.
func settingsJudge(ts *testServer) string {
	ts.t.Helper()
	_, code := ts.addJudge("Jo", "jo@example.com", "")
	return ts.login(code)
}

func TestOptionsSetAndGet(t *testing.T) {
	ts := startServer(t)
	o := settingsOptions(ts)
	def := engine.DefaultOptions(o.ID)
	if !reflect.DeepEqual(o, def) {
		t.Fatalf("new server options\n got %+v\nwant %+v", o, def)
	}
	body := `{"judging_timer": 600, "min_views": 2, "clock_sync": true, "judge_tracks": true,
		"tracks": ["AI", "Web"], "track_views": [4, 5], "multi_group": true, "num_groups": 2,
		"group_sizes": [10, 20], "switching_mode": "manual", "auto_switch_prop": 0.5,
		"group_names": ["Hall A", "Hall B"], "ignore_tracks": ["Hidden"], "max_req_per_min": 50,
		"block_reqs": true, "ref": 999, "deliberation": true, "qr_code": "x", "unknown": [1]}`
	ts.must(200, "POST", "/api/admin/options", body, asAdmin, nil)
	o = settingsOptions(ts)
	want := def
	want.Ref = 1
	want.JudgingTimer, want.MinViews, want.ClockSync, want.JudgeTracks = 600, 2, true, true
	want.Tracks, want.TrackViews, want.MultiGroup, want.NumGroups = []string{"AI", "Web"}, []int{4, 5}, true, 2
	want.GroupSizes, want.SwitchingMode, want.AutoSwitchProp = []int{10, 20}, "manual", 0.5
	want.GroupNames, want.IgnoreTracks, want.MaxReqPerMin, want.BlockReqs = []string{"Hall A", "Hall B"}, []string{"Hidden"}, 50, true
	if !reflect.DeepEqual(o, want) {
		t.Fatalf("after set\n got %+v\nwant %+v", o, want)
	}
	// Empty body and {} change nothing (ref stays).
	ts.must(200, "POST", "/api/admin/options", nil, asAdmin, nil)
	ts.must(200, "POST", "/api/admin/options", `{}`, asAdmin, nil)
	if got := settingsOptions(ts).Ref; got != 1 {
		t.Fatalf("ref after empty bodies = %d", got)
	}
	// A partial change touches only its fields.
	ts.must(200, "POST", "/api/admin/options", `{"judging_timer": 0}`, asAdmin, nil)
	want.JudgingTimer, want.Ref = 0, 2
	if o := settingsOptions(ts); !reflect.DeepEqual(o, want) {
		t.Fatalf("partial\n got %+v\nwant %+v", o, want)
	}
	var timer struct {
		JudgingTimer *int `json:"judging_timer"`
	}
	ts.must(200, "GET", "/api/admin/timer", nil, asAdmin, &timer)
	if timer.JudgingTimer == nil || *timer.JudgingTimer != 0 {
		t.Fatalf("timer %+v", timer)
	}
	// The group names reach the public group info.
	var gi engine.GroupInfo
	ts.must(200, "GET", "/api/group-info", nil, anon, &gi)
	if !gi.Enabled || !reflect.DeepEqual(gi.Names, []string{"Hall A", "Hall B"}) {
		t.Fatalf("group info %+v", gi)
	}
}

func TestOptionsValidation(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/tracks", `{"tracks": ["AI"]}`, asAdmin, nil)
	ts.addProject("P", "AI")
	bad := []string{
		`{"judging_timer": -1}`, `{"judging_timer": 86401}`, `{"judging_timer": 1.5}`, `{"judging_timer": "60"}`,
		`{"min_views": -1}`, `{"min_views": 1001}`,
		`{"num_groups": 0}`, `{"num_groups": 65}`, `{"num_groups": 99999999999999999999}`,
		`{"group_sizes": [1, 2]}`, `{"group_sizes": [1, 0, 2]}`, `{"group_sizes": [1, -1, 2]}`, `{"group_sizes": "1,2,3"}`,
		`{"num_groups": 2, "group_sizes": [1, 2, 3]}`, `{"num_groups": 2, "group_names": ["a"]}`,
		`{"switching_mode": "random"}`, `{"switching_mode": ""}`,
		`{"auto_switch_prop": 0}`, `{"auto_switch_prop": 1.5}`, `{"auto_switch_prop": -0.1}`, `{"auto_switch_prop": 1e400}`,
		`{"group_names": ["a", "b"]}`, `{"group_names": ["a", "", "c"]}`,
		`{"max_req_per_min": 0}`, `{"max_req_per_min": 100001}`,
		`{"tracks": ["a", "a"]}`, `{"tracks": [""]}`, `{"tracks": "AI"}`, `{"tracks": [1]}`,
		`{"track_views": [1, 2]}`, `{"track_views": [0]}`, `{"tracks": ["a", "b"], "track_views": [3]}`,
		`{"ignore_tracks": [""]}`, `{"clock_sync": "yes"}`, `{"block_reqs": 1}`,
		`{"event_name": ""}`, `{"event_name": "  "}`, `{"event_name": "a\nBcc: x@example.com"}`, `{"event_name": 7}`,
		`{"event_name": "` + strings.Repeat("x", 81) + `"}`,
		`{"judging_timer": 60, "min_views": -1}`, // one bad field refuses the good one too
		`not json`, `[]`, `null`, `"x"`, `{"judging_timer": 60`,
	}
	before := settingsState(ts)
	for _, b := range bad {
		code, resp := ts.do("POST", "/api/admin/options", b, asAdmin)
		var e struct{ Error string }
		if code != 400 || json.Unmarshal(resp, &e) != nil || e.Error == "" {
			t.Errorf("%s: %d %s, want 400 with an error", b, code, resp)
		}
	}
	if after := settingsState(ts); after != before {
		t.Fatalf("refused options changed the state:\n%s\n%s", before, after)
	}
}

func TestOptionsNumGroupsResizes(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/options", `{"multi_group": true, "group_sizes": [1, 1, 1], "group_names": ["A", "B", "C"]}`, asAdmin, nil)
	for _, n := range []string{"a", "b", "c", "d"} {
		ts.addProject(n, "")
	}
	ts.must(200, "POST", "/api/admin/options", `{"num_groups": 4}`, asAdmin, nil)
	o := settingsOptions(ts)
	if !reflect.DeepEqual(o.GroupSizes, []int{1, 1, 1, 30}) || !reflect.DeepEqual(o.GroupNames, []string{"A", "B", "C", "Group 4"}) {
		t.Fatalf("resize: %v %v", o.GroupSizes, o.GroupNames)
	}
	if got := settingsProjectGroups(ts); !reflect.DeepEqual(got, []int{0, 1, 2, 3}) {
		t.Fatalf("project groups %v", got)
	}
	// Names given with num_groups: sizes still resize.
	ts.must(200, "POST", "/api/admin/options", `{"num_groups": 2, "group_names": ["X", "Y"]}`, asAdmin, nil)
	o = settingsOptions(ts)
	if !reflect.DeepEqual(o.GroupSizes, []int{1, 1}) || !reflect.DeepEqual(o.GroupNames, []string{"X", "Y"}) {
		t.Fatalf("resize with names: %v %v", o.GroupSizes, o.GroupNames)
	}
	if got := settingsProjectGroups(ts); !reflect.DeepEqual(got, []int{0, 1, 1, 1}) {
		t.Fatalf("project groups %v", got)
	}
}

func settingsProjectGroups(ts *testServer) []int {
	ts.t.Helper()
	var ps []struct{ Group int }
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &ps)
	out := []int{}
	for _, p := range ps {
		out = append(out, p.Group)
	}
	return out
}

func settingsJudgeGroups(ts *testServer) []int {
	ts.t.Helper()
	var js []struct{ Group int }
	ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &js)
	out := []int{}
	for _, j := range js {
		out = append(out, j.Group)
	}
	return out
}

func TestTracksRoutes(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/tracks", `{"tracks": ["AI", "Web"]}`, asAdmin, nil)
	ts.must(200, "POST", "/api/admin/track-views", `{"track_views": [5, 1]}`, asAdmin, nil)
	ts.must(200, "POST", "/api/admin/tracks", `{"tracks": ["Web", "HW", "AI"]}`, asAdmin, nil)
	o := settingsOptions(ts)
	if !reflect.DeepEqual(o.Tracks, []string{"Web", "HW", "AI"}) || !reflect.DeepEqual(o.TrackViews, []int{1, 3, 5}) || o.Ref != 3 {
		t.Fatalf("tracks %v views %v ref %d", o.Tracks, o.TrackViews, o.Ref)
	}
	before := settingsState(ts)
	for _, tc := range []struct{ path, body string }{
		{"/api/admin/tracks", `{"tracks": ["a", "a"]}`},
		{"/api/admin/tracks", `{"tracks": ["a", " "]}`},
		{"/api/admin/tracks", `{"tracks": ["` + strings.Repeat("x", 201) + `"]}`},
		{"/api/admin/tracks", `{}`},
		{"/api/admin/tracks", ``},
		{"/api/admin/tracks", `{"tracks": null}`},
		{"/api/admin/tracks", `{"tracks": "AI"}`},
		{"/api/admin/track-views", `{"track_views": [1, 2]}`},
		{"/api/admin/track-views", `{"track_views": [1, 0, 2]}`},
		{"/api/admin/track-views", `{"track_views": [1, 2, 2.5]}`},
		{"/api/admin/track-views", `{}`},
		{"/api/admin/track-views", `{"track_views": {"AI": 1}}`},
	} {
		code, resp := ts.do("POST", tc.path, tc.body, asAdmin)
		if code != 400 {
			t.Errorf("POST %s %s: %d %s, want 400", tc.path, tc.body, code, resp)
		}
	}
	if after := settingsState(ts); after != before {
		t.Fatal("refused track changes changed the state")
	}
	ts.must(200, "POST", "/api/admin/tracks", `{"tracks": []}`, asAdmin, nil)
	if o := settingsOptions(ts); len(o.Tracks) != 0 || len(o.TrackViews) != 0 {
		t.Fatalf("cleared tracks: %+v", o)
	}
	ts.must(200, "POST", "/api/admin/track-views", `{"track_views": []}`, asAdmin, nil)
}

func TestGroupRoutesRegroupProjectsAndJudges(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/group-sizes", `{"group_sizes": [2, 2, 2]}`, asAdmin, nil)
	for i := 0; i < 6; i++ {
		ts.addProject(string(rune('a'+i)), "")
	}
	for i := 0; i < 6; i++ {
		ts.addJudge("J", string(rune('a'+i))+"@ex.com", "")
	}
	if got := settingsJudgeGroups(ts); !reflect.DeepEqual(got, []int{0, 1, 2, 0, 1, 2}) {
		t.Fatalf("judge groups %v", got)
	}
	ts.must(200, "POST", "/api/admin/num-groups", `{"num_groups": 2}`, asAdmin, nil)
	o := settingsOptions(ts)
	if o.NumGroups != 2 || !reflect.DeepEqual(o.GroupSizes, []int{2, 2}) || !reflect.DeepEqual(o.GroupNames, []string{"Group 1", "Group 2"}) {
		t.Fatalf("num-groups: %+v", o)
	}
	if got := settingsProjectGroups(ts); !reflect.DeepEqual(got, []int{0, 0, 1, 1, 1, 1}) {
		t.Fatalf("project groups %v", got)
	}
	if got := settingsJudgeGroups(ts); !reflect.DeepEqual(got, []int{0, 1, 0, 0, 1, 1}) {
		t.Fatalf("judge groups after shrink %v", got)
	}
	ts.must(200, "POST", "/api/admin/group-sizes", `{"group_sizes": [1, 5]}`, asAdmin, nil)
	if got := settingsProjectGroups(ts); !reflect.DeepEqual(got, []int{0, 1, 1, 1, 1, 1}) {
		t.Fatalf("project groups after sizes %v", got)
	}
	ts.must(200, "POST", "/api/admin/num-groups", `{"num_groups": 64}`, asAdmin, nil)
	if o := settingsOptions(ts); len(o.GroupNames) != 64 || o.GroupNames[63] != "Group 64" || len(o.GroupSizes) != 64 {
		t.Fatalf("64 groups: %v", o.GroupNames)
	}
	before := settingsState(ts)
	for _, tc := range []struct{ path, body string }{
		{"/api/admin/num-groups", `{"num_groups": 0}`},
		{"/api/admin/num-groups", `{"num_groups": 65}`},
		{"/api/admin/num-groups", `{"num_groups": -1}`},
		{"/api/admin/num-groups", `{"num_groups": "2"}`},
		{"/api/admin/num-groups", `{"num_groups": 2.5}`},
		{"/api/admin/num-groups", `{}`},
		{"/api/admin/group-sizes", `{"group_sizes": [1, 2]}`},
		{"/api/admin/group-sizes", `{"group_sizes": []}`},
		{"/api/admin/group-sizes", `{"group_sizes": [` + strings.Repeat("1, ", 63) + `0]}`},
		{"/api/admin/group-sizes", `{}`},
		{"/api/admin/group-sizes", `{"group_sizes": 3}`},
	} {
		code, resp := ts.do("POST", tc.path, tc.body, asAdmin)
		if code != 400 {
			t.Errorf("POST %s %s: %d %s, want 400", tc.path, tc.body, code, resp)
		}
	}
	if after := settingsState(ts); after != before {
		t.Fatal("refused group changes changed the state")
	}
}

func TestBlockAndMaxReqs(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/block-reqs", `{"block_reqs": true}`, asAdmin, nil)
	if b := ts.must(200, "POST", "/api/admin/max-reqs", `{"max_req_per_min": 7}`, asAdmin, nil); string(b) != `{"ok":1}` {
		t.Fatalf("max-reqs answered %s", b)
	}
	o := settingsOptions(ts)
	if !o.BlockReqs || o.MaxReqPerMin != 7 || o.Ref != 2 {
		t.Fatalf("options %+v", o)
	}
	before := settingsState(ts)
	for _, tc := range []struct{ path, body string }{
		{"/api/admin/block-reqs", `{}`},
		{"/api/admin/block-reqs", `{"block_reqs": "true"}`},
		{"/api/admin/block-reqs", `{"block_reqs": 1}`},
		{"/api/admin/max-reqs", `{}`},
		{"/api/admin/max-reqs", `{"max_req_per_min": 0}`},
		{"/api/admin/max-reqs", `{"max_req_per_min": 100001}`},
		{"/api/admin/max-reqs", `{"max_req_per_min": "5"}`},
	} {
		if code, resp := ts.do("POST", tc.path, tc.body, asAdmin); code != 400 {
			t.Errorf("POST %s %s: %d %s, want 400", tc.path, tc.body, code, resp)
		}
	}
	if settingsState(ts) != before {
		t.Fatal("refused changes changed the state")
	}
	// block_reqs really blocks judge logins; unblocking lets them in again.
	_, code := ts.addJudge("A", "a@ex.com", "")
	if st, _ := ts.do("POST", "/api/judge/login", map[string]string{"code": code}, anon); st != 429 {
		t.Fatalf("blocked login: %d", st)
	}
	ts.must(200, "POST", "/api/admin/block-reqs", `{"block_reqs": false}`, asAdmin, nil)
	ts.login(code)
}

func TestSettingsRoutesNeedAdmin(t *testing.T) {
	ts := startServer(t)
	tok := settingsJudge(ts)
	routes := []struct{ method, path, body string }{
		{"POST", "/api/admin/options", `{"judging_timer": 5}`},
		{"GET", "/api/admin/options", ``},
		{"POST", "/api/admin/tracks", `{"tracks": ["x"]}`},
		{"POST", "/api/admin/track-views", `{"track_views": []}`},
		{"POST", "/api/admin/num-groups", `{"num_groups": 2}`},
		{"POST", "/api/admin/group-sizes", `{"group_sizes": [1, 1, 1]}`},
		{"POST", "/api/admin/block-reqs", `{"block_reqs": true}`},
		{"POST", "/api/admin/max-reqs", `{"max_req_per_min": 3}`},
		{"POST", "/api/admin/deliberation", `{"start": true}`},
		{"GET", "/api/admin/stats", ``},
		{"GET", "/api/admin/stats/AI", ``},
		{"GET", "/api/admin/flags", ``},
		{"DELETE", "/api/admin/flag/0123456789abcdef01234567", ``},
		{"GET", "/api/admin/log", ``},
		{"POST", "/api/admin/reset", `{"type": "all"}`},
		{"GET", "/api/admin/clock", ``},
		{"POST", "/api/admin/clock/pause", ``},
		{"POST", "/api/admin/clock/unpause", ``},
		{"POST", "/api/admin/clock/reset", ``},
		{"POST", "/api/admin/clock/backup", ``},
	}
	before := settingsState(ts)
	for _, r := range routes {
		for name, a := range map[string]auth{"none": anon, "judge": asJudge(tok), "bad cookie": {hdr: map[string]string{"Cookie": "admin_session=nope"}}} {
			var body any
			if r.body != "" {
				body = r.body
			}
			if code, resp := ts.do(r.method, r.path, body, a); code != 401 {
				t.Errorf("%s %s as %s: %d %s, want 401", r.method, r.path, name, code, resp)
			}
		}
	}
	if settingsState(ts) != before {
		t.Fatal("unauthorised requests changed the state")
	}
	// The judge deliberation route needs a judge.
	ts.must(401, "GET", "/api/judge/deliberation", nil, anon, nil)
	ts.must(401, "GET", "/api/judge/deliberation", nil, asAdmin, nil)
	ts.must(200, "GET", "/api/judge/deliberation", nil, asJudge(tok), nil)
	// Timer: judge or admin; started: anyone.
	ts.must(401, "GET", "/api/admin/timer", nil, anon, nil)
	ts.must(200, "GET", "/api/admin/timer", nil, asJudge(tok), nil)
	ts.must(200, "GET", "/api/admin/started", nil, anon, nil)
}

// FuzzOptionsBody feeds arbitrary bodies to the options payload parser and applies
// whatever parses to a fresh engine: never a panic, only 400-type refusals, and every
// accepted change leaves consistent options.
func FuzzOptionsBody(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `"x"`, `1`, `{"judging_timer": 60}`, `{"judging_timer": -1}`,
		`{"num_groups": 5}`, `{"num_groups": 2, "group_sizes": [3, 4]}`, `{"num_groups": 2, "group_names": ["a", "b"]}`,
		`{"group_sizes": [1, 2, 3]}`, `{"group_sizes": [0, 2, 3]}`, `{"tracks": ["AI", "Web"], "track_views": [1, 9]}`,
		`{"tracks": ["AI", "AI"]}`, `{"track_views": []}`, `{"auto_switch_prop": 1e-300}`, `{"auto_switch_prop": 1e400}`,
		`{"switching_mode": "manual", "multi_group": true}`, `{"max_req_per_min": 99999999999999999999}`,
		`{"ignore_tracks": ["x", null]}`, `{"group_names": [null, "b", "c"]}`, `{"min_views": 1000, "clock_sync": true}`,
		`{"tracks": null, "num_groups": null}`, "{\"tracks\": [\"\xff\"]}", `{"judging_timer": 60`, `{"a": {"b": [[[[]]]]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		cmd, err := parseOptionsBody(body)
		if err != nil {
			var he *httpError
			if !errors.As(err, &he) || he.status != 400 {
				t.Fatalf("parse error %v is not a 400", err)
			}
			return
		}
		e := engine.New()
		var before []byte
		before, _, _ = e.Snapshot()
		_, _, err = e.Apply(&engine.Envelope{Time: 1_700_000_000_000, Seed: 1, Actor: engine.Admin, Cmd: cmd})
		if err != nil {
			var ee *engine.Error
			if !errors.As(err, &ee) || ee.Kind != engine.KindInvalid {
				t.Fatalf("apply error %v is not a validation error", err)
			}
			if after, _, _ := e.Snapshot(); string(after) != string(before) {
				t.Fatal("refused options changed the state")
			}
			return
		}
		var o engine.Options
		e.Read(func(s *engine.State) { o = s.OptionsView() })
		if o.NumGroups < 1 || o.NumGroups > engine.MaxNumGroups || len(o.GroupSizes) != o.NumGroups || len(o.GroupNames) != o.NumGroups ||
			len(o.TrackViews) != len(o.Tracks) || o.AutoSwitchProp <= 0 || o.AutoSwitchProp > 1 ||
			o.JudgingTimer < 0 || o.JudgingTimer > engine.MaxJudgingTimer || o.MinViews < 0 || o.MinViews > engine.MaxMinViews ||
			o.MaxReqPerMin < 1 || o.MaxReqPerMin > engine.MaxReqPerMin || (o.SwitchingMode != "auto" && o.SwitchingMode != "manual") {
			t.Fatalf("inconsistent options accepted: %+v", o)
		}
		for _, n := range o.GroupSizes {
			if n < 1 {
				t.Fatalf("group size %d accepted", n)
			}
		}
		for _, n := range o.TrackViews {
			if n < 1 {
				t.Fatalf("track views %d accepted", n)
			}
		}
	})
}
