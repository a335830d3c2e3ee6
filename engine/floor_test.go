package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// Tests of docs/behaviour.md#on-the-floor in the engine: idempotency keys, undo,
// offline finishes, upcoming and conflicts.

// applyKeyed runs cmd as judge j with an idempotency key, through the journal's JSON.
func (r *rig) applyKeyed(j ID, key, request string, cmd Command) (any, error) {
	r.now += 1000
	r.seed++
	env := &Envelope{Time: r.now, Seed: r.seed * 0x9e3779b97f4a7c15, Actor: JudgeActor(j), Cmd: cmd,
		Keyed: &Keyed{Key: key, Request: request}}
	res, evs, err := r.e.Apply(env)
	if err == nil {
		// What the journal keeps: the envelope after apply, with its answer.
		b, merr := env.AppendJSON(nil)
		if merr != nil {
			r.t.Fatal(merr)
		}
		var dec Envelope
		if err := json.Unmarshal(b, &dec); err != nil {
			r.t.Fatal(err)
		}
		r.envs = append(r.envs, &dec)
		r.evs = append(r.evs, evs...)
	}
	return res, err
}

func snapshotOf(t *testing.T, e *Engine) string {
	t.Helper()
	b, _, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestKeyedWriteAppliesOnceAndReplays(t *testing.T) {
	r := newRig(t)
	r.projects(4)
	j := r.judges(1, "")[0]
	r.must(Admin, &ClockUnpause{})
	res, err := r.applyKeyed(j, "k-next", "next", &JudgeNext{Judge: j})
	if err != nil {
		t.Fatal(err)
	}
	first := res.(NextResult)
	want := string(ReplyBody(first))
	before := snapshotOf(t, r.e)
	_, err = r.applyKeyed(j, "k-next", "next", &JudgeNext{Judge: j})
	var rp *Replayed
	if !errors.As(err, &rp) || rp.Status != 200 || string(rp.Body) != want {
		t.Fatalf("repeat: %v (want the kept %s)", err, want)
	}
	if snapshotOf(t, r.e) != before {
		t.Fatal("a repeat changed the state")
	}
	// The same key for another request: 422, nothing changed.
	_, err = r.applyKeyed(j, "k-next", "finish", &JudgeFinish{Judge: j})
	var ee *Error
	if !errors.As(err, &ee) || ee.Kind != KindUnprocessable {
		t.Fatalf("key reused: %v", err)
	}
	if snapshotOf(t, r.e) != before {
		t.Fatal("a reused key changed the state")
	}
	// A finish applied once under its key, its repeat answered from the record.
	if _, err := r.applyKeyed(j, "k-fin", "finish", &JudgeFinish{Judge: j, Notes: "n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.applyKeyed(j, "k-fin", "finish", &JudgeFinish{Judge: j, Notes: "n"}); !errors.As(err, &rp) || string(rp.Body) != `{"ok":1}` {
		t.Fatalf("repeated finish: %v", err)
	}
	if got := r.judge(j).Seen; got != 1 {
		t.Fatalf("seen %d after a repeated finish, want 1", got)
	}
	// Another judge may use the same key.
	k := r.judges(1, "")[0]
	if _, err := r.applyKeyed(k, "k-fin", "next", &JudgeNext{Judge: k}); err != nil {
		t.Fatalf("another judge's key: %v", err)
	}
	// Replaying the journal (answers included) gives the same state, keys and all.
	replay := New()
	for _, env := range r.envs {
		if _, _, err := replay.Apply(env); err != nil {
			t.Fatalf("replay %s: %v", env.Cmd.Kind(), err)
		}
	}
	if snapshotOf(t, replay) != snapshotOf(t, r.e) {
		t.Fatal("replay differs")
	}
	if _, _, err := replay.Apply(&Envelope{Time: r.now + 1, Actor: JudgeActor(j), Cmd: &JudgeFinish{Judge: j, Notes: "n"},
		Keyed: &Keyed{Key: "k-fin", Request: "finish"}}); !errors.As(err, &rp) {
		t.Fatalf("repeat after replay: %v", err)
	}
	// A snapshot restore keeps them too.
	b, _, _ := r.e.Snapshot()
	restored := New()
	if err := restored.Restore(b); err != nil {
		t.Fatal(err)
	}
	if _, _, err := restored.Apply(&Envelope{Time: r.now + 1, Actor: JudgeActor(j), Cmd: &JudgeFinish{Judge: j, Notes: "n"},
		Keyed: &Keyed{Key: "k-fin", Request: "finish"}}); !errors.As(err, &rp) {
		t.Fatalf("repeat after restore: %v", err)
	}
}

func TestKeysExpireAfterADay(t *testing.T) {
	r := newRig(t)
	r.projects(3)
	j := r.judges(1, "")[0]
	r.must(Admin, &ClockUnpause{})
	if _, err := r.applyKeyed(j, "a", "next", &JudgeNext{Judge: j}); err != nil {
		t.Fatal(err)
	}
	r.now += KeyTTL - 2000
	var rp *Replayed
	if _, err := r.applyKeyed(j, "a", "next", &JudgeNext{Judge: j}); !errors.As(err, &rp) {
		t.Fatalf("within a day: %v", err)
	}
	r.now += 5000
	if _, err := r.applyKeyed(j, "b", "next", &JudgeNext{Judge: j}); err != nil {
		t.Fatal(err)
	}
	if len(r.e.s.Keys) != 1 || r.e.s.Keys[0].Key != "b" {
		t.Fatalf("keys after a day: %+v", r.e.s.Keys)
	}
	if _, err := r.applyKeyed(j, "a", "next", &JudgeNext{Judge: j}); err != nil {
		t.Fatalf("an expired key is new again: %v", err)
	}
}

func TestKeysPerJudgeBounded(t *testing.T) {
	r := newRig(t)
	r.projects(1)
	j := r.judges(1, "")[0]
	for i := 0; i < MaxKeysPerJudge+700; i++ {
		if _, err := r.applyKeyed(j, fmt.Sprint("k", i), "welcome", &JudgeWelcome{Judge: j}); err != nil {
			t.Fatal(err)
		}
	}
	live := 0
	for _, k := range r.e.s.Keys {
		if k.Key != "" {
			live++
		}
	}
	if live != MaxKeysPerJudge || len(r.e.s.Keys) > 2*MaxKeysPerJudge {
		t.Fatalf("%d live keys of %d entries, want %d", live, len(r.e.s.Keys), MaxKeysPerJudge)
	}
	if _, err := r.applyKeyed(j, "k0", "welcome", &JudgeWelcome{Judge: j}); err != nil {
		t.Fatalf("the oldest key was dropped, so it is new again: %v", err)
	}
	var rp *Replayed
	if _, err := r.applyKeyed(j, fmt.Sprint("k", MaxKeysPerJudge+699), "welcome", &JudgeWelcome{Judge: j}); !errors.As(err, &rp) {
		t.Fatalf("the newest key is kept: %v", err)
	}
}

func TestUndoWithinAMinute(t *testing.T) {
	r := newRig(t)
	r.projects(4)
	j := r.judges(1, "")[0]
	r.must(Admin, &ClockUnpause{})
	r.fails(KindConflict, JudgeActor(j), &JudgeUndo{Judge: j}) // nothing to undo
	a := r.next(j).ProjectID
	r.must(JudgeActor(j), &JudgeFinish{Judge: j, Notes: "a notes", Starred: true})
	b := r.next(j).ProjectID
	r.must(JudgeActor(j), &JudgeFinish{Judge: j, Notes: "b notes"})
	r.must(JudgeActor(j), &JudgeRank{Judge: j, Ranking: []ID{b, a}})
	c := r.next(j).ProjectID
	r.must(Admin, &SetDeliberation{Start: true})
	r.fails(KindConflict, JudgeActor(j), &JudgeUndo{Judge: j})
	r.must(Admin, &SetDeliberation{Start: false})
	if stars := r.e.s.CopelandOf(a).Stars; stars != 1 {
		t.Fatalf("a stars %d", stars)
	}

	res := r.must(JudgeActor(j), &JudgeUndo{Judge: j}).(UndoResult)
	if res.ProjectID != b || res.Notes != "b notes" || res.Starred {
		t.Fatalf("undo %+v, want b %s with its notes", res, b)
	}
	jj, pb := r.judge(j), r.project(b)
	if jj.Current != b || jj.Seen != 1 || pb.Seen != 0 || len(jj.SeenProjects) != 1 || jj.SeenProjects[0].ProjectID != a {
		t.Fatalf("after undo: current %s seen %d, b seen %d, seen list %+v", jj.Current, jj.Seen, pb.Seen, jj.SeenProjects)
	}
	if !reflect.DeepEqual(jj.Rankings, []ID{a}) {
		t.Fatalf("rankings %v, want [a]", jj.Rankings)
	}
	if holdsOf(r, c) != 0 {
		t.Fatalf("c still held after undo")
	}
	if r.e.s.CopelandOf(b).Score != 0 || r.e.s.CopelandOf(a).Stars != 1 {
		t.Fatalf("Copeland after undo: b %+v a %+v", r.e.s.CopelandOf(b), r.e.s.CopelandOf(a))
	}
	r.fails(KindConflict, JudgeActor(j), &JudgeUndo{Judge: j}) // twice
	// Finish again, then wait past the minute: too late.
	r.must(JudgeActor(j), &JudgeFinish{Judge: j, Notes: "b again"})
	r.now += UndoWindow
	r.fails(KindConflict, JudgeActor(j), &JudgeUndo{Judge: j})
	// The state equals a replay of the journal.
	replay := New()
	for _, env := range r.envs {
		if _, _, err := replay.Apply(env); err != nil {
			t.Fatalf("replay %s: %v", env.Cmd.Kind(), err)
		}
	}
	if snapshotOf(t, replay) != snapshotOf(t, r.e) {
		t.Fatal("replay differs")
	}
	checkIndex(t, r.e.s, true)
}

// holdsOf counts the judges whose current project is p.
func holdsOf(r *rig, p ID) int {
	n := 0
	for _, j := range r.e.s.Judges {
		if j.Current == p {
			n++
		}
	}
	return n
}

func TestUndoTakesBackCopeland(t *testing.T) {
	r := newRig(t)
	ps := r.projects(3)
	j := r.judges(1, "")[0]
	r.must(Admin, &ClockUnpause{})
	var seen []ID
	for range ps {
		seen = append(seen, r.next(j).ProjectID)
		r.must(JudgeActor(j), &JudgeFinish{Judge: j})
	}
	r.must(JudgeActor(j), &JudgeRank{Judge: j, Ranking: []ID{seen[2], seen[0], seen[1]}})
	r.must(JudgeActor(j), &JudgeUndo{Judge: j})
	// Now the judge has seen two projects, ranked seen[0] over seen[1]; seen[2] has no score.
	if sc := r.e.s.CopelandOf(seen[2]).Score; sc != 0 {
		t.Fatalf("undone project's Copeland %d", sc)
	}
	if a, b := r.e.s.CopelandOf(seen[0]).Score, r.e.s.CopelandOf(seen[1]).Score; a <= b {
		t.Fatalf("Copeland after undo %d, %d", a, b)
	}
}

func TestFinishNamingAProject(t *testing.T) {
	r := newRig(t)
	ps := r.projects(5)
	js := r.judges(2, "")
	j := js[0]
	r.must(Admin, &ClockUnpause{})
	first := r.next(j)
	if len(first.Upcoming) != 2 || containsID(first.Upcoming, first.ProjectID) {
		t.Fatalf("upcoming %v of %v", first.Upcoming, first.ProjectID)
	}
	// The current project named: a plain finish.
	r.must(JudgeActor(j), &JudgeFinish{Judge: j, Project: first.ProjectID})
	// No current: an upcoming project judged offline counts as if assigned.
	up := first.Upcoming[0]
	r.must(JudgeActor(j), &JudgeFinish{Judge: j, Project: up, Notes: "offline"})
	if jj := r.judge(j); jj.Seen != 2 || jj.SeenProjects[1].ProjectID != up || r.project(up).Seen != 1 || !jj.Current.IsZero() {
		t.Fatalf("offline finish not counted: %+v", jj)
	}
	// Refused: already judged, hidden, skipped, conflicted, another project current.
	r.fails(KindConflict, JudgeActor(j), &JudgeFinish{Judge: j, Project: up})
	var rest []ID
	for _, p := range ps {
		if r.judge(j).seenIndex(p) < 0 {
			rest = append(rest, p)
		}
	}
	r.must(Admin, &HideProjects{Projects: []ID{rest[0]}, Hide: true})
	r.fails(KindConflict, JudgeActor(j), &JudgeFinish{Judge: j, Project: rest[0]})
	r.must(Admin, &ConflictsAdd{Pairs: []ConflictPair{{Row: 1, Judge: j, Project: rest[1]}}})
	r.fails(KindConflict, JudgeActor(j), &JudgeFinish{Judge: j, Project: rest[1]})
	cur := r.next(j).ProjectID
	if cur != rest[2] {
		t.Fatalf("next %s, want the only one left %s", cur, rest[2])
	}
	r.fails(KindConflict, JudgeActor(j), &JudgeFinish{Judge: j, Project: rest[1]})
	r.must(JudgeActor(j), &JudgeSkip{Judge: j, Reason: SkipCannotDemo})
	r.fails(KindConflict, JudgeActor(j), &JudgeFinish{Judge: j, Project: rest[2]})
}

func TestConflictSkipAndAdminConflicts(t *testing.T) {
	r := newRig(t)
	r.projects(3)
	js := r.judges(2, "")
	j, k := js[0], js[1]
	r.must(Admin, &ClockUnpause{})
	p := r.next(j).ProjectID
	r.must(JudgeActor(j), &JudgeSkip{Judge: j, Reason: SkipConflict})
	jj := r.judge(j)
	if _, skipped := jj.Skipped[p]; skipped || containsID(jj.Flagged, p) || !r.e.s.hasConflict(j, p) {
		t.Fatalf("conflict skip: skipped %v flagged %v conflicts %+v", jj.Skipped, jj.Flagged, r.e.s.Conflicts)
	}
	if f := r.e.s.Flags[len(r.e.s.Flags)-1]; f.Reason != SkipConflict || f.ProjectID != p {
		t.Fatalf("flag %+v", f)
	}
	if v := r.e.s.ConflictsView(); len(v) != 1 || v[0].Source != ConflictByJudge || v[0].JudgeID != j {
		t.Fatalf("conflicts %+v", v)
	}
	// An admin conflict with k's current project releases it.
	q := r.next(k).ProjectID
	r.fails(KindInvalid, Admin, &ConflictsAdd{Pairs: []ConflictPair{{Row: 2, Judge: k, Project: q}, {Row: 3, Judge: k, Project: testID(999)}}})
	if n := r.must(Admin, &ConflictsAdd{Pairs: []ConflictPair{{Row: 2, Judge: k, Project: q}, {Row: 3, Judge: j, Project: p}}}).(ConflictsAdded).Added; n != 1 {
		t.Fatalf("added %d, want 1 (j's is known)", n)
	}
	if !r.judge(k).Current.IsZero() || !hasJudgeEvent(r.evs, k, "conflict of interest") {
		t.Fatal("a conflict on the current project did not release it")
	}
	if r.e.s.ConflictCount(k) != 1 {
		t.Fatal("conflict count")
	}
	// Removed: the project may come back.
	r.fails(KindNotFound, Admin, &ConflictRemove{Judge: k, Project: testID(999)})
	r.must(Admin, &ConflictRemove{Judge: j, Project: p})
	if r.e.s.hasConflict(j, p) {
		t.Fatal("still conflicted")
	}
}

// TestAssignmentNeverSendsAConflictedJudge is a property test: random events (judges of
// both kinds, both assignment modes, groups on and off, conflicts added by skips and
// imports and removed, finishes, skips, undos, hides) and no judge is ever current on a
// project it has a conflict with, nor does next list one as upcoming.
func TestAssignmentNeverSendsAConflictedJudge(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 31))
			r := newRig(t)
			tracks := []string{"AI"}
			r.must(Admin, &SetOptions{Tracks: &tracks})
			r.projects(12, "AI")
			r.projects(14)
			js := append(r.judges(6, ""), r.judges(3, "AI")...)
			r.must(Admin, &ClockUnpause{})
			mode := []string{ModeFocus, ModeSpread}[seed%2]
			multi, on := seed%3 == 0, seed%4 != 0
			r.must(Admin, &SetOptions{AssignmentMode: &mode, MultiGroup: &multi, JudgeTracks: &on})
			pids := r.e.s.ProjectsByLocation()
			for step := 0; step < 400; step++ {
				j := js[rnd.IntN(len(js))]
				switch op := rnd.IntN(12); {
				case op < 5:
					res := r.next(j)
					for _, u := range res.Upcoming {
						if r.e.s.hasConflict(j, u) {
							t.Fatalf("step %d: upcoming conflicted %s", step, u)
						}
					}
				case op < 7:
					r.apply(JudgeActor(j), &JudgeFinish{Judge: j})
				case op == 7:
					reasons := []string{SkipConflict, SkipConflict, SkipBusy, SkipAbsent}
					r.apply(JudgeActor(j), &JudgeSkip{Judge: j, Reason: reasons[rnd.IntN(len(reasons))]})
				case op == 8:
					p := pids[rnd.IntN(len(pids))].ID
					r.must(Admin, &ConflictsAdd{Pairs: []ConflictPair{{Row: 1, Judge: j, Project: p}}})
				case op == 9 && len(r.e.s.Conflicts) > 0:
					cf := r.e.s.Conflicts[rnd.IntN(len(r.e.s.Conflicts))]
					r.must(Admin, &ConflictRemove{Judge: cf.Judge, Project: cf.Project})
				case op == 10:
					r.apply(JudgeActor(j), &JudgeUndo{Judge: j})
				case op == 11 && rnd.IntN(8) == 0:
					r.must(Admin, &HideProjects{Projects: []ID{pids[rnd.IntN(len(pids))].ID}, Hide: true})
				}
				for _, id := range js {
					if jj := r.judge(id); !jj.Current.IsZero() && r.e.s.hasConflict(id, jj.Current) {
						t.Fatalf("step %d: judge %s current on conflicted %s", step, id, jj.Current)
					}
				}
			}
			replay := New()
			for _, env := range r.envs {
				if _, _, err := replay.Apply(env); err != nil {
					t.Fatalf("replay %s: %v", env.Cmd.Kind(), err)
				}
			}
			if snapshotOf(t, replay) != snapshotOf(t, r.e) {
				t.Fatal("replay differs")
			}
		})
	}
}
