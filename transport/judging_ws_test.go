package transport

import (
	"testing"

	"podium/engine"
)

// TestJudgingEventsOverWebsocket: the third absent flag hides a project; the judge still
// on it gets a `judge` event with no current project, admins get the `flag` events,
// everyone the expo `remove`. Auto group switching on finish sends the new group.
func TestJudgingEventsOverWebsocket(t *testing.T) {
	ts := startServer(t)
	p := ts.addProject("Ghost", "")
	ts.addProject("Other", "")
	var toks []string
	var ids []string
	for i := 0; i < 4; i++ {
		id, code := ts.addJudge("J"+string(rune('A'+i)), "j"+string(rune('a'+i))+"@example.com", "")
		ids = append(ids, id)
		toks = append(toks, ts.login(code))
	}
	watcher, _ := ts.mustDialWS(cookieHeader(cookieJudge, toks[3]))
	adminWS, _ := ts.mustDialWS(nil)
	adminWS.send(map[string]string{"type": "auth", "password": testPassword})
	adminWS.expectNext("hello")
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)

	// Judge D takes the ghost project first; A, B, C then get it too (the other project
	// is busy or skipped) and flag it absent.
	for nextOf(t, ts, toks[3])["project_id"] != p {
		ts.must(200, "POST", "/api/judge/skip", `{"reason":"busy"}`, asJudge(toks[3]), nil)
	}
	for _, tok := range toks[:3] {
		for nextOf(t, ts, tok)["project_id"] != p {
			ts.must(200, "POST", "/api/judge/skip", `{"reason":"too-complex"}`, asJudge(tok), nil)
		}
		ts.must(200, "POST", "/api/judge/skip", `{"reason":"absent"}`, asJudge(tok), nil)
	}
	ev := decode[engine.JudgeEvent](t, watcher.expect("judge").Data)
	if ev.Current != nil || ev.Reason != "project hidden" {
		t.Fatalf("judge event %+v", ev)
	}
	hidden := false
	for !hidden {
		f := decode[engine.Flag](t, adminWS.expect("flag").Data)
		hidden = f.Reason == "hidden-absent" && f.ProjectID.String() == p && f.JudgeName == "system"
	}
	for {
		e := decode[engine.ExpoEvent](t, adminWS.expect("expo").Data)
		if e.Action == "remove" && e.Project.ID.String() == p {
			break
		}
	}
	var me engine.JudgeView
	ts.must(200, "GET", "/api/judge", nil, asJudge(toks[3]), &me)
	if me.Current != nil {
		t.Fatalf("judge D still on %v", me.Current)
	}
	_ = ids
}

func TestJudgingGroupSwitchEvent(t *testing.T) {
	ts := startServer(t)
	ts.must(200, "POST", "/api/admin/options", map[string]any{
		"multi_group": true, "num_groups": 2, "group_sizes": []int{2, 2}, "group_names": []string{"G1", "G2"},
		"switching_mode": "auto", "auto_switch_prop": 0.5,
	}, asAdmin, nil)
	for i := 0; i < 4; i++ {
		ts.addProject("P"+string(rune('0'+i)), "")
	}
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	tok := ts.login(code)
	var me engine.JudgeView
	ts.must(200, "GET", "/api/judge", nil, asJudge(tok), &me)
	start := me.Group
	w, _ := ts.mustDialWS(cookieHeader(cookieJudge, tok))
	ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	nextOf(t, ts, tok)
	// One of the two projects of the group is half of it: 1/2 >= 0.5 switches.
	ts.must(200, "POST", "/api/judge/finish", nil, asJudge(tok), nil)
	ev := decode[engine.JudgeEvent](t, w.expect("judge").Data)
	if ev.Group != (start+1)%2 || ev.Reason != "group switched" {
		t.Fatalf("judge event %+v (started in group %d)", ev, start)
	}
	ts.must(200, "GET", "/api/judge", nil, asJudge(tok), &me)
	if me.Group != (start+1)%2 || me.GroupSeen != 0 {
		t.Fatalf("judge after switch: group %d group_seen %d", me.Group, me.GroupSeen)
	}
}
