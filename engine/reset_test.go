package engine

import (
	"reflect"
	"testing"
)

// judgedRig builds a small event with judging data written straight into the state
// (the judging commands belong to another file): two judges who each saw, ranked and
// starred projects, a current assignment, skips and flags.
func judgedRig(t *testing.T) (r *settingsRig, judges, projects []ID) {
	r = newSettingsRig(t)
	r.must(&SetOptions{Tracks: strsp("AI"), JudgingTimer: intp(120), MultiGroup: boolp(true)})
	projects = r.addProjects(3, "AI")
	judges = r.addJudges("", "AI")
	r.must(&ClockUnpause{})
	r.must(&SetDeliberation{Start: true})
	r.must(&JudgeLogin{Judge: judges[0], TokenHash: "0123456789012345678901234567890123456789012345678901234567890123"})
	r.e.Read(func(s *State) {
		for i, jid := range judges {
			j := s.Judges[jid]
			j.SeenProjects = []SeenProject{{ProjectID: projects[0], Starred: true, Notes: "n"}, {ProjectID: projects[1]}}
			j.Seen, j.GroupSeen, j.LastLocation = 2, 2, 2
			j.Rankings = []ID{projects[1], projects[0]}
			j.Skipped = map[ID]bool{projects[2]: i == 0}
			j.Current, j.CurrentSince = projects[2], r.now
			j.ReadWelcome = true
		}
		for _, pid := range projects {
			s.Projects[pid].Seen = 2
			s.Projects[pid].TrackSeen["AI"] = 1
		}
		s.Flags = append(s.Flags, Flag{ID: ID{9, 1}, ProjectID: projects[2], JudgeID: judges[0], Time: r.now, Reason: "busy"})
	})
	return r, judges, projects
}

func TestResetRefusesUnknownType(t *testing.T) {
	r, _, _ := judgedRig(t)
	before := r.snapshot()
	r.refuse(KindInvalid, &Reset{Type: "everything"})
	if string(r.snapshot()) != string(before) {
		t.Fatal("refused reset changed the state")
	}
}

func TestResetAll(t *testing.T) {
	for _, typ := range []string{"", ResetAll} {
		r, _, _ := judgedRig(t)
		r.must(&AdminLogin{SessionHash: "a123456789012345678901234567890123456789012345678901234567890123"})
		var content Content
		r.e.Read(func(s *State) {
			s.Content.FAQ = append(s.Content.FAQ, FAQEntry{ID: ID{7}})
			content = s.Content
		})
		ref := r.opts().Ref
		_, evs := r.must(&Reset{Type: typ})
		r.e.Read(func(s *State) {
			if len(s.Judges) != 0 || len(s.JudgeOrder) != 0 || len(s.Projects) != 0 || len(s.Flags) != 0 {
				t.Fatalf("reset %q left data: %d judges %d projects %d flags", typ, len(s.Judges), len(s.Projects), len(s.Flags))
			}
			want := DefaultOptions(s.OptionsID)
			want.Ref = ref + 1
			if !reflect.DeepEqual(s.OptionsView(), want) {
				t.Fatalf("options not default: %+v", s.Options)
			}
			if !reflect.DeepEqual(s.Content, content) {
				t.Fatal("content touched")
			}
			if len(s.AdminSessions) != 1 {
				t.Fatalf("admin sessions %v", s.AdminSessions)
			}
			if _, ok := s.JudgeByToken("0123456789012345678901234567890123456789012345678901234567890123"); ok {
				t.Fatal("judge session survived")
			}
			if _, ok := s.projectAt(1); ok {
				t.Fatal("table index survived")
			}
		})
		for _, typ := range []string{EvDeliberation, EvClock, EvGroupInfo, EvExpo, EvChanged, EvLog} {
			if !hasEvent(evs, typ) {
				t.Fatalf("no %s event in %+v", typ, evs)
			}
		}
		// New judges and projects start over at table 1.
		r.addProjects(1)
		r.e.Read(func(s *State) {
			if _, ok := s.projectAt(1); !ok {
				t.Fatal("new project not at table 1")
			}
		})
	}
}

func TestResetJudgingData(t *testing.T) {
	r, judges, projects := judgedRig(t)
	before := r.opts()
	_, evs := r.must(&Reset{Type: ResetJudgingData})
	r.e.Read(func(s *State) {
		if len(s.Judges) != 2 || len(s.Projects) != 3 || len(s.Flags) != 0 {
			t.Fatalf("counts %d %d %d", len(s.Judges), len(s.Projects), len(s.Flags))
		}
		for _, id := range judges {
			j := s.Judges[id]
			if len(j.SeenProjects) != 0 || j.Seen != 0 || j.GroupSeen != 0 || len(j.Rankings) != 0 ||
				len(j.Skipped) != 0 || !j.Current.IsZero() || j.LastLocation != -1 {
				t.Fatalf("judge not cleared: %+v", j)
			}
			if !j.ReadWelcome || j.Name == "" {
				t.Fatalf("judge lost its identity: %+v", j)
			}
		}
		for _, id := range projects {
			if p := s.Projects[id]; p.Seen != 0 || len(p.TrackSeen) != 0 || !p.Active {
				t.Fatalf("project not cleared: %+v", p)
			}
		}
		if _, ok := s.JudgeByToken("0123456789012345678901234567890123456789012345678901234567890123"); !ok {
			t.Fatal("judge session lost")
		}
	})
	after := r.opts()
	after.Ref = before.Ref
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("options changed:\n%+v\n%+v", before, after)
	}
	n := 0
	for _, e := range evs {
		if e.Type == EvJudge {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d judge events, want 2", n)
	}
}

func TestResetProjectsAndJudges(t *testing.T) {
	r, judges, _ := judgedRig(t)
	r.must(&Reset{Type: ResetProjects})
	r.e.Read(func(s *State) {
		if len(s.Projects) != 0 || len(s.Judges) != 2 || len(s.Flags) != 0 {
			t.Fatalf("projects reset: %d projects %d judges %d flags", len(s.Projects), len(s.Judges), len(s.Flags))
		}
		for _, id := range judges {
			if j := s.Judges[id]; len(j.SeenProjects) != 0 || !j.Current.IsZero() || len(j.Rankings) != 0 || j.Seen != 0 {
				t.Fatalf("judge kept judging data: %+v", j)
			}
		}
	})

	r, _, projects := judgedRig(t)
	r.must(&Reset{Type: ResetJudges})
	r.e.Read(func(s *State) {
		if len(s.Judges) != 0 || len(s.JudgeOrder) != 0 || len(s.Projects) != 3 || len(s.Flags) != 0 {
			t.Fatalf("judges reset: %d judges %d projects %d flags", len(s.Judges), len(s.Projects), len(s.Flags))
		}
		for _, id := range projects {
			if p := s.Projects[id]; p.Seen != 0 || len(p.TrackSeen) != 0 {
				t.Fatalf("project kept judging data: %+v", p)
			}
		}
		if len(s.codeIndex) != 0 || len(s.tokenIndex) != 0 {
			t.Fatal("login code or token index not rebuilt")
		}
	})
	if got := r.opts(); !got.Deliberation || len(got.Tracks) != 1 {
		t.Fatalf("options changed by a judges reset: %+v", got)
	}
}

func TestResetRankings(t *testing.T) {
	r, judges, projects := judgedRig(t)
	r.must(&Reset{Type: ResetRankings})
	r.e.Read(func(s *State) {
		for _, id := range judges {
			j := s.Judges[id]
			if len(j.Rankings) != 0 || len(j.SeenProjects) != 2 || j.Current != projects[2] || j.Seen != 2 {
				t.Fatalf("rankings reset touched more: %+v", j)
			}
		}
		if len(s.Flags) != 1 || s.Projects[projects[0]].Seen != 2 {
			t.Fatal("rankings reset cleared more than rankings")
		}
	})
}

func TestDismissFlag(t *testing.T) {
	r, judges, projects := judgedRig(t)
	r.e.Read(func(s *State) {
		// Out of time order on purpose: the view sorts.
		s.Flags = append(s.Flags, Flag{ID: ID{9, 2}, ProjectID: projects[1], JudgeID: judges[1], Time: 5, Reason: "absent"})
	})
	var fl []Flag
	r.e.Read(func(s *State) { fl = s.FlagsView() })
	if len(fl) != 2 || fl[0].ID != (ID{9, 2}) || fl[1].ID != (ID{9, 1}) {
		t.Fatalf("flags view %+v", fl)
	}
	r.refuse(KindNotFound, &DismissFlag{Flag: ID{9, 3}})
	_, evs := r.must(&DismissFlag{Flag: ID{9, 1}})
	r.e.Read(func(s *State) {
		if len(s.Flags) != 1 || s.Flags[0].ID != (ID{9, 2}) {
			t.Fatalf("flags %+v", s.Flags)
		}
		// The skip still excludes the project for that judge.
		if _, ok := s.Judges[judges[0]].Skipped[projects[2]]; !ok {
			t.Fatal("dismissing the flag dropped the skip")
		}
	})
	if !hasEvent(evs, EvLog) {
		t.Fatal("no audit line")
	}
	r.refuse(KindNotFound, &DismissFlag{Flag: ID{9, 1}})
}
