package ratio

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
)

// median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Print writes the report: medians, each beside its yardstick, then the rounds.
func (rep *Report) Print(w io.Writer) {
	r2 := func(x float64) float64 { return math.Round(x*100) / 100 }
	fmt.Fprintf(w, "ratio benchmark: median of %d rounds, every pair measured in the same round on the same machine\n", rep.Rounds)
	hb, ja := median(rep.Heartbeat), median(rep.JudgeActions)
	fmt.Fprintf(w, "  heartbeat GET /healthz      %8.0f req/s\n", hb)
	fmt.Fprintf(w, "  judge actions next->finish  %8.0f /s      ratio %.3f (median of per-round ratios: %s)\n", ja, median(rep.Ratio), ratioList(rep.Ratio))
	if len(rep.ServerCPUAction) > 0 {
		sh, sa := median(rep.ServerCPUHeartbeat), median(rep.ServerCPUAction)
		fmt.Fprintf(w, "  CPU µs per request (medians): server %.1f per heartbeat, %.1f per judge action (%.1f×); load generator %.1f and %.1f\n",
			sh, sa, sa/sh, median(rep.LoadgenCPUHeartbeat), median(rep.LoadgenCPUAction))
	}
	if len(rep.IdleAction) > 0 {
		fmt.Fprintf(w, "  machine CPU idle (medians, idle + iowait): %.1f%% during heartbeats, %.1f%% during judge actions\n",
			median(rep.IdleHeartbeat), median(rep.IdleAction))
	}
	row := func(name string, p, b []float64) {
		var ratios []float64
		for i := range min(len(p), len(b)) {
			if b[i] > 0 {
				ratios = append(ratios, p[i]/b[i])
			}
		}
		fmt.Fprintf(w, "  %-28s %10.2f %10.2f %8.2f   per round: %s\n", name, r2(median(p)), r2(median(b)), r2(median(ratios)), ratioList(ratios))
	}
	if len(rep.PodiumWSKiB) > 0 {
		fmt.Fprintf(w, "  %-28s %10s %10s %8s\n", "websockets (medians)", "podium", "baseline", "ratio*")
		row("KiB RSS per idle socket", rep.PodiumWSKiB, rep.BaselineWSKiB)
		row("broadcast p50 ms", rep.PodiumP50, rep.BaselineP50)
		row("broadcast p99 ms", rep.PodiumP99, rep.BaselineP99)
		row("server CPU µs per delivery", rep.PodiumCPU, rep.BaselineCPU)
		fmt.Fprintf(w, "  deliveries missed: podium %d, baseline %d\n", rep.PodiumMissed, rep.BaselineMissed)
		fmt.Fprintf(w, "  * ratio: median of the per-round ratios podium/baseline\n")
	}
	fmt.Fprintf(w, "  load average per round: %s\n", strings.Join(rep.LoadAvg, " | "))
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

func ratioList(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, " ")
}

// WriteJSON writes the report as JSON.
func (rep *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
