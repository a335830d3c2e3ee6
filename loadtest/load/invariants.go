package load

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

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
	ir.checkSeenCounts(judges, projects, lg, judgeTracks)
	ir.checkProjects(lg, pByID)
	for _, jr := range lg.judgeList() {
		ir.checkJudge(jr, byID[jr.id], o)
	}
	if flags, err := c.Flags(ctx); err == nil {
		ir.SkipsChecked = true
		ir.checkSkips(flags, lg, pByID)
	}
	if o.logins {
		ir.checkLogins(ctx, c, lg)
	}
	return ir, nil
}

// checkSeenCounts compares each project's seen count with the finishes by general
// judges in the judges' own lists and, when every judge on the server is ours and no
// finish is in doubt, with the finishes the clients saw acknowledged.
func (ir *InvariantReport) checkSeenCounts(judges []client.Judge, projects []client.Project, lg *ledger, judgeTracks bool) {
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
	if !comparable {
		return
	}
	for _, p := range projects {
		if p.Seen != ackSeen[p.ID] {
			ir.SeenMismatch++
			ir.fail("project %s (%s): seen %d but %d finishes were acknowledged", p.ID, p.Name, p.Seen, ackSeen[p.ID])
		}
	}
}

// checkProjects reports every acknowledged project the server lacks.
func (ir *InvariantReport) checkProjects(lg *ledger, pByID map[string]*client.Project) {
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
}

// checkJudge checks one acknowledged judge against the server's copy sj (nil: missing):
// its name and email, its finishes and its ranking. With o.resolve the in-doubt writes
// are folded into the ledger according to what the server has.
func (ir *InvariantReport) checkJudge(jr *judgeRec, sj *client.Judge, o verifyOpts) {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	if sj == nil {
		ir.LostJudges++
		ir.fail("acknowledged judge %s (%s) is missing", jr.id, jr.name)
		return
	}
	if sj.Name != jr.name || sj.Email != jr.email {
		ir.LostJudges++
		ir.fail("judge %s: name/email %q/%q, want %q/%q", jr.id, sj.Name, sj.Email, jr.name, jr.email)
	}
	ir.checkFinishes(jr, sj, o.resolve)
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
}

// checkFinishes compares a judge's acknowledged and in-doubt finishes (jr, locked by
// the caller) with its seen_projects on the server: each acknowledged finish is there
// once with its notes and star, and every entry was acknowledged or in flight.
func (ir *InvariantReport) checkFinishes(jr *judgeRec, sj *client.Judge, resolve bool) {
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
			if resolve {
				jr.finishes[sp.ProjectID] = f
				jr.finishOrder = append(jr.finishOrder, sp.ProjectID)
			}
			continue
		}
		ir.PhantomFinishes++
		ir.fail("judge %s has project %s in seen_projects but never finished it", jr.id, sp.ProjectID)
	}
	if resolve {
		clear(jr.doubtFinish)
	}
}

// checkSkips checks that each acknowledged skip left a flag (absent flags may have been
// folded into one hidden-absent flag when the project got hidden).
func (ir *InvariantReport) checkSkips(flags []client.Flag, lg *ledger, pByID map[string]*client.Project) {
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

// checkLogins checks that every acknowledged login token still authenticates.
func (ir *InvariantReport) checkLogins(ctx context.Context, c *client.Client, lg *ledger) {
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
