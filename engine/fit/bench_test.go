package fit

import (
	"cmp"
	"slices"
	"syscall"
	"testing"
	"time"

	"podium/engine"
)

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

// benchFit measures Ratings(in), reporting CPU ms per fit as cpu-ms/op.
func benchFit(b *testing.B, in *engine.RatingInput) {
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		Ratings(in)
	}
	b.ReportMetric(float64(cpuTime()-start)/1e6/float64(b.N), "cpu-ms/op")
}

// signalRatingInput is a fit's input with something to find, unlike benchState's lists
// (which are random, so the fit chases noise and never settles): projects of true
// quality q ~ N(0, 1), judges who each walk perJudge tables (every 7th, from a random
// one), perceive q plus their own noise (sd 1.1·U(0.5, 1.5); one in ten careless, sd 4)
// and rank all they saw by it, starring what they perceived above 1. It also returns q.
func signalRatingInput(nProjects, nJudges, perJudge int, seed uint64) (*engine.RatingInput, []float64) {
	rnd := engine.NewRand(seed)
	in := &engine.RatingInput{FocusTop: engine.DefaultFocusTop, Off: []int32{0}}
	q := make([]float64, nProjects)
	for i := range q {
		q[i] = rnd.Norm()
		in.Projects = append(in.Projects, engine.ID{byte(i), byte(i >> 8), byte(i >> 16), 1})
		in.Prev = append(in.Prev, 0)
	}
	type view struct {
		p int32
		v float64
	}
	for j := 0; j < nJudges; j++ {
		in.Judges = append(in.Judges, engine.ID{byte(j), byte(j >> 8), byte(j >> 16), 2})
		in.PrevRel = append(in.PrevRel, 0)
		noise := 1.1 * (0.5 + rnd.Float64())
		if rnd.Float64() < 0.1 {
			noise = 4
		}
		start := rnd.Intn(nProjects)
		var seen []view
		for k := 0; k < perJudge && k < nProjects; k++ {
			p := int32((start + k*7) % nProjects)
			seen = append(seen, view{p, q[p] + noise*rnd.Norm()})
		}
		slices.SortStableFunc(seen, func(a, b view) int { return cmp.Compare(b.v, a.v) })
		for _, s := range seen {
			in.Seq = append(in.Seq, s.p)
			in.Star = append(in.Star, s.v > 1)
		}
		in.NRanked = append(in.NRanked, int32(len(seen)))
		in.Off = append(in.Off, int32(len(in.Seq)))
	}
	return in, q
}

// BenchmarkFitRatingsSignal10kProjects5kJudges20Seen: a cold fit of lists that follow a
// true quality (signalRatingInput).
func BenchmarkFitRatingsSignal10kProjects5kJudges20Seen(b *testing.B) {
	in, _ := signalRatingInput(10000, 5000, 20, 5)
	benchFit(b, in)
}

// BenchmarkFitRatingsSignalWarm10kProjects5kJudges20Seen: the same, refitted from the
// last ratings after 50 more judges' lists.
func BenchmarkFitRatingsSignalWarm10kProjects5kJudges20Seen(b *testing.B) {
	all, _ := signalRatingInput(10000, 5050, 20, 5)
	before := *all
	nj := 5000
	before.Judges, before.PrevRel, before.NRanked = all.Judges[:nj], all.PrevRel[:nj], all.NRanked[:nj]
	before.Off = all.Off[:nj+1]
	before.Seq, before.Star = all.Seq[:all.Off[nj]], all.Star[:all.Off[nj]]
	first := Ratings(&before)
	in := *all
	in.Prev = first.Rating
	in.PrevRel = append(append([]float64{}, first.Reliability...), make([]float64, len(all.Judges)-nj)...)
	benchFit(b, &in)
}

// BenchmarkFitRatingsUnranked2kProjects64Judges1kSeen: the ratio benchmark's shape (64
// judges who each saw 1,000 of 2,000 projects, ranked none and starred a few): the
// unranked, unstarred tail has no pairs, and the fit must not walk its n² positions.
func BenchmarkFitRatingsUnranked2kProjects64Judges1kSeen(b *testing.B) {
	rnd := engine.NewRand(9)
	in := &engine.RatingInput{FocusTop: engine.DefaultFocusTop, Off: []int32{0}}
	for i := 0; i < 2000; i++ {
		in.Projects = append(in.Projects, engine.ID{byte(i), byte(i >> 8), 1})
		in.Prev = append(in.Prev, 0)
	}
	for j := 0; j < 64; j++ {
		in.Judges = append(in.Judges, engine.ID{byte(j), 2})
		in.PrevRel = append(in.PrevRel, 0)
		start := rnd.Intn(2000)
		for k := 0; k < 1000; k++ {
			in.Seq = append(in.Seq, int32((start+k*7)%2000))
			in.Star = append(in.Star, rnd.Intn(200) == 0)
		}
		in.NRanked = append(in.NRanked, int32(j%3)) // most rank nothing, some one or two
		in.Off = append(in.Off, int32(len(in.Seq)))
	}
	benchFit(b, in)
}
