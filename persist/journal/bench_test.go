package journal

import (
	"fmt"
	"testing"
)

// BenchmarkJournalAppend measures one Append (one pwrite and one fdatasync) of 1 or 16
// records of 200 bytes, the group commit of a quiet and of a busy event. Segments of
// 16 MiB are created as the journal fills (their preallocation is included).
//
//	go test ./persist/journal -run '^$' -bench JournalAppend -benchtime 5000x
func BenchmarkJournalAppend(b *testing.B) {
	for _, records := range []int{1, 16} {
		b.Run(fmt.Sprintf("records=%d", records), func(b *testing.B) {
			j, err := Open(b.TempDir(), Options{})
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
	batch := make([]Entry, records)
	next := uint64(1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range batch {
			batch[k] = Entry{Index: next, Data: data}
			next++
		}
		if err := j.Append(batch); err != nil {
			b.Fatal(err)
		}
	}
}
