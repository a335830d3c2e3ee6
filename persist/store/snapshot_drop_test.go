package store

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestReplacedSnapshotsDroppedTogether: a snapshot drops its predecessor at once when
// the last drop is old; snapshots that follow faster leave theirs for one drop later.
// Whatever is pending, the current snapshot is the one that loads.
func TestReplacedSnapshotsDroppedTogether(t *testing.T) {
	st, err := Open(t.TempDir(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	write := func(seq uint64) []byte {
		t.Helper()
		data := []byte(`{"seq":` + string(rune('0'+seq)) + `}`)
		if err := st.WriteSnapshot(data, seq, 0); err != nil {
			t.Fatal(err)
		}
		got, _, found, err := st.LoadSnapshot()
		if err != nil || !found || !bytes.Equal(got, data) {
			t.Fatalf("snapshot %d loads as %q (found %v, %v)", seq, got, found, err)
		}
		return data
	}
	write(1)
	write(2) // no drop has run yet: snapshot 1 goes at once
	if ids := snapshotIDs(t, st); !slices.Equal(ids, []uint64{2}) {
		t.Fatalf("after the second snapshot the store holds %v, want [2]", ids)
	}
	write(3)
	write(4) // within snapDropEvery of the last drop: 2 and 3 wait
	if ids := snapshotIDs(t, st); !slices.Equal(ids, []uint64{2, 3, 4}) {
		t.Fatalf("snapshots in quick succession: the store holds %v, want [2 3 4]", ids)
	}
	st.snapMu.Lock()
	st.droppedAt = time.Now().Add(-snapDropEvery)
	st.snapMu.Unlock()
	write(5) // the last drop is old: 2, 3 and 4 go together
	if ids := snapshotIDs(t, st); !slices.Equal(ids, []uint64{5}) {
		t.Fatalf("after the interval the store holds %v, want [5]", ids)
	}

	// The value-log GC first drops what is pending.
	write(6)
	if ids := snapshotIDs(t, st); !slices.Equal(ids, []uint64{5, 6}) {
		t.Fatalf("store holds %v, want [5 6]", ids)
	}
	st.CollectGarbage()
	if ids := snapshotIDs(t, st); !slices.Equal(ids, []uint64{6}) {
		t.Fatalf("after the GC the store holds %v, want [6]", ids)
	}

	// Short of space, a snapshot drops the pending ones before it gives up.
	write(7)
	st.snapMu.Lock()
	st.freeSpace = func(string) (int64, error) {
		if len(st.dropPending) > 0 {
			return 0, nil // what the pending snapshots hold would be enough
		}
		return 1 << 40, nil
	}
	st.snapMu.Unlock()
	write(8) // 6 goes first; 7 waits like any replaced snapshot
	if ids := snapshotIDs(t, st); !slices.Equal(ids, []uint64{7, 8}) {
		t.Fatalf("short of space the store holds %v, want [7 8]", ids)
	}
}
