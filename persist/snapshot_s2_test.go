package persist

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"
	"podium/persist/store"
)

func readPointer(t *testing.T, dir string) store.Pointer {
	t.Helper()
	st, err := store.Open(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ptr, found, err := storePointer(st)
	if err != nil || !found {
		t.Fatalf("no snapshot pointer: %v", err)
	}
	return ptr
}

func setPointer(t *testing.T, dir string, ptr store.Pointer) {
	t.Helper()
	st, err := store.Open(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pb, _ := json.Marshal(ptr)
	if err := st.Update(func(txn *badger.Txn) error { return txn.Set(keySnapPointer, pb) }); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotsStoredAsS2: a node's snapshots are S2 streams, much smaller than the
// state's JSON, and a restart (after a crash, from snapshot and journal) gets the same
// state back.
func TestSnapshotsStoredAsS2(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{SnapshotEvery: 50})
	for i := 0; i < 120; i++ {
		addProject(t, n, i)
	}
	n.waitSnapshot()
	for i := 0; i < 7; i++ {
		addJudge(t, n, i)
	}
	want := stateHash(t, n)
	crash(n)
	ptr := readPointer(t, dir)
	if ptr.Enc != "s2" || ptr.Seq < 50 || ptr.Raw < 3*ptr.Size {
		t.Fatalf("snapshot pointer %+v: want an S2 snapshot of at least 50 commands, under a third of its JSON", ptr)
	}
	n2 := openNode(t, dir, Options{SnapshotEvery: 50})
	if got := stateHash(t, n2); got != want {
		t.Fatal("state after recovery from an S2 snapshot differs")
	}
	n2.Close()
}

// TestPlainSnapshotStillLoads: a data directory whose snapshot is the JSON itself (every
// version before S2, and backup restores) opens with its state, and its next snapshot
// is S2.
func TestPlainSnapshotStillLoads(t *testing.T) {
	src := t.TempDir()
	n := openNode(t, src, Options{})
	for i := 0; i < 30; i++ {
		addProject(t, n, i)
	}
	data, seq, err := n.eng.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := stateHash(t, n)
	n.Close()

	dir := t.TempDir()
	st, err := store.Open(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WriteSnapshot(data, seq, 1); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if ptr := readPointer(t, dir); ptr.Enc != "" || ptr.Raw != 0 || ptr.Size != len(data) {
		t.Fatalf("plain snapshot pointer %+v", ptr)
	}
	n2 := openNode(t, dir, Options{})
	if got := stateHash(t, n2); got != want {
		t.Fatal("state from a plain snapshot differs")
	}
	addJudge(t, n2, 1)
	if err := n2.Close(); err != nil { // a clean stop writes a snapshot
		t.Fatal(err)
	}
	if ptr := readPointer(t, dir); ptr.Enc != "s2" || ptr.Seq != seq+1 {
		t.Fatalf("snapshot after the restart %+v, want S2 at %d", ptr, seq+1)
	}
}

// TestUndecodableSnapshotStopsStartup: a snapshot whose stored bytes check out but do
// not decode, or that names an encoding this version does not know, stops the start
// with an error saying so, instead of starting with a wrong state.
func TestUndecodableSnapshotStopsStartup(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*store.Pointer)
		msg  string
	}{
		{"plain bytes called S2", func(p *store.Pointer) { p.Enc, p.Raw = "s2", 10*p.Size }, "does not decode"},
		{"S2 of another length", func(p *store.Pointer) { p.Raw++ }, "does not decode"},
		{"unknown encoding", func(p *store.Pointer) { p.Enc = "zstd" }, `stored as "zstd"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			n := openNode(t, dir, Options{})
			for i := 0; i < 10; i++ {
				addProject(t, n, i)
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			ptr := readPointer(t, dir)
			if c.name == "plain bytes called S2" {
				// Store the JSON plainly first, so that its bytes check out.
				st, err := store.Open(dir, zerolog.Nop())
				if err != nil {
					t.Fatal(err)
				}
				data, p2, _, err := st.LoadSnapshot()
				if err != nil {
					t.Fatal(err)
				}
				if err := st.WriteSnapshot(data, p2.Seq+1, 1); err != nil {
					t.Fatal(err)
				}
				st.Close()
				ptr = readPointer(t, dir)
			}
			c.edit(&ptr)
			setPointer(t, dir, ptr)
			_, err := Open(dir, Options{Log: zerolog.Nop()})
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("open: %v, want an error containing %q", err, c.msg)
			}
		})
	}
}
