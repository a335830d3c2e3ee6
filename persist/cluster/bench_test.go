package cluster

import (
	"io"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"

	"podium/persist/store"
)

// BenchmarkRaftSnapshotPersist writes (Create, Write in 1 MiB pieces as the FSM's
// buffer does, Close) and reads back a 128 MiB raft snapshot through the Badger store
// and through raft's file store (the store before issue 19), for a ratio.
//
//	go test ./persist/cluster -run '^$' -bench RaftSnapshotPersist -benchtime 3x -count 3
func BenchmarkRaftSnapshotPersist(b *testing.B) {
	const size = 128 << 20
	piece := snapData(42, 1<<20)
	for _, kind := range []string{"file", "badger"} {
		b.Run("store="+kind+"/op=write", func(b *testing.B) {
			s, done := benchSnapStore(b, kind)
			defer done()
			b.SetBytes(size)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				sink, err := s.Create(1, uint64(i+1), 1, testConf, 1, testTrans)
				if err != nil {
					b.Fatal(err)
				}
				for w := 0; w < size; w += len(piece) {
					if _, err := sink.Write(piece); err != nil {
						b.Fatal(err)
					}
				}
				if err := sink.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("store="+kind+"/op=read", func(b *testing.B) {
			s, done := benchSnapStore(b, kind)
			defer done()
			sink, _ := s.Create(1, 1, 1, testConf, 1, testTrans)
			for w := 0; w < size; w += len(piece) {
				if _, err := sink.Write(piece); err != nil {
					b.Fatal(err)
				}
			}
			if err := sink.Close(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, rc, err := s.Open(sink.ID())
				if err != nil {
					b.Fatal(err)
				}
				if n, err := io.Copy(io.Discard, rc); err != nil || n != size {
					b.Fatal(n, err)
				}
				rc.Close()
			}
		})
	}
}

func benchSnapStore(b *testing.B, kind string) (raft.SnapshotStore, func()) {
	dir := b.TempDir()
	if kind == "file" {
		fs, err := raft.NewFileSnapshotStoreWithLogger(dir, raftSnapRetain, hclog.NewNullLogger())
		if err != nil {
			b.Fatal(err)
		}
		return fs, func() {}
	}
	st, err := store.Open(dir, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	s, err := newBadgerSnapshots(st, raftSnapRetain, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	return s, func() { st.Close() }
}
