package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"podium/engine"
	"podium/engine/simulate"
)

func init() {
	extraCommands = append(extraCommands, struct {
		name, help string
		run        func(args []string) error
	}{
		name: "simulate",
		help: "podium simulate -projects N -judges J -visits V [-seeds S] [-mode focus|spread|both] [-goal podium|field] [-min-views M] [-rank-top K] [-rank-share F] [-track [-track-r R] [-track-judges J] [-track-visits V]] [-http | -url URL -password P]  expected precision for an event",
		run:  simulateCommand,
	})
}

// simFlags are podium simulate's settings.
type simFlags struct {
	cfg           simulate.Config
	seeds         int
	seed          uint64
	mode          string
	http          bool
	server        string
	url, password string
	metrics       string
	track         bool
	trackR        float64
	trackJudges   int
	trackVisits   int
}

func parseSimFlags(args []string) (*simFlags, error) {
	f := &simFlags{cfg: simulate.DefaultConfig()}
	c := &f.cfg
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.IntVar(&c.Projects, "projects", c.Projects, "projects (one per table)")
	fs.IntVar(&c.Judges, "judges", c.Judges, "judges")
	fs.IntVar(&c.Visits, "visits", c.Visits, "visits per judge (event minutes / minutes per visit)")
	fs.IntVar(&f.seeds, "seeds", 40, "simulated events per mode")
	fs.Uint64Var(&f.seed, "seed", 1, "first seed")
	fs.StringVar(&f.mode, "mode", "both", "assignment_mode: focus, spread or both")
	fs.StringVar(&c.Goal, "goal", "", "assignment_goal: podium or field (empty: the default)")
	fs.IntVar(&c.MinViews, "min-views", -1, "min_views (-1: the default)")
	fs.IntVar(&c.FocusTop, "focus-top", 0, "focus_top (0: the default)")
	fs.IntVar(&c.RankTop, "rank-top", 0, "judges rank only their best K (0: all they saw)")
	fs.Float64Var(&c.RankShare, "rank-share", 1, "share of finishes after which a judge sends its ranking (1: every one)")
	fs.Float64Var(&c.Careless, "careless", c.Careless, "share of careless judges (noise sd 4)")
	fs.BoolVar(&f.http, "http", false, "drive a real server over HTTP: this binary (or -server), started per event on a temporary directory with RATINGS_MIN_GAP=0 RATINGS_EVERY=1")
	fs.StringVar(&f.server, "server", "", "with -http: the podium binary to start (default: this one)")
	fs.StringVar(&f.url, "url", "", "drive the running server at this URL (it is fully reset before every event; run it with RATINGS_MIN_GAP=0 RATINGS_EVERY=1)")
	fs.StringVar(&f.password, "password", os.Getenv("ADMIN_PASSWORD"), "with -url: the admin password (default $ADMIN_PASSWORD)")
	fs.StringVar(&f.metrics, "metrics-url", "", "with -url: where /metrics is served (default URL/metrics)")
	fs.BoolVar(&f.track, "track", false, "add the track-prize world (docs/behaviour.md#track-prizes: a track of 15 projects, 3 track judges × 8 visits) and print its table")
	fs.Float64Var(&f.trackR, "track-r", 0.6, "with -track: the correlation of the track's quality with overall quality")
	def := simulate.DefaultTrack()
	fs.IntVar(&f.trackJudges, "track-judges", def.Judges, "with -track: the track judges")
	fs.IntVar(&f.trackVisits, "track-visits", def.Visits, "with -track: visits per track judge")
	fs.BoolVar(&c.EarlierTrackRule, "track-earlier", false, "with -track, in process: track judges walk to the next table up, as in events begun before they covered their track (for the reference rows; over HTTP give -server an earlier build)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if c.EarlierTrackRule && (!f.track || f.http || f.url != "") {
		return nil, errors.New("simulate: -track-earlier needs -track and runs in process")
	}
	if f.track {
		if f.trackR < 0 || f.trackR > 1 {
			return nil, errors.New("simulate: -track-r must be in [0, 1]")
		}
		if f.trackJudges < 1 || f.trackVisits < 1 {
			return nil, errors.New("simulate: -track-judges and -track-visits must be at least 1")
		}
		c.Track = simulate.DefaultTrack()
		c.Track.R, c.Track.Judges, c.Track.Visits = f.trackR, f.trackJudges, f.trackVisits
		if c.Track.Projects > c.Projects {
			return nil, errors.New("simulate: -track needs at least 15 projects")
		}
	}
	if c.Projects < 2 || c.Judges < 1 || c.Visits < 1 || f.seeds < 1 {
		return nil, errors.New("simulate: need at least 2 projects, 1 judge, 1 visit and 1 seed")
	}
	if c.RankShare <= 0 || c.RankShare > 1 || c.Careless < 0 || c.Careless > 1 {
		return nil, errors.New("simulate: -rank-share must be in (0, 1] and -careless in [0, 1]")
	}
	if c.Goal != "" && c.Goal != engine.GoalPodium && c.Goal != engine.GoalField {
		return nil, errors.New("simulate: -goal must be podium or field")
	}
	if f.url != "" && f.password == "" {
		return nil, errors.New("simulate: -url needs the admin password (-password or $ADMIN_PASSWORD)")
	}
	if f.url != "" && f.http {
		return nil, errors.New("simulate: -http starts its own server; -url uses a running one: give one of them")
	}
	return f, nil
}

// simulateCommand runs simulated events (in process, or against a real server) and
// prints a Markdown table row per mode.
func simulateCommand(args []string) error {
	f, err := parseSimFlags(args)
	if err != nil {
		return err
	}
	modes := []string{f.mode}
	if f.mode == "both" && f.track {
		modes = []string{engine.ModeFocus} // the track's table is of the default mode
	} else if f.mode == "both" {
		modes = []string{engine.ModeFocus, engine.ModeSpread}
	} else if f.mode != engine.ModeFocus && f.mode != engine.ModeSpread {
		return fmt.Errorf("simulate: -mode must be focus, spread or both")
	}
	fmt.Print(simulate.Header)
	var all [][]simulate.Run
	for _, m := range modes {
		cfg := f.cfg
		cfg.Mode = m
		runs, err := f.runs(cfg)
		if err != nil {
			return err
		}
		simulate.Summarize(cfg, runs).WriteRow(os.Stdout)
		all = append(all, runs)
	}
	if f.track {
		fmt.Printf("\ntrack prize (r = %.2g, %d seeds):\n\n", f.trackR, f.seeds)
		simulate.WriteTrackTable(os.Stdout, all[0])
	}
	if len(all) == 2 {
		d := simulate.Diff(all[0], all[1])
		fmt.Printf("\nfocus − spread, paired over the same %d events (95%% intervals): top-10 %+.3f ± %.3f, top-3 %+.3f ± %.3f, winner first %+.3f ± %.3f, ρ %+.3f ± %.3f\n",
			f.seeds, d.Top10.Mean, d.Top10.CI, d.Top3.Mean, d.Top3.CI, d.Winner.Mean, d.Winner.CI, d.Rho.Mean, d.Rho.CI)
	}
	return nil
}

// runs runs the seeds of cfg where the flags say: in process, on a started server per
// event, or on the server at -url.
func (f *simFlags) runs(cfg simulate.Config) ([]simulate.Run, error) {
	if !f.http && f.url == "" {
		return simulate.Runs(cfg, f.seed, f.seeds)
	}
	var runs []simulate.Run
	for i := 0; i < f.seeds; i++ {
		seed := f.seed + uint64(i)
		var b *httpBackend
		var srv *startedServer
		if f.url != "" {
			b = newHTTPBackend(f.url, f.metrics, f.password, true)
		} else {
			var err error
			if b, srv, err = startServer(f.server); err != nil {
				return nil, err
			}
		}
		r, err := simulate.RunOn(cfg, seed, b)
		if srv != nil {
			srv.stop()
		}
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", seed, err)
		}
		runs = append(runs, r)
		fmt.Fprintf(os.Stderr, "seed %d: top-10 %.2f top-3 %.2f ρ %.3f\n", seed, r.Top10, r.Top3, r.Rho)
	}
	return runs, nil
}
