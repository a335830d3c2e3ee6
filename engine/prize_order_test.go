package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// trackEvent is an event with one track "T" (judge_tracks on) being recorded: its
// projects, general judges and track judges.
type trackEvent struct {
	t        *testing.T
	e        *Engine
	rec      *recorder
	projects []ID // by table
	general  []ID
	track    []ID
}

// newTrackEvent creates n projects (those at the tables inTrack says are in track T),
// the general and track judges, and starts the clock; before it runs init on the state
// (an event begun before a rule).
func newTrackEvent(t *testing.T, n int, inTrack func(table int) bool, general, track int, init func(s *State)) *trackEvent {
	e := New()
	if init != nil {
		init(e.s)
	}
	ev := &trackEvent{t: t, e: e, rec: newRecorder(t, e, 1000)}
	ps := make([]NewProject, n)
	for i := range ps {
		ps[i] = NewProject{Name: fmt.Sprint("p", i+1)}
		if inTrack(i + 1) {
			ps[i].ChallengeList = []string{"T"}
		}
	}
	ev.projects = ev.rec.apply(Admin, &CreateProjects{Projects: ps}).(CreatedProjects).IDs
	on := true
	ev.rec.apply(Admin, &SetOptions{JudgeTracks: &on, Tracks: &[]string{"T"}})
	var js []NewJudge
	var codes []string
	for i := 0; i < general+track; i++ {
		nj := NewJudge{Name: fmt.Sprint("j", i), Email: fmt.Sprintf("j%d@x.org", i)}
		if i >= general {
			nj.Track = "T"
		}
		js, codes = append(js, nj), append(codes, fmt.Sprintf("%08d", 10000000+i))
	}
	for i, cj := range ev.rec.apply(Admin, &CreateJudges{Judges: js, Codes: codes}).([]CreatedJudge) {
		if i < general {
			ev.general = append(ev.general, cj.ID)
		} else {
			ev.track = append(ev.track, cj.ID)
		}
	}
	ev.rec.apply(Admin, &ClockUnpause{})
	return ev
}

// next asks for judge j's next project.
func (ev *trackEvent) next(j ID) ID {
	res, ok := ev.rec.apply(JudgeActor(j), &JudgeNext{Judge: j}).(NextResult)
	if !ok {
		ev.t.Fatalf("next of %v refused", j)
	}
	return res.ProjectID
}

// visit gives judge j its next project and finishes it.
func (ev *trackEvent) visit(j ID, starred bool) ID {
	p := ev.next(j)
	if !p.IsZero() {
		if err, bad := ev.rec.apply(JudgeActor(j), &JudgeFinish{Judge: j, Starred: starred}).(error); bad {
			ev.t.Fatal(err)
		}
	}
	return p
}

// fit fits the ratings (track orders included) and stores them as the server does.
func (ev *trackEvent) fit() *SetRatings {
	var in *RatingInput
	ev.e.Read(func(s *State) { in = s.RatingInput() })
	cmd := FitRatings(in)
	if err, bad := ev.rec.apply(System, cmd).(error); bad {
		ev.t.Fatal(err)
	}
	return cmd
}

// A track's list follows its judges where they disagree with the overall rating: the
// general judges rank P > Y > V, the track's judge ranks Y > V > P; the overall results
// keep P, Y, V, the track's list (results and PrizeOrder) is Y, V, P, with the
// probabilities of a place best first.
func TestTrackOrderFollowsTrackJudges(t *testing.T) {
	ev := newTrackEvent(t, 3, func(int) bool { return true }, 4, 1, nil)
	P, Y, V := ev.projects[0], ev.projects[1], ev.projects[2]
	for _, j := range append(slices.Clone(ev.general), ev.track...) {
		for range 3 {
			ev.visit(j, false)
		}
		ranking := []ID{P, Y, V}
		if slices.Contains(ev.track, j) {
			ranking = []ID{Y, V, P}
		}
		ev.rec.apply(JudgeActor(j), &JudgeRank{Judge: j, Ranking: ranking})
	}
	cmd := ev.fit()
	if len(cmd.Tracks) != 1 || cmd.Tracks[0].Track != "T" || len(cmd.Tracks[0].Projects) != 3 {
		t.Fatalf("the fit's tracks: %+v", cmd.Tracks)
	}
	ev.e.Read(func(s *State) {
		res := s.Results()
		var overall, track []ID
		for _, r := range res.Projects {
			overall = append(overall, r.ID)
		}
		for _, r := range res.Tracks["T"] {
			track = append(track, r.ID)
			if r.TrackStars == nil || r.TrackRating == nil || r.PTrack == nil || r.TrackRatingSD == nil {
				t.Fatalf("track entry without its track fields: %+v", r)
			}
		}
		if !slices.Equal(overall, []ID{P, Y, V}) {
			t.Fatalf("overall order %v, want P Y V %v", overall, []ID{P, Y, V})
		}
		if !slices.Equal(track, []ID{Y, V, P}) {
			t.Fatalf("track order %v, want Y V P %v", track, []ID{Y, V, P})
		}
		po := s.PrizeOrder("T", 1)
		if len(po) != 3 || po[0].ID != Y || po[1].ID != V || po[2].ID != P || !(po[0].P > po[1].P && po[1].P > po[2].P) {
			t.Fatalf("PrizeOrder(T, 1) = %+v", po)
		}
		if all := s.PrizeOrder("", 2); len(all) != 3 || all[0].ID != P || all[2].ID != V || all[0].P < all[2].P {
			t.Fatalf("PrizeOrder(\"\", 2) = %+v", all)
		}
	})
}

// Track judges cover their track: while a track project has no track judge's view, no
// track judge is sent to one that has, even when general judges hold the unseen ones;
// then the second views (within track_views) go to the projects with one.
func TestTrackJudgesCoverTheirTrack(t *testing.T) {
	inTrack := func(table int) bool { return table%2 == 0 }
	ev := newTrackEvent(t, 20, inTrack, 6, 2, nil)
	var trackProjects []ID
	for i, id := range ev.projects {
		if inTrack(i + 1) {
			trackProjects = append(trackProjects, id)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	trackSeen := func() map[ID]int {
		out := map[ID]int{}
		ev.e.Read(func(s *State) {
			for _, id := range trackProjects {
				out[id] = s.Projects[id].TrackSeen["T"]
			}
		})
		return out
	}
	for v := 0; v < 20; v++ {
		// General judges come and go, holding projects of the track among others.
		for _, g := range ev.general {
			if r.IntN(2) == 0 {
				ev.visit(g, false)
			}
			ev.next(g)
		}
		before := trackSeen()
		j := ev.track[v%2]
		p := ev.visit(j, false)
		if p.IsZero() {
			t.Fatalf("visit %d: no project for the track judge", v)
		}
		fewest := 99
		for _, n := range before {
			fewest = min(fewest, n)
		}
		if before[p] != fewest && before[p] >= 1 {
			// Allowed only when the judge has seen every project at the fewest.
			var seenAll = true
			ev.e.Read(func(s *State) {
				for id, n := range before {
					if n == fewest && s.Judges[j].seenIndex(id) < 0 {
						seenAll = false
					}
				}
			})
			if !seenAll {
				t.Fatalf("visit %d: a track judge sent to a project with %d track views while one has %d: %v", v, before[p], fewest, before)
			}
		}
	}
	for id, n := range trackSeen() {
		if n != 2 {
			t.Fatalf("after 20 track visits of 10 projects, project %v has %d track views", id, n)
		}
	}
}

// An event begun before the rule (a snapshot without track_rule) keeps the next table
// up, and a replay of its journal after that snapshot gives its assignments.
func TestTrackRuleOfEarlierEvents(t *testing.T) {
	if New().s.TrackRule != TrackRuleCover {
		t.Fatal("a new event does not cover its tracks")
	}
	old := func(s *State) { s.TrackRule = 0 }
	ev := newTrackEvent(t, 12, func(table int) bool { return table%3 != 0 }, 4, 2, old)
	var raw map[string]any
	if err := json.Unmarshal(snapshot(t, ev.e), &raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw["track_rule"]; ok {
		t.Fatal("an earlier event's snapshot has track_rule")
	}
	restored := New()
	if err := restored.Restore(snapshot(t, ev.e)); err != nil || restored.s.TrackRule != 0 {
		t.Fatalf("restored an earlier event: %v, track_rule %d", err, restored.s.TrackRule)
	}
	from := len(ev.rec.records)
	// Another track judge has seen some of the track (the new rule would keep away
	// from them), general judges hold some of its tables: the next table up skips them.
	for range 3 {
		ev.visit(ev.track[1], false)
	}
	for _, g := range ev.general {
		ev.next(g)
	}
	j := ev.track[0]
	for v := range 8 {
		want := -1 // the next free table up from the judge's last, wrapping
		ev.e.Read(func(s *State) {
			held := map[ID]bool{}
			for _, g := range ev.general {
				held[s.Judges[g].Current] = true
			}
			var free []int
			for _, p := range s.ProjectsByLocation() {
				if slices.Contains(p.ChallengeList, "T") && s.Judges[j].seenIndex(p.ID) < 0 && !held[p.ID] {
					free = append(free, p.Location)
				}
			}
			if last := s.Judges[j].LastLocation; last >= 0 && len(free) > 0 {
				want = free[0]
				if k := slices.IndexFunc(free, func(l int) bool { return l > last }); k >= 0 {
					want = free[k]
				}
			}
		})
		p := ev.visit(j, false)
		var got int
		ev.e.Read(func(s *State) { got = s.Projects[p].Location })
		if v > 0 && want >= 0 && got != want {
			t.Fatalf("visit %d: table %d, want the next free one up, %d", v, got, want)
		}
	}
	// A reset of everything from a journal written before the rule keeps it; one
	// from this build's admin route begins the new event with it.
	ev.rec.apply(Admin, &Reset{Type: ResetAll})
	if ev.e.s.TrackRule != 0 {
		t.Fatal("an earlier journal's reset changed the track rule")
	}
	for i, record := range ev.rec.records[from:] {
		var e Envelope
		if err := DecodeEnvelope(record, &e); err != nil {
			t.Fatal(err)
		}
		if next, ok := e.Cmd.(*JudgeNext); ok {
			next.Got = nil // as a journal written before nexts recorded their project
		}
		if err := restored.Replay(&e); err != nil {
			t.Fatalf("replay %d: %v", i, err)
		}
	}
	restored.Replayed()
	if snapshotHash(t, restored) != snapshotHash(t, ev.e) {
		t.Fatal("the earlier event's replay differs from its live state")
	}
	ev.rec.apply(Admin, &Reset{Type: ResetAll, TrackRule: TrackRuleCover})
	if ev.e.s.TrackRule != TrackRuleCover {
		t.Fatalf("a reset of everything from this build: track rule %d", ev.e.s.TrackRule)
	}
}

// A journal with track fits replays to the live state (snapshot hash), from the start
// and after a snapshot (whose track fits decode by the hand decoder's path); a fit from
// before track fits (none listed) leaves the stored ones.
func TestTrackFitsReplay(t *testing.T) {
	ev := newTrackEvent(t, 30, func(table int) bool { return table%3 == 0 }, 6, 2, nil)
	r := rand.New(rand.NewPCG(5, 6))
	all := append(slices.Clone(ev.general), ev.track...)
	var snap []byte
	var at int
	for i := 0; i < 70; i++ {
		j := all[r.IntN(len(all))]
		if ev.visit(j, r.IntN(3) == 0).IsZero() {
			continue
		}
		var seen []ID
		ev.e.Read(func(s *State) {
			for _, sp := range s.Judges[j].SeenProjects {
				seen = append(seen, sp.ProjectID)
			}
		})
		r.Shuffle(len(seen), func(a, b int) { seen[a], seen[b] = seen[b], seen[a] })
		ev.rec.apply(JudgeActor(j), &JudgeRank{Judge: j, Ranking: seen})
		if i%7 == 6 {
			ev.fit()
		}
		if i == 40 {
			snap, at = snapshot(t, ev.e), len(ev.rec.records)
		}
	}
	var fits []TrackFit
	ev.e.Read(func(s *State) { fits = cloneTrackFits(s.TrackFits) })
	if len(fits) != 1 || fits[0].Beta < 0 || len(fits[0].Projects) != 10 {
		t.Fatalf("stored track fits: %+v", fits)
	}
	// A fit without tracks (as journaled before them) keeps the stored ones.
	var in *RatingInput
	ev.e.Read(func(s *State) { in = s.RatingInput() })
	plain := FitRatings(in)
	plain.Tracks = nil
	ev.rec.apply(System, plain)
	ev.e.Read(func(s *State) {
		if len(s.TrackFits) != 1 || s.TrackFits[0].Rating[0] != fits[0].Rating[0] {
			t.Fatal("a fit without tracks changed the stored track fits")
		}
	})
	var s State
	if !decodeStateFast(snapshot(t, ev.e), &s) || len(s.TrackFits) != 1 {
		t.Fatal("a snapshot with track fits took the slow path")
	}
	want := snapshotHash(t, ev.e)
	for _, from := range []int{0, at} {
		fresh := New()
		if from > 0 {
			if err := fresh.Restore(snap); err != nil {
				t.Fatal(err)
			}
		}
		for i, record := range ev.rec.records[from:] {
			var e Envelope
			if err := DecodeEnvelope(record, &e); err != nil {
				t.Fatal(err)
			}
			if err := fresh.Replay(&e); err != nil {
				t.Fatalf("replay %d (%s): %v", i, e.Cmd.Kind(), err)
			}
		}
		fresh.Replayed()
		if snapshotHash(t, fresh) != want {
			t.Fatalf("replayed from record %d: the state differs from the live state", from)
		}
	}
}
