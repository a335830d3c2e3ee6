package persist

import (
	"context"
	"time"

	"github.com/hashicorp/raft"

	"podium/engine"
	"podium/engine/fit"
)

// The background ratings fit (SPEC §6a). It runs beside the writer: it copies the fit's
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
// After a start (and on a cluster node, once it first leads) it fits once whatever the
// counter says: the journaled ratings may predate the last changes before the stop (a
// burst shorter than RatingsQuiet, or fewer than RatingsEvery changes). That result is
// stored only when it differs from the journaled ratings (RatingInput.Changes), so an
// idle restart writes nothing. A restored backup is checked the same way.

const (
	defaultRatingsEvery = 5
	defaultRatingsQuiet = time.Second
	defaultRatingsGap   = 2 * time.Second
	ratingsPoll         = 100 * time.Millisecond
	ratingsSpacing      = 9
)

func (n *Node) ratingsLoop() {
	defer close(n.ratingsDone)
	every := n.opts.RatingsEvery
	if every <= 0 {
		every = defaultRatingsEvery
	}
	quiet := n.opts.RatingsQuiet
	if quiet <= 0 {
		quiet = defaultRatingsQuiet
	}
	gap := n.opts.RatingsMinGap
	if gap == 0 {
		gap = defaultRatingsGap
	}
	tick := time.NewTicker(ratingsPoll)
	defer tick.Stop()
	var fitted, seen uint64
	var pending uint64
	changedAt := time.Now()
	var notBefore time.Time // keeps fits under a tenth of one core
	first, check := true, true
	for {
		select {
		case <-n.quit:
			return
		case <-tick.C:
		}
		var v uint64
		n.eng.Read(func(s *engine.State) { v = s.RatingInputsVersion() })
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
		if !n.Ready() || !n.fitsRatings() || time.Now().Before(notBefore) {
			continue
		}
		start := time.Now()
		var in *engine.RatingInput
		n.eng.Read(func(s *engine.State) { in = s.RatingInput() })
		cmd, done := fit.RatingsUntil(in, n.quit)
		if !done {
			return // shutting down
		}
		took := time.Since(start)
		notBefore = time.Now().Add(ratingsSpacing * took)
		if nb := start.Add(gap); nb.After(notBefore) {
			notBefore = nb
		}
		if check && !in.Changes(cmd) {
			n.log.Debug().Dur("took", took).Msg("ratings checked after start: current")
			check, fitted, pending = false, in.Version, 0
			n.publishFitted(fitted)
			if in.Version != seen {
				pending = 1
			}
			continue
		}
		if _, err := n.Submit(context.Background(), engine.System, cmd); err != nil {
			n.log.Warn().Err(err).Msg("ratings not stored")
			continue
		}
		n.log.Debug().Dur("took", took).Int("projects", len(in.Projects)).Int("judges", len(in.Judges)).Msg("ratings refitted")
		check, fitted, pending = false, in.Version, 0
		n.publishFitted(fitted)
		if in.Version != seen {
			pending = 1 // changes arrived while fitting: go again soon
		}
	}
}

// publishFitted records for RatingsPending that the ratings are fitted up to version v.
func (n *Node) publishFitted(v uint64) {
	n.ratingsFitted.Store(v)
	n.ratingsChecked.Store(true)
}

// RatingsPending is the number of changes to the ratings' inputs that no stored fit has
// seen yet (0 = the ratings are current; podium_ratings_pending_changes). After a start
// it is at least 1 until the first fit has confirmed or replaced the journaled ratings.
// A node that does not fit (no ratings loop, a cluster follower) reports 0: it applies
// the leader's fits.
func (n *Node) RatingsPending() uint64 {
	if !n.opts.Ratings || !n.fitsRatings() {
		return 0
	}
	var v uint64
	n.eng.Read(func(s *engine.State) { v = s.RatingInputsVersion() })
	if !n.ratingsChecked.Load() { // nothing fitted since the start yet
		return max(1, v)
	}
	f := n.ratingsFitted.Load()
	if v < f { // the counter restarted (state restored) since the fit
		return 1
	}
	return v - f
}

// fitsRatings says whether this node fits the ratings: a single node always, a cluster
// node only while it leads (the others apply the journaled result).
func (n *Node) fitsRatings() bool {
	return n.cl == nil || (n.cl.r != nil && n.cl.r.State() == raft.Leader)
}
