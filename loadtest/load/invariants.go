package load

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"podium/loadtest/client"
)

// InvariantReport is the result of checking the server's data against what the clients
// were told.
type InvariantReport struct {
	Checked         bool     `json:"checked"`
	Judges          int      `json:"judges_checked"`
	Projects        int      `json:"projects_checked"`
	AckedFinishes   int      `json:"acked_finishes"`
	AckedSkips      int      `json:"acked_skips"`
	AckedRanks      int      `json:"judges_with_acked_ranking"`
	LostJudges      int      `json:"lost_judges"`
	LostProjects    int      `json:"lost_projects"`
	LostLogins      int      `json:"lost_logins"`
	LostFinishes    int      `json:"lost_finishes"`  // acknowledged finish missing from seen_projects
	DuplicateSeen   int      `json:"duplicate_seen"` // a project twice in one judge's seen_projects
	DoubleAcked     int      `json:"double_acked"`   // the same judge was given and finished a project twice
	WrongNotes      int      `json:"wrong_notes_or_star"`
	PhantomFinishes int      `json:"phantom_finishes"` // seen entry that was neither acknowledged nor in flight
	DoubtApplied    int      `json:"in_doubt_applied"` // unanswered finishes the server did apply (allowed)
	SeenMismatch    int      `json:"seen_mismatch"`    // project seen != finishes by general judges
	RankMismatch    int      `json:"rank_mismatch"`
	SkipsChecked    bool     `json:"skips_checked"` // false when GET /api/admin/flags is unavailable
	LostSkips       int      `json:"lost_skips"`
	HoldSamples     int      `json:"hold_samples"`
	HoldDuplicates  int      `json:"hold_duplicates"` // a project held by two judges in a sample
	HoldViolations  int      `json:"hold_violations"` // ... while a free project existed for the later one
	HoldSampleErrs  int      `json:"hold_sample_errors"`
	Violations      int      `json:"violations"` // total of the counters that must be zero
	Messages        []string `json:"messages"`   // the first violations, readable
}

func (ir *InvariantReport) fail(format string, args ...any) {
	ir.Violations++
	if len(ir.Messages) < 40 {
		ir.Messages = append(ir.Messages, fmt.Sprintf(format, args...))
	}
}

// merge adds the hold sampler's results.
func (ir *InvariantReport) mergeHolds(h *holdSampler) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ir.HoldSamples += h.samples
	ir.HoldDuplicates += h.duplicates
	ir.HoldViolations += h.violations
	ir.HoldSampleErrs += h.errors
	ir.Violations += h.violations
	for _, m := range h.messages {
		if len(ir.Messages) < 40 {
			ir.Messages = append(ir.Messages, m)
		}
	}
}

type verifyOpts struct {
	logins  bool // check every acknowledged login token still authenticates
	resolve bool // fold in-doubt writes into the ledger according to what the server has
}

// verify checks the server's judges, projects and flags against the ledger: every
// acknowledged write is there (exactly once), and the server's own counters agree with
// its lists.
func verify(ctx context.Context, c *client.Client, lg *ledger, o verifyOpts) (InvariantReport, error) {
	ir := InvariantReport{Checked: true}
	judges, err := c.JudgeList(ctx)
	if err != nil {
		return ir, err
	}
	projects, err := c.ProjectList(ctx)
	if err != nil {
		return ir, err
	}
	judgeTracks := false
	var opts struct {
		JudgeTracks bool `json:"judge_tracks"`
	}
	if c.Do(ctx, "GET", "/api/admin/options", "/api/admin/options", client.AsAdmin, nil, &opts) == nil {
		judgeTracks = opts.JudgeTracks
	}
	byID := map[string]*client.Judge{}
	for i := range judges {
		byID[judges[i].ID] = &judges[i]
	}
	pByID := map[string]*client.Project{}
	for i := range projects {
		pByID[projects[i].ID] = &projects[i]
	}
	ir.Judges, ir.Projects = len(judges), len(projects)

	// Seen counts: finishes by general judges, from the judges' own lists.
	generalSeen := map[string]int{}
	for _, j := range judges {
		if j.Track != "" && judgeTracks {
			continue
		}
		for _, sp := range j.SeenProjects {
			generalSeen[sp.ProjectID]++
		}
	}
	for _, p := range projects {
		if p.Seen != generalSeen[p.ID] {
			ir.SeenMismatch++
			ir.fail("project %s (%s): seen %d but %d general judges finished it", p.ID, p.Name, p.Seen, generalSeen[p.ID])
		}
	}

	// When every judge on the server is ours and no finish is in doubt, the seen counts
	// must also equal the finishes the clients saw acknowledged.
	ackSeen := map[string]int{}
	comparable := true
	ourJudges := lg.judgeList()
	if len(ourJudges) != len(judges) {
		comparable = false
	}
	for _, jr := range ourJudges {
		jr.mu.Lock()
		if len(jr.doubtFinish) > 0 {
			comparable = false
		}
		for p := range jr.finishes {
			ackSeen[p]++
		}
		jr.mu.Unlock()
	}
	if comparable {
		for _, p := range projects {
			if p.Seen != ackSeen[p.ID] {
				ir.SeenMismatch++
				ir.fail("project %s (%s): seen %d but %d finishes were acknowledged", p.ID, p.Name, p.Seen, ackSeen[p.ID])
			}
		}
	}

	lg.mu.Lock()
	projIDs := make([]string, 0, len(lg.projects))
	for id := range lg.projects {
		projIDs = append(projIDs, id)
	}
	lg.mu.Unlock()
	sort.Strings(projIDs)
	for _, id := range projIDs {
		if _, ok := pByID[id]; !ok {
			ir.LostProjects++
			ir.fail("acknowledged project %s is missing", id)
		}
	}

	for _, jr := range lg.judgeList() {
		jr.mu.Lock()
		sj, ok := byID[jr.id]
		if !ok {
			ir.LostJudges++
			ir.fail("acknowledged judge %s (%s) is missing", jr.id, jr.name)
			jr.mu.Unlock()
			continue
		}
		if sj.Name != jr.name || sj.Email != jr.email {
			ir.LostJudges++
			ir.fail("judge %s: name/email %q/%q, want %q/%q", jr.id, sj.Name, sj.Email, jr.name, jr.email)
		}
		count := map[string]int{}
		entry := map[string]client.Seen{}
		for _, sp := range sj.SeenProjects {
			count[sp.ProjectID]++
			entry[sp.ProjectID] = sp
		}
		for p, n := range count {
			if n > 1 {
				ir.DuplicateSeen++
				ir.fail("judge %s has project %s %d times in seen_projects", jr.id, p, n)
			}
		}
		for _, p := range jr.dupFinishes {
			ir.DoubleAcked++
			ir.fail("judge %s was assigned and finished project %s twice", jr.id, p)
		}
		ir.AckedFinishes += len(jr.finishes)
		for p, f := range jr.finishes {
			if count[p] == 0 {
				ir.LostFinishes++
				ir.fail("acknowledged finish of %s by judge %s is missing", p, jr.id)
				continue
			}
			if e := entry[p]; e.Notes != f.notes || e.Starred != f.starred {
				ir.WrongNotes++
				ir.fail("finish of %s by judge %s: notes/star %q/%v, want %q/%v", p, jr.id, e.Notes, e.Starred, f.notes, f.starred)
			}
		}
		for _, sp := range sj.SeenProjects {
			if _, acked := jr.finishes[sp.ProjectID]; acked {
				continue
			}
			if f, doubt := jr.doubtFinish[sp.ProjectID]; doubt {
				ir.DoubtApplied++
				if sp.Notes != f.notes || sp.Starred != f.starred {
					ir.WrongNotes++
					ir.fail("in-flight finish of %s by judge %s applied with other notes/star", sp.ProjectID, jr.id)
				}
				if o.resolve {
					jr.finishes[sp.ProjectID] = f
					jr.finishOrder = append(jr.finishOrder, sp.ProjectID)
				}
				continue
			}
			ir.PhantomFinishes++
			ir.fail("judge %s has project %s in seen_projects but never finished it", jr.id, sp.ProjectID)
		}
		if o.resolve {
			clear(jr.doubtFinish)
		}
		// rankings
		if jr.rankAcked != nil {
			ir.AckedRanks++
		}
		switch {
		case slices.Equal(sj.Rankings, jr.rankAcked) || (len(sj.Rankings) == 0 && len(jr.rankAcked) == 0):
		case slices.ContainsFunc(jr.rankDoubt, func(r []string) bool { return slices.Equal(r, sj.Rankings) }):
		default:
			ir.RankMismatch++
			ir.fail("judge %s: rankings %v, acknowledged %v", jr.id, sj.Rankings, jr.rankAcked)
		}
		if o.resolve {
			jr.rankAcked = append([]string{}, sj.Rankings...)
			jr.rankDoubt = nil
		}
		ir.AckedSkips += len(jr.skips)
		jr.mu.Unlock()
	}

	// Skips: each acknowledged skip left a flag (absent flags may have been folded into
	// one hidden-absent flag when the project got hidden).
	flags, err := c.Flags(ctx)
	if err == nil {
		ir.SkipsChecked = true
		type fk struct{ j, p, r string }
		have := map[fk]bool{}
		hiddenAbsent := map[string]bool{}
		for _, f := range flags {
			have[fk{f.JudgeID, f.ProjectID, f.Reason}] = true
			if f.Reason == "hidden-absent" {
				hiddenAbsent[f.ProjectID] = true
			}
		}
		for _, jr := range lg.judgeList() {
			jr.mu.Lock()
			for _, s := range jr.skips {
				if have[fk{jr.id, s.project, s.reason}] {
					continue
				}
				if s.reason == "absent" && (hiddenAbsent[s.project] || (pByID[s.project] != nil && !pByID[s.project].Active)) {
					continue
				}
				ir.LostSkips++
				ir.fail("acknowledged skip (%s) of %s by judge %s has no flag", s.reason, s.project, jr.id)
			}
			jr.mu.Unlock()
		}
	}

	if o.logins {
		var mu sync.Mutex
		_ = client.Parallel(len(lg.judgeList()), 16, func(i int) error {
			jr := lg.judgeList()[i]
			jr.mu.Lock()
			tok := jr.token
			jr.mu.Unlock()
			if tok == "" {
				return nil
			}
			err := c.Do(ctx, "POST", "/api/judge/auth", "/api/judge/auth", client.AsJudge(tok), nil, nil)
			if client.Status(err) == 401 {
				mu.Lock()
				ir.LostLogins++
				ir.fail("acknowledged login of judge %s no longer authenticates", jr.id)
				mu.Unlock()
			}
			return nil
		})
	}
	return ir, nil
}

// holdSampler samples the judges' current assignments during the run and looks for a
// project held by two judges while a free one existed (SPEC §5 step 5).
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

// analyze applies the method above to one snapshot.
func (h *holdSampler) analyze(judges []client.Judge, projects []client.Project, lg *ledger) {
	lg.mu.Lock()
	ours := map[string]*judgeRec{}
	for id, j := range lg.judges {
		ours[id] = j
	}
	lg.mu.Unlock()
	holders := map[string][]*client.Judge{}
	heldByOther := map[string]bool{} // held in the snapshot by a judge that is not ours
	// heldFrom is the earliest last activity of a judge holding the project in the
	// snapshot: that judge held it from then on at the latest. It covers holds the
	// ledger cannot know, e.g. a next that was applied but whose answer was lost when
	// the server was killed (the judge holds the project until its next call).
	heldFrom := map[string]int64{}
	for i := range judges {
		j := &judges[i]
		if !j.Active || j.Current == nil {
			continue
		}
		holders[*j.Current] = append(holders[*j.Current], j)
		if ours[j.ID] == nil {
			heldByOther[*j.Current] = true
		}
		if t, ok := heldFrom[*j.Current]; !ok || j.LastActivity < t {
			heldFrom[*j.Current] = j.LastActivity
		}
	}
	h.mu.Lock()
	h.samples++
	timer := h.timerSec
	h.mu.Unlock()
	dup := make([]string, 0)
	for p, hs := range holders {
		if len(hs) >= 2 {
			dup = append(dup, p)
		}
	}
	sort.Strings(dup)
	for _, p := range dup {
		hs := holders[p]
		sort.Slice(hs, func(a, b int) bool { return hs[a].LastActivity < hs[b].LastActivity })
		later := hs[len(hs)-1]
		T := later.LastActivity
		if timer > 0 && hs[len(hs)-2].LastActivity < T-int64(2*timer*1000) {
			continue // the earlier assignment was stale: allowed
		}
		h.mu.Lock()
		h.duplicates++
		h.mu.Unlock()
		seen := map[string]bool{}
		for _, sp := range later.SeenProjects {
			seen[sp.ProjectID] = true
		}
		var excluded map[string]bool
		if jr := ours[later.ID]; jr != nil {
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
		free := ""
		for _, q := range projects {
			if q.ID == p || !q.Active || seen[q.ID] || excluded[q.ID] || heldByOther[q.ID] {
				continue
			}
			if t, ok := heldFrom[q.ID]; ok && t <= T {
				continue // held by some judge since before the later assignment
			}
			if idSeconds(q.ID) >= T/1000 {
				continue
			}
			if lg.heldDuring(q.ID, later.ID, t0, T, 5) {
				continue
			}
			free = q.ID
			break
		}
		if free != "" {
			h.mu.Lock()
			h.violations++
			if len(h.messages) < 20 {
				names := make([]string, len(hs))
				for i, x := range hs {
					names[i] = x.ID
				}
				h.messages = append(h.messages, fmt.Sprintf("project %s held by judges %v (last assigned at %d) while project %s was free", p, names, T, free))
			}
			h.mu.Unlock()
		}
	}
}
