package engine

import "testing"

// Admin commands on judges, projects and groups at the scale target (bigState: 10,000
// projects, 5,000 judges with 20 finished projects each).
//
//	go test ./engine -run '^$' -bench 'Admin' -benchtime 200x

func benchApply(b *testing.B, e *Engine, mk func(i int) Command) {
	b.Helper()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := e.Apply(&Envelope{Time: 1e12 + int64(i), Seed: uint64(i), Actor: Admin, Cmd: mk(i)}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchProjects(e *Engine) []ID {
	var ids []ID
	e.Read(func(s *State) {
		for _, p := range s.ProjectsByLocation() {
			ids = append(ids, p.ID)
		}
	})
	return ids
}

// BenchmarkAdminMoveProject moves one project back and forth between two tables (its
// group and every judge's copy follow).
func BenchmarkAdminMoveProject(b *testing.B) {
	e := bigState(b)
	p := benchProjects(e)[0]
	benchApply(b, e, func(i int) Command { return &MoveProject{Project: p, Location: 20000 + i%2} })
}

// BenchmarkAdminHideProject hides and unhides one project.
func BenchmarkAdminHideProject(b *testing.B) {
	e := bigState(b)
	p := benchProjects(e)[0]
	benchApply(b, e, func(i int) Command { return &HideProjects{Projects: []ID{p}, Hide: i%2 == 0} })
}

// BenchmarkAdminDeleteProject deletes a different project each time.
func BenchmarkAdminDeleteProject(b *testing.B) {
	e := bigState(b)
	ps := benchProjects(e)
	if b.N > len(ps) {
		b.Fatalf("at most %d iterations (-benchtime %dx)", len(ps), len(ps))
	}
	benchApply(b, e, func(i int) Command { return &DeleteProject{Project: ps[i]} })
}

// BenchmarkAdminSwapGroups moves all 5,000 judges to their next group.
func BenchmarkAdminSwapGroups(b *testing.B) {
	e := bigState(b)
	benchApply(b, e, func(int) Command { return &SwapGroups{} })
}

// BenchmarkAdminReassignProjects renumbers all 10,000 projects.
func BenchmarkAdminReassignProjects(b *testing.B) {
	e := bigState(b)
	benchApply(b, e, func(int) Command { return &ReassignProjects{} })
}

// BenchmarkAdminBalanceGroups recomputes the group sizes over 10,000 projects.
func BenchmarkAdminBalanceGroups(b *testing.B) {
	e := bigState(b)
	benchApply(b, e, func(int) Command { return &BalanceGroups{} })
}
