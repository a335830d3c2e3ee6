package load

import (
	"context"
	"math"
	"strconv"
	"strings"

	"podium/loadtest/client"
)

// ServerMetrics is a selection of the server's own Prometheus series, read from
// GET /metrics at the start and the end of the measured phase.
type ServerMetrics struct {
	Available bool `json:"available"`
	// means over the measured phase (from histogram _sum/_count deltas)
	FsyncMeanMs     float64            `json:"journal_fsync_mean_ms"`
	BatchMean       float64            `json:"journal_batch_mean"`
	ApplyMeanUs     float64            `json:"engine_apply_mean_us"`
	BroadcastMeanMs float64            `json:"ws_broadcast_mean_ms"`
	Commands        float64            `json:"engine_commands"`
	Snapshots       float64            `json:"snapshots"`
	SnapshotMeanMs  float64            `json:"snapshot_mean_ms"`
	End             map[string]float64 `json:"end"` // selected series at the end
}

var keepSeries = []string{
	"podium_ws_clients_dropped_total", "podium_ws_connections", "podium_ws_event_batches_dropped_total",
	"podium_engine_queue_depth", "go_memstats_heap_inuse_bytes", "go_memstats_heap_alloc_bytes",
	"go_memstats_sys_bytes", "go_goroutines", "process_open_fds", "process_resident_memory_bytes",
	"podium_snapshot_size_bytes",
}

// scrape parses the Prometheus text format into series name{labels} -> value.
func scrape(ctx context.Context, c *client.Client) map[string]float64 {
	var body []byte
	if err := c.Do(ctx, "GET", "/metrics", "/metrics", client.AsAnon, nil, &body); err != nil {
		return nil
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out
}

// sumFamily adds every series of name (any labels).
func sumFamily(m map[string]float64, name string) float64 {
	t := 0.0
	for k, v := range m {
		if k == name || strings.HasPrefix(k, name+"{") {
			t += v
		}
	}
	return t
}

func histMean(start, end map[string]float64, name string, scale float64) float64 {
	n := sumFamily(end, name+"_count") - sumFamily(start, name+"_count")
	if n <= 0 {
		return 0
	}
	s := sumFamily(end, name+"_sum") - sumFamily(start, name+"_sum")
	return math.Round(s/n*scale*1000) / 1000
}

func serverMetrics(start, end map[string]float64) ServerMetrics {
	if end == nil {
		return ServerMetrics{}
	}
	sm := ServerMetrics{Available: true, End: map[string]float64{}}
	sm.FsyncMeanMs = histMean(start, end, "podium_journal_fsync_duration_seconds", 1e3)
	sm.BatchMean = histMean(start, end, "podium_journal_batch_size", 1)
	sm.ApplyMeanUs = histMean(start, end, "podium_engine_apply_duration_seconds", 1e6)
	sm.BroadcastMeanMs = histMean(start, end, "podium_ws_broadcast_duration_seconds", 1e3)
	sm.Snapshots = sumFamily(end, "podium_snapshot_duration_seconds_count") - sumFamily(start, "podium_snapshot_duration_seconds_count")
	sm.SnapshotMeanMs = histMean(start, end, "podium_snapshot_duration_seconds", 1e3)
	sm.Commands = sumFamily(end, "podium_engine_commands_total") - sumFamily(start, "podium_engine_commands_total")
	for k, v := range end {
		for _, keep := range keepSeries {
			if k == keep || strings.HasPrefix(k, keep+"{") {
				sm.End[k] = v
			}
		}
	}
	return sm
}
