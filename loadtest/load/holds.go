package load

import (
	"context"
	"encoding/hex"
	"fmt"
	"sort"
	"sync"
	"time"

	"podium/loadtest/client"
)

// holdSampler samples the judges' current assignments during the run and looks for a
// project held by two judges while a free one existed (docs/behaviour.md#judging-flow step 5).
//
// Method: GET /api/judge/list is one consistent snapshot (the server copies it under its
// read lock). For every project that two or more active judges hold in a snapshot, the
// later holder is the one with the larger last_activity, which the server sets when it
// assigns (our clients do nothing else between an assignment and its finish/skip), so
// that last_activity is the assignment time T. A violation is counted only when some
// project q was certainly free for that judge at T: q is active now (the run never
// unhides, so it was active at T), its id is older than T's second, it is not in the
// judge's seen_projects or in the projects our clients skipped for it, no judge of
// another client holds it in the snapshot, and no judge of ours may have held it at T
// at any moment between the later judge's request that could have assigned p and T,
// according to the client-side hold intervals (from sending the request that could
// assign a project to receiving the answer that released it, ±5 ms). A duplicate is also
// allowed when the earlier assignment is stale (older than twice judging_timer).
// These rules only ever excuse a duplicate, so every counted violation is real; a
// duplicate that happens and ends between two samples is not seen.
type holdSampler struct {
	mu         sync.Mutex
	samples    int
	duplicates int
	violations int
	errors     int
	messages   []string
	timerSec   int
}

func (h *holdSampler) run(stop <-chan struct{}, every time.Duration, c *client.Client, lg *ledger) {
	for sleepOr(stop, every) {
		h.sample(context.Background(), c, lg)
	}
}

func idSeconds(id string) int64 {
	b, err := hex.DecodeString(id)
	if err != nil || len(b) < 4 {
		return 0
	}
	return int64(b[0])<<24 | int64(b[1])<<16 | int64(b[2])<<8 | int64(b[3])
}

func (h *holdSampler) sample(ctx context.Context, c *client.Client, lg *ledger) {
	judges, err := c.JudgeList(ctx)
	if err == nil {
		var projects []client.Project
		if projects, err = c.ProjectList(ctx); err == nil {
			h.analyze(judges, projects, lg)
			return
		}
	}
	h.mu.Lock()
	h.errors++
	h.mu.Unlock()
}

// snapshot is who holds what in one GET /api/judge/list.
type snapshot struct {
	ours        map[string]*judgeRec       // our judges by id
	holders     map[string][]*client.Judge // project -> active judges holding it
	heldByOther map[string]bool            // held by a judge that is not ours
	// heldFrom is the earliest last activity of a judge holding the project in the
	// snapshot: that judge held it from then on at the latest. It covers holds the
	// ledger cannot know, e.g. a next that was applied but whose answer was lost when
	// the server was killed (the judge holds the project until its next call).
	heldFrom map[string]int64
}

func newSnapshot(judges []client.Judge, lg *ledger) *snapshot {
	sn := &snapshot{ours: map[string]*judgeRec{}, holders: map[string][]*client.Judge{}, heldByOther: map[string]bool{}, heldFrom: map[string]int64{}}
	lg.mu.Lock()
	for id, j := range lg.judges {
		sn.ours[id] = j
	}
	lg.mu.Unlock()
	for i := range judges {
		j := &judges[i]
		if !j.Active || j.Current == nil {
			continue
		}
		sn.holders[*j.Current] = append(sn.holders[*j.Current], j)
		if sn.ours[j.ID] == nil {
			sn.heldByOther[*j.Current] = true
		}
		if t, ok := sn.heldFrom[*j.Current]; !ok || j.LastActivity < t {
			sn.heldFrom[*j.Current] = j.LastActivity
		}
	}
	return sn
}

// analyze applies the method above to one snapshot.
func (h *holdSampler) analyze(judges []client.Judge, projects []client.Project, lg *ledger) {
	sn := newSnapshot(judges, lg)
	h.mu.Lock()
	h.samples++
	timer := h.timerSec
	h.mu.Unlock()
	dup := make([]string, 0)
	for p, hs := range sn.holders {
		if len(hs) >= 2 {
			dup = append(dup, p)
		}
	}
	sort.Strings(dup)
	for _, p := range dup {
		hs := sn.holders[p]
		sort.Slice(hs, func(a, b int) bool { return hs[a].LastActivity < hs[b].LastActivity })
		later := hs[len(hs)-1]
		T := later.LastActivity
		if timer > 0 && hs[len(hs)-2].LastActivity < T-int64(2*timer*1000) {
			continue // the earlier assignment was stale: allowed
		}
		h.mu.Lock()
		h.duplicates++
		h.mu.Unlock()
		if free := sn.freeFor(later, p, T, projects, lg); free != "" {
			h.violation(p, hs, T, free)
		}
	}
}

// freeFor returns a project that was certainly free for judge later when it was given
// p at T ("": none).
func (sn *snapshot) freeFor(later *client.Judge, p string, T int64, projects []client.Project, lg *ledger) string {
	seen := map[string]bool{}
	for _, sp := range later.SeenProjects {
		seen[sp.ProjectID] = true
	}
	var excluded map[string]bool
	if jr := sn.ours[later.ID]; jr != nil {
		jr.mu.Lock()
		excluded = make(map[string]bool, len(jr.excluded))
		for k := range jr.excluded {
			excluded[k] = true
		}
		jr.mu.Unlock()
	}
	t0 := lg.holdStart(p, later.ID)
	if t0 == 0 || t0 > T {
		t0 = T
	}
	for _, q := range projects {
		if q.ID == p || !q.Active || seen[q.ID] || excluded[q.ID] || sn.heldByOther[q.ID] {
			continue
		}
		if t, ok := sn.heldFrom[q.ID]; ok && t <= T {
			continue // held by some judge since before the later assignment
		}
		if idSeconds(q.ID) >= T/1000 {
			continue
		}
		if lg.heldDuring(q.ID, later.ID, t0, T, 5) {
			continue
		}
		return q.ID
	}
	return ""
}

// violation counts project p held by the judges hs (the last assigned at T) while
// project free was free.
func (h *holdSampler) violation(p string, hs []*client.Judge, T int64, free string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.violations++
	if len(h.messages) < 20 {
		names := make([]string, len(hs))
		for i, x := range hs {
			names[i] = x.ID
		}
		h.messages = append(h.messages, fmt.Sprintf("project %s held by judges %v (last assigned at %d) while project %s was free", p, names, T, free))
	}
}
