package engine

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// rig drives a real Engine with envelopes, as the persist node does, and keeps the
// envelopes it applied so that tests can replay them.
type rig struct {
	t    testing.TB
	e    *Engine
	now  int64
	seed uint64
	envs []*Envelope
	evs  []Event
}

func newRig(t testing.TB) *rig { return &rig{t: t, e: New(), now: 1_700_000_000_000, seed: 1} }

// apply runs cmd as actor; it returns the result, or the error (nothing recorded).
func (r *rig) apply(actor Actor, cmd Command) (any, error) {
	r.now += 1000
	r.seed++
	env := &Envelope{Time: r.now, Seed: r.seed * 0x9e3779b97f4a7c15, Actor: actor, Cmd: cmd}
	// Round-trip through JSON like the journal, so that what is tested is what replays.
	b, err := json.Marshal(env)
	if err != nil {
		r.t.Fatal(err)
	}
	var dec Envelope
	if err := json.Unmarshal(b, &dec); err != nil {
		r.t.Fatal(err)
	}
	res, evs, err := r.e.Apply(&dec)
	if err == nil {
		r.envs = append(r.envs, &dec)
		r.evs = append(r.evs, evs...)
	}
	return res, err
}

func (r *rig) must(actor Actor, cmd Command) any {
	r.t.Helper()
	res, err := r.apply(actor, cmd)
	if err != nil {
		r.t.Fatalf("%s: %v", cmd.Kind(), err)
	}
	return res
}

// fails applies cmd and checks it is refused with the given kind.
func (r *rig) fails(kind ErrorKind, actor Actor, cmd Command) {
	r.t.Helper()
	before, _, _ := r.e.Snapshot()
	_, err := r.apply(actor, cmd)
	var ee *Error
	if !errors.As(err, &ee) || ee.Kind != kind {
		r.t.Fatalf("%s: err %v, want kind %d", cmd.Kind(), err, kind)
	}
	after, _, _ := r.e.Snapshot()
	if string(before) != string(after) {
		r.t.Fatalf("%s: refused command changed the state", cmd.Kind())
	}
}

func (r *rig) judges(n int, track string) []ID {
	r.t.Helper()
	nj := make([]NewJudge, n)
	codes := make([]string, 0, n)
	for i := range nj {
		k := len(r.e.s.Judges) + i
		nj[i] = NewJudge{Name: "Judge " + itoa(k), Email: "j" + itoa(k) + "@example.com", Track: track}
		codes = append(codes, itoa(20000000+k))
	}
	res := r.must(Admin, &CreateJudges{Judges: nj, Codes: codes}).([]CreatedJudge)
	ids := make([]ID, len(res))
	for i, c := range res {
		ids[i] = c.ID
	}
	return ids
}

func (r *rig) projects(n int, challenges ...string) []ID {
	r.t.Helper()
	np := make([]NewProject, n)
	for i := range np {
		np[i] = NewProject{Name: "Project " + itoa(len(r.e.s.Projects)+i), Description: "d", ChallengeList: challenges}
	}
	return r.must(Admin, &CreateProjects{Projects: np}).(CreatedProjects).IDs
}

func (r *rig) next(j ID) NextResult {
	r.t.Helper()
	return r.must(JudgeActor(j), &JudgeNext{Judge: j}).(NextResult)
}

// visits has judge j take n visits: next, then finish.
func (r *rig) visits(j ID, n int) {
	r.t.Helper()
	for range n {
		r.next(j)
		r.must(JudgeActor(j), &JudgeFinish{Judge: j})
	}
}

func (r *rig) judge(id ID) *Judge     { return r.e.s.Judges[id] }
func (r *rig) project(id ID) *Project { return r.e.s.Projects[id] }

func (r *rig) eventsOf(typ string) []Event {
	var out []Event
	for _, ev := range r.evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func TestJudgeFlowFinishRankStarNotes(t *testing.T) {
	r := newRig(t)
	ps := r.projects(3)
	j := r.judges(1, "")[0]
	if res := r.next(j); res.Reason != ReasonPaused {
		t.Fatalf("next with paused clock = %+v", res)
	}
	r.fails(KindConflict, JudgeActor(j), &JudgeFinish{Judge: j})
	r.fails(KindConflict, JudgeActor(j), &JudgeSkip{Judge: j, Reason: SkipBusy})
	r.must(Admin, &ClockUnpause{})
	first := r.next(j)
	if first.ProjectID.IsZero() {
		t.Fatalf("no project: %+v", first)
	}
	if again := r.next(j); again.ProjectID != first.ProjectID {
		t.Fatalf("next with a current project gave %v, want %v", again, first)
	}
	r.fails(KindInvalid, JudgeActor(j), &JudgeSkip{Judge: j, Reason: "bored"})
	r.must(JudgeActor(j), &JudgeFinish{Judge: j, Notes: "great", Starred: true})
	jj, p := r.judge(j), r.project(first.ProjectID)
	if !jj.Current.IsZero() || jj.Seen != 1 || p.Seen != 1 || len(jj.SeenProjects) != 1 {
		t.Fatalf("finish not recorded: judge %+v project seen %d", jj, p.Seen)
	}
	if sp := jj.SeenProjects[0]; sp.ProjectID != p.ID || sp.Notes != "great" || !sp.Starred || sp.Location != p.Location || sp.Name != p.Name {
		t.Fatalf("seen project %+v", sp)
	}
	second := r.next(j).ProjectID
	r.must(JudgeActor(j), &JudgeFinish{Judge: j})
	// Rank: only judged projects, no duplicates.
	r.fails(KindInvalid, JudgeActor(j), &JudgeRank{Judge: j, Ranking: []ID{ps[0], ps[1], ps[2]}})
	r.fails(KindInvalid, JudgeActor(j), &JudgeRank{Judge: j, Ranking: []ID{second, second}})
	r.must(JudgeActor(j), &JudgeRank{Judge: j, Ranking: []ID{second, first.ProjectID}})
	if got := r.judge(j).Rankings; len(got) != 2 || got[0] != second {
		t.Fatalf("rankings %v", got)
	}
	// Star and notes: 404 for a project not judged.
	var unjudged ID
	for _, id := range ps {
		if id != first.ProjectID && id != second {
			unjudged = id
		}
	}
	r.fails(KindNotFound, JudgeActor(j), &JudgeStar{Judge: j, Project: unjudged, Starred: true})
	r.fails(KindNotFound, JudgeActor(j), &JudgeNotes{Judge: j, Project: unjudged, Notes: "x"})
	r.must(JudgeActor(j), &JudgeStar{Judge: j, Project: second, Starred: true})
	r.must(JudgeActor(j), &JudgeNotes{Judge: j, Project: second, Notes: "edited"})
	if sp := r.judge(j).SeenProjects[1]; !sp.Starred || sp.Notes != "edited" {
		t.Fatalf("star/notes not saved: %+v", sp)
	}
	// Deliberation blocks finish, rank and star, not notes; next says so.
	r.e.s.Options.Deliberation = true
	r.fails(KindConflict, JudgeActor(j), &JudgeRank{Judge: j, Ranking: []ID{second}})
	r.fails(KindConflict, JudgeActor(j), &JudgeStar{Judge: j, Project: second, Starred: false})
	r.must(JudgeActor(j), &JudgeNotes{Judge: j, Project: second, Notes: "during deliberation"})
	if res := r.next(j); res.Reason != ReasonDeliberation {
		t.Fatalf("next in deliberation = %+v", res)
	}
	r.e.s.Options.Deliberation = false
	// Welcome.
	r.must(JudgeActor(j), &JudgeWelcome{Judge: j})
	if !r.judge(j).ReadWelcome {
		t.Fatal("read_welcome not set")
	}
	// All three judged: done.
	r.next(j)
	r.must(JudgeActor(j), &JudgeFinish{Judge: j})
	if res := r.next(j); res.Reason != ReasonDone {
		t.Fatalf("next after everything = %+v", res)
	}
	if got := len(r.e.s.JudgedProjects(j)); got != 3 {
		t.Fatalf("judged projects %d", got)
	}
}

func TestJudgeFinishTooLongNotes(t *testing.T) {
	r := newRig(t)
	r.projects(1)
	j := r.judges(1, "")[0]
	r.must(Admin, &ClockUnpause{})
	r.next(j)
	long := make([]byte, MaxNotesLen+1)
	for i := range long {
		long[i] = 'a'
	}
	r.fails(KindInvalid, JudgeActor(j), &JudgeFinish{Judge: j, Notes: string(long)})
	// The limit counts characters, not bytes: one more two-byte character is too long,
	// the limit's worth of them is not.
	r.fails(KindInvalid, JudgeActor(j), &JudgeFinish{Judge: j, Notes: strings.Repeat("é", MaxNotesLen+1)})
	r.must(JudgeActor(j), &JudgeFinish{Judge: j, Notes: strings.Repeat("é", MaxNotesLen)})
}

func TestSkipFlagsAndNextAssignment(t *testing.T) {
	r := newRig(t)
	r.projects(3)
	j := r.judges(1, "")[0]
	r.must(Admin, &ClockUnpause{})
	p1 := r.next(j).ProjectID
	r.must(JudgeActor(j), &JudgeSkip{Judge: j, Reason: SkipBusy})
	jj := r.judge(j)
	if jj.Current.IsZero() || jj.Current == p1 {
		t.Fatalf("skip did not hand out another project: current %v", jj.Current)
	}
	if busy, ok := jj.Skipped[p1]; !ok || !busy {
		t.Fatalf("busy skip not recorded: %v", jj.Skipped)
	}
	if len(r.e.s.Flags) != 1 || r.e.s.Flags[0].Reason != SkipBusy || r.e.s.Flags[0].JudgeID != j || r.e.s.Flags[0].ProjectID != p1 {
		t.Fatalf("flags %+v", r.e.s.Flags)
	}
	if len(r.eventsOf(EvFlag)) != 1 {
		t.Fatal("no flag event")
	}
	p2 := jj.Current
	r.must(JudgeActor(j), &JudgeSkip{Judge: j, Reason: SkipCannotDemo})
	p3 := r.judge(j).Current
	if p3 == p1 || p3 == p2 || p3.IsZero() {
		t.Fatalf("third project %v", p3)
	}
	// Finishing clears the busy skip (p1 comes back) but not the cannot-demo one (p2).
	r.must(JudgeActor(j), &JudgeFinish{Judge: j})
	if _, ok := r.judge(j).Skipped[p1]; ok {
		t.Fatal("busy skip not cleared on finish")
	}
	if got := r.next(j).ProjectID; got != p1 {
		t.Fatalf("after finish got %v, want the busy-skipped %v", got, p1)
	}
	r.must(JudgeActor(j), &JudgeFinish{Judge: j})
	if res := r.next(j); res.Reason != ReasonDone {
		t.Fatalf("cannot-demo project came back: %+v", res)
	}
}

func TestSkipWhilePausedAssignsNothing(t *testing.T) {
	r := newRig(t)
	r.projects(2)
	j := r.judges(1, "")[0]
	r.must(Admin, &ClockUnpause{})
	r.next(j)
	r.must(Admin, &ClockPause{})
	r.must(JudgeActor(j), &JudgeSkip{Judge: j, Reason: SkipTooComplex})
	if !r.judge(j).Current.IsZero() {
		t.Fatal("skip assigned a project while paused")
	}
	if len(r.e.s.Flags) != 1 {
		t.Fatal("flag not written while paused")
	}
}

func TestThreeAbsentFlagsHideProject(t *testing.T) {
	r := newRig(t)
	ps := r.projects(2)
	js := r.judges(4, "")
	r.must(Admin, &ClockUnpause{})
	target := ps[0]
	// Give every judge the target: the first gets it free, the others because the only
	// other project is also taken or because they skipped it.
	for _, j := range js {
		r.e.s.Judges[j].LastLocation = 1
	}
	r.e.s.Applied++ // hand edit above: make the index rebuild
	absent := 0
	for _, j := range js[:3] {
		// Point the judge at the target directly through the flow: skip anything else.
		for r.next(j).ProjectID != target {
			r.must(JudgeActor(j), &JudgeSkip{Judge: j, Reason: SkipBusy})
			if r.judge(j).Current.IsZero() {
				t.Fatal("judge ran out of projects")
			}
		}
		r.must(JudgeActor(j), &JudgeSkip{Judge: j, Reason: SkipAbsent})
		absent++
		if absent < 3 && !r.project(target).Active {
			t.Fatalf("hidden after %d absent flags", absent)
		}
	}
	// Judge 4 holds the target? Make sure someone does when it is hidden: check flags.
	p := r.project(target)
	if p.Active {
		t.Fatal("project not hidden after three absent flags")
	}
	nAbsent, hidden := 0, 0
	for _, f := range r.e.s.Flags {
		if f.ProjectID == target && f.Reason == SkipAbsent {
			nAbsent++
		}
		if f.Reason == FlagHiddenAbsent {
			hidden++
			if !f.JudgeID.IsZero() || f.JudgeName != "system" || f.ProjectID != target {
				t.Fatalf("hidden-absent flag %+v", f)
			}
		}
	}
	if nAbsent != 0 || hidden != 1 {
		t.Fatalf("absent flags %d, hidden-absent flags %d", nAbsent, hidden)
	}
	removed := false
	for _, ev := range r.eventsOf(EvExpo) {
		if e := ev.Data.(ExpoEvent); e.Action == "remove" && e.Project.ID == target {
			removed = true
		}
	}
	if !removed {
		t.Fatal("no expo remove event")
	}
	// A hidden project is never assigned again.
	for _, j := range js {
		jj := r.judge(j)
		if jj.Current == target {
			t.Fatalf("judge %s still on the hidden project", jj.Name)
		}
	}
}

func TestHidingReleasesOtherJudgesAndTellsThem(t *testing.T) {
	// Build by hand: judge 4 is looking at the project when the third absent flag hides it.
	s, ps := tiny(t, 1, 2)
	e := &Engine{s: s}
	js := []*Judge{addTestJudge(s, 1, ""), addTestJudge(s, 2, ""), addTestJudge(s, 3, ""), addTestJudge(s, 4, "")}
	for _, j := range js[:2] {
		s.Flags = append(s.Flags, Flag{ID: testID(500 + int(j.ID[11])), ProjectID: ps[0].ID, JudgeID: j.ID, Reason: SkipAbsent})
		j.Skipped[ps[0].ID] = false
	}
	hold(js[2], ps[0], 1_000)
	hold(js[3], ps[0], 2_000)
	s.reindex()
	_, evs, err := e.Apply(&Envelope{Time: 3_000, Seed: 9, Actor: JudgeActor(js[2].ID), Cmd: &JudgeSkip{Judge: js[2].ID, Reason: SkipAbsent}})
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].Active {
		t.Fatal("not hidden")
	}
	if !js[3].Current.IsZero() {
		t.Fatal("other judge not released")
	}
	if !hasJudgeEvent(evs, js[3].ID, "project hidden") {
		t.Fatalf("released judge not told: %+v", evs)
	}
	flags := 0
	for _, ev := range evs {
		if ev.Type == EvFlag {
			flags++
		}
	}
	if flags != 2 { // the judge's absent flag and the system's hidden-absent flag
		t.Fatalf("%d flag events, want 2", flags)
	}
	// The skipping judge got the other project.
	if js[2].Current != ps[1].ID {
		t.Fatalf("skipping judge current %v", js[2].Current)
	}
}

func TestAutoGroupSwitchOnFinish(t *testing.T) {
	r := newRig(t)
	r.must(Admin, &ClockUnpause{})
	r.e.s.Options.MultiGroup = true
	r.e.s.Options.NumGroups = 2
	r.e.s.Options.GroupSizes = []int{4, 4}
	r.e.s.Options.AutoSwitchProp = 0.5 // 2 of the 4 projects in the group
	r.projects(8)
	j := r.judges(1, "")[0]
	r.e.s.Judges[j].Group = 0
	for i := 0; i < 2; i++ {
		p := r.project(r.next(j).ProjectID)
		if p.Group != 0 {
			t.Fatalf("view %d in group %d", i, p.Group)
		}
		r.must(JudgeActor(j), &JudgeFinish{Judge: j})
	}
	jj := r.judge(j)
	if jj.Group != 1 || jj.GroupSeen != 0 {
		t.Fatalf("group %d group_seen %d, want 1 and 0", jj.Group, jj.GroupSeen)
	}
	found := false
	for _, ev := range r.eventsOf(EvJudge) {
		if ev.Judge == j && ev.Data.(JudgeEvent).Group == 1 {
			found = true
		}
	}
	if !found {
		t.Fatal("no judge event with the new group")
	}
	if p := r.project(r.next(j).ProjectID); p.Group != 1 {
		t.Fatalf("next project in group %d", p.Group)
	}
}

func TestJudgedProjectViewsAndCount(t *testing.T) {
	r := newRig(t)
	r.e.s.Options.Tracks, r.e.s.Options.TrackViews, r.e.s.Options.JudgeTracks = []string{"AI"}, []int{3}, true
	r.projects(2, "AI")
	r.projects(3)
	g := r.judges(1, "")[0]
	tj := r.judges(1, "AI")[0]
	if n := r.e.s.ProjectCount(g); n != 5 {
		t.Fatalf("general count %d", n)
	}
	if n := r.e.s.ProjectCount(tj); n != 2 {
		t.Fatalf("track count %d", n)
	}
	r.must(Admin, &ClockUnpause{})
	p := r.next(tj).ProjectID
	r.project(p).URL = "https://example.com/x"
	r.must(JudgeActor(tj), &JudgeFinish{Judge: tj, Notes: "n", Starred: true})
	if r.project(p).TrackSeen["AI"] != 1 || r.project(p).Seen != 0 {
		t.Fatalf("track judge view counted wrong: seen %d track_seen %v", r.project(p).Seen, r.project(p).TrackSeen)
	}
	v, ok := r.e.s.JudgedProject(tj, p)
	if !ok || v.URL != "https://example.com/x" || v.Notes != "n" || !v.Starred {
		t.Fatalf("view %+v", v)
	}
	if _, ok := r.e.s.JudgedProject(g, p); ok {
		t.Fatal("general judge sees a project it did not judge")
	}
}

// A ranking that names a project twice is refused, short or long (a long one is
// checked with a map, a short one by scanning).
func TestRankTwiceRefused(t *testing.T) {
	r := newRig(t)
	r.projects(40)
	j := r.judges(1, "")[0]
	r.must(Admin, &ClockUnpause{})
	var seen []ID
	for len(seen) < 34 {
		seen = append(seen, r.next(j).ProjectID)
		r.must(JudgeActor(j), &JudgeFinish{Judge: j})
	}
	for _, n := range []int{3, 34} {
		ranking := append([]ID{}, seen[:n]...)
		r.must(JudgeActor(j), &JudgeRank{Judge: j, Ranking: ranking})
		ranking[n-1] = ranking[0]
		r.fails(KindInvalid, JudgeActor(j), &JudgeRank{Judge: j, Ranking: ranking})
	}
}
