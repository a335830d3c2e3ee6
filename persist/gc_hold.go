package persist

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
)

// holdGC stops the collector's pacing while the journal replays, and returns what
// starts it again (docs/behaviour.md#recovery-at-memory-speed). A replay keeps most of
// what it allocates (the records' strings live on in the state and the audit log), so
// a collection in its middle would mark the whole restored heap for little: it costs a
// core's worth of time the decoding and the applying share. The collection follows the
// replay instead, while the node already serves. The heap may still not grow past twice
// its size at the start plus 256 MiB (a memory limit for the meanwhile, never above one
// already set), so a huge journal is collected as it goes.
func holdGC() (release func()) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	heap := int64(math.MaxInt64 / 4)
	if s[0].Value.Kind() == metrics.KindUint64 {
		heap = int64(s[0].Value.Uint64())
	}
	limit := debug.SetMemoryLimit(-1)
	if hold := 2*heap + 256<<20; hold < limit {
		debug.SetMemoryLimit(hold)
	}
	percent := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}
