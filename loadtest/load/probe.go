package load

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"

	"podium/loadtest/client"
	"podium/loadtest/stats"
)

// metricsRSS reads process_resident_memory_bytes from GET /metrics; 0 when unavailable.
func metricsRSS(ctx context.Context, c *client.Client) int64 {
	var body []byte
	if err := c.Do(ctx, "GET", "/metrics", "/metrics", client.AsAnon, nil, &body); err != nil {
		return 0
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "process_resident_memory_bytes ") {
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, "process_resident_memory_bytes ")), 64)
			if err == nil {
				return int64(v)
			}
		}
	}
	return 0
}

// fsyncProbe times n 4 KiB write+fsync pairs in dir: the floor under every durable
// write the server acknowledges on this disk.
func fsyncProbe(dir string, n int) stats.Latency {
	f, err := os.CreateTemp(dir, "fsync-probe-*")
	if err != nil {
		return stats.Latency{}
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 4096)
	d := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t := time.Now()
		if _, err := f.WriteAt(buf, int64(i)*4096); err != nil {
			break
		}
		if err := f.Sync(); err != nil {
			break
		}
		d = append(d, time.Since(t))
	}
	return stats.Summarize(d)
}
