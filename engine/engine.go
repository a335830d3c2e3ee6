// Package engine is Podium's state machine: the domain types, the commands that change
// them, assignment and scoring. It imports only the standard library and reads no clock
// and no global randomness: a command carries its time and random seed, so the same
// commands applied to an empty engine give the same state. Which ranking is computed
// where, and when, is written down in rankings.go; the ratings fit and the simulator
// are the subpackages engine/fit and engine/simulate.
package engine

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// Engine owns the state. One goroutine (the writer) calls Apply; any number of readers
// call Read concurrently. Readers copy what they need under the read lock and encode
// outside it, so they never hold the writer up for long.
type Engine struct {
	mu     sync.RWMutex
	s      *State
	tokens tokenMirror // read without mu (tokens.go)
	// inputs is signalled (never blocking) when the ratings' inputs changed
	// (RatingInputsChanged); inputsAt is the RatingInputsVersion last signalled.
	inputs   chan struct{}
	inputsAt uint64
	captures atomic.Uint64 // Capture calls (State.ownSeen)
	ctx      struct {      // the applying command's context (apply)
		c Ctx
		r Rand
	}
}

// New returns an engine holding a brand-new state.
func New() *Engine {
	e := &Engine{s: NewState(), inputs: make(chan struct{}, 1)}
	e.s.tokens, e.s.captures = &e.tokens, &e.captures
	e.tokens.reset(e.s.tokenIndex)
	return e
}

// Apply applies one command. On success the state's Applied counter has advanced by one
// and the caller must journal the envelope under that sequence number. On error nothing
// changed. Only the writer goroutine may call Apply.
func (e *Engine) Apply(env *Envelope) (result any, events []Event, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	result, events, err = e.apply(env, false)
	if err == nil {
		e.noteInputs(false)
	}
	return result, events, err
}

// RatingInputsChanged is signalled after a command changed the ratings' inputs
// (RatingInputsVersion moved) and after a restore: the background ratings fit waits on
// it instead of polling (docs/behaviour.md#ratings). It holds at most one signal, so a
// burst of changes wakes its one reader once.
func (e *Engine) RatingInputsChanged() <-chan struct{} { return e.inputs }

// noteInputs signals RatingInputsChanged when the inputs version moved (always when
// force); e.mu is held.
func (e *Engine) noteInputs(force bool) {
	v := e.s.RatingInputsVersion()
	if v == e.inputsAt && !force {
		return
	}
	e.inputsAt = v
	select {
	case e.inputs <- struct{}{}:
	default:
	}
}

// Replay applies a journaled command without collecting its events (recovery: nobody
// is listening yet); the state it leaves is the one Apply leaves.
func (e *Engine) Replay(env *Envelope) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _, err := e.apply(env, true)
	if err == nil {
		e.noteInputs(false)
	}
	return err
}

// ReplayRecords applies n journaled commands in order, each as Replay would, under one
// hold of the lock (recovery: nobody reads meanwhile). env(i) returns the i-th. It
// returns how many applied: all of them, or those before the first that failed.
func (e *Engine) ReplayRecords(n int, env func(i int) *Envelope) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.noteInputs(false)
	for i := 0; i < n; i++ {
		if _, _, err := e.apply(env(i), true); err != nil {
			return i, err
		}
	}
	return n, nil
}

func (e *Engine) apply(env *Envelope, quiet bool) (result any, events []Event, err error) {
	if env.Cmd == nil {
		return nil, nil, invalidf("empty command")
	}
	// The context and its random numbers are the engine's, reused by every command (one
	// applies at a time, and nothing keeps either past its command).
	cr := &e.ctx
	cr.r = Rand{state: env.Seed}
	cr.c = Ctx{Time: env.Time, Rand: &cr.r, Actor: env.Actor, state: e.s, quiet: quiet}
	c := &cr.c
	defer func() {
		if r := recover(); r != nil {
			// A bug, never bad input: report it as an internal error.
			result, events, err = nil, nil, fmt.Errorf("engine: command %s panicked: %v", env.Cmd.Kind(), r)
		}
	}()
	if env.Keyed != nil {
		if err := e.s.checkKey(env.Actor.Judge, env.Keyed, env.Time); err != nil {
			return nil, nil, err
		}
	}
	if !quiet {
		e.s.settle() // a live command's lines follow the replay's
	} else if e.s.pendingFit != nil {
		e.s.passFit(env.Cmd)
	}
	res, err := env.Cmd.apply(e.s, c)
	if err != nil {
		return nil, nil, err
	}
	if env.Keyed != nil {
		e.s.keepKey(env.Actor.Judge, env.Keyed, env.Time, res)
	}
	e.s.Applied++
	if env.Time > e.s.LastTime {
		e.s.LastTime = env.Time
	}
	return res, c.events, nil
}

// Read runs fn under the read lock. fn must not keep references to the state.
func (e *Engine) Read(fn func(s *State)) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	fn(e.s)
}

// TryRead runs fn under the read lock if it is free right now, and reports whether it
// did: for a read that may be skipped rather than wait for the writer.
func (e *Engine) TryRead(fn func(s *State)) bool {
	if !e.mu.TryRLock() {
		return false
	}
	defer e.mu.RUnlock()
	fn(e.s)
	return true
}

// Applied returns the sequence number of the last applied command.
func (e *Engine) Applied() uint64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.s.Applied
}

// Snapshot encodes the whole state. Encoding is deterministic: the same state always
// gives the same bytes.
func (e *Engine) Snapshot() ([]byte, uint64, error) {
	var b bytes.Buffer
	seq, err := e.EncodeTo(&b)
	return b.Bytes(), seq, err
}

// EncodeTo streams the snapshot encoding of the whole state to w (see State.EncodeTo)
// under the read lock, and returns the sequence number it covers.
func (e *Engine) EncodeTo(w io.Writer) (uint64, error) {
	e.settled()
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.s.Applied, e.s.EncodeTo(w)
}

// Restore replaces the state with a decoded snapshot.
func (e *Engine) Restore(b []byte) error {
	s := &State{}
	if err := decodeState(b, s); err != nil {
		return fmt.Errorf("decode snapshot: %w", err)
	}
	s.tokens, s.captures = &e.tokens, &e.captures // reindex fills tokens
	// A snapshot of an earlier build has neither count (State.RatingInputs).
	s.ratingsCounted = s.RatingInputs != 0 || s.RatedAt != 0
	s.reindex()
	gen := 1 + e.captures.Load() // the decoded seen lists are the state's own (State.ownSeen)
	for _, j := range s.Judges {
		j.seenOwn = gen
	}
	e.mu.Lock()
	e.s = s
	e.noteInputs(true)
	e.mu.Unlock()
	return nil
}
