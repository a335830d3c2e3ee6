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
		help: "podium simulate -projects N -judges J -visits V [-seeds S] [-mode focus|spread|both] [-min-views M] [-rank-top K]  expected precision for an event",
		run:  simulateCommand,
	})
}

// simulateCommand runs the simulated expo of package engine/simulate and prints a Markdown
// table row per mode.
func simulateCommand(args []string) error {
	def := simulate.DefaultConfig()
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	projects := fs.Int("projects", def.Projects, "projects (one per table)")
	judges := fs.Int("judges", def.Judges, "judges")
	visits := fs.Int("visits", def.Visits, "visits per judge (event minutes / minutes per visit)")
	seeds := fs.Int("seeds", 50, "simulated events per mode")
	seed := fs.Uint64("seed", 1, "first seed")
	mode := fs.String("mode", "both", "assignment_mode: focus, spread or both")
	minViews := fs.Int("min-views", -1, "min_views (-1: the default)")
	focusTop := fs.Int("focus-top", 0, "focus_top (0: the default)")
	rankTop := fs.Int("rank-top", 0, "judges rank only their best K (0: all they saw)")
	noise := fs.Float64("noise", def.Noise, "a careful judge's typical noise (true quality has sd 1)")
	careless := fs.Float64("careless", def.Careless, "share of careless judges")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *projects < 2 || *judges < 1 || *visits < 1 || *seeds < 1 {
		return errors.New("simulate: need at least 2 projects, 1 judge, 1 visit and 1 seed")
	}
	modes := []string{*mode}
	if *mode == "both" {
		modes = []string{engine.ModeFocus, engine.ModeSpread}
	} else if *mode != engine.ModeFocus && *mode != engine.ModeSpread {
		return fmt.Errorf("simulate: -mode must be focus, spread or both")
	}
	fmt.Print(simulate.Header)
	var all [][]simulate.Run
	for _, m := range modes {
		cfg := def
		cfg.Projects, cfg.Judges, cfg.Visits, cfg.Mode = *projects, *judges, *visits, m
		cfg.MinViews, cfg.FocusTop, cfg.RankTop = *minViews, *focusTop, *rankTop
		cfg.Noise, cfg.Careless = *noise, *careless
		runs, err := simulate.Runs(cfg, *seed, *seeds)
		if err != nil {
			return err
		}
		simulate.Summarize(cfg, runs).WriteRow(os.Stdout)
		all = append(all, runs)
	}
	if len(all) == 2 {
		d := simulate.Diff(all[0], all[1])
		fmt.Printf("\nfocus − spread, paired over the same %d events (95%% intervals): top-10 %+.3f ± %.3f, top-3 %+.3f ± %.3f, winner first %+.3f ± %.3f, ρ %+.3f ± %.3f\n",
			*seeds, d.Top10.Mean, d.Top10.CI, d.Top3.Mean, d.Top3.CI, d.Winner.Mean, d.Winner.CI, d.Rho.Mean, d.Rho.CI)
	}
	return nil
}
