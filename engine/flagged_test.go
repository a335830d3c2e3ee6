package engine

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// A judge's flagged list holds, in order, the projects it skipped with a reason other
// than busy or absent; it survives replay and snapshots, loses deleted projects and is
// cleared by a judging-data reset.
func TestFlaggedListFollowsSkips(t *testing.T) {
	r := newRig(t)
	r.projects(6)
	j := r.judges(1, "")[0]
	r.must(Admin, &ClockUnpause{})
	r.next(j)
	var want []ID
	for _, reason := range []string{SkipBusy, SkipCannotDemo, SkipAbsent, SkipTooComplex, SkipOffensive} {
		cur := r.judge(j).Current
		r.must(JudgeActor(j), &JudgeSkip{Judge: j, Reason: reason})
		if reason != SkipBusy && reason != SkipAbsent {
			want = append(want, cur)
		}
		if got := r.judge(j).Flagged; !slices.Equal(got, want) {
			t.Fatalf("after %s skip: flagged %v, want %v", reason, got, want)
		}
	}
	var view JudgeView
	r.e.Read(func(s *State) { view = s.Judges[j].View() })
	if !slices.Equal(view.Flagged, want) {
		t.Fatalf("view flagged %v, want %v", view.Flagged, want)
	}

	// Replay and snapshot restore keep the list.
	fresh := New()
	for _, env := range r.envs {
		if _, _, err := fresh.Apply(env); err != nil {
			t.Fatal(err)
		}
	}
	if got := fresh.s.Judges[j].Flagged; !slices.Equal(got, want) {
		t.Fatalf("replayed flagged %v, want %v", got, want)
	}
	snap, _, _ := r.e.Snapshot()
	restored := New()
	if err := restored.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if got := restored.s.Judges[j].Flagged; !slices.Equal(got, want) {
		t.Fatalf("restored flagged %v, want %v", got, want)
	}

	// A snapshot written before the list existed gets it back from the flags.
	var raw map[string]any
	if err := json.Unmarshal(snap, &raw); err != nil {
		t.Fatal(err)
	}
	for _, jv := range raw["judges"].(map[string]any) {
		delete(jv.(map[string]any), "flagged")
	}
	old, _ := json.Marshal(raw)
	if bytes.Contains(old, []byte(`"flagged"`)) {
		t.Fatal("old snapshot still has flagged")
	}
	legacy := New()
	if err := legacy.Restore(old); err != nil {
		t.Fatal(err)
	}
	if got := legacy.s.Judges[j].Flagged; !slices.Equal(got, want) {
		t.Fatalf("flagged rebuilt from flags %v, want %v", got, want)
	}

	// Deleting a flagged project takes it off the list.
	r.must(Admin, &DeleteProject{Project: want[0]})
	if got := r.judge(j).Flagged; !slices.Equal(got, want[1:]) {
		t.Fatalf("after delete: flagged %v, want %v", got, want[1:])
	}
	r.must(Admin, &Reset{Type: ResetJudgingData})
	if got := r.judge(j).Flagged; got == nil || len(got) != 0 {
		t.Fatalf("after reset: flagged %#v, want []", got)
	}
}
