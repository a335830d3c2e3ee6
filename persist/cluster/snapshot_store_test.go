package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"
	"podium/persist/store"
)

// Raft snapshots in Badger (cluster_snapshots.go): the store's contract as raft uses it.

var testConf = raft.Configuration{Servers: []raft.Server{
	{Suffrage: raft.Voter, ID: "n1", Address: "127.0.0.1:7001"},
	{Suffrage: raft.Voter, ID: "n2", Address: "127.0.0.1:7002"},
}}

func openTestSnapshots(t *testing.T, dir string) (*store.Store, *badgerSnapshots) {
	t.Helper()
	st, err := store.Open(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	s, err := newBadgerSnapshots(st, raftSnapRetain, zerolog.Nop())
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	return st, s
}

func snapData(seed uint64, size int) []byte {
	b := make([]byte, size)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b
}

// storeMinFree is the free space the snapshot store wants before it writes (store.minFree).
const storeMinFree = 128 << 20

// testTrans is what raft's file store needs to encode the (deprecated) peers.
var _, testTrans = raft.NewInmemTransport("")

// writeSnap writes data through a sink in uneven pieces and closes it.
func writeSnap(t *testing.T, s raft.SnapshotStore, index, term uint64, data []byte) string {
	t.Helper()
	sink, err := s.Create(1, index, term, testConf, 3, testTrans)
	if err != nil {
		t.Fatal(err)
	}
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 300_001)
		if _, err := sink.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	return sink.ID()
}

func readSnap(s raft.SnapshotStore, id string) (*raft.SnapshotMeta, []byte, error) {
	meta, rc, err := s.Open(id)
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return meta, b, err
}

// countKeys counts the keys under a prefix.
func countRaftKeys(t *testing.T, st *store.Store, prefix []byte) int {
	t.Helper()
	n := 0
	if err := st.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRaftSnapshotsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	st, s := openTestSnapshots(t, dir)
	if l, err := s.List(); err != nil || len(l) != 0 {
		t.Fatalf("new store lists %v %v", l, err)
	}
	if _, err := s.Create(0, 1, 1, testConf, 1, nil); err == nil {
		t.Fatal("version 0 accepted")
	}
	data := snapData(1, 3*raftChunkSize+12345)
	id := writeSnap(t, s, 120, 4, data)
	if got := countRaftKeys(t, st, prefixRaftChunk); got != 4 {
		t.Fatalf("%d chunks, want 4", got)
	}
	l, err := s.List()
	if err != nil || len(l) != 1 {
		t.Fatalf("list %v %v", l, err)
	}
	m := l[0]
	if m.ID != id || m.Index != 120 || m.Term != 4 || m.Version != 1 || m.Size != int64(len(data)) ||
		m.ConfigurationIndex != 3 || len(m.Configuration.Servers) != 2 || m.Configuration.Servers[1].Address != "127.0.0.1:7002" {
		t.Fatalf("meta %+v", m)
	}
	meta, got, err := readSnap(s, id)
	if err != nil || !bytes.Equal(got, data) || meta.Size != m.Size || meta.Index != 120 {
		t.Fatalf("read back: err %v, %d bytes (equal %v)", err, len(got), bytes.Equal(got, data))
	}
	// An empty snapshot is a valid one.
	empty := writeSnap(t, s, 121, 4, nil)
	if _, got, err := readSnap(s, empty); err != nil || len(got) != 0 {
		t.Fatalf("empty snapshot: %d bytes, %v", len(got), err)
	}
	if _, _, err := s.Open("4-120-999"); err == nil {
		t.Fatal("unknown id opened")
	}
	if _, _, err := s.Open("garbage"); err == nil {
		t.Fatal("malformed id opened")
	}
	// Survives a restart; raft's own helper sees the state.
	st.Close()
	st, s = openTestSnapshots(t, dir)
	defer st.Close()
	if l, _ := s.List(); len(l) != 2 || l[0].ID != empty || l[1].ID != id {
		t.Fatalf("after reopen: %v", l)
	}
	if _, got, err := readSnap(s, id); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after reopen: %v", err)
	}
	// A new snapshot after a restart does not reuse a key.
	id3 := writeSnap(t, s, 130, 4, []byte("x"))
	if id3 == id || id3 == empty {
		t.Fatalf("key reused: %s", id3)
	}
}

func TestRaftSnapshotsCancelAndLeftovers(t *testing.T) {
	dir := t.TempDir()
	st, s := openTestSnapshots(t, dir)
	prev := writeSnap(t, s, 10, 1, snapData(2, 5000))

	sink, err := s.Create(1, 20, 1, testConf, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Write(snapData(3, 2*raftChunkSize+7)); err != nil {
		t.Fatal(err)
	}
	if err := sink.Cancel(); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil { // after Cancel: a no-op
		t.Fatal(err)
	}
	if l, _ := s.List(); len(l) != 1 || l[0].ID != prev {
		t.Fatalf("after cancel: %v", l)
	}
	if got := countRaftKeys(t, st, prefixRaftChunk); got != 1 {
		t.Fatalf("%d chunks after cancel, want the previous snapshot's 1", got)
	}
	if _, err := sink.Write([]byte("x")); err == nil {
		t.Fatal("write after cancel accepted")
	}

	// A sink abandoned mid-write (the process died): its chunks are on disk, it is not
	// listed, and the next open deletes them.
	sink, err = s.Create(1, 30, 1, testConf, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Write(snapData(4, 3*raftChunkSize)); err != nil {
		t.Fatal(err)
	}
	if got := countRaftKeys(t, st, prefixRaftChunk); got != 4 {
		t.Fatalf("%d chunks mid-write, want 4", got)
	}
	if l, _ := s.List(); len(l) != 1 || l[0].ID != prev {
		t.Fatalf("an unfinished snapshot is listed: %v", l)
	}
	st.Close()
	st, s = openTestSnapshots(t, dir)
	defer st.Close()
	if got := countRaftKeys(t, st, prefixRaftChunk); got != 1 {
		t.Fatalf("%d chunks after reopen, want 1", got)
	}
	if _, got, err := readSnap(s, prev); err != nil || !bytes.Equal(got, snapData(2, 5000)) {
		t.Fatalf("previous snapshot: %v", err)
	}
}

func TestRaftSnapshotsRetainTwo(t *testing.T) {
	st, s := openTestSnapshots(t, t.TempDir())
	defer st.Close()
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, writeSnap(t, s, uint64(100*(i+1)), 2, snapData(uint64(i), raftChunkSize+1)))
	}
	l, _ := s.List()
	if len(l) != 2 || l[0].ID != ids[2] || l[1].ID != ids[1] {
		t.Fatalf("list %v, want %s %s", l, ids[2], ids[1])
	}
	if got := countRaftKeys(t, st, prefixRaftChunk); got != 4 {
		t.Fatalf("%d chunks, want 4 (two snapshots of two)", got)
	}
	if got := countRaftKeys(t, st, prefixRaftMeta); got != 2 {
		t.Fatalf("%d metadata keys, want 2", got)
	}
	if _, _, err := s.Open(ids[0]); err == nil {
		t.Fatal("a deleted snapshot opened")
	}
	// A snapshot being read (sent to a follower) when newer ones replace it is read to
	// the end; its chunks go when the reader closes.
	_, rc, err := s.Open(ids[1])
	if err != nil {
		t.Fatal(err)
	}
	writeSnap(t, s, 400, 2, []byte("newer"))
	writeSnap(t, s, 500, 3, []byte("newest"))
	if l, _ := s.List(); len(l) != 2 || l[1].Index != 400 {
		t.Fatalf("list %v", l)
	}
	got, err := io.ReadAll(rc)
	if err != nil || !bytes.Equal(got, snapData(1, raftChunkSize+1)) {
		t.Fatalf("reading a replaced snapshot: %v", err)
	}
	if n := countRaftKeys(t, st, prefixRaftChunk); n != 4 {
		t.Fatalf("%d chunks while the replaced snapshot is open, want 4", n)
	}
	rc.Close()
	if n := countRaftKeys(t, st, prefixRaftChunk); n != 2 {
		t.Fatalf("%d chunks after the reader closed, want 2", n)
	}
	// Raft's order: term first, then index.
	l, _ = s.List()
	if l[0].Term != 3 || l[0].Index != 500 {
		t.Fatalf("newest first: %+v", l[0])
	}
}

func TestRaftSnapshotsDamageDetected(t *testing.T) {
	st, s := openTestSnapshots(t, t.TempDir())
	defer st.Close()
	data := snapData(9, 3*raftChunkSize)
	id := writeSnap(t, s, 50, 2, data)
	key, _ := keyOf(id)
	get := func(n int) []byte {
		var v []byte
		if err := st.View(func(txn *badger.Txn) error {
			item, err := txn.Get(raftChunkKey(key, n))
			if err == nil {
				v, err = item.ValueCopy(nil)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return v
	}
	set := func(n int, v []byte) {
		if err := st.Update(func(txn *badger.Txn) error { return txn.Set(raftChunkKey(key, n), v) }); err != nil {
			t.Fatal(err)
		}
	}
	mustFail := func(what string) {
		t.Helper()
		_, got, err := readSnap(s, id)
		if err == nil || !strings.Contains(err.Error(), "damaged") && !errors.Is(err, badger.ErrKeyNotFound) {
			t.Fatalf("%s: read %d bytes, err %v", what, len(got), err)
		}
	}
	c0, c1, c2 := get(0), get(1), get(2)

	bad := bytes.Clone(c1)
	bad[1000] ^= 1
	set(1, bad)
	mustFail("a flipped bit")

	set(1, c2) // chunks in the wrong order: each passes its own check, the whole does not
	set(2, c1)
	mustFail("swapped chunks")

	set(1, c1)
	set(2, c1[:4+100]) // truncated: its checksum fails
	mustFail("a truncated chunk")

	set(2, c2)
	if err := st.Update(func(txn *badger.Txn) error { return txn.Delete(raftChunkKey(key, 2)) }); err != nil {
		t.Fatal(err)
	}
	mustFail("a missing chunk")

	set(2, c2)
	set(0, c0)
	if _, got, err := readSnap(s, id); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("repaired: %v", err)
	}
	// A reader limited to the snapshot's size (as raft's transport copies it) still
	// sees the damage: the whole is checked before the last chunk's bytes go out.
	set(1, c2)
	set(2, c1)
	_, rc, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if n, err := io.CopyN(io.Discard, rc, int64(len(data))); err == nil {
		t.Fatalf("copied %d bytes of a damaged snapshot without an error", n)
	}
}

func TestRaftSnapshotsFullDisk(t *testing.T) {
	dir := t.TempDir()
	st, s := openTestSnapshots(t, dir)
	prev := writeSnap(t, s, 10, 1, snapData(5, 1000))
	var free int64 = 1 << 40
	st.SetFreeSpace(func(string) (int64, error) { return free, nil })

	// No room at the start: Create fails, raft keeps the previous snapshot.
	free = storeMinFree - 1
	if _, err := s.Create(1, 20, 1, testConf, 3, nil); err == nil {
		t.Fatal("Create on a full disk succeeded")
	}
	// The disk fills up mid-write: the write fails, Close fails, nothing new is listed.
	free = 1 << 40
	sink, err := s.Create(1, 20, 1, testConf, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Write(snapData(6, raftChunkSize+10)); err != nil {
		t.Fatal(err)
	}
	free = storeMinFree - 1
	if _, err := sink.Write(snapData(7, raftChunkSize)); err == nil {
		t.Fatal("write on a full disk succeeded")
	}
	if err := sink.Close(); err == nil {
		t.Fatal("Close of a failed sink succeeded")
	}
	if l, err := s.List(); err != nil || len(l) != 1 || l[0].ID != prev {
		t.Fatalf("after the failed snapshot: %v %v", l, err)
	}
	if _, got, err := readSnap(s, prev); err != nil || !bytes.Equal(got, snapData(5, 1000)) {
		t.Fatalf("previous snapshot on a full disk: %v", err)
	}
	// The failed snapshot's chunk could not be deleted without room; the next open
	// with room does it.
	if n := countRaftKeys(t, st, prefixRaftChunk); n != 2 {
		t.Fatalf("%d chunks, want 2 (the previous one and the failed one's first)", n)
	}
	free = 1 << 40
	st.Close()
	st, s = openTestSnapshots(t, dir)
	defer st.Close()
	if n := countRaftKeys(t, st, prefixRaftChunk); n != 1 {
		t.Fatalf("%d chunks after reopen, want 1", n)
	}
	writeSnap(t, s, 30, 1, []byte("room again"))
}
