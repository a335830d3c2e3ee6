// Package simulate runs a simulated expo with known true quality, for measuring how
// well judging names the right winners (podium simulate, TestFocusBeatsSpread;
// docs/behaviour.md#simulation). Only the judges are simulated: they drive a Backend,
// either the real engine in this process (Runs) or a real server over HTTP (podium
// simulate -http), with the same judge model. Like the engine it reads no clock and no
// global randomness: a seed decides the world and the judges.
//
// The world is the one quality is measured in from outside: N projects at tables 1..N
// with true quality q ~ N(0, 1); J judges, each of noise σ drawn from Noises (0.5, 1, 2,
// equally likely) or, for a share Careless of them, CarelessNoise (4). A judge perceives
// project i as q_i + σ·z, z ~ N(0, 1) drawn once per (judge, project). Every judge first
// asks for a project, in random order; then, repeatedly, a judge chosen at random among
// those holding a project finishes it (starring it when it perceived at least
// StarAbove), sends its ranking (all it saw by perception, or its best RankTop; only
// after a share RankShare of its finishes) and asks for the next, so every assignment
// sees the other judges' projects busy, as at an expo. The ratings are current at every
// ask (Backend.Current): a real visit takes minutes, a fit milliseconds.
package simulate

import (
	"errors"
	"math"
	"slices"

	"podium/engine"
)

// Config describes one simulated event.
type Config struct {
	Projects, Judges, Visits int
	Mode                     string    // assignment_mode: "focus" or "spread"
	MinViews                 int       // min_views (-1: the default)
	FocusTop                 int       // focus_top (0: the default)
	Goal                     string    // assignment_goal ("": the default)
	RankTop                  int       // judges rank their best RankTop (0: all they saw)
	RankShare                float64   // share of finishes after which the judge sends its ranking
	Noises                   []float64 // a careful judge's noise sd, one drawn per judge (true quality has sd 1)
	Careless                 float64   // share of careless judges
	CarelessNoise            float64
	Random                   int     // judges (the first ones) whose perception ignores quality: they answer at random
	StarAbove                float64 // perceived quality that earns a star
	// Track adds a sponsor's track to the event (docs/behaviour.md#track-prizes; nil:
	// none).
	Track *TrackWorld
	// EarlierTrackRule starts the event as one begun before track judges covered
	// their track (State.TrackRule 0: the next table up); in process only.
	EarlierTrackRule bool
}

// DefaultConfig returns the standard scenario: 100 projects, 25 judges × 12 visits.
func DefaultConfig() Config {
	return Config{
		Projects: 100, Judges: 25, Visits: 12, Mode: engine.ModeFocus, MinViews: -1,
		RankShare: 1, Noises: []float64{0.5, 1, 2}, Careless: 0.1, CarelessNoise: 4, StarAbove: 1.0,
	}
}

// Backend is the server the simulated judges use. Projects sit at tables 1..N in the
// order SetUp returns them; judges are numbered 0..J-1.
type Backend interface {
	// SetUp creates the event of cfg (projects, judges, options) and starts the clock.
	SetUp(cfg Config) (projects []engine.ID, err error)
	// Next asks for judge j's next project; ok false when there is none.
	Next(j int) (p engine.ID, ok bool, err error)
	// Finish ends judge j's visit, starred or not.
	Finish(j int, starred bool) error
	// Rank sends judge j's ranking, best first.
	Rank(j int, ranking []engine.ID) error
	// Current returns once the stored ratings include every change made so far.
	Current() error
	// Final reads the outcome: the active projects by rank, their Copeland scores and
	// their views.
	Final() (Final, error)
}

// Final is what a simulated event is scored on.
type Final struct {
	ByRank []engine.ID
	Score  map[engine.ID]int
	Seen   map[engine.ID]int
	// Track is the results' list of the track (Config.Track), in its order.
	Track []TrackEntry
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
	Walked     float64   // tables walked by all judges
	RandomWalk float64   // tables walked had each judge visited the same number in random order
	Track      *TrackRun // the track prize's measures (Config.Track)
}

type simJudge struct {
	track   bool // a track judge: it perceives track quality
	noise   float64
	random  bool
	seen    []engine.ID
	percept map[engine.ID]float64
	left    int
	holds   engine.ID // the project it is looking at (zero: none)
	lastLoc int
	walked  int
}

// ErrStopped is RunOnUntil's error when it was stopped before the event ended.
var ErrStopped = errors.New("simulate: stopped")

// event is one simulated event under way.
type event struct {
	cfg     Config
	rnd     *engine.Rand // the world: qualities, noises, the first asks' order
	play    *engine.Rand // who finishes next, and whether it ranks
	seed    uint64
	b       Backend
	stop    <-chan struct{}
	quality map[engine.ID]float64
	loc     map[engine.ID]int
	judges  []*simJudge
	trackQ  map[engine.ID]float64 // the track's projects' track quality (Config.Track)
	trk     *engine.Rand          // the track's random stream (track.go)
}

// RunOn runs the event of cfg and seed against b (a fresh, empty server).
func RunOn(cfg Config, seed uint64, b Backend) (Run, error) { return RunOnUntil(cfg, seed, b, nil) }

// RunOnUntil is RunOn that gives up with ErrStopped once stop is closed (looked at
// before every finish).
func RunOnUntil(cfg Config, seed uint64, b Backend, stop <-chan struct{}) (Run, error) {
	ev := &event{cfg: cfg, rnd: engine.NewRand(seed*0x9e3779b97f4a7c15 + 1), play: engine.NewRand(seed*0x94d049bb133111eb + 3), seed: seed, b: b, stop: stop}
	if cfg.Track != nil {
		tw := *cfg.Track
		tw.Tables = ev.trackTables(tw.Projects)
		cfg.Track = &tw
		ev.cfg = cfg
	}
	pids, err := b.SetUp(cfg)
	if err != nil {
		return Run{}, err
	}
	ev.quality = make(map[engine.ID]float64, len(pids))
	ev.loc = make(map[engine.ID]int, len(pids))
	for i, id := range pids {
		ev.quality[id] = ev.rnd.Norm()
		ev.loc[id] = i + 1
	}
	ev.judges = make([]*simJudge, cfg.Judges)
	for i := range ev.judges {
		noise := cfg.Noises[ev.rnd.Intn(len(cfg.Noises))]
		if ev.rnd.Float64() < cfg.Careless {
			noise = cfg.CarelessNoise
		}
		ev.judges[i] = &simJudge{noise: noise, random: i < cfg.Random, percept: map[engine.ID]float64{}, left: cfg.Visits, lastLoc: -1}
	}
	if cfg.Track != nil {
		ev.trackWorld(pids)
	}
	if err := ev.judge(); err != nil {
		return Run{}, err
	}
	if err := b.Current(); err != nil {
		return Run{}, err
	}
	f, err := b.Final()
	if err != nil {
		return Run{}, err
	}
	var out Run
	out.measure(f, ev.quality, ev.loc)
	if cfg.Track != nil {
		out.Track = ev.measureTrack(f)
	}
	for _, j := range ev.judges {
		out.Walked += float64(j.walked)
		out.RandomWalk += randomWalk(len(j.seen), cfg.Projects, ev.rnd)
	}
	return out, nil
}

// judge plays the event: every judge asks once, in random order; then a random judge
// among those holding a project finishes it, ranks and asks again, until no judge holds one.
func (ev *event) judge() error {
	order := make([]int, len(ev.judges))
	for i := range order {
		order[i] = i
	}
	for i := len(order) - 1; i > 0; i-- {
		k := ev.rnd.Intn(i + 1)
		order[i], order[k] = order[k], order[i]
	}
	for _, j := range order {
		if err := ev.next(j); err != nil {
			return err
		}
	}
	for {
		var holding []int
		for i, j := range ev.judges {
			if !j.holds.IsZero() {
				holding = append(holding, i)
			}
		}
		if len(holding) == 0 {
			return nil
		}
		select {
		case <-ev.stop:
			return ErrStopped
		default:
		}
		i := holding[ev.play.Intn(len(holding))]
		if err := ev.finish(i); err != nil {
			return err
		}
		if ev.judges[i].left > 0 {
			if err := ev.b.Current(); err != nil {
				return err
			}
			if err := ev.next(i); err != nil {
				return err
			}
		}
	}
}

// finish ends judge i's visit: it perceives the project, finishes (starring it when it
// seems good enough) and, after a share RankShare of its finishes, ranks what it saw.
func (ev *event) finish(i int) error {
	cfg, j := ev.cfg, ev.judges[i]
	cur := j.holds
	z := ev.look(i, cur)
	y := ev.quality[cur] + j.noise*z
	if j.track {
		y = ev.trackQ[cur] + j.noise*z
	}
	if j.random {
		y = 1.5 * z // as spread as what careful judges perceive, unrelated to quality
	}
	j.percept[cur] = y
	j.seen = append(j.seen, cur)
	j.holds = engine.ZeroID
	j.left--
	if err := ev.b.Finish(i, y >= cfg.StarAbove); err != nil {
		return err
	}
	if cfg.RankShare < 1 && ev.play.Float64() >= cfg.RankShare {
		return nil
	}
	return ev.b.Rank(i, j.ranking(cfg.RankTop))
}

// look is judge i's perception noise z for project p: fixed per (judge, project)
// whatever the order of the visits, so two runs of the same seed that assign
// differently still see the same world (their comparison is paired).
func (ev *event) look(i int, p engine.ID) float64 {
	r := engine.NewRand(ev.seed*0xbf58476d1ce4e5b9 ^ uint64(i+1)*0x9e3779b97f4a7c15 ^ uint64(ev.loc[p])*0x94d049bb133111eb)
	return r.Norm()
}

// next asks for judge i's next project and walks it there (or ends its visits when
// there is none).
func (ev *event) next(i int) error {
	j := ev.judges[i]
	p, ok, err := ev.b.Next(i)
	if err != nil {
		return err
	}
	if !ok {
		j.left = 0
		return nil
	}
	loc := ev.loc[p]
	if j.lastLoc >= 0 {
		j.walked += abs(loc - j.lastLoc)
	}
	j.lastLoc, j.holds = loc, p
	return nil
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// ranking is the judge's ranking: what it saw, best perceived first (top k when k > 0).
func (j *simJudge) ranking(k int) []engine.ID {
	r := append([]engine.ID(nil), j.seen...)
	slices.SortStableFunc(r, func(a, b engine.ID) int { return cmpFloatDesc(j.percept[a], j.percept[b]) })
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

// measure fills the quality measures from the final outcome.
func (out *Run) measure(f Final, quality map[engine.ID]float64, loc map[engine.ID]int) {
	ps := f.ByRank
	byTruth := slices.Clone(ps)
	slices.SortFunc(byTruth, func(a, b engine.ID) int { return cmpFloatDesc(quality[a], quality[b]) })
	byCope := slices.Clone(ps)
	slices.SortFunc(byCope, func(a, b engine.ID) int {
		if d := f.Score[b] - f.Score[a]; d != 0 {
			return d
		}
		return loc[a] - loc[b]
	})
	out.Top10 = overlap(byTruth, ps, 10)
	out.Top3 = overlap(byTruth, ps, 3)
	out.CopeTop10 = overlap(byTruth, byCope, 10)
	out.CopeTop3 = overlap(byTruth, byCope, 3)
	if len(ps) > 0 && ps[0] == byTruth[0] {
		out.Winner = 1
	}
	// Spearman's rho between rank and true rank (no ties in either).
	trueRank := make(map[engine.ID]int, len(ps))
	for i, p := range byTruth {
		trueRank[p] = i
	}
	n := float64(len(ps))
	d2 := 0.0
	minV, sumV := math.Inf(1), 0.0
	for i, p := range ps {
		d := float64(i - trueRank[p])
		d2 += d * d
		minV = math.Min(minV, float64(f.Seen[p]))
		sumV += float64(f.Seen[p])
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
func overlap(a, b []engine.ID, k int) float64 {
	k = min(k, len(a), len(b))
	if k == 0 {
		return 0
	}
	in := make(map[engine.ID]bool, k)
	for _, p := range a[:k] {
		in[p] = true
	}
	hit := 0
	for _, p := range b[:k] {
		if in[p] {
			hit++
		}
	}
	return float64(hit) / float64(k)
}
