package simulate

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"

	"podium/engine"
)

// Estimate is a mean over simulated events with its 95% confidence half-width.
type Estimate struct {
	Mean, CI float64
}

// String shows the mean and the half-width: 0.512 ± 0.034.
func (e Estimate) String() string { return fmt.Sprintf("%.3f ± %.3f", e.Mean, e.CI) }

// Summary sums up many simulated events of one configuration.
type Summary struct {
	Config                                               Config
	Seeds                                                int
	Rho, Top10, Top3, Winner, CopeTop10, CopeTop3        Estimate
	MinViews, MeanViews, Walked, RandomWalk, WalkedShare Estimate
}

// Runs runs seeds events (seeds first, first+1, ...) on the engine in this process, one
// event per core at a time; each event is its own engine, so the result is the same
// as running them one after another.
func Runs(cfg Config, first uint64, seeds int) ([]Run, error) {
	runs := make([]Run, seeds)
	errs := make([]error, seeds)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), seeds); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				seed := first + uint64(i)
				runs[i], errs[i] = RunOn(cfg, seed, Local(seed))
			}
		}()
	}
	for i := 0; i < seeds; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// estimate is the mean of f over runs with its 95% confidence half-width.
func estimate(runs []Run, f func(r Run) float64) Estimate {
	n := float64(len(runs))
	if n == 0 {
		return Estimate{}
	}
	m := 0.0
	for _, r := range runs {
		m += f(r)
	}
	m /= n
	v := 0.0
	for _, r := range runs {
		d := f(r) - m
		v += d * d
	}
	ci := 0.0
	if n > 1 {
		ci = 1.96 * math.Sqrt(v/(n-1)/n)
	}
	return Estimate{m, ci}
}

// Difference is a paired comparison of two configurations run on the same seeds (same
// projects, judges and perceptions): the mean of a − b with its 95% interval.
type Difference struct {
	Rho, Top10, Top3, Winner Estimate
}

// Diff compares runs a and b seed by seed.
func Diff(a, b []Run) Difference {
	n := min(len(a), len(b))
	d := make([]Run, n)
	for i := range d {
		d[i] = Run{Rho: a[i].Rho - b[i].Rho, Top10: a[i].Top10 - b[i].Top10, Top3: a[i].Top3 - b[i].Top3, Winner: a[i].Winner - b[i].Winner}
	}
	return Difference{
		Rho:    estimate(d, func(r Run) float64 { return r.Rho }),
		Top10:  estimate(d, func(r Run) float64 { return r.Top10 }),
		Top3:   estimate(d, func(r Run) float64 { return r.Top3 }),
		Winner: estimate(d, func(r Run) float64 { return r.Winner }),
	}
}

// Summarize sums up the runs of one configuration.
func Summarize(cfg Config, runs []Run) Summary {
	est := func(f func(r Run) float64) Estimate { return estimate(runs, f) }
	seeds := len(runs)
	return Summary{
		Config: cfg, Seeds: seeds,
		Rho:        est(func(r Run) float64 { return r.Rho }),
		Top10:      est(func(r Run) float64 { return r.Top10 }),
		Top3:       est(func(r Run) float64 { return r.Top3 }),
		Winner:     est(func(r Run) float64 { return r.Winner }),
		CopeTop10:  est(func(r Run) float64 { return r.CopeTop10 }),
		CopeTop3:   est(func(r Run) float64 { return r.CopeTop3 }),
		MinViews:   est(func(r Run) float64 { return r.MinViews }),
		MeanViews:  est(func(r Run) float64 { return r.MeanViews }),
		Walked:     est(func(r Run) float64 { return r.Walked }),
		RandomWalk: est(func(r Run) float64 { return r.RandomWalk }),
		WalkedShare: est(func(r Run) float64 {
			if r.RandomWalk == 0 {
				return 0
			}
			return r.Walked / r.RandomWalk
		}),
	}
}

// Header is the header of WriteRow's table (Markdown).
const Header = "| projects/judges/visits | mode | min_views | ρ | top-10 | top-3 | winner first | top-10 / top-3 by Copeland | views min / mean | tables walked (share of random order) |\n" +
	"|---|---|---|---|---|---|---|---|---|---|\n"

// WriteRow writes the summary as a row of Header's table.
func (s Summary) WriteRow(w io.Writer) {
	c := s.Config
	mv := fmt.Sprint(c.MinViews)
	if c.MinViews < 0 {
		mv = fmt.Sprint(engine.DefaultOptions(engine.ZeroID).MinViews)
	}
	fmt.Fprintf(w, "| %d/%d/%d | %s | %s | %s | %s | %s | %s | %.2f / %.2f | %.1f / %.1f | %.0f (%.2f ± %.2f) |\n",
		c.Projects, c.Judges, c.Visits, c.Mode, mv, s.Rho, s.Top10, s.Top3, s.Winner,
		s.CopeTop10.Mean, s.CopeTop3.Mean, s.MinViews.Mean, s.MeanViews.Mean,
		s.Walked.Mean, s.WalkedShare.Mean, s.WalkedShare.CI)
}
