package simulate

import (
	"encoding/json"
	"fmt"
	"slices"

	"podium/engine"
	"podium/engine/fit"
)

// local is the Backend of the engine in this process: the same commands the server
// journals, the ratings fitted synchronously whenever their inputs moved (as the
// server's fit does with RATINGS_MIN_GAP=0 RATINGS_EVERY=1).
type local struct {
	e      *engine.Engine
	rnd    *engine.Rand // the commands' seeds
	now    int64        // the last command's time (ms)
	judges []engine.ID
	fitted uint64 // the inputs version of the last fit
}

// Local returns a Backend on a new engine in this process; seed draws the commands'
// random seeds.
func Local(seed uint64) Backend {
	return &local{e: engine.New(), rnd: engine.NewRand(seed*0xbf58476d1ce4e5b9 + 7), now: 1_700_000_000_000}
}

// apply applies cmd as actor, a millisecond after the last command.
func (l *local) apply(actor engine.Actor, cmd engine.Command) (any, error) {
	l.now++
	res, _, err := l.e.Apply(&engine.Envelope{Time: l.now, Seed: l.rnd.Uint64(), Actor: actor, Cmd: cmd})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd.Kind(), err)
	}
	return res, nil
}

func (l *local) SetUp(cfg Config) ([]engine.ID, error) {
	if cfg.EarlierTrackRule {
		// An event begun before the rule: its snapshot has no track_rule.
		b, _, err := l.e.Snapshot()
		if err != nil {
			return nil, err
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, err
		}
		delete(raw, "track_rule")
		if b, err = json.Marshal(raw); err != nil {
			return nil, err
		}
		if err := l.e.Restore(b); err != nil {
			return nil, err
		}
	}
	np := make([]engine.NewProject, cfg.Projects)
	for i := range np {
		np[i] = engine.NewProject{Name: fmt.Sprintf("Project %d", i+1), ChallengeList: trackOf(cfg, i+1)}
	}
	res, err := l.apply(engine.Admin, &engine.CreateProjects{Projects: np})
	if err != nil {
		return nil, err
	}
	pids := res.(engine.CreatedProjects).IDs
	if cfg.Track != nil { // a track judge's track must exist
		if _, err := l.apply(engine.Admin, Options(cfg)); err != nil {
			return nil, err
		}
	}
	n := cfg.Judges + trackJudges(cfg)
	nj := make([]engine.NewJudge, n)
	codes := make([]string, n)
	for i := range nj {
		nj[i] = engine.NewJudge{Name: fmt.Sprintf("Judge %d", i+1), Email: fmt.Sprintf("j%d@example.com", i+1)}
		if i >= cfg.Judges {
			nj[i].Track = TrackName
		}
		codes[i] = fmt.Sprintf("%08d", 10000000+i)
	}
	res, err = l.apply(engine.Admin, &engine.CreateJudges{Judges: nj, Codes: codes})
	if err != nil {
		return nil, err
	}
	for _, c := range res.([]engine.CreatedJudge) {
		l.judges = append(l.judges, c.ID)
	}
	if cfg.Track == nil {
		if _, err := l.apply(engine.Admin, Options(cfg)); err != nil {
			return nil, err
		}
	}
	if _, err := l.apply(engine.Admin, &engine.ClockUnpause{}); err != nil {
		return nil, err
	}
	return pids, nil
}

// Options is the options command a simulated event of cfg starts with.
func Options(cfg Config) *engine.SetOptions {
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
	if cfg.Goal != "" {
		opts.AssignmentGoal = ptr(cfg.Goal)
	}
	if cfg.Track != nil {
		opts.JudgeTracks, opts.Tracks = ptr(true), &[]string{TrackName}
	}
	return opts
}

// trackOf is the challenge list of the project at table loc: the track's name when
// the track (Config.Track) has that table.
func trackOf(cfg Config, loc int) []string {
	if cfg.Track != nil && slices.Contains(cfg.Track.Tables, loc) {
		return []string{TrackName}
	}
	return nil
}

// trackJudges is the number of the track's judges (after the general ones).
func trackJudges(cfg Config) int {
	if cfg.Track == nil {
		return 0
	}
	return cfg.Track.Judges
}

func ptr[T any](v T) *T { return &v }

func (l *local) Next(j int) (engine.ID, bool, error) {
	id := l.judges[j]
	r, err := l.apply(engine.JudgeActor(id), &engine.JudgeNext{Judge: id})
	if err != nil {
		return engine.ZeroID, false, err
	}
	nr := r.(engine.NextResult)
	return nr.ProjectID, !nr.ProjectID.IsZero(), nil
}

func (l *local) Finish(j int, starred bool) error {
	id := l.judges[j]
	_, err := l.apply(engine.JudgeActor(id), &engine.JudgeFinish{Judge: id, Starred: starred})
	return err
}

func (l *local) Rank(j int, ranking []engine.ID) error {
	id := l.judges[j]
	_, err := l.apply(engine.JudgeActor(id), &engine.JudgeRank{Judge: id, Ranking: ranking})
	return err
}

// Current fits the ratings when their inputs moved since the last fit, and applies the
// result as the server's fit does.
func (l *local) Current() error {
	var in *engine.RatingInput
	l.e.Read(func(s *engine.State) {
		if s.RatingInputsVersion() != l.fitted {
			in = s.RatingInput()
		}
	})
	if in == nil {
		return nil
	}
	l.fitted = in.Version
	_, err := l.apply(engine.System, fit.Ratings(in))
	return err
}

func (l *local) Final() (Final, error) {
	f := Final{Score: map[engine.ID]int{}, Seen: map[engine.ID]int{}}
	l.e.Read(func(s *engine.State) {
		res := s.Results()
		for _, r := range res.Projects {
			f.ByRank = append(f.ByRank, r.ID)
			f.Score[r.ID], f.Seen[r.ID] = r.Score, r.Seen
		}
		for _, r := range res.Tracks[TrackName] {
			f.Track = append(f.Track, TrackEntry{ID: r.ID, TrackStars: *r.TrackStars, Rank: r.Rank})
		}
	})
	return f, nil
}
