package load

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"podium/loadtest/stats"
)

// Report is everything a run measured. Latencies are in milliseconds, memory in bytes.
type Report struct {
	Mode       string          `json:"mode"` // "load", "crash" or "flush"
	Server     string          `json:"server"`
	Managed    bool            `json:"managed_server"` // the tool started the server binary
	Started    time.Time       `json:"started"`
	Scenario   Scenario        `json:"scenario"`
	Setup      SetupReport     `json:"setup"`
	ElapsedSec float64         `json:"elapsed_seconds"` // measured phase
	Routes     []stats.Route   `json:"routes"`
	Errors     map[string]int  `json:"errors_by_status"` // measured phase, "0" = no answer
	JudgeAll   stats.Latency   `json:"judge_actions"`    // next+skip+finish+rank together
	Judging    JudgingReport   `json:"judging"`
	Broadcast  BroadcastReport `json:"broadcast"`
	RSS        RSSReport       `json:"rss"`
	Machine    MachineReport   `json:"machine"`
	Metrics    ServerMetrics   `json:"server_metrics"`
	Invariants InvariantReport `json:"invariants"`
	Crash      *CrashReport    `json:"crash,omitempty"`
	Flush      *FlushReport    `json:"flush,omitempty"`
	Nodes      []NodeReport    `json:"nodes,omitempty"` // judge traffic per URL (several URLs only)
	Kill       *KillReport     `json:"kill,omitempty"`  // the failure the tool injected
	Gap        GapReport       `json:"write_gap"`
	Timeline   []stats.Second  `json:"judge_timeline"` // judge actions completed per second of the phase
	ServerLog  string          `json:"server_log,omitempty"`
	Notes      []string        `json:"notes"`
}

// Scenario echoes the configuration of a run.
type Scenario struct {
	Projects   int     `json:"projects"`
	Judges     int     `json:"judges"`
	Watchers   int     `json:"watchers"`
	Readers    int     `json:"readers"`
	DurationS  float64 `json:"duration_seconds"`
	ThinkMs    float64 `json:"think_ms"`
	SkipProb   float64 `json:"skip_prob"`
	RankProb   float64 `json:"rank_prob"`
	ClockEvery float64 `json:"clock_every_seconds"`
	Seed       uint64  `json:"seed"`
	FDLimit    uint64  `json:"fd_limit"`
}

// SetupReport is the scenario setup through the API.
type SetupReport struct {
	Seconds     float64       `json:"seconds"`
	ProjectsVia string        `json:"projects_via"`
	JudgesVia   string        `json:"judges_via"`
	Routes      []stats.Route `json:"routes"`
}

// RSSReport is the server's resident memory.
type RSSReport struct {
	Source        string `json:"source"` // "metrics" (process_resident_memory_bytes) or "proc" (/proc/PID/status)
	AfterSetup    int64  `json:"after_setup"`
	AfterWatchers int64  `json:"after_watchers"`
	End           int64  `json:"end"`
	Peak          int64  `json:"peak"` // managed server only (polled /proc every 500 ms)
}

// MachineReport says how busy the machine was during the measured phase: the load
// generator and the server share it (and, here, other work).
type MachineReport struct {
	CPUs         int     `json:"cpus"`
	LoadAvgStart string  `json:"loadavg_start"`
	LoadAvgEnd   string  `json:"loadavg_end"`
	ServerCPU    float64 `json:"server_cpu_seconds"` // managed server only
	ToolCPU      float64 `json:"loadtest_cpu_seconds"`
	ToolRSS      int64   `json:"loadtest_rss_end"`
	// FsyncProbe times 4 KiB write+fsync in the managed server's data directory just
	// before the server starts.
	FsyncProbe stats.Latency `json:"fsync_probe"`
}

// WriteJSON writes the report as indented JSON to path.
func (rep *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func codes(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		name := k
		if k == "0" {
			name = "no-answer"
		}
		parts[i] = fmt.Sprintf("%s×%d", name, m[k])
	}
	return strings.Join(parts, " ")
}

// Print writes the human-readable report.
func (rep *Report) Print(w io.Writer) {
	s := rep.Scenario
	fmt.Fprintf(w, "\nPodium load test (%s) against %s%s\n", rep.Mode, rep.Server, map[bool]string{true: " (server started by the tool)", false: ""}[rep.Managed])
	fmt.Fprintf(w, "scenario: %d projects, %d judges, %d watchers, %d readers, %.0fs, think %.0f ms, skip %.2f, rank %.2f, clock toggle every %.1fs, seed %d, fd limit %d\n",
		s.Projects, s.Judges, s.Watchers, s.Readers, s.DurationS, s.ThinkMs, s.SkipProb, s.RankProb, s.ClockEvery, s.Seed, s.FDLimit)
	fmt.Fprintf(w, "setup: %.1fs (projects via %s, judges via %s)\n", rep.Setup.Seconds, rep.Setup.ProjectsVia, rep.Setup.JudgesVia)
	if f := rep.Flush; f != nil {
		l := f.Latency
		fmt.Fprintf(w, "\nflush: %d judges back online at once, %d queued actions sent in %.2fs, %d sent twice (%d answered from the kept answer), %d errors, %d mismatches\n",
			f.Judges, f.Actions, f.ElapsedSec, f.Resent, f.Replayed, f.Errors, f.Mismatches)
		fmt.Fprintf(w, "flush latency (%d requests): p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms\n", l.Count, l.P50, l.P95, l.P99, l.Max)
		rep.printChecks(w)
		for _, n := range rep.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
		return
	}
	rep.printRequests(w)
	rep.printServer(w)
	rep.printChecks(w)
	rep.printCluster(w)
	if rep.ServerLog != "" {
		fmt.Fprintf(w, "server log: %s\n", rep.ServerLog)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// printRequests writes the measured phase's routes, errors, judge timeline and judging.
func (rep *Report) printRequests(w io.Writer) {
	fmt.Fprintf(w, "\nmeasured phase: %.1fs\n", rep.ElapsedSec)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "route\tcount\treq/s\tp50 ms\tp95 ms\tp99 ms\tmax ms\terrors\t")
	for _, r := range rep.Routes {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t\n", r.Route, r.Count, r.PerSecond, r.P50, r.P95, r.P99, r.Max, codes(r.Errors))
	}
	j := rep.JudgeAll
	fmt.Fprintf(tw, "judge actions (all)\t%d\t\t%.2f\t%.2f\t%.2f\t%.2f\t\t\n", j.Count, j.P50, j.P95, j.P99, j.Max)
	tw.Flush()
	fmt.Fprintf(w, "errors by status: %s\n", codes(rep.Errors))
	if tl := rep.Timeline; len(tl) > 1 {
		idle := 0
		worst := append([]stats.Second(nil), tl...)
		for _, x := range tl[:len(tl)-1] { // the last second is partial
			if x.Count == 0 {
				idle++
			}
		}
		sort.Slice(worst, func(i, j int) bool { return worst[i].MaxMs > worst[j].MaxMs })
		parts := []string{}
		for _, x := range worst[:min(5, len(worst))] {
			parts = append(parts, fmt.Sprintf("s%d: %d done, max %.0f ms", x.At, x.Count, x.MaxMs))
		}
		fmt.Fprintf(w, "judge timeline: %d of %d seconds completed no judge action; slowest seconds: %s\n", idle, len(tl)-1, strings.Join(parts, "; "))
	}
	jr := rep.Judging
	fmt.Fprintf(w, "judging: available=%v nexts=%d assigned=%d finishes=%d (%.1f/s) skips=%d ranks=%d paused=%d done=%d in-doubt=%d unexpected=%d\n",
		jr.Available, jr.Nexts, jr.Assigned, jr.Finishes, jr.FinishesSec, jr.Skips, jr.Ranks, jr.Paused, jr.Done, jr.InDoubt, jr.Unexpected)
}

// printServer writes the broadcast delivery, the machine, the disk, the server's own
// metrics and its memory.
func (rep *Report) printServer(w io.Writer) {
	b := rep.Broadcast
	if b.Watchers > 0 {
		fmt.Fprintf(w, "broadcast: %d/%d watchers connected (%v), %d got hello, %d dial failures %s, %d dropped by the server %v\n",
			b.Connected, b.Watchers, b.ByKind, b.Hello, b.DialFailed, codes(b.DialErrors), b.Dropped, b.DroppedByKind)
		fmt.Fprintf(w, "  %d clock broadcasts, %d deliveries expected, %d delivered, %d missed by %d connected clients, %d missed by clients the server dropped\n",
			b.Broadcasts, b.Expected, b.Delivered, b.Missed, b.ClientsMissed, b.MissedDropped)
		fmt.Fprintf(w, "  latency from admin request: p50 %.1f ms, p99 %.1f ms, max %.1f ms; after the admin's answer: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
			b.Latency.P50, b.Latency.P99, b.Latency.Max, b.AfterAck.P50, b.AfterAck.P99, b.AfterAck.Max)
	}
	m := rep.Machine
	if m.CPUs > 0 {
		fmt.Fprintf(w, "machine: %d CPUs, load average %s at start, %s at end; CPU seconds used in the phase: server %.1f, load generator %.1f (load generator RSS %s)\n",
			m.CPUs, m.LoadAvgStart, m.LoadAvgEnd, m.ServerCPU, m.ToolCPU, mib(m.ToolRSS))
	}
	if m.FsyncProbe.Count > 0 {
		fmt.Fprintf(w, "disk: 4 KiB write+fsync in the data dir before the run: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", m.FsyncProbe.P50, m.FsyncProbe.P99, m.FsyncProbe.Max)
	}
	if sm := rep.Metrics; sm.Available {
		fmt.Fprintf(w, "server metrics over the phase: %.0f commands, journal fsync mean %.2f ms, batch mean %.1f commands, apply mean %.1f µs, ws broadcast mean %.1f ms, %.0f snapshots (mean %.0f ms)\n",
			sm.Commands, sm.FsyncMeanMs, sm.BatchMean, sm.ApplyMeanUs, sm.BroadcastMeanMs, sm.Snapshots, sm.SnapshotMeanMs)
		keys := make([]string, 0, len(sm.End))
		for k := range sm.End {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			if v := sm.End[k]; v != 0 {
				parts = append(parts, fmt.Sprintf("%s=%g", k, v))
			}
		}
		fmt.Fprintf(w, "  at the end: %s\n", strings.Join(parts, " "))
	}
	rs := rep.RSS
	fmt.Fprintf(w, "server RSS (%s): after setup %s, with watchers %s, end %s, peak %s\n", orNA(rs.Source), mib(rs.AfterSetup), mib(rs.AfterWatchers), mib(rs.End), mib(rs.Peak))
}

// printChecks writes the invariants and the crash cycles.
func (rep *Report) printChecks(w io.Writer) {
	ir := rep.Invariants
	fmt.Fprintf(w, "invariants: %d violations; %d acked finishes (lost %d, duplicate %d, wrong notes/star %d, phantom %d, in-doubt applied %d), seen mismatches %d, rank mismatches %d, skips checked=%v (lost %d), hold samples %d (duplicates %d, violations %d, sample errors %d)\n",
		ir.Violations, ir.AckedFinishes, ir.LostFinishes, ir.DuplicateSeen+ir.DoubleAcked, ir.WrongNotes, ir.PhantomFinishes, ir.DoubtApplied, ir.SeenMismatch, ir.RankMismatch, ir.SkipsChecked, ir.LostSkips, ir.HoldSamples, ir.HoldDuplicates, ir.HoldViolations, ir.HoldSampleErrs)
	for _, m := range ir.Messages {
		fmt.Fprintf(w, "  ! %s\n", m)
	}
	if c := rep.Crash; c != nil {
		fmt.Fprintf(w, "crash mode: %d SIGKILL cycles, lost acknowledged writes %d, violations %d, graceful restart checked %v\n", len(c.Cycles), c.Lost, c.Violations, c.GracefulCheck)
		fmt.Fprintf(w, "  acknowledged: %d finishes, %d skips, %d ranks, %d judge/project creations, %d logins; %d unanswered finishes found applied after restarts\n", c.AckedFinishes, c.AckedSkips, c.AckedRanks, c.AckedCreations, c.AckedLogins, c.DoubtApplied)
		fmt.Fprintf(w, "  (no-answer errors are the requests in flight when the server was killed)\n")
		for _, cy := range c.Cycles {
			fmt.Fprintf(w, "  cycle %d: killed after %.2fs; %d finishes, %d skips, %d ranks, %d creations; %d in doubt; recovered in %.2fs; lost %d, violations %d\n",
				cy.Cycle, cy.KilledAfter, cy.Finishes, cy.Skips, cy.Ranks, cy.Creations, cy.InDoubt, cy.RecoverySec, cy.Lost, cy.Violations)
		}
	}
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// Failed reports whether the run found errors, invariant violations or lost writes.
func (rep *Report) Failed() bool {
	if rep.Invariants.Violations > 0 {
		return true
	}
	for code := range rep.Errors {
		if rep.Kill == nil || (code != "0" && code != "502" && code != "503") {
			return true // with an injected failure, requests without an answer or a leader are expected
		}
	}
	return rep.Crash != nil && (rep.Crash.Lost > 0 || rep.Crash.Violations > 0)
}

// printCluster writes the per-node traffic, the injected failure and the write gap.
func (rep *Report) printCluster(w io.Writer) {
	for _, n := range rep.Nodes {
		killed := ""
		if n.Killed {
			killed = " (killed)"
		}
		fmt.Fprintf(w, "node %s%s: %d judges at start, %d judge requests, %d without answer, %d judges moved away, %d moved in\n",
			n.URL, killed, n.Judges, n.Requests, n.NoAnswer, n.MovedOut, n.MovedIn)
	}
	if k := rep.Kill; k != nil {
		if k.Error != "" {
			fmt.Fprintf(w, "kill %s: failed: %s\n", k.Target, k.Error)
		} else {
			fmt.Fprintf(w, "kill %s: SIGKILL pid %d%s at %.2fs into the phase\n", k.Target, k.PID, strings.TrimRight(" "+k.Node, " "), k.AfterMs/1000)
		}
	}
	g := rep.Gap
	opt := func(v *float64) string {
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.0f ms", *v)
	}
	fmt.Fprintf(w, "write gap: %d journaled judge writes acknowledged, %d failed (no answer or 5xx); longest time without an acknowledged write %.0f ms (%.2fs-%.2fs); first failed write at %s, next success %s later",
		g.Succeeded, g.Failed, g.LongestMs, g.LongestFromMs/1000, g.LongestToMs/1000, opt(g.FirstFailureMs), opt(g.FailureToSuccessMs))
	if g.KillAtMs != nil {
		fmt.Fprintf(w, "; from the kill to the first acknowledged write sent after it %s (%d writes failed after it)", opt(g.KillToSuccessMs), g.FailedAfterKill)
	}
	fmt.Fprintln(w)
}
