package worker

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"podium/engine"
	"podium/engine/fit"
)

// The background ratings fit (docs/behaviour.md#ratings). It runs beside the writer: it copies the fit's
// inputs under the read lock, fits without any lock, and submits the result as a
// journaled command, so assignments that use the ratings replay exactly. It refits once
// RatingsEvery changes to the inputs (finishes, rankings, stars, hides) have gathered,
// or once the inputs have been quiet for RatingsQuiet after a change (the end of a
// burst), never runs two fits at once, and waits ratingsSpacing times the last fit's
// duration before the next (the fit never takes more than a tenth of one core, so under
// a flood of finishes it leaves the writer alone; at 10,000 projects a refit then
// happens about every 2 s), and at least RatingsMinGap (default 2 s) between the starts
// of two fits: ratings a second or two old steer judges who spend minutes per table
// just as well, and a small event's fast fits would otherwise run back to back under a
// flood (copying the inputs holds the writer for a moment each time).
//
// It fits only on a node that leads the duties (RatingsNode.LeadsDuties: a single node
// always, a cluster node while it leads; the others apply the journaled result).
// After a start (and on a cluster node, once it first leads) it fits once whatever the
// counter says: the journaled ratings may predate the last changes before the stop (a
// burst shorter than RatingsQuiet, or fewer than RatingsEvery changes). That result is
// stored only when it differs from the journaled ratings (RatingInput.Changes), so an
// idle restart writes nothing. A restored backup is checked the same way.

const (
	ratingsDefaultEvery = 5
	ratingsDefaultQuiet = time.Second
	ratingsDefaultGap   = 2 * time.Second
	ratingsPoll         = 100 * time.Millisecond
	ratingsSpacing      = 9
)

// RatingsNode is what the ratings fit needs from a node (persist.Node or cluster.Node).
type RatingsNode interface {
	Read(fn func(s *engine.State))
	Ready() bool
	// LeadsDuties says whether this node runs the duties that act on their own.
	LeadsDuties() bool
	Submit(ctx context.Context, actor engine.Actor, cmd engine.Command) (any, error)
}

// RatingsOptions configure the ratings fit.
type RatingsOptions struct {
	// Every is how many changes to the fit's inputs start a refit (default 5); Quiet
	// how long after the last change a refit starts anyway (default 1 s).
	Every int
	Quiet time.Duration
	// MinGap is the least time between the starts of two fits (default 2 s; negative:
	// none).
	MinGap time.Duration
	Log    zerolog.Logger
}

// Ratings is the background ratings fit of one node.
type Ratings struct {
	node RatingsNode
	opts RatingsOptions
	quit chan struct{}
	done chan struct{}
	stop sync.Once
	// fitted is the inputs version of the last stored (or confirmed) fit; checked turns
	// true once the fit after the start has been done (Pending).
	fitted  atomic.Uint64
	checked atomic.Bool
}

// RatingsStart starts the ratings fit on node; Stop ends it.
func RatingsStart(node RatingsNode, opts RatingsOptions) *Ratings {
	if opts.Every <= 0 {
		opts.Every = ratingsDefaultEvery
	}
	if opts.Quiet <= 0 {
		opts.Quiet = ratingsDefaultQuiet
	}
	if opts.MinGap == 0 {
		opts.MinGap = ratingsDefaultGap
	}
	r := &Ratings{node: node, opts: opts, quit: make(chan struct{}), done: make(chan struct{})}
	go r.loop()
	return r
}

// Stop ends the fit (one under way is abandoned) and waits for it.
func (r *Ratings) Stop() {
	r.stop.Do(func() { close(r.quit) })
	<-r.done
}

func (r *Ratings) loop() {
	defer close(r.done)
	n, log := r.node, r.opts.Log
	every, quiet, gap := r.opts.Every, r.opts.Quiet, r.opts.MinGap
	tick := time.NewTicker(ratingsPoll)
	defer tick.Stop()
	var fitted, seen uint64
	var pending uint64
	changedAt := time.Now()
	var notBefore time.Time // keeps fits under a tenth of one core
	first, check := true, true
	for {
		select {
		case <-r.quit:
			return
		case <-tick.C:
		}
		var v uint64
		n.Read(func(s *engine.State) { v = s.RatingInputsVersion() })
		if first {
			fitted, seen, first = v, v, false
		}
		if v == fitted && !check {
			continue
		}
		if v != seen {
			pending += v - seen
			if v < seen { // the counter restarted (a backup restored): fit, store if it differs
				pending, check = uint64(every), true
			}
			seen, changedAt = v, time.Now()
		}
		if !check && pending < uint64(every) && time.Since(changedAt) < quiet {
			continue
		}
		if !n.Ready() || !n.LeadsDuties() || time.Now().Before(notBefore) {
			continue
		}
		start := time.Now()
		var in *engine.RatingInput
		n.Read(func(s *engine.State) { in = s.RatingInput() })
		cmd, done := fit.RatingsUntil(in, r.quit)
		if !done {
			return // shutting down
		}
		took := time.Since(start)
		notBefore = time.Now().Add(ratingsSpacing * took)
		if nb := start.Add(gap); nb.After(notBefore) {
			notBefore = nb
		}
		if check && !in.Changes(cmd) {
			log.Debug().Dur("took", took).Msg("ratings checked after start: current")
			check, fitted, pending = false, in.Version, 0
			r.publishFitted(fitted)
			if in.Version != seen {
				pending = 1
			}
			continue
		}
		if _, err := n.Submit(context.Background(), engine.System, cmd); err != nil {
			log.Warn().Err(err).Msg("ratings not stored")
			continue
		}
		log.Debug().Dur("took", took).Int("projects", len(in.Projects)).Int("judges", len(in.Judges)).Msg("ratings refitted")
		check, fitted, pending = false, in.Version, 0
		r.publishFitted(fitted)
		if in.Version != seen {
			pending = 1 // changes arrived while fitting: go again soon
		}
	}
}

// publishFitted records for Pending that the ratings are fitted up to version v.
func (r *Ratings) publishFitted(v uint64) {
	r.fitted.Store(v)
	r.checked.Store(true)
}

// Pending is the number of changes to the ratings' inputs that no stored fit has
// seen yet (0 = the ratings are current; podium_ratings_pending_changes). After a start
// it is at least 1 until the first fit has confirmed or replaced the journaled ratings.
// A node that does not fit (a cluster follower) reports 0: it applies the leader's
// fits.
func (r *Ratings) Pending() uint64 {
	if !r.node.LeadsDuties() {
		return 0
	}
	var v uint64
	r.node.Read(func(s *engine.State) { v = s.RatingInputsVersion() })
	if !r.checked.Load() { // nothing fitted since the start yet
		return max(1, v)
	}
	f := r.fitted.Load()
	if v < f { // the counter restarted (state restored) since the fit
		return 1
	}
	return v - f
}
