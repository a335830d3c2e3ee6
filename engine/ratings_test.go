package engine

import (
	"encoding/json"
	"testing"
)

// TestRankOrderTiesGoToCopeland: ranks follow the rating; equal ratings fall back to the
// Copeland score, then the table; hidden projects get rank 0.
func TestRankOrderTiesGoToCopeland(t *testing.T) {
	r := newRig(t)
	ps := r.projects(5)
	js := r.judges(1, "")
	r.must(Admin, &ClockUnpause{})
	// The judge sees the first three projects and ranks p2 over p1 over p0: Copeland
	// scores 2, 0, −2.
	r.visits(js[0], 3)
	seen := r.judge(js[0]).SeenProjects
	order := []ID{seen[2].ProjectID, seen[1].ProjectID, seen[0].ProjectID}
	r.must(JudgeActor(js[0]), &JudgeRank{Judge: js[0], Ranking: order})
	rating := map[ID]float64{order[0]: 0.5, order[1]: 0.5, order[2]: 0.5}
	var rest []ID
	for _, id := range ps {
		if _, ok := rating[id]; !ok {
			rest = append(rest, id)
		}
	}
	rating[rest[0]] = 1.0 // the best rating, whatever its Copeland score
	rating[rest[1]] = 0.5 // ties with the judged three; Copeland 0 like order[1]
	cmd := &SetRatings{Version: 1}
	for id, v := range rating {
		cmd.Projects = append(cmd.Projects, id)
		cmd.Rating = append(cmd.Rating, v)
		cmd.SD = append(cmd.SD, 1)
		cmd.PTop = append(cmd.PTop, 0.5)
		cmd.PTop3 = append(cmd.PTop3, 0.5)
	}
	r.must(System, cmd)
	want := []ID{rest[0], order[0]}
	// order[1] and rest[1] both have rating 0.5 and Copeland 0: the table decides.
	if r.project(order[1]).Location < r.project(rest[1]).Location {
		want = append(want, order[1], rest[1])
	} else {
		want = append(want, rest[1], order[1])
	}
	want = append(want, order[2])
	for i, id := range want {
		if got := r.project(id).RatingOf().Rank; got != i+1 {
			t.Fatalf("%s (rating %.1f, Copeland %d): rank %d, want %d", r.project(id).Name, rating[id], r.e.s.CopelandOf(id).Score, got, i+1)
		}
	}
	r.must(Admin, &HideProjects{Projects: []ID{rest[0]}, Hide: true})
	r.must(System, cmd)
	if got := r.project(rest[0]).RatingOf().Rank; got != 0 {
		t.Fatalf("hidden project: rank %d, want 0", got)
	}
	if got := r.project(order[0]).RatingOf().Rank; got != 1 {
		t.Fatalf("after hiding the leader: rank %d, want 1", got)
	}
}

// TestFitRatesWhatItLists: a fit sets the projects it lists (a project listed twice:
// its last values) and puts every other one at the prior, also one whose rank was -1
// (the fit's own mark) before it.
func TestFitRatesWhatItLists(t *testing.T) {
	r := newRig(t)
	ps := r.projects(4)
	fit := func(ids ...ID) {
		cmd := &SetRatings{Version: 1}
		for i, id := range ids {
			cmd.Projects = append(cmd.Projects, id)
			cmd.Rating = append(cmd.Rating, float64(i+1))
			cmd.SD, cmd.PTop, cmd.PTop3 = append(cmd.SD, 0.5), append(cmd.PTop, 0.1), append(cmd.PTop3, 0.2)
		}
		r.must(System, cmd)
	}
	fit(ps...)
	r.e.s.Projects[ps[3]].Ratings.Rank = -1
	fit(ps[0], ps[1], ps[0]) // ps[0] last rated 3; ps[2] and ps[3] left out
	want := map[ID]ProjectRating{
		ps[0]: {Rating: 3, SD: 0.5, PTop: 0.1, PTop3: 0.2, Rank: 1},
		ps[1]: {Rating: 2, SD: 0.5, PTop: 0.1, PTop3: 0.2, Rank: 2},
	}
	for _, id := range ps[2:] {
		want[id] = ProjectRating{SD: RatingPriorSD, Rank: 3 + r.project(id).Location - min(r.project(ps[2]).Location, r.project(ps[3]).Location)}
	}
	for _, id := range ps {
		if got := r.project(id).Ratings; got != want[id] {
			t.Fatalf("%s: %+v, want %+v", r.project(id).Name, got, want[id])
		}
	}
}

// TestRatingInputsFollowTheProjectSet: every change to the set of active projects moves
// RatingInputsVersion, so the background fit ranks a project added, shown again or
// removed without waiting for a judge's finish; a refused command moves nothing.
func TestRatingInputsFollowTheProjectSet(t *testing.T) {
	r := newRig(t)
	v := r.e.s.RatingInputsVersion()
	step := func(what string, actor Actor, cmd Command) {
		t.Helper()
		r.must(actor, cmd)
		if now := r.e.s.RatingInputsVersion(); now == v {
			t.Fatalf("%s: RatingInputsVersion stayed %d", what, v)
		} else {
			v = now
		}
	}
	step("create", Admin, &CreateProjects{Projects: []NewProject{{Name: "A"}, {Name: "B"}}})
	ps := r.projects(1)
	v = r.e.s.RatingInputsVersion()
	step("hide", Admin, &HideProjects{Projects: ps, Hide: true})
	step("show", Admin, &HideProjects{Projects: ps, Hide: false})
	step("delete", Admin, &DeleteProject{Project: ps[0]})
	r.fails(KindInvalid, Admin, &CreateProjects{Projects: []NewProject{{Name: ""}}})
	if now := r.e.s.RatingInputsVersion(); now != v {
		t.Fatalf("a refused create moved RatingInputsVersion %d -> %d", v, now)
	}
}

// TestRatingsCurrentAcrossRestore: a stored fit that saw every change makes the ratings
// current; a finish after it does not; both counts travel in the snapshot, so a restored
// state says the same and a change after the restore is counted on. A snapshot of an
// earlier build (without the counts) cannot say.
func TestRatingsCurrentAcrossRestore(t *testing.T) {
	r := newRig(t)
	r.projects(4)
	js := r.judges(1, "")
	r.must(Admin, &ClockUnpause{})
	r.visits(js[0], 2)
	if r.e.s.RatingsCurrent() {
		t.Fatal("current before any fit")
	}
	in := r.e.s.RatingInput()
	cmd := &SetRatings{Version: in.Version, Projects: in.Projects, Judges: in.Judges, Reliability: make([]float64, len(in.Judges))}
	for range in.Projects {
		cmd.Rating, cmd.SD = append(cmd.Rating, 0.1), append(cmd.SD, 1)
		cmd.PTop, cmd.PTop3 = append(cmd.PTop, 0.5), append(cmd.PTop3, 0.5)
	}
	r.must(System, cmd)
	if !r.e.s.RatingsCurrent() {
		t.Fatal("not current after a fit of the current inputs")
	}
	restore := func(b []byte) *Engine {
		t.Helper()
		e := New()
		if err := e.Restore(b); err != nil {
			t.Fatal(err)
		}
		return e
	}
	snap := snapshot(t, r.e)
	if e := restore(snap); !e.s.RatingsCurrent() || e.s.RatingInputsVersion() != r.e.s.RatingInputsVersion() {
		t.Fatalf("restored: current %v, inputs %d (were %d)", e.s.RatingsCurrent(), e.s.RatingInputsVersion(), r.e.s.RatingInputsVersion())
	}
	r.visits(js[0], 1)
	if r.e.s.RatingsCurrent() {
		t.Fatal("current after a finish no fit has seen")
	}
	if e := restore(snapshot(t, r.e)); e.s.RatingsCurrent() {
		t.Fatal("restored after the finish: current")
	}
	var raw map[string]any
	if err := json.Unmarshal(snap, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["rating_inputs"] == nil || raw["rated_at"] == nil {
		t.Fatalf("snapshot without the counts: %v %v", raw["rating_inputs"], raw["rated_at"])
	}
	delete(raw, "rating_inputs")
	delete(raw, "rated_at")
	old, _ := json.Marshal(raw)
	if e := restore(old); e.s.RatingsCurrent() {
		t.Fatal("a snapshot of an earlier build: current")
	}
}
