package engine

import (
	"syscall"
	"testing"
	"time"
)

// FitRatings is engine/fit's Ratings, which this package's tests cannot import (fit
// imports engine); fit_link_test.go, in package engine_test, sets it.
var FitRatings func(in *RatingInput) *SetRatings

// cpuTime is the process's CPU time so far (user and system): the fit benchmarks report
// it per fit besides the wall time, which on a shared machine mostly measures the
// neighbours.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchFit measures FitRatings(in), reporting CPU ms per fit as cpu-ms/op.
func benchFit(b *testing.B, in *RatingInput) {
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		FitRatings(in)
	}
	b.ReportMetric(float64(cpuTime()-start)/1e6/float64(b.N), "cpu-ms/op")
}

// benchMode is the assignment mode benchAssignMode sets before measuring.
func benchAssignMode(b *testing.B, mode string, fitted bool, every int) {
	benchSetup = func(s *State) {
		s.Options.AssignmentMode = mode
		if fitted {
			var cmd *SetRatings
			cmd = FitRatings(s.RatingInput())
			if _, err := cmd.apply(s, ctxAt(s, 1_700_000_400_000, 1)); err != nil {
				b.Fatal(err)
			}
		}
	}
	defer func() { benchSetup = nil }()
	benchAssignBusy(b, 10000, 5000, 20, every)
}

// benchSetup, when set, changes the bench state before the index is built.
var benchSetup func(s *State)

// BenchmarkAssignFocus10kProjects5kJudges20Seen: focus mode with fitted ratings (every
// project has its min_views), docs/behaviour.md#judging-flow step 9. Target: < 100 µs.
func BenchmarkAssignFocus10kProjects5kJudges20Seen(b *testing.B) {
	benchAssignMode(b, ModeFocus, true, 0)
}

// BenchmarkAssignFocus10kProjects5kJudges20SeenAllBusy: the same while 4,950 judges hold
// a project.
func BenchmarkAssignFocus10kProjects5kJudges20SeenAllBusy(b *testing.B) {
	benchAssignMode(b, ModeFocus, true, 100)
}

// BenchmarkAssignSpread10kProjects5kJudges20Seen: Jury's rule (pair sums), for comparison.
func BenchmarkAssignSpread10kProjects5kJudges20Seen(b *testing.B) {
	benchAssignMode(b, ModeSpread, false, 0)
}

// BenchmarkFitRatings10kProjects5kJudges20Seen: one full (cold) ratings fit at the
// scale target, outside the writer. Target: well under 1 s.
func BenchmarkFitRatings10kProjects5kJudges20Seen(b *testing.B) {
	s, _ := benchState(b, 10000, 5000, 20)
	for _, j := range s.Judges { // everyone ranks all it saw
		j.Rankings = j.Rankings[:0]
		for _, sp := range j.SeenProjects {
			j.Rankings = append(j.Rankings, sp.ProjectID)
		}
	}
	benchFit(b, s.RatingInput())
}

// BenchmarkRatingInput10kProjects5kJudges20Seen: copying the fit's inputs under the
// read lock.
func BenchmarkRatingInput10kProjects5kJudges20Seen(b *testing.B) {
	s, _ := benchState(b, 10000, 5000, 20)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.RatingInput()
	}
}

// BenchmarkFitRatingsWarm10kProjects5kJudges20Seen: a refit from the last ratings (what
// the server does every few finishes).
func BenchmarkFitRatingsWarm10kProjects5kJudges20Seen(b *testing.B) {
	s, _ := benchState(b, 10000, 5000, 20)
	for _, j := range s.Judges {
		j.Rankings = j.Rankings[:0]
		for _, sp := range j.SeenProjects {
			j.Rankings = append(j.Rankings, sp.ProjectID)
		}
	}
	in := s.RatingInput()
	first := FitRatings(in)
	in.Prev, in.PrevRel = first.Rating, first.Reliability
	benchFit(b, in)
}
