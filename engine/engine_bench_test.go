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

// BenchmarkJudgeLoop is the writer's share of the ratio benchmark's judge phase
// (loadtest -ratio): 64 judges take turns at next → finish over 2,000 projects, and a
// judge who has seen them all is replaced by a fresh one. One op is one command.
//
//	go test ./engine -run '^$' -bench JudgeLoop -benchmem
func BenchmarkJudgeLoop(b *testing.B) {
	e := New()
	now := int64(1_700_000_000_000)
	seed := uint64(1)
	apply := func(actor Actor, cmd Command) any {
		now++
		seed++
		res, _, err := e.Apply(&Envelope{Time: now, Seed: seed * 0x9e3779b97f4a7c15, Actor: actor, Cmd: cmd})
		if err != nil {
			b.Fatalf("%s: %v", cmd.Kind(), err)
		}
		return res
	}
	ps := make([]NewProject, 2000)
	for i := range ps {
		ps[i] = NewProject{Name: fmt.Sprintf("ratio project %d", i), Description: "a project of the ratio benchmark"}
	}
	apply(Admin, &CreateProjects{Projects: ps})
	apply(Admin, &ClockUnpause{})
	made := 0
	fresh := func() ID {
		made++
		res := apply(Admin, &CreateJudges{Judges: []NewJudge{{Name: fmt.Sprint("judge ", made), Email: fmt.Sprintf("j%d@example.com", made)}},
			Codes: []string{fmt.Sprintf("%08d", 10_000_000+made)}}).([]CreatedJudge)
		return res[0].ID
	}
	js := make([]ID, 64)
	for i := range js {
		js[i] = fresh()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += 2 {
		k := (i / 2) % len(js)
		j := js[k]
		if res := apply(JudgeActor(j), &JudgeNext{Judge: j}).(NextResult); res.ProjectID.IsZero() {
			b.StopTimer()
			js[k] = fresh()
			b.StartTimer()
			continue
		}
		apply(JudgeActor(j), &JudgeFinish{Judge: j, Notes: "ok"})
	}
}
