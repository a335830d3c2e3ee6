package cluster

// Raft snapshots in Badger: the import from raft's file store, space reclaimed, a kill
// mid-write.

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"
	"podium/persist/store"
)

func TestRaftSnapshotsImportFileStore(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "raft", "snapshots")
	fs, err := raft.NewFileSnapshotStoreWithLogger(old, 2, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	writeSnap(t, fs, 40, 2, snapData(10, 100))
	newest := snapData(11, 2*raftChunkSize+77)
	writeSnap(t, fs, 90, 3, newest)

	st, err := store.Open(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ss, err := openRaftSnapshots(st, old, hclog.NewNullLogger(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	s, ok := ss.(*badgerSnapshots)
	if !ok {
		t.Fatalf("store is %T, want the Badger one", ss)
	}
	l, _ := s.List()
	if len(l) != 1 || l[0].Index != 90 || l[0].Term != 3 || l[0].ConfigurationIndex != 3 ||
		len(l[0].Configuration.Servers) != 2 || l[0].Size != int64(len(newest)) {
		t.Fatalf("imported %v", l)
	}
	if _, got, err := readSnap(s, l[0].ID); err != nil || !bytes.Equal(got, newest) {
		t.Fatalf("imported data: %v", err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("old directory still in place: %v", err)
	}
	if _, err := os.Stat(old + ".migrated"); err != nil {
		t.Fatal(err)
	}
	st.Close()

	// Once only: a later start with a (restored) old directory leaves it alone.
	if err := os.Rename(old+".migrated", old); err != nil {
		t.Fatal(err)
	}
	st, err = store.Open(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ss, err = openRaftSnapshots(st, old, hclog.NewNullLogger(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if l2, _ := ss.List(); len(l2) != 1 || l2[0].ID != l[0].ID {
		t.Fatalf("after a second start: %v", l2)
	}
	if _, err := os.Stat(old); err != nil {
		t.Fatal("the old directory was touched again")
	}
	st.Close()
}

func TestRaftSnapshotsImportFallsBackOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "raft", "snapshots")
	fs, err := raft.NewFileSnapshotStoreWithLogger(old, 2, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	id := writeSnap(t, fs, 40, 2, snapData(12, 100))
	st, err := store.Open(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.SetFreeSpace(func(string) (int64, error) { return 0, nil })
	ss, err := openRaftSnapshots(st, old, hclog.NewNullLogger(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ss.(*raft.FileSnapshotStore); !ok {
		t.Fatalf("store is %T, want the file store while the import cannot be written", ss)
	}
	if l, _ := ss.List(); len(l) != 1 || l[0].ID != id {
		t.Fatalf("file store lists %v", l)
	}
	st.SetFreeSpace(func(string) (int64, error) { return 1 << 40, nil })
	if countRaftKeys(t, st, prefixRaftMeta) != 0 {
		t.Fatal("a failed import is listed in Badger")
	}
}

// Replaced snapshots give their space back: the value log does not grow with every
// snapshot written (raft writes one every 10,000 entries for the whole event).
func TestRaftSnapshotsSpaceReclaimed(t *testing.T) {
	dir := t.TempDir()
	st, s := openTestSnapshots(t, dir)
	data := snapData(13, 8<<20)
	const n = 24
	for i := 0; i < n; i++ {
		writeSnap(t, s, uint64(i+1), 1, data)
	}
	st.CollectGarbage() // also runs in the background after each snapshot
	st.Close()
	var vlog int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".vlog") {
			vlog += fi.Size()
		}
	}
	t.Logf("value log after %d snapshots of 8 MiB (2 kept): %d MiB", n, vlog>>20)
	if vlog > 128<<20 {
		t.Fatalf("value log holds %d MiB after %d snapshots of 8 MiB with 2 kept", vlog>>20, n)
	}
	st, s = openTestSnapshots(t, dir)
	defer st.Close()
	l, _ := s.List()
	if len(l) != 2 {
		t.Fatalf("list %v", l)
	}
	for _, m := range l {
		if _, got, err := readSnap(s, m.ID); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("snapshot %s after the GC: %v", m.ID, err)
		}
	}
}

// The single node's snapshots give their space back the same way.
func TestSnapshotSpaceReclaimed(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	data := snapData(14, 8<<20)
	const n = 24
	for i := 0; i < n; i++ {
		if err := st.WriteSnapshot(data, uint64(i+1), 0); err != nil {
			t.Fatal(err)
		}
	}
	st.CollectGarbage() // the node runs it every 10 minutes
	st.Close()
	var vlog int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".vlog") {
			vlog += fi.Size()
		}
	}
	t.Logf("value log after %d snapshots of 8 MiB (1 kept): %d MiB", n, vlog>>20)
	if vlog > 128<<20 {
		t.Fatalf("value log holds %d MiB after %d snapshots of 8 MiB with 1 kept", vlog>>20, n)
	}
	st, err = store.Open(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, ptr, found, err := st.LoadSnapshot()
	if err != nil || !found || ptr.Seq != n || !bytes.Equal(got, data) {
		t.Fatalf("snapshot after the GC: seq %d found %v err %v", ptr.Seq, found, err)
	}
}

// A process killed (SIGKILL) in the middle of writing a raft snapshot: at the next open
// the unfinished snapshot is not listed and its chunks are gone; the complete one
// before it is intact.
func TestRaftSnapshotsKilledMidWrite(t *testing.T) {
	if dir := os.Getenv("PODIUM_TEST_SNAPKILL_DIR"); dir != "" {
		st, err := store.Open(dir, zerolog.Nop())
		if err != nil {
			panic(err)
		}
		s, err := newBadgerSnapshots(st, raftSnapRetain, zerolog.Nop())
		if err != nil {
			panic(err)
		}
		writeSnap(t, s, 10, 1, snapData(20, raftChunkSize+5))
		sink, err := s.Create(1, 20, 1, testConf, 3, nil)
		if err != nil {
			panic(err)
		}
		if _, err := sink.Write(snapData(21, 3*raftChunkSize+5)); err != nil {
			panic(err)
		}
		os.Stdout.WriteString("written\n")
		time.Sleep(time.Minute) // killed here
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRaftSnapshotsKilledMidWrite$")
	cmd.Env = append(os.Environ(), "PODIUM_TEST_SNAPKILL_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err != nil || line != "written\n" {
		t.Fatalf("child: %q %v", line, err)
	}
	// The chunks written before the kill are there (fsynced), unlisted.
	raw, err := store.Open(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if n := countRaftKeys(t, raw, prefixRaftChunk); n != 5 {
		t.Fatalf("%d chunks after the kill, want 2 + 3 unfinished", n)
	}
	raw.Close()
	st, s := openTestSnapshots(t, dir)
	defer st.Close()
	l, err := s.List()
	if err != nil || len(l) != 1 || l[0].Index != 10 {
		t.Fatalf("after the kill: %v %v", l, err)
	}
	if n := countRaftKeys(t, st, prefixRaftChunk); n != 2 {
		t.Fatalf("%d chunks after the kill and reopen, want the complete snapshot's 2", n)
	}
	if _, got, err := readSnap(s, l[0].ID); err != nil || !bytes.Equal(got, snapData(20, raftChunkSize+5)) {
		t.Fatalf("complete snapshot after the kill: %v", err)
	}
	id := writeSnap(t, s, 30, 1, []byte("after"))
	if l, _ := s.List(); len(l) != 2 || l[0].ID != id {
		t.Fatalf("list %v", l)
	}
}
