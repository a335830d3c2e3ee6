package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist/store"
)

func judgeCount(n *Node) int {
	c := 0
	n.Read(func(s *engine.State) { c = len(s.Judges) })
	return c
}

// A follower that was stopped while the leader's log moved past it (small
// TrailingLogs, then a snapshot) is brought up to date by a snapshot install from the
// leader's Badger store into its own, and restarts from that snapshot.
func TestInProcessSnapshotInstall(t *testing.T) {
	prev := raftChunkSize
	t.Cleanup(func() { raftChunkSize = prev }) // after the nodes' cleanup (LIFO)
	raftChunkSize = 1000                       // snapshots of many chunks
	ms := startInProcessCluster(t, func(o *Options) { o.Config.TrailingLogs = 8 })
	waitUntil(t, 20*time.Second, "all nodes ready", func() bool {
		return ms[0].n.Ready() && ms[1].n.Ready() && ms[2].n.Ready()
	})
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		if _, err := ms[i%3].n.Submit(ctx, engine.Admin, newJudgeCmd(i)); err != nil {
			t.Fatal(err)
		}
	}
	var lead, lag *memberUnderTest
	for _, m := range ms {
		if st, _ := m.n.ClusterStatus(); st.State == "leader" {
			lead = m
		} else {
			lag = m
		}
	}
	if lead == nil {
		t.Fatal("no leader")
	}
	waitUntil(t, 10*time.Second, "the follower applied everything", func() bool { return judgeCount(lag.n) == 10 })
	lagLast := lag.n.logs.j.LastIndex()
	lag.stop(t)
	for i := 10; i < 80; i++ {
		if _, err := lead.n.Submit(ctx, engine.Admin, newJudgeCmd(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := lead.n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if first := lead.n.logs.j.FirstIndex(); first <= lagLast+1 {
		t.Fatalf("the leader's log starts at %d: the follower (at %d) could catch up from it", first, lagLast)
	}
	leadSnaps := lead.n.r.Stats()["last_snapshot_index"]
	lag.start(t)
	waitUntil(t, 20*time.Second, "the follower caught up", func() bool {
		return lag.n.Ready() && judgeCount(lag.n) == 80 && digestsEqual(ms)
	})
	lag.stop(t)
	snaps, err := RaftSnapshots(lag.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) == 0 || fmt.Sprint(snaps[0].Index) != leadSnaps || snaps[0].Size < 5*int64(raftChunkSize) {
		t.Fatalf("follower's snapshots %v, want the leader's at %s, of several chunks", snaps, leadSnaps)
	}
	if _, err := os.Stat(filepath.Join(lag.dir, "raft", "snapshots")); !os.IsNotExist(err) {
		t.Fatalf("a file snapshot directory was created: %v", err)
	}
	lag.start(t)
	waitUntil(t, 20*time.Second, "the follower restarted from the installed snapshot", func() bool {
		return lag.n.Ready() && judgeCount(lag.n) == 80 && digestsEqual(ms)
	})
}

// A cluster node whose data directory comes from the version with raft's file
// snapshot store imports the newest file snapshot into Badger at start and restores
// from it (its log no longer covers the state).
func TestClusterNodeImportsFileSnapshot(t *testing.T) {
	rl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := rl.Addr().String()
	rl.Close()
	env := map[string]string{
		"NODE_ID": "n1", "RAFT_ADDR": addr, "CLUSTER_PEERS": "n1=" + addr + "=http://127.0.0.1:1",
		"CLUSTER_SECRET": strings.Repeat("z", 40), "RAFT_TRAILING_LOGS": "2",
	}
	cfg, err := ParseConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	opts := Options{Log: zerolog.Nop(), Config: cfg, SegmentSize: 1 << 20}
	n, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 20*time.Second, "the node leads", func() bool { return n.Ready() })
	for i := 0; i < 20; i++ {
		if _, err := n.Submit(context.Background(), engine.Admin, newJudgeCmd(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if first := n.logs.j.FirstIndex(); first <= 2 {
		t.Fatalf("log still starts at %d", first)
	}
	before, err := n.ClusterStatus()
	if err != nil || before.StateDigest == nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	// Make it the earlier version's directory: the snapshot in raft's file store, no
	// Badger.
	st, err := store.Open(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	bs, err := newBadgerSnapshots(st, raftSnapRetain, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	l, _ := bs.List()
	if len(l) != 1 {
		t.Fatalf("%d snapshots in Badger", len(l))
	}
	meta, rc, err := bs.Open(l[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := raft.NewFileSnapshotStoreWithLogger(filepath.Join(dir, "raft", "snapshots"), 2, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	sink, err := fs.Create(meta.Version, meta.Index, meta.Term, meta.Configuration, meta.ConfigurationIndex, testTrans)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(sink, rc); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	st.Close()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "raft" {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}

	n, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	waitUntil(t, 20*time.Second, "the node leads again", func() bool { return n.Ready() })
	if c := judgeCount(n); c != 20 {
		t.Fatalf("%d judges after the import, want 20", c)
	}
	after, err := n.ClusterStatus()
	if err != nil || after.StateDigest == nil || after.StateDigest.SHA256 != before.StateDigest.SHA256 {
		t.Fatalf("digest %+v after the import, want %+v (%v)", after.StateDigest, before.StateDigest, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "raft", "snapshots.migrated")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "raft", "snapshots")); !os.IsNotExist(err) {
		t.Fatalf("the old snapshot directory is still in place: %v", err)
	}
	// Changes go on after it.
	if _, err := n.Submit(context.Background(), engine.Admin, newJudgeCmd(99)); err != nil {
		t.Fatal(err)
	}
}
