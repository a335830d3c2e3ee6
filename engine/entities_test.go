package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// fixture is an engine with a journal of the envelopes applied to it, for replay.
type fixture struct {
	t       *testing.T
	e       *Engine
	n       int64
	journal [][]byte
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t, e: New()}
}

func (f *fixture) s() *State { return f.e.s }

// apply runs cmd as the admin and records it (journal form) when it succeeds.
func (f *fixture) apply(cmd Command) ([]Event, error) {
	f.t.Helper()
	_, evs, err := f.applyRes(cmd)
	return evs, err
}

func (f *fixture) applyRes(cmd Command) (any, []Event, error) {
	f.t.Helper()
	f.n++
	env := &Envelope{Time: 1_700_000_000_000 + f.n*1000, Seed: uint64(f.n) * 7919, Actor: Admin, Cmd: cmd}
	b, err := json.Marshal(env)
	if err != nil {
		f.t.Fatal(err)
	}
	res, evs, err := f.e.Apply(env)
	if err == nil {
		f.journal = append(f.journal, b)
	}
	return res, evs, err
}

func (f *fixture) must(cmd Command) []Event {
	f.t.Helper()
	evs, err := f.apply(cmd)
	if err != nil {
		f.t.Fatalf("%s: %v", cmd.Kind(), err)
	}
	return evs
}

// fail applies cmd, wants an error of kind, and checks that the state did not change.
func (f *fixture) fail(cmd Command, kind ErrorKind) {
	f.t.Helper()
	before, _, _ := f.e.Snapshot()
	_, err := f.apply(cmd)
	ee, ok := err.(*Error)
	if !ok || ee.Kind != kind {
		f.t.Fatalf("%s: error %v, want kind %d", cmd.Kind(), err, kind)
	}
	after, _, _ := f.e.Snapshot()
	if !bytes.Equal(before, after) {
		f.t.Fatalf("%s: refused command changed the state", cmd.Kind())
	}
}

func (f *fixture) judges(names ...string) []ID {
	f.t.Helper()
	nj := make([]NewJudge, len(names))
	codes := make([]string, len(names))
	for i, n := range names {
		nj[i] = NewJudge{Name: n, Email: n + "@example.com"}
		codes[i] = fmt.Sprintf("%08d", 10000000+int(f.n)*100+i)
	}
	before := len(f.s().JudgeOrder)
	f.must(&CreateJudges{Judges: nj, Codes: codes})
	return append([]ID{}, f.s().JudgeOrder[before:]...)
}

func (f *fixture) projects(names ...string) []ID {
	f.t.Helper()
	np := make([]NewProject, len(names))
	for i, n := range names {
		np[i] = NewProject{Name: n, ChallengeList: []string{"AI"}}
	}
	res, _, err := f.applyRes(&CreateProjects{Projects: np})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.(CreatedProjects).IDs
}

// see records that judge j finished project p (what the judging flow does), directly.
func (f *fixture) see(j, p ID, starred bool) {
	s := f.s()
	jd, pr := s.Judges[j], s.Projects[p]
	jd.SeenProjects = append(jd.SeenProjects, SeenProject{ProjectID: p, Starred: starred, Name: pr.Name, Location: pr.Location, Description: pr.Description})
	jd.Seen++
	if s.IsGeneral(jd) {
		pr.Seen++
	} else {
		pr.TrackSeen[jd.Track]++
	}
}

func eventsOf(evs []Event, typ string) []Event {
	var out []Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestDeleteJudgeTakesItsViewsBack(t *testing.T) {
	f := newFixture(t)
	s := f.s()
	s.Options.JudgeTracks = true
	s.Options.Tracks = []string{"AI"}
	js := f.judges("ann", "bob", "tia")
	a, b, tr := js[0], js[1], js[2]
	s.Judges[tr].Track = "AI"
	ps := f.projects("p1", "p2", "p3")
	f.see(a, ps[0], true)
	f.see(a, ps[1], false)
	f.see(b, ps[0], false)
	f.see(tr, ps[0], false)
	s.Judges[a].Current = ps[2]
	s.Judges[a].Rankings = []ID{ps[1], ps[0]}
	s.Flags = append(s.Flags,
		Flag{ID: ID{1}, ProjectID: ps[2], JudgeID: a, Reason: "busy"},
		Flag{ID: ID{2}, ProjectID: ps[2], JudgeID: b, Reason: "absent"})
	f.must(&JudgeLogin{Judge: a, TokenHash: fmt.Sprintf("%064d", 1)})
	code := s.Judges[a].Code

	evs := f.must(&DeleteJudge{Judge: a})
	if _, ok := s.Judges[a]; ok {
		t.Fatal("judge still there")
	}
	if !reflect.DeepEqual(s.JudgeOrder, []ID{b, tr}) {
		t.Fatalf("judge order %v", s.JudgeOrder)
	}
	if got := []int{s.Projects[ps[0]].Seen, s.Projects[ps[1]].Seen, s.Projects[ps[0]].TrackSeen["AI"]}; !reflect.DeepEqual(got, []int{1, 0, 1}) {
		t.Fatalf("seen counts %v, want [1 0 1]", got)
	}
	if len(s.Flags) != 1 || s.Flags[0].JudgeID != b {
		t.Fatalf("flags %+v", s.Flags)
	}
	if _, ok := s.JudgeByToken(fmt.Sprintf("%064d", 1)); ok {
		t.Fatal("token still valid")
	}
	if _, ok := s.JudgeByCode(code); ok {
		t.Fatal("code still valid")
	}
	je := eventsOf(evs, EvJudge)
	if len(je) != 1 || je[0].Judge != a || je[0].Data.(JudgeEvent).Current != nil {
		t.Fatalf("judge events %+v", je)
	}
	// A track judge's views come out of track_seen.
	f.must(&DeleteJudge{Judge: tr})
	if _, ok := s.Projects[ps[0]].TrackSeen["AI"]; ok {
		t.Fatalf("track_seen %v", s.Projects[ps[0]].TrackSeen)
	}
	f.fail(&DeleteJudge{Judge: a}, KindNotFound)
}

func TestDeleteProjectLeavesNoTrace(t *testing.T) {
	f := newFixture(t)
	s := f.s()
	js := f.judges("ann", "bob")
	ps := f.projects("p1", "p2", "p3")
	f.see(js[0], ps[0], false)
	f.see(js[0], ps[1], true)
	s.Judges[js[0]].Rankings = []ID{ps[1], ps[0]}
	s.Judges[js[0]].Skipped[ps[1]] = true
	s.Judges[js[1]].Current = ps[1]
	s.Flags = append(s.Flags, Flag{ID: ID{1}, ProjectID: ps[1], JudgeID: js[1], Reason: "absent"})
	loc := s.Projects[ps[1]].Location

	evs := f.must(&DeleteProject{Project: ps[1]})
	j0 := s.Judges[js[0]]
	if len(j0.SeenProjects) != 1 || j0.SeenProjects[0].ProjectID != ps[0] || j0.Seen != 1 {
		t.Fatalf("seen %+v (%d)", j0.SeenProjects, j0.Seen)
	}
	if !reflect.DeepEqual(j0.Rankings, []ID{ps[0]}) || len(j0.Skipped) != 0 {
		t.Fatalf("rankings %v skipped %v", j0.Rankings, j0.Skipped)
	}
	if !s.Judges[js[1]].Current.IsZero() {
		t.Fatal("judge still on deleted project")
	}
	if len(s.Flags) != 0 {
		t.Fatalf("flags %+v", s.Flags)
	}
	if _, ok := s.projectAt(loc); ok {
		t.Fatal("table still taken")
	}
	je := eventsOf(evs, EvJudge)
	if len(je) != 1 || je[0].Judge != js[1] || je[0].Data.(JudgeEvent).Reason != "project deleted" {
		t.Fatalf("judge events %+v", je)
	}
	ex := eventsOf(evs, EvExpo)
	if len(ex) != 1 || ex[0].Data.(ExpoEvent).Action != "remove" || ex[0].Data.(ExpoEvent).Project.ID != ps[1] {
		t.Fatalf("expo events %+v", ex)
	}
	// The freed table can be used again.
	f.must(&MoveProject{Project: ps[2], Location: loc})
}

func TestHideProjectReleasesJudges(t *testing.T) {
	f := newFixture(t)
	s := f.s()
	js := f.judges("ann", "bob", "cy")
	ps := f.projects("p1", "p2")
	s.Judges[js[0]].Current = ps[0]
	s.Judges[js[1]].Current = ps[1]
	s.Judges[js[2]].Current = ps[0]
	evs := f.must(&HideProjects{Projects: []ID{ps[0], ps[0]}, Hide: true})
	if s.Projects[ps[0]].Active || !s.Judges[js[0]].Current.IsZero() || !s.Judges[js[2]].Current.IsZero() || s.Judges[js[1]].Current != ps[1] {
		t.Fatal("wrong release")
	}
	je := eventsOf(evs, EvJudge)
	if len(je) != 2 || je[0].Judge != js[0] || je[1].Judge != js[2] {
		t.Fatalf("judge events %+v", je)
	}
	for _, e := range je {
		d := e.Data.(JudgeEvent)
		if d.Current != nil || d.Reason != "project hidden" {
			t.Fatalf("event %+v", d)
		}
	}
	if ex := eventsOf(evs, EvExpo); len(ex) != 1 || ex[0].Data.(ExpoEvent).Action != "remove" {
		t.Fatalf("expo %+v", ex)
	}
	// Hiding again changes nothing and emits no expo event; unhiding upserts.
	if ex := eventsOf(f.must(&HideProjects{Projects: []ID{ps[0]}, Hide: true}), EvExpo); len(ex) != 0 {
		t.Fatalf("expo %+v", ex)
	}
	if ex := eventsOf(f.must(&HideProjects{Projects: []ID{ps[0]}, Hide: false}), EvExpo); len(ex) != 1 || ex[0].Data.(ExpoEvent).Action != "upsert" {
		t.Fatalf("expo %+v", ex)
	}
	f.fail(&HideProjects{Projects: []ID{ps[1], {9}}, Hide: true}, KindNotFound)
}

func TestHideJudgeReleasesItsProject(t *testing.T) {
	f := newFixture(t)
	s := f.s()
	js := f.judges("ann", "bob")
	ps := f.projects("p1")
	s.Judges[js[0]].Current = ps[0]
	evs := f.must(&HideJudges{Judges: js, Hide: true})
	if s.Judges[js[0]].Active || s.Judges[js[1]].Active || !s.Judges[js[0]].Current.IsZero() {
		t.Fatal("not hidden / not released")
	}
	if je := eventsOf(evs, EvJudge); len(je) != 2 {
		t.Fatalf("judge events %+v", je)
	}
	f.fail(&HideJudges{Judges: []ID{js[0], {7}}, Hide: false}, KindNotFound)
}

func TestMoveProjectsToGroup(t *testing.T) {
	f := newFixture(t)
	s := f.s()
	s.Options.MultiGroup = true
	s.Options.GroupSizes = []int{2, 2, 2}
	ps := f.projects("p1", "p2", "p3", "p4", "p5")
	j := f.judges("ann")[0]
	f.see(j, ps[0], false)
	loc := func(id ID) int { return s.Projects[id].Location }
	// Group 1 (tables 3-4) is full.
	f.fail(&MoveProjectsGroup{Projects: []ID{ps[0]}, Group: 1}, KindConflict)
	f.fail(&MoveProjectsGroup{Projects: []ID{ps[0]}, Group: 3}, KindInvalid)
	f.fail(&MoveProjectsGroup{Projects: []ID{ps[0]}, Group: -1}, KindInvalid)
	f.fail(&MoveProjectsGroup{Projects: []ID{ps[0], {5}}, Group: 2}, KindNotFound)
	// Group 2 is the last: tables 5.. are open-ended; p5 at 5 stays, p1 and p2 go to 6, 7.
	f.must(&MoveProjectsGroup{Projects: []ID{ps[1], ps[4], ps[0]}, Group: 2})
	if got := []int{loc(ps[0]), loc(ps[1]), loc(ps[4])}; !reflect.DeepEqual(got, []int{6, 7, 5}) {
		t.Fatalf("tables %v", got)
	}
	if s.Projects[ps[0]].Group != 2 || s.Judges[j].SeenProjects[0].Location != 6 {
		t.Fatal("group or seen copy did not follow")
	}
	// Now group 0 has two free tables.
	f.must(&MoveProjectsGroup{Projects: []ID{ps[3]}, Group: 0})
	if loc(ps[3]) != 1 || s.Projects[ps[3]].Group != 0 {
		t.Fatalf("p4 at %d", loc(ps[3]))
	}
	checkLocIndex(t, s)
}

func checkLocIndex(t *testing.T, s *State) {
	t.Helper()
	if len(s.locIndex) != len(s.Projects) {
		t.Fatalf("locIndex has %d entries for %d projects", len(s.locIndex), len(s.Projects))
	}
	for _, p := range s.Projects {
		if s.locIndex[p.Location] != p.ID {
			t.Fatalf("locIndex[%d] wrong", p.Location)
		}
		if p.Group != s.Options.GroupOfTable(p.Location) {
			t.Fatalf("project at %d in group %d, want %d", p.Location, p.Group, s.Options.GroupOfTable(p.Location))
		}
	}
}

func TestMoveProjectAndReassign(t *testing.T) {
	f := newFixture(t)
	s := f.s()
	s.Options.MultiGroup = true
	s.Options.GroupSizes = []int{2, 2, 2}
	ps := f.projects("p1", "p2", "p3")
	j := f.judges("ann")[0]
	f.see(j, ps[2], false)
	f.fail(&MoveProject{Project: ps[0], Location: 2}, KindConflict)
	f.fail(&MoveProject{Project: ps[0], Location: 0}, KindInvalid)
	f.fail(&MoveProject{Project: ID{3}, Location: 9}, KindNotFound)
	f.must(&MoveProject{Project: ps[2], Location: 10})
	f.must(&MoveProject{Project: ps[0], Location: 4})
	if s.Projects[ps[0]].Group != 1 || s.Projects[ps[2]].Group != 2 || s.Judges[j].SeenProjects[0].Location != 10 {
		t.Fatal("group or copy did not follow the table")
	}
	f.must(&MoveProject{Project: ps[0], Location: 4}) // its own table: fine
	checkLocIndex(t, s)
	// Order by table is p2(2), p1(4), p3(10) -> 1, 2, 3.
	f.must(&ReassignProjects{})
	got := []int{s.Projects[ps[0]].Location, s.Projects[ps[1]].Location, s.Projects[ps[2]].Location}
	if !reflect.DeepEqual(got, []int{2, 1, 3}) || s.Judges[j].SeenProjects[0].Location != 3 {
		t.Fatalf("tables %v", got)
	}
	checkLocIndex(t, s)
}

func TestBalanceGroups(t *testing.T) {
	f := newFixture(t)
	s := f.s()
	s.Options.MultiGroup = true
	f.fail(&BalanceGroups{}, KindConflict) // no projects
	ps := f.projects("p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9")
	f.must(&HideProjects{Projects: []ID{ps[2]}, Hide: true})
	f.must(&MoveProject{Project: ps[8], Location: 20})
	ref := s.Options.Ref
	// Active tables: 1 2 4 5 6 7 8 20 -> chunks of 3, 3, 2: [1 2 4] [5 6 7] [8 20].
	f.must(&BalanceGroups{})
	if !reflect.DeepEqual(s.Options.GroupSizes, []int{4, 3, 13}) {
		t.Fatalf("group sizes %v", s.Options.GroupSizes)
	}
	if s.Options.Ref != ref+1 {
		t.Fatal("options ref not bumped")
	}
	counts := make([]int, 3)
	for _, p := range s.Projects {
		if p.Active {
			counts[p.Group]++
		}
	}
	if !reflect.DeepEqual(counts, []int{3, 3, 2}) {
		t.Fatalf("active per group %v", counts)
	}
	if s.Projects[ps[2]].Group != 0 {
		t.Fatal("hidden project at table 3 should be in group 0")
	}
	checkLocIndex(t, s)
	// Fewer active projects than groups: trailing groups are empty but keep one table.
	f.must(&HideProjects{Projects: ps[1:], Hide: true})
	f.must(&BalanceGroups{})
	if !reflect.DeepEqual(s.Options.GroupSizes, []int{1, 1, 1}) {
		t.Fatalf("group sizes %v", s.Options.GroupSizes)
	}
	checkLocIndex(t, s)
}

func TestGroupSwapAndReassign(t *testing.T) {
	f := newFixture(t)
	s := f.s()
	s.Options.JudgeTracks = true
	s.Options.Tracks = []string{"AI"}
	js := f.judges("a", "b", "c", "d", "e")
	if got := []int{s.Judges[js[0]].Group, s.Judges[js[1]].Group, s.Judges[js[2]].Group, s.Judges[js[3]].Group}; !reflect.DeepEqual(got, []int{0, 1, 2, 0}) {
		t.Fatalf("initial groups %v", got)
	}
	s.Judges[js[4]].Track = "AI"
	s.Judges[js[4]].Group = 0
	s.Judges[js[0]].GroupSeen = 4
	f.must(&HideJudges{Judges: []ID{js[3]}, Hide: true})
	evs := f.must(&SwapGroups{})
	groups := func() []int {
		var g []int
		for _, id := range js {
			g = append(g, s.Judges[id].Group)
		}
		return g
	}
	if got := groups(); !reflect.DeepEqual(got, []int{1, 2, 0, 0, 0}) {
		t.Fatalf("after swap %v", got)
	}
	if s.Judges[js[0]].GroupSeen != 0 || s.Options.ManualSwitches != 1 {
		t.Fatal("group_seen or manual_switches")
	}
	if je := eventsOf(evs, EvJudge); len(je) != 3 || je[0].Data.(JudgeEvent).Group != 1 {
		t.Fatalf("judge events %+v", je)
	}
	// Reassign: active general a b c -> 0 1 2, then hidden d -> 0; track judge e untouched.
	f.must(&MoveJudgesGroup{Judges: []ID{js[0], js[1]}, Group: 2})
	f.must(&ReassignJudges{})
	if got := groups(); !reflect.DeepEqual(got, []int{0, 1, 2, 0, 0}) {
		t.Fatalf("after reassign %v", got)
	}
	f.fail(&MoveJudgesGroup{Judges: []ID{js[0]}, Group: 3}, KindInvalid)
	f.fail(&MoveJudgesGroup{Judges: []ID{js[0], {1}}, Group: 1}, KindNotFound)
}

func TestUpdateJudgeAndProject(t *testing.T) {
	f := newFixture(t)
	s := f.s()
	s.Options.Tracks = []string{"AI"}
	s.Options.IgnoreTracks = []string{"Skip"}
	js := f.judges("ann", "bob")
	ps := f.projects("p1")
	f.see(js[0], ps[0], false)
	name := "Ann B"
	f.must(&UpdateJudge{Judge: js[0], Name: &name})
	if j := s.Judges[js[0]]; j.Name != name || j.Email != "ann@example.com" {
		t.Fatalf("judge %+v", j)
	}
	dup, bad, long, track, noTrack := "BOB@example.com", "nope", string(make([]byte, 201)), "AI", "ML"
	f.fail(&UpdateJudge{Judge: js[0], Email: &dup}, KindConflict)
	f.fail(&UpdateJudge{Judge: js[0], Email: &bad}, KindInvalid)
	f.fail(&UpdateJudge{Judge: js[0], Name: &long}, KindInvalid)
	f.fail(&UpdateJudge{Judge: js[0], Track: &noTrack}, KindInvalid)
	f.fail(&UpdateJudge{Judge: ID{4}, Name: &name}, KindNotFound)
	same := "ANN@example.com" // its own address, other case
	f.must(&UpdateJudge{Judge: js[0], Email: &same, Track: &track})
	if s.Judges[js[0]].Track != "AI" {
		t.Fatal("track not set")
	}

	pn, url, badURL := "Rocket", "https://x.example", "javascript:alert(1)"
	ch := []string{"Web"}
	evs := f.must(&UpdateProject{Project: ps[0], Name: &pn, URL: &url, ChallengeList: &ch})
	p := s.Projects[ps[0]]
	if p.Name != pn || p.URL != url || !reflect.DeepEqual(p.ChallengeList, ch) || p.Description != "" {
		t.Fatalf("project %+v", p)
	}
	if s.Judges[js[0]].SeenProjects[0].Name != pn {
		t.Fatal("seen copy name did not follow")
	}
	if ex := eventsOf(evs, EvExpo); len(ex) != 1 || ex[0].Data.(ExpoEvent).Project.Name != pn {
		t.Fatalf("expo %+v", ex)
	}
	ign := []string{"Skip"}
	empty := " "
	f.fail(&UpdateProject{Project: ps[0], URL: &badURL}, KindInvalid)
	f.fail(&UpdateProject{Project: ps[0], ChallengeList: &ign}, KindInvalid)
	f.fail(&UpdateProject{Project: ps[0], Name: &empty}, KindInvalid)
	f.fail(&UpdateProject{Project: ID{8}, Name: &pn}, KindNotFound)
}

func TestPrioritize(t *testing.T) {
	f := newFixture(t)
	ps := f.projects("p1", "p2")
	f.must(&PrioritizeProjects{Projects: ps, Prioritize: true})
	if !f.s().Projects[ps[0]].Prioritized || !f.s().Projects[ps[1]].Prioritized {
		t.Fatal("not prioritized")
	}
	f.fail(&PrioritizeProjects{Projects: []ID{ps[0], {1}}, Prioritize: false}, KindNotFound)
	f.must(&PrioritizeProjects{Projects: ps[:1], Prioritize: false})
	if f.s().Projects[ps[0]].Prioritized || !f.s().Projects[ps[1]].Prioritized {
		t.Fatal("wrong flags")
	}
}

// TestEntityCommandsReplay replays the journal of a mixed run into a fresh engine and
// compares snapshots: the commands are deterministic and survive their JSON encoding.
func TestEntityCommandsReplay(t *testing.T) {
	f := newFixture(t)
	f.s().Options.MultiGroup = true
	js := f.judges("a", "b", "c", "d")
	ps := f.projects("p1", "p2", "p3", "p4", "p5", "p6")
	name, email, notes := "Zed", "zed@example.com", "n"
	ch := []string{"AI", "Web"}
	cmds := []Command{
		&UpdateJudge{Judge: js[0], Name: &name, Email: &email, Notes: &notes},
		&HideJudges{Judges: js[1:2], Hide: true},
		&SwapGroups{},
		&MoveJudgesGroup{Judges: js[2:], Group: 1},
		&ReassignJudges{},
		&UpdateProject{Project: ps[0], Name: &name, ChallengeList: &ch},
		&MoveProject{Project: ps[1], Location: 40},
		&MoveProjectsGroup{Projects: ps[2:4], Group: 2},
		&HideProjects{Projects: ps[4:5], Hide: true},
		&PrioritizeProjects{Projects: ps[:2], Prioritize: true},
		&BalanceGroups{},
		&ReassignProjects{},
		&DeleteProject{Project: ps[5]},
		&DeleteJudge{Judge: js[3]},
	}
	for _, c := range cmds {
		f.must(c)
	}
	want, _, _ := f.e.Snapshot()
	replay := New()
	replay.s.Options.MultiGroup = true // set directly above, not by a command
	for i, b := range f.journal {
		var env Envelope
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if _, _, err := replay.Apply(&env); err != nil {
			t.Fatalf("record %d (%s): %v", i, env.Cmd.Kind(), err)
		}
	}
	got, _, _ := replay.Snapshot()
	if !bytes.Equal(got, want) {
		t.Fatal("replayed state differs")
	}
	checkLocIndex(t, replay.s)
}

// projectAt returns the project at table loc.
func (s *State) projectAt(loc int) (*Project, bool) {
	id, ok := s.locIndex[loc]
	if !ok {
		return nil, false
	}
	p, ok := s.Projects[id]
	return p, ok
}
