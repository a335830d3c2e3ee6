package engine

import "sync"

// Podium computes three rankings of the projects. Each is computed in one place, at
// one time, and this file is where that is decided:
//
//   - Copeland scores, stars and track stars (scores.go) are kept per judge inside the
//     state. The writer marks a judge's contribution stale when the judge changes, and
//     the next read redoes only that judge's part, under the engine's read lock (the
//     score cache has its own mutex). Cheap enough to be always current.
//   - Crowd-BT (crowdbt.go) depends on the order of all judges, so any change marks it
//     stale and it is recomputed lazily, when something that shows it is read: the
//     reader calls CrowdBT.Refresh first, which copies the inputs under the read lock,
//     computes outside it (one computation at a time) and stores the result. A view that
//     still finds the values stale (a ranking changed meanwhile) computes them under
//     the lock.
//   - The ratings (ratings.go; the numerics in package engine/fit) are fitted in the
//     background: once RatingInputsVersion has moved (a few changes gathered, or a
//     burst of them ended), the server's ratings loop copies a RatingInput under the
//     read lock, fits outside the writer, and submits the result as a SetRatings
//     command. It is journaled like any other command, so a replay needs no fit and
//     assignments that use the ratings replay exactly.

// StateReader runs fn with the state under the engine's read lock: an Engine, or a
// node that wraps one.
type StateReader interface {
	Read(fn func(s *State))
}

// CrowdBT brings the Crowd-BT values up to date outside the engine's lock, one
// computation at a time. The zero value is ready to use; a server keeps one.
type CrowdBT struct {
	mu sync.Mutex // held by the one computing; the others wait for its result
}

// Refresh recomputes the Crowd-BT values when they are stale: it copies the inputs
// under r's read lock, computes without it, and stores the result (dropped if a
// ranking changed meanwhile; the view then computes under the lock). Call it before a
// read that shows Crowd-BT values.
func (c *CrowdBT) Refresh(r StateReader) {
	stale := false
	r.Read(func(s *State) { stale = s.crowdBTStale() })
	if !stale {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var in *crowdInput
	r.Read(func(s *State) { in = s.crowdBTInput() }) // nil if done meanwhile
	if in == nil {
		return
	}
	res := in.compute()
	r.Read(func(s *State) { s.storeCrowdBT(res) })
}
