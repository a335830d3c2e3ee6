package persist

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"

	"podium/engine"
)

// BenchmarkJournaledCommands measures commands per second through the writer with a
// real fsync per batch, at 1, 16, 64 and 256 concurrent writers.
//
//	go test ./persist -run '^$' -bench JournaledCommands -benchtime 3000x
func BenchmarkJournaledCommands(b *testing.B) {
	for _, writers := range []int{1, 16, 64, 256} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			n := openNode(&testing.T{}, b.TempDir(), Options{SnapshotEvery: 1 << 40})
			defer n.Close()
			var next atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						var cmd engine.Command = &engine.ClockUnpause{}
						if next.Load()%2 == 0 {
							cmd = &engine.ClockPause{}
						}
						if _, err := n.Submit(context.Background(), engine.Admin, cmd); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
		})
	}
}

// BenchmarkJournalAppend measures one Append (one pwrite and one fdatasync) of 1 or 16
// records of 200 bytes, the group commit of a quiet and of a busy event. Segments of
// 16 MiB are created as the journal fills (their preallocation is included).
//
//	go test ./persist -run '^$' -bench JournalAppend -benchtime 5000x
func BenchmarkJournalAppend(b *testing.B) {
	for _, records := range []int{1, 16} {
		b.Run(fmt.Sprintf("records=%d", records), func(b *testing.B) {
			j, err := OpenJournal(b.TempDir(), JournalOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			benchAppends(b, j, records)
		})
	}
}

// benchAppends times b.N Appends of records records of 200 bytes each.
func benchAppends(b *testing.B, j *Journal, records int) {
	data := make([]byte, 200)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	batch := make([]JournalEntry, records)
	next := uint64(1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range batch {
			batch[k] = JournalEntry{Index: next, Data: data}
			next++
		}
		if err := j.Append(batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJournalAppendDuringSnapshots measures a 16-record Append (one fdatasync)
// while snapshots of 24 MiB are written to Badger in a loop (50 ms apart), against the
// same without snapshots: how much a snapshot's writes slow the journal down.
//
//	go test ./persist -run '^$' -bench JournalAppendDuringSnapshots -benchtime 20000x
func BenchmarkJournalAppendDuringSnapshots(b *testing.B) {
	for _, snapshots := range []bool{false, true} {
		b.Run(fmt.Sprintf("snapshots=%v", snapshots), func(b *testing.B) {
			dir := b.TempDir()
			j, err := OpenJournal(dir+"/journal", JournalOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			st, err := OpenStore(dir, zerolog.Nop())
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			snap := snapData(7, 24<<20)
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for seq := uint64(1); snapshots; seq++ {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
					}
					if _, err := st.WriteSnapshotFrom(func(w io.Writer) error { _, err := w.Write(snap); return err }, seq, 0); err != nil {
						b.Error(err)
						return
					}
				}
			}()
			benchAppends(b, j, 16)
			b.StopTimer()
			close(stop)
			<-done
		})
	}
}

// BenchmarkRaftSnapshotPersist writes (Create, Write in 1 MiB pieces as the FSM's
// buffer does, Close) and reads back a 128 MiB raft snapshot through the Badger store
// and through raft's file store (the store before issue 19), for a ratio.
//
//	go test ./persist -run '^$' -bench RaftSnapshotPersist -benchtime 3x -count 3
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
	st, err := OpenStore(dir, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	s, err := newBadgerSnapshots(st, raftSnapRetain, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	return s, func() { st.Close() }
}
