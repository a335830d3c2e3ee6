package persist

import (
	"context"
	"errors"
	"testing"

	"podium/engine"
)

// TestRefusedChangeIsNeitherVisibleNorPersisted: a change whose journal write failed was
// answered 503 (ErrReadOnly), so reads must not show it, and no later snapshot (forced
// by POST /api/admin/clock/backup, or periodic) may make it durable: after a restart it
// is not there.
func TestRefusedChangeIsNeitherVisibleNorPersisted(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{})
	addProject(t, n, 1)
	want := stateHash(t, n)
	n.j.SetFault(func() error { return errors.New("input/output error") })
	_, err := n.Submit(context.Background(), engine.Admin, &engine.CreateProjects{Projects: []engine.NewProject{{Name: "During"}}})
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("submit during failure: %v, want ErrReadOnly", err)
	}
	count := 0
	n.Read(func(s *engine.State) { count = len(s.Projects) })
	if count != 1 {
		t.Errorf("reads show %d projects, want 1: the refused change is visible", count)
	}
	// The fault was transient: the snapshot store works again, the node stays read-only.
	n.j.SetFault(nil)
	if err := n.Snapshot(); !errors.Is(err, ErrReadOnly) {
		t.Errorf("forced snapshot while read-only: %v, want ErrReadOnly", err)
	}
	if _, err := n.Backup(); err != nil {
		t.Errorf("backup while read-only: %v (backups of the durable state stay possible)", err)
	}
	n.Close()
	n = openNode(t, dir, Options{})
	defer n.Close()
	if got := stateHash(t, n); got != want {
		n.Read(func(s *engine.State) { count = len(s.Projects) })
		t.Fatalf("after restart the state differs from the last acknowledged one (%d projects)", count)
	}
}
