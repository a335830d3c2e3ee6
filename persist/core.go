package persist

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"

	"podium/engine"
)

// ErrReadOnly is returned for every change after the journal could not be written.
var ErrReadOnly = engine.ErrReadOnly

// ErrClosed is returned for changes submitted after shutdown began.
var ErrClosed = engine.ErrClosed

// Observer receives measurements of the writer loop (implemented by package metrics).
type Observer interface {
	CommandApplied(kind string, ok bool, d time.Duration)
	JournalCommitted(records int, d time.Duration)
	QueueDepth(n int)
	SnapshotWritten(size int, d time.Duration)
}

type nopObserver struct{}

func (nopObserver) CommandApplied(string, bool, time.Duration) {}
func (nopObserver) JournalCommitted(int, time.Duration)        {}
func (nopObserver) QueueDepth(int)                             {}
func (nopObserver) SnapshotWritten(int, time.Duration)         {}

// Core is what the single node and the cluster node share: the engine, applying a
// command with its measurement, the event sink and the apply hook.
type Core struct {
	eng *engine.Engine
	obs Observer

	mu   sync.RWMutex
	sink func([]engine.Event)
	hook func(kind string)
}

// NewCore returns a core around a new engine; obs may be nil.
func NewCore(obs Observer) *Core {
	if obs == nil {
		obs = nopObserver{}
	}
	return &Core{eng: engine.New(), obs: obs}
}

// Engine is the state machine the node applies commands to.
func (c *Core) Engine() *engine.Engine { return c.eng }

// Observer receives the node's measurements.
func (c *Core) Observer() Observer { return c.obs }

// Apply applies one command to the engine and measures it.
func (c *Core) Apply(env *engine.Envelope) (any, []engine.Event, error) {
	t0 := time.Now()
	res, evs, err := c.eng.Apply(env)
	c.obs.CommandApplied(env.Cmd.Kind(), err == nil, time.Since(t0))
	return res, evs, err
}

// SetEventSink sets the function that receives events after they are durable. It is
// called from the goroutine that applies commands and must not block.
func (c *Core) SetEventSink(fn func([]engine.Event)) {
	c.mu.Lock()
	c.sink = fn
	c.mu.Unlock()
}

// Emit hands durable events to the event sink, if one is set.
func (c *Core) Emit(events []engine.Event) {
	if len(events) == 0 {
		return
	}
	c.mu.RLock()
	sink := c.sink
	c.mu.RUnlock()
	if sink != nil {
		sink(events)
	}
}

// SetApplyHook sets a function called after every command a replicated node applies
// (its kind; "" after a snapshot replaced the whole state), on the apply goroutine: it
// must not block.
func (c *Core) SetApplyHook(fn func(kind string)) {
	c.mu.Lock()
	c.hook = fn
	c.mu.Unlock()
}

// Applied calls the apply hook, if one is set.
func (c *Core) Applied(kind string) {
	c.mu.RLock()
	fn := c.hook
	c.mu.RUnlock()
	if fn != nil {
		fn(kind)
	}
}

// Read runs fn under the engine's read lock.
func (c *Core) Read(fn func(s *engine.State)) { c.eng.Read(fn) }

// RatingInputsChanged is signalled when applied commands (or a restore) changed the
// ratings' inputs (engine.Engine.RatingInputsChanged): the writer's notice to the
// ratings fit.
func (c *Core) RatingInputsChanged() <-chan struct{} { return c.eng.RatingInputsChanged() }

// TryRead is Read when the writer does not hold the state right now; it reports whether
// fn ran.
func (c *Core) TryRead(fn func(s *engine.State)) bool { return c.eng.TryRead(fn) }

// JudgeIDByTokenHash returns the judge whose session token hashes to hash (hex), without
// waiting for the writer (engine.tokenMirror).
func (c *Core) JudgeIDByTokenHash(hash []byte) (engine.ID, bool) {
	return c.eng.JudgeIDByTokenHash(hash)
}

// NewEnvelope wraps a command for the engine with a fresh random seed (the node stamps
// its time when it applies or proposes it).
func NewEnvelope(actor engine.Actor, cmd engine.Command) *engine.Envelope {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return &engine.Envelope{Actor: actor, Cmd: cmd, Seed: binary.LittleEndian.Uint64(b[:])}
}
