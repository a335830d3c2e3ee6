package engine

import (
	"fmt"
	"testing"
)

func benchEngine(b *testing.B, projects int) *Engine {
	e := New()
	ps := make([]NewProject, projects)
	for i := range ps {
		ps[i] = NewProject{Name: fmt.Sprint("p", i)}
	}
	if _, _, err := e.Apply(&Envelope{Time: 1000, Seed: 1, Actor: Admin, Cmd: &CreateProjects{Projects: ps}}); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkApply measures commands applied per second by the engine alone (no journal)
// on a state with 1,000 projects.
//
//	go test ./engine -run '^$' -bench Apply -benchmem
func BenchmarkApply(b *testing.B) {
	b.Run("clock-toggle", func(b *testing.B) {
		e := benchEngine(b, 1000)
		cmds := []Command{&ClockUnpause{}, &ClockPause{}}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, _, err := e.Apply(&Envelope{Time: int64(2000 + i), Seed: uint64(i), Actor: Admin, Cmd: cmds[i%2]}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
	})
	b.Run("admin-login", func(b *testing.B) {
		e := benchEngine(b, 1000)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			h := fmt.Sprintf("%064x", i%64)
			if _, _, err := e.Apply(&Envelope{Time: int64(2000 + i), Seed: uint64(i), Actor: Admin, Cmd: &AdminLogin{SessionHash: h}}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
	})
	b.Run("create-judge", func(b *testing.B) {
		e := benchEngine(b, 1000)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			cmd := &CreateJudges{Judges: []NewJudge{{Name: "j", Email: fmt.Sprintf("j%d@x.io", i)}}, Codes: []string{fmt.Sprintf("%08d", i)}}
			if _, _, err := e.Apply(&Envelope{Time: int64(2000 + i), Seed: uint64(i), Actor: Admin, Cmd: cmd}); err != nil {
				b.Fatal(err)
			}
			if i%1000 == 999 { // keep the state size steady
				b.StopTimer()
				e = benchEngine(b, 1000)
				b.StartTimer()
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
	})
}
