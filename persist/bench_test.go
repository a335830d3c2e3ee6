package persist

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

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
