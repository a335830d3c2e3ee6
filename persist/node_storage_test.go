package persist

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist/store"
)

// TestReadOnlyHealsByItself: after a journal write failure the node refuses changes
// (ErrReadOnly, not ready) and serves reads; once writes work again the periodic probe
// makes it writable without a restart, and what it accepts then is durable.
func TestReadOnlyHealsByItself(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{ProbeEvery: 10 * time.Millisecond})
	addProject(t, n, 1)
	n.j.SetFault(func() error { return syscall.ENOSPC })
	if _, err := n.Submit(context.Background(), engine.Admin, &engine.ClockUnpause{}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("submit on a failing journal: %v", err)
	}
	if n.Ready() || !errors.Is(n.Failure(), syscall.ENOSPC) {
		t.Fatalf("ready=%v failure=%v", n.Ready(), n.Failure())
	}
	n.j.SetFault(nil)
	deadline := time.Now().Add(10 * time.Second)
	for !n.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("node did not become writable again")
		}
		time.Sleep(5 * time.Millisecond)
	}
	addProject(t, n, 2)
	want := stateHash(t, n)
	crash(n)
	n = openNode(t, dir, Options{})
	defer n.Close()
	if stateHash(t, n) != want {
		t.Fatal("state after restart differs")
	}
}

// TestMigratesBadgerJournal: a data directory whose journal is in Badger (before the
// file journal) starts with the same state; its records move into the file journal
// once and leave Badger.
func TestMigratesBadgerJournal(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{SnapshotEvery: 1 << 40})
	for i := 0; i < 12; i++ {
		addProject(t, n, i)
	}
	n.Snapshot() // covers 12
	for i := 12; i < 20; i++ {
		addJudge(t, n, i)
	}
	want := stateHash(t, n)
	var recs []legacyRecord
	if err := n.j.Replay(0, func(seq uint64, b []byte) error {
		recs = append(recs, legacyRecord{Seq: seq, Payload: append([]byte(nil), b...)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 8 {
		t.Fatalf("journal holds %d records after the snapshot, want 8", len(recs))
	}
	crash(n)
	// Rebuild the old layout: the same records in Badger, no journal directory.
	os.RemoveAll(journalDir(dir))
	st, err := store.Open(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if err := writeLegacyJournal(st, recs); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for round := 0; round < 2; round++ {
		n = openNode(t, dir, Options{})
		if got := stateHash(t, n); got != want {
			t.Fatalf("round %d: migrated state differs", round)
		}
		if f, l := n.j.FirstIndex(), n.j.LastIndex(); f != 13 || l != 20 {
			t.Fatalf("round %d: file journal holds %d..%d, want 13..20", round, f, l)
		}
		_, torn, err := n.st.ReplayLegacyJournal(0, func(uint64, []byte) error { return errors.New("a Badger record is left") })
		if err != nil || torn {
			t.Fatalf("round %d: %v %v", round, err, torn)
		}
		crash(n)
	}
}

// TestSnapshotOnNearlyFullDiskKeepsTheOldOne: with too little free space for Badger
// (which would write through mmap and could die of SIGBUS) the snapshot is not written
// and says so; the previous snapshot and the journal after it stay, and the state
// recovers completely.
func TestSnapshotOnNearlyFullDiskKeepsTheOldOne(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{SnapshotEvery: 1 << 40})
	addProject(t, n, 1)
	if err := n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	_, old, _, _ := n.st.LoadSnapshot()
	addProject(t, n, 2)
	n.st.SetFreeSpace(func(string) (int64, error) { return 1 << 20, nil })
	err := n.Snapshot()
	if err == nil || !strings.Contains(err.Error(), "MiB free") {
		t.Fatalf("snapshot on a nearly full disk: %v", err)
	}
	if _, cur, _, _ := n.st.LoadSnapshot(); cur != old {
		t.Fatalf("snapshot pointer changed: %+v -> %+v", old, cur)
	}
	if n.j.LastIndex() != 2 {
		t.Fatalf("journal last = %d, want 2 (not truncated)", n.j.LastIndex())
	}
	want := stateHash(t, n)
	n.st.SetFreeSpace(nil) // (else Close leaves Badger open, as a dying process would)
	crash(n)
	n = openNode(t, dir, Options{})
	defer n.Close()
	if stateHash(t, n) != want {
		t.Fatal("state after restart differs")
	}
}

// TestSnapshotDropsCoveredSegments: once a snapshot covers them, old journal segments
// are deleted, and a restart still recovers everything.
func TestSnapshotDropsCoveredSegments(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{SnapshotEvery: 1 << 40, SegmentSize: 4096})
	for i := 0; i < 60; i++ {
		addProject(t, n, i)
	}
	if segs := segFiles(t, journalDir(dir)); len(segs) < 3 {
		t.Fatalf("%d segments, want several", len(segs))
	}
	if err := n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if segs := segFiles(t, journalDir(dir)); len(segs) != 1 {
		t.Fatalf("segments after the snapshot: %v, want only the active one", segs)
	}
	addProject(t, n, 60)
	want := stateHash(t, n)
	crash(n)
	n = openNode(t, dir, Options{SegmentSize: 4096})
	defer n.Close()
	if stateHash(t, n) != want {
		t.Fatal("state after restart differs")
	}
	if f := n.j.FirstIndex(); f != 61 {
		t.Fatalf("journal first index %d, want 61", f)
	}
}

// TestOrphanSnapshotsDroppedAtOpen: chunks of snapshots the pointer does not name (the
// previous one when a crash came between the pointer flip and its DropPrefix, or an
// unfinished one) are dropped when the node opens; the current one stays and loads.
func TestOrphanSnapshotsDroppedAtOpen(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{SnapshotEvery: 1 << 40})
	for i := 0; i < 5; i++ {
		addProject(t, n, i)
	}
	if err := n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	addProject(t, n, 5)
	if err := n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	want := stateHash(t, n)
	ptr, found, err := storePointer(n.st)
	if err != nil || !found || ptr.ID < 2 {
		t.Fatalf("pointer %+v found %v err %v: want a second snapshot", ptr, found, err)
	}
	// What a crash at the wrong moment leaves: the previous snapshot's chunks (id - 1)
	// and the start of an unfinished one (id + 1).
	for _, id := range []uint64{ptr.ID - 1, ptr.ID + 1} {
		if err := n.st.Update(func(txn *badger.Txn) error {
			return txn.Set(snapKey(id, 0), []byte("left over"))
		}); err != nil {
			t.Fatal(err)
		}
	}
	if got := snapshotIDs(t, n.st); len(got) != 3 {
		t.Fatalf("snapshot ids before the restart: %v, want 3", got)
	}
	crash(n)
	n = openNode(t, dir, Options{SnapshotEvery: 1 << 40})
	defer n.Close()
	if got := snapshotIDs(t, n.st); len(got) != 1 || got[0] != ptr.ID {
		t.Fatalf("snapshot ids after the restart: %v, want only %d", got, ptr.ID)
	}
	if stateHash(t, n) != want {
		t.Fatal("state after restart differs")
	}
}
