package engine

import "testing"

func TestAdminStats(t *testing.T) {
	r := newSettingsRig(t)
	r.must(&SetOptions{Tracks: strsp("AI", "Web"), JudgeTracks: boolp(true)})
	if st := r.statsOf(""); st != (AdminStats{}) {
		t.Fatalf("empty: %+v", st)
	}
	ps := r.addProjects(3, "AI")
	web := r.addProjects(1, "Web")
	js := r.addJudges("", "", "", "AI", "AI")
	r.e.Read(func(s *State) {
		// seen 1, 2, 2 (+ a hidden project with 100 and the Web one with 0)
		s.Projects[ps[0]].Seen = 1
		s.Projects[ps[1]].Seen = 2
		s.Projects[ps[2]].Seen = 2
		s.Projects[ps[0]].TrackSeen["AI"] = 3
		s.Projects[ps[1]].TrackSeen["AI"] = 4
		s.Projects[web[0]].Seen = 0
		s.Judges[js[0]].Seen = 1
		s.Judges[js[1]].Seen = 2
		s.Judges[js[2]].Seen = 50
		s.Judges[js[2]].Active = false // hidden: left out
		s.Judges[js[3]].Seen = 2
		s.Judges[js[4]].Seen = 3
	})
	hidden := r.addProjects(1)
	r.e.Read(func(s *State) { s.Projects[hidden[0]].Seen, s.Projects[hidden[0]].Active = 100, false })

	// General: 4 active projects seen 1+2+2+0 = 5 -> 1.25 -> 1; judges 0 and 1: 1.5 -> 2.
	if st, want := r.statsOf(""), (AdminStats{Projects: 4, AvgProjectSeen: 1, AvgJudgeSeen: 2, Judges: 2}); st != want {
		t.Fatalf("general %+v want %+v", st, want)
	}
	// Track AI: 3 projects with track views 3+4+0 = 7 -> 2.33 -> 2; judges 2+3 -> 2.5 -> 3.
	if st, want := r.statsOf("AI"), (AdminStats{Projects: 3, AvgProjectSeen: 2, AvgJudgeSeen: 3, Judges: 2}); st != want {
		t.Fatalf("AI %+v want %+v", st, want)
	}
	if st, want := r.statsOf("Web"), (AdminStats{Projects: 1}); st != want {
		t.Fatalf("Web %+v want %+v", st, want)
	}
	// With judge_tracks off every judge is general.
	r.must(&SetOptions{JudgeTracks: boolp(false)})
	if st := r.statsOf(""); st.Judges != 4 || st.AvgJudgeSeen != 2 {
		t.Fatalf("tracks off: %+v", st)
	}
}

func (r *settingsRig) statsOf(track string) AdminStats {
	var st AdminStats
	r.e.Read(func(s *State) { st = s.AdminStats(track) })
	return st
}

func TestRoundedMean(t *testing.T) {
	for _, tc := range []struct{ sum, n, want int }{{0, 0, 0}, {5, 0, 0}, {1, 2, 1}, {1, 3, 0}, {2, 3, 1}, {5, 2, 3}, {7, 2, 4}, {10, 4, 3}, {9, 4, 2}} {
		if got := roundedMean(tc.sum, tc.n); got != tc.want {
			t.Errorf("roundedMean(%d,%d) = %d, want %d", tc.sum, tc.n, got, tc.want)
		}
	}
}

// BenchmarkAdminStats measures the statistics over 2,000 projects and 1,000 judges.
func BenchmarkAdminStats(b *testing.B) {
	s := NewState()
	for i := 0; i < 2000; i++ {
		id := ID{byte(i >> 8), byte(i), 1}
		s.Projects[id] = &Project{ID: id, Location: i + 1, Active: true, Seen: i % 7, ChallengeList: []string{"AI"}, TrackSeen: map[string]int{"AI": i % 3}}
	}
	for i := 0; i < 1000; i++ {
		id := ID{byte(i >> 8), byte(i), 2}
		s.Judges[id] = &Judge{ID: id, Active: true, Seen: i % 11}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = s.AdminStats("")
	}
}
