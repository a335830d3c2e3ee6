package store

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"podium/persist/journal"
)

// BenchmarkJournalAppendDuringSnapshots measures a 16-record Append (one fdatasync)
// while snapshots of 24 MiB are written to Badger in a loop (50 ms apart), against the
// same without snapshots: how much a snapshot's writes slow the journal down.
//
//	go test ./persist/store -run '^$' -bench JournalAppendDuringSnapshots -benchtime 20000x
func BenchmarkJournalAppendDuringSnapshots(b *testing.B) {
	for _, snapshots := range []bool{false, true} {
		b.Run(fmt.Sprintf("snapshots=%v", snapshots), func(b *testing.B) {
			dir := b.TempDir()
			j, err := journal.Open(dir+"/journal", journal.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			st, err := Open(dir, zerolog.Nop())
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
					if _, err := st.writeSnapshotPlain(func(w io.Writer) error { _, err := w.Write(snap); return err }, seq, 0); err != nil {
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

// benchAppends times b.N Appends of records records of 200 bytes each.
func benchAppends(b *testing.B, j *journal.Journal, records int) {
	data := make([]byte, 200)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	batch := make([]journal.Entry, records)
	next := uint64(1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range batch {
			batch[k] = journal.Entry{Index: next, Data: data}
			next++
		}
		if err := j.Append(batch); err != nil {
			b.Fatal(err)
		}
	}
}

// snapData is size bytes of incompressible test data (as in persist/cluster's tests).
func snapData(seed uint64, size int) []byte {
	b := make([]byte, size)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b
}
