package engine

import (
	"reflect"
	"testing"
)

// TestConflictAfterJudgement (docs/behaviour.md#a-conflict-found-after-the-judgement):
// an import names the pairs the judge already judged; removing such a judgement takes
// it out of the seen lists, the ranking, the stars and the scores, all or nothing, and
// the state equals a replay of the journal.
func TestConflictAfterJudgement(t *testing.T) {
	r := newRig(t)
	r.projects(4)
	js := r.judges(2, "")
	j, k := js[0], js[1]
	r.must(Admin, &ClockUnpause{})
	var seen []ID
	for i := range 3 {
		seen = append(seen, r.next(j).ProjectID)
		r.must(JudgeActor(j), &JudgeFinish{Judge: j, Notes: "n", Starred: i == 0})
	}
	p := seen[0] // j starred it and ranks it first
	r.must(JudgeActor(j), &JudgeRank{Judge: j, Ranking: []ID{p, seen[1], seen[2]}})
	for r.judge(k).seenIndex(p) < 0 {
		r.next(k)
		r.must(JudgeActor(k), &JudgeFinish{Judge: k, Starred: r.judge(k).Current == p})
	}
	unjudged := r.projects(1)[0]
	starsBefore, seenBefore := r.e.s.CopelandOf(p).Stars, r.project(p).Seen

	res := r.must(Admin, &ConflictsAdd{Pairs: []ConflictPair{
		{Row: 2, Judge: j, Project: p}, {Row: 3, Judge: k, Project: unjudged}, {Row: 4, Judge: j, Project: p}}}).(ConflictsAdded)
	want := []JudgedConflict{{JudgeID: j, JudgeName: r.judge(j).Name, ProjectID: p, ProjectName: r.project(p).Name}}
	if res.Added != 2 || !reflect.DeepEqual(res.Judged, want) {
		t.Fatalf("import %+v, want 2 added and the judged pair once", res)
	}
	for _, v := range r.e.s.ConflictsView() {
		if v.Judged != (v.JudgeID == j) {
			t.Fatalf("conflicts view %+v", v)
		}
	}

	// Refused, changing nothing: unknown judge, no conflict, no judgement.
	r.fails(KindNotFound, Admin, &ConflictDropJudgement{Judge: testID(999), Project: p})
	r.fails(KindConflict, Admin, &ConflictDropJudgement{Judge: k, Project: p})
	r.fails(KindConflict, Admin, &ConflictDropJudgement{Judge: k, Project: unjudged})

	r.must(Admin, &ConflictDropJudgement{Judge: j, Project: p})
	jj := r.judge(j)
	if jj.seenIndex(p) >= 0 || jj.Seen != 2 || !reflect.DeepEqual(jj.Rankings, []ID{seen[1], seen[2]}) {
		t.Fatalf("judge after removal: seen %d list %+v ranking %v", jj.Seen, jj.SeenProjects, jj.Rankings)
	}
	if r.project(p).Seen != seenBefore-1 || r.e.s.CopelandOf(p).Stars != starsBefore-1 {
		t.Fatalf("project seen %d stars %d, want %d and %d", r.project(p).Seen, r.e.s.CopelandOf(p).Stars, seenBefore-1, starsBefore-1)
	}
	if v := r.e.s.ConflictsView(); len(v) != 2 || v[0].Judged {
		t.Fatalf("conflicts after removal %+v", v)
	}
	r.fails(KindConflict, Admin, &ConflictDropJudgement{Judge: j, Project: p}) // twice
	// The conflict stays: j is never sent to p again.
	for range 4 {
		if n := r.next(j); n.ProjectID == p {
			t.Fatal("the judge was sent back to the project")
		} else if n.ProjectID.IsZero() {
			break
		}
		r.must(JudgeActor(j), &JudgeFinish{Judge: j})
	}

	replay := New()
	for _, env := range r.envs {
		if _, _, err := replay.Apply(env); err != nil {
			t.Fatalf("replay %s: %v", env.Cmd.Kind(), err)
		}
	}
	if a, b := snapshotOf(t, replay), snapshotOf(t, r.e); a != b {
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		t.Fatalf("replay differs at %d: %.300s\n vs %.300s", i, a[max(i-100, 0):], b[max(i-100, 0):])
	}
	// The live engine's cached scores equal the replay's, computed afresh.
	for id := range r.e.s.Projects {
		if got, want := r.e.s.CopelandOf(id), replay.s.CopelandOf(id); !reflect.DeepEqual(got, want) {
			t.Fatalf("project %s: cached score %+v, afresh %+v", id, got, want)
		}
	}
	checkIndex(t, r.e.s, true)
}

// TestConflictDropJudgementTrackJudge: a track judge's view comes out of track_seen.
func TestConflictDropJudgementTrackJudge(t *testing.T) {
	r := newRig(t)
	on, tracks := true, []string{"AI"}
	r.must(Admin, &SetOptions{JudgeTracks: &on, Tracks: &tracks})
	r.projects(2, "AI")
	tr := r.judges(1, "AI")[0]
	r.must(Admin, &ClockUnpause{})
	p := r.next(tr).ProjectID
	r.must(JudgeActor(tr), &JudgeFinish{Judge: tr})
	if r.project(p).TrackSeen["AI"] != 1 {
		t.Fatalf("track_seen %v", r.project(p).TrackSeen)
	}
	r.must(Admin, &ConflictsAdd{Pairs: []ConflictPair{{Row: 1, Judge: tr, Project: p}}})
	r.must(Admin, &ConflictDropJudgement{Judge: tr, Project: p})
	if _, ok := r.project(p).TrackSeen["AI"]; ok || r.project(p).Seen != 0 {
		t.Fatalf("track_seen %v seen %d", r.project(p).TrackSeen, r.project(p).Seen)
	}
}
