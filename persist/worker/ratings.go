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
// journaled command, so assignments that use the ratings replay exactly. The writer
// tells it when the inputs changed (RatingsNode.RatingInputsChanged; nothing polls). It
// refits once Every changes to the inputs (finishes, rankings, stars, hides) have
// gathered, or once the inputs have been quiet for Quiet after a change (the end of a
// burst), never runs two fits at once, and waits ratingsSpacing times the last fit's
// duration before the next (the fit never takes more than a tenth of one core, so under
// a flood of finishes it leaves the writer alone; at 10,000 projects a refit then
// happens about every 2 s), and at least MinGap (default 2 s) between the starts of two
// fits: ratings a second or two old steer judges who spend minutes per table just as
// well, and a small event's fast fits would otherwise run back to back under a flood
// (copying the inputs holds the writer for a moment each time). The operator sets the
// three with RATINGS_EVERY, RATINGS_QUIET and RATINGS_MIN_GAP (cmd/podium).
//
// It fits only on a node that leads the duties (RatingsNode.LeadsDuties: a single node
// always, a cluster node while it leads; the others apply the journaled result). A
// node that has a fit due but does not lead (or is not ready) looks again every
// ratingsRetry: leadership comes without a change to the inputs.
// No fit starts while the state says its stored ratings saw every change to their
// inputs (State.RatingsCurrent): after a start or a restored backup that is the usual
// case, and the ratings stay exactly as they were. When the state cannot say (a
// snapshot of an earlier build), it fits once after the start (and on a cluster node,
// once it first leads) whatever the counter says, since the journaled ratings may
// predate the last changes before the stop, and stores that result only when it
// differs from the journaled ratings (RatingInput.Changes). A restored backup is
// checked the same way.

const (
	ratingsDefaultEvery = 5
	ratingsDefaultQuiet = time.Second
	ratingsDefaultGap   = 2 * time.Second
	ratingsRetry        = time.Second
	ratingsSpacing      = 9
)

// RatingsNode is what the ratings fit needs from a node (persist.Node or cluster.Node).
type RatingsNode interface {
	Read(fn func(s *engine.State))
	Ready() bool
	// LeadsDuties says whether this node runs the duties that act on their own.
	LeadsDuties() bool
	// RatingInputsChanged is signalled by the writer after the inputs changed.
	RatingInputsChanged() <-chan struct{}
	Submit(ctx context.Context, actor engine.Actor, cmd engine.Command) (any, error)
}

// RatingsOptions configure the ratings fit.
type RatingsOptions struct {
	// Every is how many changes to the fit's inputs start a refit (default 5); Quiet
	// how long after the last change a refit starts anyway (default 1 s; negative:
	// at once).
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
	if opts.Quiet == 0 {
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

// fitState is the loop's bookkeeping: fitted is the inputs version of the last stored
// fit, seen the last version read, pending the changes since the fit, changedAt when
// seen moved, notBefore the earliest start of the next fit, check whether the next fit
// must run whatever the counter says (after a start or a restore).
type fitState struct {
	fitted, seen, pending uint64
	changedAt, notBefore  time.Time
	check                 bool
}

func (r *Ratings) loop() {
	defer close(r.done)
	n := r.node
	changed := n.RatingInputsChanged()
	st := fitState{check: true, changedAt: time.Now()}
	n.Read(func(s *engine.State) { st.seen = s.RatingInputsVersion() })
	st.fitted = st.seen
	wake := time.NewTimer(0) // the fit after the start
	defer wake.Stop()
	for {
		select {
		case <-r.quit:
			return
		case <-changed:
		case <-wake.C:
		}
		wait, ok := r.due(&st)
		if !ok {
			wake.Stop() // nothing to fit: the writer's next notice wakes the loop
			continue
		}
		if wait > 0 {
			wake.Reset(wait)
			continue
		}
		if !n.Ready() || !n.LeadsDuties() {
			wake.Reset(ratingsRetry)
			continue
		}
		if !r.fitOnce(&st) {
			return // shutting down
		}
		wake.Reset(0) // changes that came during the fit
	}
}

// due reads the inputs version and says whether a fit is to be done (ok) and how long
// until it may start.
func (r *Ratings) due(st *fitState) (wait time.Duration, ok bool) {
	var v uint64
	r.node.Read(func(s *engine.State) { v = s.RatingInputsVersion() })
	if v != st.seen {
		st.pending += v - st.seen
		if v < st.seen { // the counter restarted (a backup restored): fit, store if it differs
			st.pending, st.check = uint64(r.opts.Every), true
		}
		st.seen, st.changedAt = v, time.Now()
	}
	if v == st.fitted && !st.check {
		st.pending = 0
		return 0, false
	}
	at := time.Now()
	if !st.check && st.pending < uint64(r.opts.Every) {
		at = st.changedAt.Add(r.opts.Quiet)
	}
	if st.notBefore.After(at) {
		at = st.notBefore
	}
	return time.Until(at), true
}

// fitOnce fits, stores the result (after a start: only when it differs) and sets when
// the next fit may start; false when the loop is stopping.
func (r *Ratings) fitOnce(st *fitState) bool {
	n, log := r.node, r.opts.Log
	var current bool
	var v uint64
	n.Read(func(s *engine.State) { current, v = s.RatingsCurrent(), s.RatingInputsVersion() })
	if current { // the stored ratings saw every change: nothing to fit (after a start, mostly)
		log.Debug().Msg("ratings current: no fit")
		st.check, st.fitted, st.pending = false, v, 0
		st.seen = max(st.seen, v)
		r.publishFitted(v)
		return true
	}
	start := time.Now()
	var in *engine.RatingInput
	n.Read(func(s *engine.State) { in = s.RatingInput() })
	cmd, done := fit.RatingsUntil(in, r.quit)
	if !done {
		return false
	}
	took := time.Since(start)
	st.notBefore = time.Now().Add(ratingsSpacing * took)
	if nb := start.Add(r.opts.MinGap); nb.After(st.notBefore) {
		st.notBefore = nb
	}
	if st.check && !in.Changes(cmd) {
		log.Debug().Dur("took", took).Msg("ratings checked after start: current")
	} else if _, err := n.Submit(context.Background(), engine.System, cmd); err != nil {
		log.Warn().Err(err).Msg("ratings not stored")
		return true
	} else {
		log.Debug().Dur("took", took).Int("projects", len(in.Projects)).Int("judges", len(in.Judges)).Msg("ratings refitted")
	}
	st.check, st.fitted = false, in.Version
	st.pending = st.seen - min(st.seen, in.Version) // changes that arrived while fitting
	if st.seen < in.Version {
		st.seen = in.Version
	}
	r.publishFitted(st.fitted)
	return true
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
