package engine

import (
	"errors"
	"reflect"
	"testing"
)

// settingsRig applies commands to a fresh engine with a clock that advances 1 s per
// command, so tests read like a session of admin requests.
type settingsRig struct {
	t   *testing.T
	e   *Engine
	now int64
}

func newSettingsRig(t *testing.T) *settingsRig {
	return &settingsRig{t: t, e: New(), now: 1_700_000_000_000}
}

// try applies cmd as the admin and returns the result, events and error.
func (r *settingsRig) try(cmd Command) (any, []Event, error) {
	r.t.Helper()
	r.now += 1000
	return r.e.Apply(&Envelope{Time: r.now, Seed: uint64(r.now), Actor: Admin, Cmd: cmd})
}

// must applies cmd and fails the test on error.
func (r *settingsRig) must(cmd Command) (any, []Event) {
	r.t.Helper()
	res, evs, err := r.try(cmd)
	if err != nil {
		r.t.Fatalf("%s: %v", cmd.Kind(), err)
	}
	return res, evs
}

// refuse applies cmd and fails the test unless it is refused with kind.
func (r *settingsRig) refuse(kind ErrorKind, cmd Command) {
	r.t.Helper()
	_, _, err := r.try(cmd)
	var ee *Error
	if !errors.As(err, &ee) || ee.Kind != kind {
		r.t.Fatalf("%s: err = %v, want kind %d", cmd.Kind(), err, kind)
	}
}

func (r *settingsRig) opts() Options {
	var o Options
	r.e.Read(func(s *State) { o = s.OptionsView() })
	return o
}

func (r *settingsRig) snapshot() []byte {
	r.t.Helper()
	b, _, err := r.e.Snapshot()
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

func (r *settingsRig) addJudges(tracks ...string) []ID {
	r.t.Helper()
	var ids []ID
	for i, tr := range tracks {
		res, _ := r.must(&CreateJudges{
			Judges: []NewJudge{{Name: "J" + itoa(len(ids)), Email: "j" + itoa(int(r.now)) + "x" + itoa(i) + "@ex.com", Track: tr}},
			Codes:  []string{itoa(10000000 + int(r.now/1000)%89999999)},
		})
		ids = append(ids, res.([]CreatedJudge)[0].ID)
	}
	return ids
}

func (r *settingsRig) addProjects(n int, challenges ...string) []ID {
	r.t.Helper()
	var ps []NewProject
	for i := 0; i < n; i++ {
		ps = append(ps, NewProject{Name: "P" + itoa(i), ChallengeList: append([]string{}, challenges...)})
	}
	res, _ := r.must(&CreateProjects{Projects: ps})
	return res.(CreatedProjects).IDs
}

func intp(v int) *int             { return &v }
func boolp(v bool) *bool          { return &v }
func strp(v string) *string       { return &v }
func floatp(v float64) *float64   { return &v }
func strsp(v ...string) *[]string { return &v }
func intsp(v ...int) *[]int       { return &v }
func hasEvent(evs []Event, typ string) bool {
	for _, e := range evs {
		if e.Type == typ {
			return true
		}
	}
	return false
}

func TestSetOptionsValidation(t *testing.T) {
	cases := []struct {
		name string
		cmd  SetOptions
	}{
		{"timer negative", SetOptions{JudgingTimer: intp(-1)}},
		{"timer too big", SetOptions{JudgingTimer: intp(86401)}},
		{"min_views negative", SetOptions{MinViews: intp(-1)}},
		{"min_views too big", SetOptions{MinViews: intp(1001)}},
		{"num_groups 0", SetOptions{NumGroups: intp(0)}},
		{"num_groups 65", SetOptions{NumGroups: intp(65)}},
		{"group_sizes wrong length", SetOptions{GroupSizes: intsp(10, 10)}},
		{"group_sizes zero", SetOptions{GroupSizes: intsp(10, 0, 10)}},
		{"group_sizes negative", SetOptions{GroupSizes: intsp(10, -3, 10)}},
		{"group_sizes vs new num_groups", SetOptions{NumGroups: intp(2), GroupSizes: intsp(1, 2, 3)}},
		{"switching_mode", SetOptions{SwitchingMode: strp("sometimes")}},
		{"auto_switch_prop 0", SetOptions{AutoSwitchProp: floatp(0)}},
		{"auto_switch_prop >1", SetOptions{AutoSwitchProp: floatp(1.01)}},
		{"auto_switch_prop negative", SetOptions{AutoSwitchProp: floatp(-0.5)}},
		{"group_names wrong length", SetOptions{GroupNames: strsp("a", "b")}},
		{"group_names blank", SetOptions{GroupNames: strsp("a", " ", "c")}},
		{"group_names vs new num_groups", SetOptions{NumGroups: intp(4), GroupNames: strsp("a", "b", "c")}},
		{"max_req 0", SetOptions{MaxReqPerMin: intp(0)}},
		{"max_req too big", SetOptions{MaxReqPerMin: intp(100001)}},
		{"tracks duplicate", SetOptions{Tracks: strsp("AI", "AI")}},
		{"tracks empty name", SetOptions{Tracks: strsp("AI", "")}},
		{"track_views wrong length", SetOptions{TrackViews: intsp(3)}},
		{"track_views with tracks wrong length", SetOptions{Tracks: strsp("AI"), TrackViews: intsp(3, 3)}},
		{"track_views zero", SetOptions{Tracks: strsp("AI"), TrackViews: intsp(0)}},
		{"ignore_tracks blank", SetOptions{IgnoreTracks: strsp("")}},
		// One valid and one invalid field: nothing changes.
		{"valid timer, bad min_views", SetOptions{JudgingTimer: intp(60), MinViews: intp(-5)}},
		{"valid tracks, bad mode", SetOptions{Tracks: strsp("AI"), SwitchingMode: strp("x")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newSettingsRig(t)
			before := r.snapshot()
			cmd := tc.cmd
			r.refuse(KindInvalid, &cmd)
			if after := r.snapshot(); string(before) != string(after) {
				t.Fatalf("state changed by a refused command")
			}
		})
	}
}

func TestSetOptionsAppliesEveryField(t *testing.T) {
	r := newSettingsRig(t)
	ref := r.opts().Ref
	_, evs := r.must(&SetOptions{
		JudgingTimer: intp(0), MinViews: intp(1000), ClockSync: boolp(true), JudgeTracks: boolp(true),
		Tracks: strsp("AI", "Web"), TrackViews: intsp(5, 1), MultiGroup: boolp(true),
		NumGroups: intp(2), GroupSizes: intsp(4, 6), SwitchingMode: strp("manual"),
		AutoSwitchProp: floatp(1), GroupNames: strsp("North", "South"), IgnoreTracks: strsp("Sponsor"),
		MaxReqPerMin: intp(100000), BlockReqs: boolp(true),
	})
	o := r.opts()
	want := DefaultOptions(o.ID)
	want.Ref = ref + 1
	want.JudgingTimer, want.MinViews, want.ClockSync, want.JudgeTracks = 0, 1000, true, true
	want.Tracks, want.TrackViews, want.MultiGroup = []string{"AI", "Web"}, []int{5, 1}, true
	want.NumGroups, want.GroupSizes, want.SwitchingMode = 2, []int{4, 6}, "manual"
	want.AutoSwitchProp, want.GroupNames, want.IgnoreTracks = 1, []string{"North", "South"}, []string{"Sponsor"}
	want.MaxReqPerMin, want.BlockReqs = 100000, true
	if !reflect.DeepEqual(o, want) {
		t.Fatalf("options\n got %+v\nwant %+v", o, want)
	}
	if !hasEvent(evs, EvGroupInfo) || !hasEvent(evs, EvChanged) || !hasEvent(evs, EvLog) {
		t.Fatalf("events %+v", evs)
	}
	// An empty command is not a change.
	r.must(&SetOptions{})
	if got := r.opts().Ref; got != ref+1 {
		t.Fatalf("ref after empty command = %d, want %d", got, ref+1)
	}
	// Every real change bumps ref by one; group info goes out only when it changes.
	_, evs = r.must(&SetOptions{BlockReqs: boolp(false), GroupNames: strsp("North", "South")})
	if hasEvent(evs, EvGroupInfo) || hasEvent(evs, EvJudge) || hasEvent(evs, EvExpo) {
		t.Fatalf("unexpected events %+v", evs)
	}
	r.must(&SetOptions{MaxReqPerMin: intp(5)})
	if got := r.opts().Ref; got != ref+3 {
		t.Fatalf("ref = %d, want %d", got, ref+3)
	}
}

func TestSetTracksKeepsViewsByName(t *testing.T) {
	r := newSettingsRig(t)
	r.must(&SetOptions{Tracks: strsp("AI", "Web", "HW")})
	r.must(&SetOptions{TrackViews: intsp(7, 8, 9)})
	r.e.Read(func(s *State) { s.Options.TrackQRCodes["AI"], s.Options.TrackQRCodes["HW"] = "qa", "qh" })
	r.must(&SetOptions{Tracks: strsp("HW", "New", "AI")})
	o := r.opts()
	if !reflect.DeepEqual(o.Tracks, []string{"HW", "New", "AI"}) || !reflect.DeepEqual(o.TrackViews, []int{9, 3, 7}) {
		t.Fatalf("tracks %v views %v", o.Tracks, o.TrackViews)
	}
	r.must(&SetOptions{Tracks: strsp("New")})
	o = r.opts()
	if len(o.TrackQRCodes) != 0 || !reflect.DeepEqual(o.TrackViews, []int{3}) {
		t.Fatalf("after removing tracks: qr %v views %v", o.TrackQRCodes, o.TrackViews)
	}
	r.must(&SetOptions{Tracks: strsp()})
	if o := r.opts(); len(o.Tracks) != 0 || len(o.TrackViews) != 0 {
		t.Fatalf("empty tracks: %v %v", o.Tracks, o.TrackViews)
	}
}

func TestNumGroupsResizesAndRegroups(t *testing.T) {
	r := newSettingsRig(t)
	r.must(&SetOptions{MultiGroup: boolp(true), GroupSizes: intsp(2, 2, 2)})
	ps := r.addProjects(7)
	judges := r.addJudges("", "", "", "", "", "")
	groupsOf := func() (pg []int, jg []int) {
		r.e.Read(func(s *State) {
			for _, id := range ps {
				pg = append(pg, s.Projects[id].Group)
			}
			for _, id := range judges {
				jg = append(jg, s.Judges[id].Group)
			}
		})
		return
	}
	pg, jg := groupsOf()
	if !reflect.DeepEqual(pg, []int{0, 0, 1, 1, 2, 2, 2}) || !reflect.DeepEqual(jg, []int{0, 1, 2, 0, 1, 2}) {
		t.Fatalf("initial groups %v %v", pg, jg)
	}
	r.must(&SetOptions{GroupNames: strsp("A", "B", "C")})

	// Grow to 5: new sizes 30, new names "Group N", projects keep their groups.
	r.must(&SetOptions{NumGroups: intp(5)})
	o := r.opts()
	if !reflect.DeepEqual(o.GroupSizes, []int{2, 2, 2, 30, 30}) || !reflect.DeepEqual(o.GroupNames, []string{"A", "B", "C", "Group 4", "Group 5"}) {
		t.Fatalf("grown: %v %v", o.GroupSizes, o.GroupNames)
	}
	// Shrink to 2: judges of groups 2.. move to the smallest remaining group; projects
	// beyond the last group fall into it.
	_, evs := r.must(&SetOptions{NumGroups: intp(2)})
	o = r.opts()
	if !reflect.DeepEqual(o.GroupSizes, []int{2, 2}) || !reflect.DeepEqual(o.GroupNames, []string{"A", "B"}) {
		t.Fatalf("shrunk: %v %v", o.GroupSizes, o.GroupNames)
	}
	pg, jg = groupsOf()
	if !reflect.DeepEqual(pg, []int{0, 0, 1, 1, 1, 1, 1}) {
		t.Fatalf("project groups %v", pg)
	}
	// Judges 2 and 5 were in group 2: the first goes to group 0 (tie 2-2 -> lowest),
	// the next to group 1 (0 now has 3).
	if !reflect.DeepEqual(jg, []int{0, 1, 0, 0, 1, 1}) {
		t.Fatalf("judge groups %v", jg)
	}
	var told []ID
	for _, e := range evs {
		if e.Type == EvJudge {
			told = append(told, e.Judge)
		}
	}
	if !reflect.DeepEqual(told, []ID{judges[2], judges[5]}) || !hasEvent(evs, EvGroupInfo) || !hasEvent(evs, EvExpo) {
		t.Fatalf("events: judge events to %v; %+v", told, evs)
	}
	// Group sizes change reassigns projects from their tables.
	r.must(&SetOptions{GroupSizes: intsp(5, 1)})
	if pg, _ = groupsOf(); !reflect.DeepEqual(pg, []int{0, 0, 0, 0, 0, 1, 1}) {
		t.Fatalf("after group sizes: %v", pg)
	}
	// num_groups with explicit sizes and names.
	r.must(&SetOptions{NumGroups: intp(3), GroupSizes: intsp(1, 1, 1), GroupNames: strsp("x", "y", "z")})
	o = r.opts()
	if !reflect.DeepEqual(o.GroupSizes, []int{1, 1, 1}) || !reflect.DeepEqual(o.GroupNames, []string{"x", "y", "z"}) {
		t.Fatalf("explicit: %v %v", o.GroupSizes, o.GroupNames)
	}
	if pg, _ = groupsOf(); !reflect.DeepEqual(pg, []int{0, 1, 2, 2, 2, 2, 2}) {
		t.Fatalf("after explicit: %v", pg)
	}
}

func TestOptionsReplayIsDeterministic(t *testing.T) {
	r := newSettingsRig(t)
	var envs []*Envelope
	cmds := []Command{
		&SetOptions{MultiGroup: boolp(true), GroupSizes: intsp(1, 1, 1)},
		&CreateProjects{Projects: []NewProject{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}},
		&CreateJudges{Judges: []NewJudge{{Name: "x", Email: "x@e.co"}, {Name: "y", Email: "y@e.co"}, {Name: "z", Email: "z@e.co"}}, Codes: []string{"11111111", "22222222", "33333333"}},
		&SetOptions{NumGroups: intp(1)},
		&SetOptions{NumGroups: intp(4), Tracks: strsp("AI")},
		&SetDeliberation{Start: true},
		&Reset{Type: ResetJudgingData},
	}
	for _, c := range cmds {
		r.now += 1000
		env := &Envelope{Time: r.now, Seed: uint64(r.now), Actor: Admin, Cmd: c}
		if _, _, err := r.e.Apply(env); err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	fresh := New()
	for _, env := range envs {
		b, err := env.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var dec Envelope
		if err := dec.UnmarshalJSON(b); err != nil {
			t.Fatal(err)
		}
		if _, _, err := fresh.Apply(&dec); err != nil {
			t.Fatal(err)
		}
	}
	a, _, _ := r.e.Snapshot()
	b, _, _ := fresh.Snapshot()
	if string(a) != string(b) {
		t.Fatal("replayed state differs")
	}
}

// BenchmarkSetNumGroups measures a num_groups change that regroups 2,000 projects and
// moves judges out of removed groups (alternating 3 and 5 groups).
func BenchmarkSetNumGroups(b *testing.B) {
	e := New()
	ps := make([]NewProject, 2000)
	for i := range ps {
		ps[i] = NewProject{Name: "p"}
	}
	apply := func(cmd Command, t int64) {
		if _, _, err := e.Apply(&Envelope{Time: t, Seed: uint64(t), Actor: Admin, Cmd: cmd}); err != nil {
			b.Fatal(err)
		}
	}
	apply(&CreateProjects{Projects: ps}, 1)
	apply(&SetOptions{GroupSizes: intsp(500, 500, 500)}, 2)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 3 + 2*(i%2)
		apply(&SetOptions{NumGroups: &n}, int64(i+3))
	}
}

func TestEventNameOption(t *testing.T) {
	r := newSettingsRig(t)
	if got := r.opts().EventName; got != DefaultEventName {
		t.Fatalf("default event_name = %q, want %q", got, DefaultEventName)
	}
	_, evs := r.must(&SetOptions{EventName: strp("  Spring Hack 2026  ")})
	if got := r.opts().EventName; got != "Spring Hack 2026" {
		t.Fatalf("event_name = %q, want it trimmed", got)
	}
	if !hasEvent(evs, EvGroupInfo) {
		t.Error("no group_info event after an event_name change (expo headers follow it)")
	}
	var gi GroupInfo
	r.e.Read(func(s *State) { gi = s.GroupInfoView() })
	if gi.EventName != "Spring Hack 2026" {
		t.Errorf("group info event_name = %q", gi.EventName)
	}
	long := make([]rune, MaxEventNameLen+1)
	for i := range long {
		long[i] = 'é'
	}
	for _, bad := range []string{"", "   ", "Hack\r\nBcc: x@y.z", string(long)} {
		r.refuse(KindInvalid, &SetOptions{EventName: strp(bad), MinViews: intp(7)})
	}
	if o := r.opts(); o.EventName != "Spring Hack 2026" || o.MinViews != DefaultMinViews {
		t.Errorf("a refused change changed the options: %q %d", o.EventName, o.MinViews)
	}
	// A snapshot from before the option comes back with the default.
	s := NewState()
	s.Options.EventName = ""
	s.reindex()
	if s.Options.EventName != DefaultEventName {
		t.Errorf("event_name after restoring an old snapshot = %q", s.Options.EventName)
	}
}
