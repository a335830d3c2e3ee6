package engine

import "testing"

// TestNewProjectTableAfterMovesAndDeletes: a new project takes the highest table in use
// plus one, whatever moved or was deleted since the last creation (maxLocation's cache
// must follow every change of the table index).
func TestNewProjectTableAfterMovesAndDeletes(t *testing.T) {
	f := newFixture(t)
	s := f.s()
	ps := f.projects("p1", "p2", "p3") // tables 1, 2, 3
	next := func(name string) int {
		t.Helper()
		id := f.projects(name)[0]
		return s.Projects[id].Location
	}
	if got := next("p4"); got != 4 {
		t.Fatalf("new project at %d, want 4", got)
	}
	f.must(&MoveProject{Project: ps[0], Location: 9})
	if got := next("p5"); got != 10 {
		t.Fatalf("after a move to 9: new project at %d, want 10", got)
	}
	f.must(&DeleteProject{Project: ps[0]}) // frees table 9
	if got := next("p6"); got != 11 {
		t.Fatalf("after deleting table 9: new project at %d, want 11 (10 is the highest)", got)
	}
	for _, id := range []ID{ps[1], ps[2]} {
		f.must(&DeleteProject{Project: id})
	}
	f.must(&ReassignProjects{}) // tables 1..n again
	n := len(s.Projects)
	if got := next("p7"); got != n+1 {
		t.Fatalf("after renumbering %d projects: new project at %d, want %d", n, got, n+1)
	}
}
