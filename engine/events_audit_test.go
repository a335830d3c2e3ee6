package engine

import "testing"

// TestUpdateJudgeTellsJudgeOfGroupChange: docs/behaviour.md#realtime — a judge is told ("judge" event)
// when its group changes from outside its own request. Editing a track judge into a
// general one moves it to the smallest group.
func TestUpdateJudgeTellsJudgeOfGroupChange(t *testing.T) {
	f := newFixture(t)
	tracks, on := []string{"AI"}, true
	f.must(&SetOptions{Tracks: &tracks, JudgeTracks: &on})
	f.must(&CreateJudges{Judges: []NewJudge{{Name: "A", Email: "a@example.com"}, {Name: "B", Email: "b@example.com"},
		{Name: "T", Email: "t@example.com", Track: "AI"}}, Codes: []string{"10000001", "10000002", "10000003"}})
	tj := f.s().JudgeOrder[2]
	general := ""
	evs := f.must(&UpdateJudge{Judge: tj, Track: &general})
	j := f.s().Judges[tj]
	if j.Group != 2 {
		t.Fatalf("T joined group %d, want 2", j.Group)
	}
	for _, ev := range evs {
		if ev.Type == EvJudge && ev.To == ToJudge && ev.Judge == tj {
			if d, ok := ev.Data.(JudgeEvent); !ok || d.Group != 2 {
				t.Fatalf("judge event data %+v", ev.Data)
			}
			return
		}
	}
	t.Fatalf("no judge event for T's group change; events %+v", evs)
}
