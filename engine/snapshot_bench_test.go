package engine

import (
	"fmt"
	"testing"
)

// bigState builds the scale target of docs/behaviour.md#scale-targets: 10,000 projects and 5,000 judges who
// have each finished 20 projects.
func bigState(tb testing.TB) *Engine {
	tb.Helper()
	e := New()
	ps := make([]NewProject, 10000)
	for i := range ps {
		ps[i] = NewProject{Name: fmt.Sprintf("Project %d", i), Description: "A project description of moderate length for the expo.", URL: "https://example.org/p", ChallengeList: []string{"AI", "Web"}}
	}
	if _, _, err := e.Apply(&Envelope{Time: 1e12, Seed: 1, Actor: Admin, Cmd: &CreateProjects{Projects: ps}}); err != nil {
		tb.Fatal(err)
	}
	js := make([]NewJudge, 5000)
	codes := make([]string, 0, 5010)
	for i := range js {
		js[i] = NewJudge{Name: fmt.Sprintf("Judge %d", i), Email: fmt.Sprintf("judge%d@example.org", i)}
		codes = append(codes, fmt.Sprintf("%08d", i))
	}
	if _, _, err := e.Apply(&Envelope{Time: 1e12, Seed: 2, Actor: Admin, Cmd: &CreateJudges{Judges: js, Codes: codes}}); err != nil {
		tb.Fatal(err)
	}
	e.Read(func(s *State) {
		projects := s.ProjectsByLocation()
		for i, j := range s.JudgesInOrder() {
			for k := 0; k < 20; k++ {
				p := projects[(i*20+k)%len(projects)]
				j.SeenProjects = append(j.SeenProjects, SeenProject{ProjectID: p.ID, Name: p.Name, Location: p.Location, Description: p.Description, Notes: "Good demo, clear pitch."})
			}
		}
	})
	return e
}

// BenchmarkSnapshotEncode measures encoding the whole state at the scale target.
//
//	go test ./engine -run '^$' -bench SnapshotEncode -benchtime 5x
func BenchmarkSnapshotEncode(b *testing.B) {
	e := bigState(b)
	b.ResetTimer()
	size := 0
	for i := 0; i < b.N; i++ {
		data, _, err := e.Snapshot()
		if err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.ReportMetric(float64(size)/(1<<20), "MiB")
}

// BenchmarkSnapshotRestore measures decoding it (startup recovery).
func BenchmarkSnapshotRestore(b *testing.B) {
	data, _, _ := bigState(b).Snapshot()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := New().Restore(data); err != nil {
			b.Fatal(err)
		}
	}
}
