package load

import (
	"math"
	"sort"
	"sync"
	"time"
)

// The write gap: how long judging stood still around a failure (a node killed, a
// leader lost). Every judge write is recorded with its send and answer times (offsets
// from the start of the measured phase); a write "succeeded" when the server
// acknowledged a skip, finish or rank (each a journaled change), and "failed" when a
// skip, finish, rank or next got no answer or a 5xx. Other answers (409, 429) are
// neither, and so is a next that was answered: after a skip that already assigned the
// next project, a node can answer it from its own state without a change.

// writeEvent is one recorded judge write.
type writeEvent struct {
	sent, done time.Duration
	ok         bool   // acknowledged journaled action; false: failed
	route      string // next, skip, finish, rank
}

// gapRecorder collects write events from the judge goroutines.
type gapRecorder struct {
	mu    sync.Mutex
	start time.Time
	evs   []writeEvent
}

func newGapRecorder(start time.Time) *gapRecorder {
	return &gapRecorder{start: start, evs: make([]writeEvent, 0, 1<<14)}
}

// add records a write sent at sent and answered now. Neutral answers are not recorded.
func (g *gapRecorder) add(route string, sent time.Time, ok bool) {
	if g == nil {
		return
	}
	done := time.Since(g.start)
	g.mu.Lock()
	g.evs = append(g.evs, writeEvent{sent: sent.Sub(g.start), done: done, ok: ok, route: route})
	g.mu.Unlock()
}

func (g *gapRecorder) events() []writeEvent {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]writeEvent(nil), g.evs...)
}

// GapReport is the write gap of a run (milliseconds from the start of the measured
// phase). Nil values mean "did not happen" (no failure, no recovery).
type GapReport struct {
	Succeeded int `json:"writes_succeeded"`
	Failed    int `json:"writes_failed"` // no answer or 5xx
	// LongestMs is the longest interval without any successful write: between two
	// consecutive acknowledgements, or from the last one to the end of the phase when
	// writes failed after it (judges with nothing left to judge are not a gap).
	LongestMs     float64 `json:"longest_gap_ms"`
	LongestFromMs float64 `json:"longest_gap_from_ms"`
	LongestToMs   float64 `json:"longest_gap_to_ms"`
	// FirstFailureMs is when the first failed write got its answer (or its error);
	// FailureToSuccessMs is the time from then to the acknowledgement of the first
	// write sent after it, i.e. how long a client retrying at once would have waited.
	FirstFailureMs     *float64 `json:"first_failure_ms"`
	FailureToSuccessMs *float64 `json:"failure_to_success_ms"`
	// With an injected failure: when it happened, and the time from it to the
	// acknowledgement of the first write sent after the process was gone.
	KillAtMs        *float64 `json:"kill_at_ms,omitempty"`
	KillToSuccessMs *float64 `json:"kill_to_success_ms,omitempty"`
	KillToSuccessBy string   `json:"kill_to_success_route,omitempty"` // the route of that write
	FailedAfterKill int      `json:"writes_failed_after_kill,omitempty"`
}

func msOf(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 1e2 }

func msPtr(d time.Duration) *float64 { v := msOf(d); return &v }

// computeGap derives the gap report from recorded writes; phase is the length of the
// measured phase, killAt the moment of an injected failure (negative: none) and deadAt
// when the killed process was seen gone (writes sent before it may still have been
// acknowledged by it).
func computeGap(evs []writeEvent, phase, killAt, deadAt time.Duration) GapReport {
	var g GapReport
	var oks []writeEvent
	var firstFail *writeEvent
	var lastFail time.Duration = -1
	for i := range evs {
		e := evs[i]
		if e.ok {
			g.Succeeded++
			oks = append(oks, e)
			continue
		}
		g.Failed++
		lastFail = max(lastFail, e.done)
		if firstFail == nil || e.done < firstFail.done {
			firstFail = &evs[i]
		}
		if killAt >= 0 && e.done >= killAt {
			g.FailedAfterKill++
		}
	}
	sort.Slice(oks, func(a, b int) bool { return oks[a].done < oks[b].done })
	for i := 1; i <= len(oks); i++ {
		from := oks[i-1].done
		to := phase // after the last acknowledgement: a gap only while writes failed
		if i < len(oks) {
			to = oks[i].done
		} else if lastFail < from {
			break
		}
		if to < from {
			to = from // a write answered after the phase ended
		}
		if d := to - from; msOf(d) > g.LongestMs {
			g.LongestMs, g.LongestFromMs, g.LongestToMs = msOf(d), msOf(from), msOf(to)
		}
	}
	if len(oks) == 0 && len(evs) > 0 {
		g.LongestMs, g.LongestFromMs, g.LongestToMs = msOf(phase), 0, msOf(phase)
	}
	// firstOKSentAfter returns the earliest acknowledgement of a write sent at or after t.
	firstOKSentAfter := func(t time.Duration) (time.Duration, string, bool) {
		for _, e := range oks { // sorted by done
			if e.sent >= t {
				return e.done, e.route, true
			}
		}
		return 0, "", false
	}
	if firstFail != nil {
		g.FirstFailureMs = msPtr(firstFail.done)
		if at, _, ok := firstOKSentAfter(firstFail.done); ok {
			g.FailureToSuccessMs = msPtr(at - firstFail.done)
		}
	}
	if killAt >= 0 {
		g.KillAtMs = msPtr(killAt)
		if at, route, ok := firstOKSentAfter(max(killAt, deadAt)); ok {
			g.KillToSuccessMs, g.KillToSuccessBy = msPtr(at-killAt), route
		}
	}
	return g
}
