package store

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
	st, err := Open(t.TempDir(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	want := make([]byte, 2*snapChunkSize+12345)
	for i := range want {
		want[i] = byte(i*7 + i/1000)
	}
	size, err := st.writeSnapshotPlain(writeInPieces(want, 777), 10, 1)
	if err != nil || size != len(want) {
		t.Fatalf("write: size %d err %v", size, err)
	}
	got, ptr, found, err := st.LoadSnapshot()
	if err != nil || !found || !bytes.Equal(got, want) {
		t.Fatalf("read back: found %v err %v equal %v", found, err, bytes.Equal(got, want))
	}
	if ptr.Chunks != 3 || ptr.Seq != 10 {
		t.Fatalf("pointer %+v, want 3 chunks at seq 10", ptr)
	}

	// A failing encoder after more than one chunk.
	boom := errors.New("disk full")
	_, err = st.writeSnapshotPlain(func(w io.Writer) error {
		if _, err := w.Write(make([]byte, snapChunkSize+1)); err != nil {
			return err
		}
		return boom
	}, 20, 2)
	if !errors.Is(err, boom) {
		t.Fatalf("failed encode: err %v", err)
	}
	got, ptr, _, err = st.LoadSnapshot()
	if err != nil || ptr.Seq != 10 || !bytes.Equal(got, want) {
		t.Fatalf("previous snapshot not current after a failed one: %+v %v", ptr, err)
	}
	if n := countKeys(t, st, snapPrefix(ptr.ID+1)); n != 0 {
		t.Fatalf("%d chunks of the failed snapshot left", n)
	}

	// An empty snapshot is one empty chunk.
	if _, err := st.writeSnapshotPlain(func(io.Writer) error { return nil }, 30, 3); err != nil {
		t.Fatal(err)
	}
	got, ptr, _, err = st.LoadSnapshot()
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

// TestSnapshotChunkGroups: chunks are written several to a transaction; whatever the
// size (empty, one byte, exact multiples of a chunk and of a group, one byte over), a
// snapshot is stored as full 1 MiB chunks and one shorter last chunk (one empty chunk
// when empty) and reads back byte for byte.
func TestSnapshotChunkGroups(t *testing.T) {
	st, err := Open(t.TempDir(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	group := snapChunkSize * snapChunksPerTxn
	for i, size := range []int{0, 1, snapChunkSize, snapChunkSize + 1, group - 1, group, group + 1, 2*group + snapChunkSize/2} {
		want := make([]byte, size)
		for k := range want {
			want[k] = byte(k*13 + k/4096 + i)
		}
		if _, err := st.writeSnapshotPlain(writeInPieces(want, 300_001), uint64(i+1), 1); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		got, ptr, found, err := st.LoadSnapshot()
		if err != nil || !found || !bytes.Equal(got, want) {
			t.Fatalf("size %d: read back: found %v err %v equal %v", size, found, err, bytes.Equal(got, want))
		}
		chunks := max(1, (size+snapChunkSize-1)/snapChunkSize)
		if ptr.Chunks != chunks {
			t.Fatalf("size %d: %d chunks, want %d", size, ptr.Chunks, chunks)
		}
		err = st.db.View(func(txn *badger.Txn) error {
			for n := 0; n < chunks; n++ {
				item, err := txn.Get(snapKey(ptr.ID, n))
				if err != nil {
					return err
				}
				v, err := item.ValueCopy(nil)
				if err != nil {
					return err
				}
				if want := min(snapChunkSize, size-n*snapChunkSize); len(v) != want {
					t.Errorf("size %d: chunk %d holds %d bytes, want %d", size, n, len(v), want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// writeInPieces returns an encoder that writes data in pieces of at most n bytes.
func writeInPieces(data []byte, n int) func(io.Writer) error {
	return func(w io.Writer) error {
		for p := data; len(p) > 0; {
			k := min(len(p), n)
			if _, err := w.Write(p[:k]); err != nil {
				return err
			}
			p = p[k:]
		}
		return nil
	}
}
