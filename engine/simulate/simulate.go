// Package simulate runs a simulated expo with known true quality, for measuring how
// well judging names the right winners (podium simulate, TestFocusBeatsSpread). It
// drives the real engine with the same commands the server journals; only the judges
// are simulated. Like the engine it reads no clock and no global randomness: a seed
// decides everything.
//
// Every project has a hidden true quality q ~ N(0, 1) and sits at its own table. Each
// judge perceives a project once, as q plus its own noise: a careful judge's noise sd
// is Noise·U(0.5, 1.5); a careless one (Careless of them) sees noise of sd
// CarelessNoise. The default noise (1.1) is calibrated so that Jury's rule ("spread")
// ranked by Copeland score names the true top 10 / top 3 with precision 0.51 / 0.31, as
// measured for Podium before focus mode. After every finish the judge ranks all it saw
// (or its top RankTop) by what it perceived and stars what it perceived above
// StarAbove. A visit takes VisitMinutes plus WalkSeconds per table walked; judges work
// at the same time, so projects are busy while someone looks at them. The server
// refits the ratings in the background every few finishes; here the fit runs after
// every RefitEvery finishes and its result is applied as the same journaled command.
package simulate

import (
	"fmt"
	"math"
	"slices"

	"podium/engine"
	"podium/engine/fit"
)

// Config describes one simulated event.
type Config struct {
	Projects, Judges, Visits int
	Mode                     string  // assignment_mode: "focus" or "spread"
	MinViews                 int     // min_views (-1: the default)
	FocusTop                 int     // focus_top (0: the default)
	RankTop                  int     // judges rank their best RankTop (0: all they saw)
	Noise                    float64 // a careful judge's typical noise sd (true quality sd is 1)
	Careless                 float64 // share of careless judges
	CarelessNoise            float64
	StarAbove                float64 // perceived quality that earns a star
	VisitMinutes             float64
	WalkSeconds              float64 // per table
	RefitEvery               int     // finishes between fits (0: max(5, judges/10))
}

// DefaultConfig returns the standard scenario: 100 projects, 25 judges × 12 visits.
func DefaultConfig() Config {
	return Config{
		Projects: 100, Judges: 25, Visits: 12, Mode: engine.ModeFocus, MinViews: -1,
		Noise: 1.1, Careless: 0.1, CarelessNoise: 4, StarAbove: 1.0,
		VisitMinutes: 5, WalkSeconds: 3,
	}
}

// Run is the outcome of one simulated event.
type Run struct {
	Rho        float64 // Spearman correlation of rank and true quality
	Top10      float64 // share of the true top 10 among the top 10 by rank
	Top3       float64
	Winner     float64 // 1 when the true best project is ranked first
	CopeTop10  float64 // the same by Copeland score (Jury's ordering)
	CopeTop3   float64
	MinViews   float64
	MeanViews  float64
	Walked     float64 // tables walked by all judges
	RandomWalk float64 // tables walked had each judge visited the same number in random order
	Minutes    float64 // event length until the last finish
}

type simJudge struct {
	id      engine.ID
	noise   float64
	seen    []engine.ID
	percept map[engine.ID]float64
	left    int
	at      float64 // minutes: when its next action is due
	viewing bool
	lastLoc int
	walked  int
}

// simulateOne runs one event with the given seed (judges, true qualities and the engine's
// command seeds all derive from it).
func simulateOne(cfg Config, seed uint64) (Run, error) {
	ev := &event{cfg: cfg, rnd: engine.NewRand(seed*0x9e3779b97f4a7c15 + 1), e: engine.New(), now: 1_700_000_000_000}
	if err := ev.setUp(); err != nil {
		return Run{}, err
	}
	for {
		// The judge whose action is due first (ties: the earlier judge).
		var j *simJudge
		for _, c := range ev.judges {
			if (c.left > 0 || c.viewing) && (j == nil || c.at < j.at) {
				j = c
			}
		}
		if j == nil {
			break
		}
		var err error
		if j.viewing {
			err = ev.finish(j)
		} else {
			err = ev.next(j)
		}
		if err != nil {
			return Run{}, err
		}
	}
	if err := ev.refit(); err != nil {
		return Run{}, err
	}

	out := Run{Minutes: ev.end}
	ev.e.Read(func(s *engine.State) { out.measure(s, ev.quality) })
	for _, j := range ev.judges {
		out.Walked += float64(j.walked)
		out.RandomWalk += randomWalk(len(j.seen), cfg.Projects, ev.rnd)
	}
	return out, nil
}

// event is one simulated event under way.
type event struct {
	cfg        Config
	rnd        *engine.Rand // draws everything, the commands' seeds included
	e          *engine.Engine
	now        int64 // the last command's time (ms)
	quality    map[engine.ID]float64
	judges     []*simJudge
	refitEvery int
	finishes   int
	end        float64 // minutes: the last finish
}

// apply applies cmd as actor, a millisecond after the last command.
func (ev *event) apply(actor engine.Actor, cmd engine.Command) (any, error) {
	ev.now++
	res, _, err := ev.e.Apply(&engine.Envelope{Time: ev.now, Seed: ev.rnd.Uint64(), Actor: actor, Cmd: cmd})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd.Kind(), err)
	}
	return res, nil
}

// setUp creates the projects with their true quality, the judges with their noise,
// and sets the options; the clock then runs.
func (ev *event) setUp() error {
	cfg := ev.cfg
	np := make([]engine.NewProject, cfg.Projects)
	for i := range np {
		np[i] = engine.NewProject{Name: fmt.Sprintf("Project %d", i+1)}
	}
	res, err := ev.apply(engine.Admin, &engine.CreateProjects{Projects: np})
	if err != nil {
		return err
	}
	pids := res.(engine.CreatedProjects).IDs
	ev.quality = make(map[engine.ID]float64, len(pids))
	for _, id := range pids {
		ev.quality[id] = ev.rnd.Norm()
	}
	nj := make([]engine.NewJudge, cfg.Judges)
	codes := make([]string, cfg.Judges)
	for i := range nj {
		nj[i] = engine.NewJudge{Name: fmt.Sprintf("Judge %d", i+1), Email: fmt.Sprintf("j%d@example.com", i+1)}
		codes[i] = fmt.Sprintf("%08d", 10000000+i)
	}
	res, err = ev.apply(engine.Admin, &engine.CreateJudges{Judges: nj, Codes: codes})
	if err != nil {
		return err
	}
	ev.judges = make([]*simJudge, cfg.Judges)
	for i, c := range res.([]engine.CreatedJudge) {
		noise := cfg.Noise * (0.5 + ev.rnd.Float64())
		if ev.rnd.Float64() < cfg.Careless {
			noise = cfg.CarelessNoise
		}
		// Judges arrive over the first minute, so they do not all start at table 1.
		ev.judges[i] = &simJudge{id: c.ID, noise: noise, percept: map[engine.ID]float64{}, left: cfg.Visits, at: ev.rnd.Float64(), lastLoc: -1}
	}
	opts := &engine.SetOptions{JudgingTimer: ptr(0)}
	if cfg.Mode != "" {
		opts.AssignmentMode = ptr(cfg.Mode)
	}
	if cfg.MinViews >= 0 {
		opts.MinViews = ptr(cfg.MinViews)
	}
	if cfg.FocusTop > 0 {
		opts.FocusTop = ptr(cfg.FocusTop)
	}
	if _, err := ev.apply(engine.Admin, opts); err != nil {
		return err
	}
	if _, err := ev.apply(engine.Admin, &engine.ClockUnpause{}); err != nil {
		return err
	}
	ev.refitEvery = cfg.RefitEvery
	if ev.refitEvery <= 0 {
		ev.refitEvery = max(5, cfg.Judges/10)
	}
	return nil
}

// refit fits the ratings and applies the result, as the server's background fit does.
func (ev *event) refit() error {
	var in *engine.RatingInput
	ev.e.Read(func(s *engine.State) { in = s.RatingInput() })
	_, err := ev.apply(engine.System, fit.Ratings(in))
	return err
}

// finish ends j's visit: it perceives the project, finishes (starring it when it seems
// good enough) and ranks all it saw; every refitEvery finishes the ratings are refitted.
func (ev *event) finish(j *simJudge) error {
	cfg := ev.cfg
	var cur engine.ID
	ev.e.Read(func(s *engine.State) { cur = s.Judges[j.id].Current })
	y := ev.quality[cur] + j.noise*ev.rnd.Norm()
	j.percept[cur] = y
	j.seen = append(j.seen, cur)
	if _, err := ev.apply(engine.JudgeActor(j.id), &engine.JudgeFinish{Judge: j.id, Starred: y > cfg.StarAbove}); err != nil {
		return err
	}
	if _, err := ev.apply(engine.JudgeActor(j.id), &engine.JudgeRank{Judge: j.id, Ranking: j.ranking(cfg.RankTop)}); err != nil {
		return err
	}
	j.viewing = false
	j.left--
	ev.end = max(ev.end, j.at)
	ev.finishes++
	if ev.finishes%ev.refitEvery == 0 {
		return ev.refit()
	}
	return nil
}

// next asks the engine for j's next project and walks j there (or ends j's visits
// when there is none).
func (ev *event) next(j *simJudge) error {
	cfg := ev.cfg
	r, err := ev.apply(engine.JudgeActor(j.id), &engine.JudgeNext{Judge: j.id})
	if err != nil {
		return err
	}
	nr := r.(engine.NextResult)
	if nr.ProjectID.IsZero() {
		j.left = 0 // nothing left for this judge
		return nil
	}
	var loc int
	ev.e.Read(func(s *engine.State) { loc = s.Projects[nr.ProjectID].Location })
	walk := 0
	if j.lastLoc >= 0 {
		walk = abs(loc - j.lastLoc)
	}
	j.walked += walk
	j.lastLoc = loc
	j.viewing = true
	j.at += cfg.VisitMinutes + cfg.WalkSeconds*float64(walk)/60
	return nil
}

func ptr[T any](v T) *T { return &v }

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// ranking is the judge's ranking: what it saw, best perceived first (top k when k > 0).
func (j *simJudge) ranking(k int) []engine.ID {
	r := append([]engine.ID(nil), j.seen...)
	slices.SortStableFunc(r, func(a, b engine.ID) int {
		switch pa, pb := j.percept[a], j.percept[b]; {
		case pa > pb:
			return -1
		case pa < pb:
			return 1
		}
		return 0
	})
	if k > 0 && len(r) > k {
		r = r[:k]
	}
	return r
}

// randomWalk is the tables walked visiting n of the tables 1..tables in random order.
func randomWalk(n, tables int, rnd *engine.Rand) float64 {
	perm := make([]int, tables)
	for i := range perm {
		perm[i] = i
	}
	for i := 0; i < n && i < tables; i++ {
		k := i + rnd.Intn(tables-i)
		perm[i], perm[k] = perm[k], perm[i]
	}
	w := 0
	for i := 1; i < n && i < tables; i++ {
		w += abs(perm[i] - perm[i-1])
	}
	return float64(w)
}

// measure fills the quality measures from the final state.
func (out *Run) measure(s *engine.State, quality map[engine.ID]float64) {
	var ps []*engine.Project
	for _, p := range s.Projects {
		if p.Active {
			ps = append(ps, p)
		}
	}
	byTruth := append([]*engine.Project(nil), ps...)
	slices.SortFunc(byTruth, func(a, b *engine.Project) int { return cmpFloatDesc(quality[a.ID], quality[b.ID]) })
	byRank := append([]*engine.Project(nil), ps...)
	slices.SortFunc(byRank, func(a, b *engine.Project) int { return a.Ratings.Rank - b.Ratings.Rank })
	byCope := append([]*engine.Project(nil), ps...)
	slices.SortFunc(byCope, func(a, b *engine.Project) int {
		if d := s.CopelandOf(b.ID).Score - s.CopelandOf(a.ID).Score; d != 0 {
			return d
		}
		return a.Location - b.Location
	})
	out.Top10 = overlap(byTruth, byRank, 10)
	out.Top3 = overlap(byTruth, byRank, 3)
	out.CopeTop10 = overlap(byTruth, byCope, 10)
	out.CopeTop3 = overlap(byTruth, byCope, 3)
	if len(ps) > 0 && byRank[0] == byTruth[0] {
		out.Winner = 1
	}
	// Spearman's rho between rank and true rank (no ties in either).
	trueRank := make(map[engine.ID]int, len(ps))
	for i, p := range byTruth {
		trueRank[p.ID] = i
	}
	n := float64(len(ps))
	d2 := 0.0
	minV, sumV := math.Inf(1), 0.0
	for i, p := range byRank {
		d := float64(i - trueRank[p.ID])
		d2 += d * d
		minV = math.Min(minV, float64(p.Seen))
		sumV += float64(p.Seen)
	}
	if n > 1 {
		out.Rho = 1 - 6*d2/(n*(n*n-1))
		out.MinViews, out.MeanViews = minV, sumV/n
	}
}

func cmpFloatDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// overlap is the share of a's first k found among b's first k.
func overlap(a, b []*engine.Project, k int) float64 {
	k = min(k, len(a))
	if k == 0 {
		return 0
	}
	in := make(map[engine.ID]bool, k)
	for _, p := range a[:k] {
		in[p.ID] = true
	}
	hit := 0
	for _, p := range b[:k] {
		if in[p.ID] {
			hit++
		}
	}
	return float64(hit) / float64(k)
}
