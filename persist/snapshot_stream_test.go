package persist

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"
)

// TestStreamedSnapshotChunks: a snapshot streamed in many small writes is stored in
// 1 MiB chunks and reads back byte for byte (size and checksum included); a snapshot
// whose encoding fails leaves the previous one current and no chunks behind.
func TestStreamedSnapshotChunks(t *testing.T) {
	st, err := OpenStore(t.TempDir(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	want := make([]byte, 2*snapChunkSize+12345)
	for i := range want {
		want[i] = byte(i*7 + i/1000)
	}
	encode := func(w io.Writer) error {
		for p := want; len(p) > 0; {
			n := min(len(p), 777)
			if _, err := w.Write(p[:n]); err != nil {
				return err
			}
			p = p[n:]
		}
		return nil
	}
	size, err := st.WriteSnapshotFrom(encode, 10, 1)
	if err != nil || size != len(want) {
		t.Fatalf("write: size %d err %v", size, err)
	}
	got, ptr, found, err := st.loadSnapshot()
	if err != nil || !found || !bytes.Equal(got, want) {
		t.Fatalf("read back: found %v err %v equal %v", found, err, bytes.Equal(got, want))
	}
	if ptr.Chunks != 3 || ptr.Seq != 10 {
		t.Fatalf("pointer %+v, want 3 chunks at seq 10", ptr)
	}

	// A failing encoder after more than one chunk.
	boom := errors.New("disk full")
	_, err = st.WriteSnapshotFrom(func(w io.Writer) error {
		if _, err := w.Write(make([]byte, snapChunkSize+1)); err != nil {
			return err
		}
		return boom
	}, 20, 2)
	if !errors.Is(err, boom) {
		t.Fatalf("failed encode: err %v", err)
	}
	got, ptr, _, err = st.loadSnapshot()
	if err != nil || ptr.Seq != 10 || !bytes.Equal(got, want) {
		t.Fatalf("previous snapshot not current after a failed one: %+v %v", ptr, err)
	}
	if n := countKeys(t, st, snapPrefix(ptr.ID+1)); n != 0 {
		t.Fatalf("%d chunks of the failed snapshot left", n)
	}

	// An empty snapshot is one empty chunk.
	if _, err := st.WriteSnapshotFrom(func(io.Writer) error { return nil }, 30, 3); err != nil {
		t.Fatal(err)
	}
	got, ptr, _, err = st.loadSnapshot()
	if err != nil || ptr.Chunks != 1 || len(got) != 0 {
		t.Fatalf("empty snapshot: %+v %d bytes %v", ptr, len(got), err)
	}
}

func countKeys(t *testing.T, st *Store, prefix []byte) int {
	t.Helper()
	n := 0
	err := st.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
