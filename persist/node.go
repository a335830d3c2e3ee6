// Package persist is Podium's single node: the writer loop that applies commands in
// order with group commit into the journal (persist/journal), periodic snapshots in the
// Badger store (persist/store), recovery at startup, backups and the migration of old
// data directories. What the cluster node (persist/cluster) shares with it is Core.
package persist

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist/journal"
	"podium/persist/store"
)

// Options configure a Node.
type Options struct {
	// SnapshotEvery and SnapshotInterval trigger periodic snapshots (defaults 10,000
	// commands and 5 minutes).
	SnapshotEvery    uint64
	SnapshotInterval time.Duration
	Log              zerolog.Logger
	Observer         Observer
	// Now returns the current time; tests may replace it.
	Now func() time.Time
	// ProbeEvery is how often a read-only node tries the journal again (default 2 s).
	ProbeEvery time.Duration
	// SegmentSize is the journal's segment size (default 16 MiB).
	SegmentSize int64
	// JournalFault, when set, is consulted before every journal write and allocation
	// from the start on (fault-injection tests of the read-only mode).
	JournalFault func() error
}

// Node is the single writer: it owns the engine, applies every command in order,
// journals each batch with one fsync (group commit) and only then releases results and
// events.
type Node struct {
	dir  string
	core *Core
	eng  *engine.Engine // core.Engine(), the writer's
	st   *store.Store
	j    *journal.Journal
	opts Options
	log  zerolog.Logger

	in        chan *request
	quit      chan struct{}
	loopDone  chan struct{}
	gcDone    chan struct{}
	probeDone chan struct{}
	closing   atomic.Bool
	failed    atomic.Pointer[error]
	// dirty is set when the state may hold changes that are not in the journal.
	dirty atomic.Bool

	// The commit pipeline (commit.go): the writer hands each applied batch to the
	// syncer, which journals and answers it.
	toSync       chan *syncBatch
	syncDone     chan struct{}
	inflight     sync.WaitGroup // batches handed over and not yet answered; writer Adds and Waits
	needRollback atomic.Bool    // a journal failure refused changes the engine holds
	wake         chan struct{}  // the syncer asks the idle writer to roll back
	heldMu       sync.Mutex
	held         []*syncBatch // refused batches, answered after the rollback
	// open is the batch the writer is filling while the syncer is busy (writer only;
	// nil when empty); openBuf holds its records' bytes.
	open    *syncBatch
	openBuf []byte

	lastTime int64 // writer only
	snapSeq  uint64
	snapAt   time.Time
	snapBusy atomic.Bool
	// snapNotBefore (Unix ns) spaces periodic snapshots by their cost (maybeSnapshot).
	snapNotBefore atomic.Int64
	// snapDone is closed when the running background snapshot ends (a WaitGroup would
	// race: its Add at zero must not run alongside a Wait).
	snapDone    atomic.Pointer[chan struct{}]
	recoveredAt int64
	closeOnce   sync.Once
}

type request struct {
	env *engine.Envelope
	// fn, when set, runs in the writer between batches instead of a command.
	fn func()
	// backupBefore writes a backup of the state just before the command applies.
	backupBefore bool
	backupName   string

	res    any
	err    error
	events []engine.Event
	done   chan struct{}
}

const maxBatch = 512

// Open opens the store in dir, recovers the state (snapshot + journal) and starts the
// writer loop.
func Open(dir string, opts Options) (*Node, error) {
	if opts.SnapshotEvery == 0 {
		opts.SnapshotEvery = 10000
	}
	if opts.SnapshotInterval == 0 {
		opts.SnapshotInterval = 5 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ProbeEvery == 0 {
		opts.ProbeEvery = 2 * time.Second
	}
	// The journal first: when it is corrupt, startup stops before Badger (which writes
	// when it opens) has touched the directory.
	j, err := journal.Open(journalDir(dir), journal.Options{SegmentSize: opts.SegmentSize, Log: opts.Log})
	if err != nil {
		return nil, err
	}
	st, err := store.OpenForNode(dir, opts.Log)
	if err != nil {
		j.Close()
		return nil, err
	}
	if opts.JournalFault != nil {
		j.SetFault(opts.JournalFault)
	}
	core := NewCore(opts.Observer)
	n := &Node{
		dir: dir, core: core, eng: core.Engine(), st: st, j: j, opts: opts, log: opts.Log,
		in: make(chan *request, 8192), quit: make(chan struct{}), loopDone: make(chan struct{}),
		gcDone: make(chan struct{}), probeDone: make(chan struct{}),
		toSync: make(chan *syncBatch), syncDone: make(chan struct{}), wake: make(chan struct{}, 1),
	}
	if err := n.recover(); err != nil {
		j.Close()
		st.Close()
		return nil, err
	}
	if k, err := st.DropOrphanSnapshots(); err != nil {
		n.log.Warn().Err(err).Msg("could not drop snapshots that are no longer current (they only take space)")
	} else if k > 0 {
		n.log.Info().Int("snapshots", k).Msg("dropped snapshots that are no longer current (replaced ones the last run had not dropped yet, or an interrupted write)")
	}
	// A journal that cannot be written (a full disk) makes the node read-only from the
	// start; it is retried like any later failure.
	if err := j.Probe(); err != nil {
		n.fail(err)
	}
	n.snapAt = opts.Now()
	go n.syncLoop()
	go n.loop()
	go n.gcLoop()
	go n.probeLoop()
	return n, nil
}

// journalDir is where the journal of the data directory dir lives.
func journalDir(dir string) string { return filepath.Join(dir, "journal") }

// RecoveredAt is the last moment (ms) the previous run is known to have been up: the
// time of its last command or snapshot. 0 for a new data directory.
func (n *Node) RecoveredAt() int64 { return n.recoveredAt }

// SetEventSink sets the function that receives events after they are durable. It is
// called from the writer goroutine and must not block.
func (n *Node) SetEventSink(fn func([]engine.Event)) { n.core.SetEventSink(fn) }

// Read runs fn under the engine's read lock.
func (n *Node) Read(fn func(s *engine.State)) { n.core.Read(fn) }

// TryRead is Read when the writer does not hold the state right now; it reports whether
// fn ran.
func (n *Node) TryRead(fn func(s *engine.State)) bool { return n.core.TryRead(fn) }

// JudgeIDByTokenHash returns the judge whose session token hashes to hash (hex), without
// waiting for the writer (engine.tokenMirror).
func (n *Node) JudgeIDByTokenHash(hash []byte) (engine.ID, bool) {
	return n.core.JudgeIDByTokenHash(hash)
}

// RatingInputsChanged is signalled when the ratings' inputs changed (Core.RatingInputsChanged).
func (n *Node) RatingInputsChanged() <-chan struct{} { return n.core.RatingInputsChanged() }

// Ready reports whether the node accepts changes.
func (n *Node) Ready() bool { return n.failed.Load() == nil && !n.closing.Load() }

// LeadsDuties reports whether this node runs the duties that act on their own (the
// ratings fit, the mail outbox): a single node always does.
func (n *Node) LeadsDuties() bool { return true }

// Failure returns the storage error that made the node read-only, if any.
func (n *Node) Failure() error {
	if p := n.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// Submit applies a command and returns its result once it is durable.
func (n *Node) Submit(ctx context.Context, actor engine.Actor, cmd engine.Command) (any, error) {
	return n.submit(ctx, &request{env: NewEnvelope(actor, cmd)})
}

// SubmitKeyed is Submit for a judge write with an Idempotency-Key: the key and, once
// applied, the answer are journaled with the command (docs/behaviour.md#on-the-floor).
func (n *Node) SubmitKeyed(ctx context.Context, actor engine.Actor, cmd engine.Command, k *engine.Keyed) (any, error) {
	env := NewEnvelope(actor, cmd)
	env.Keyed = k
	return n.submit(ctx, &request{env: env})
}

// SubmitWithBackup is Submit for destructive commands (resets): a backup of the state
// just before the command is written first, and its name returned.
func (n *Node) SubmitWithBackup(ctx context.Context, actor engine.Actor, cmd engine.Command) (any, string, error) {
	r := &request{env: NewEnvelope(actor, cmd), backupBefore: true}
	res, err := n.submit(ctx, r)
	return res, r.backupName, err
}

func (n *Node) submit(ctx context.Context, r *request) (any, error) {
	if err := n.Failure(); err != nil {
		return nil, ErrReadOnly
	}
	if n.closing.Load() {
		return nil, ErrClosed
	}
	r.done = make(chan struct{})
	select {
	case n.in <- r: // the queue has room (the common case): no three-way select
	default:
		select {
		case n.in <- r:
		case <-n.quit:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	<-r.done // once queued, the command is applied or refused; wait for the outcome
	return r.res, r.err
}

// do runs fn in the writer goroutine between batches and waits for it.
func (n *Node) do(fn func()) error {
	r := &request{fn: fn, done: make(chan struct{})}
	select {
	case n.in <- r:
	case <-n.quit:
		return ErrClosed
	}
	<-r.done
	return nil
}

func (n *Node) loop() {
	defer close(n.loopDone)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	batch := make([]*request, 0, maxBatch)
	for {
		// While the syncer is busy, commands that arrive are applied into the open batch,
		// which it takes as soon as it is free: a command waits for the fsync under way
		// and its own, never for a batch applied before it that waits to be handed over.
		var out chan *syncBatch
		if n.open != nil {
			out = n.toSync
		}
		in := n.in
		if n.open != nil && len(n.open.group) >= maxBatch {
			in = nil // a full open batch waits for the syncer
		}
		n.inflight.Add(1) // for a hand-over in this select; taken back by every other case
		select {
		case out <- n.open:
			n.open, n.openBuf = nil, nil
		case r := <-in:
			n.inflight.Done()
			batch = append(batch[:0], r)
		drain:
			for len(batch) < maxBatch {
				select {
				case r := <-n.in:
					batch = append(batch, r)
				default:
					break drain
				}
			}
			n.core.Observer().QueueDepth(len(n.in))
			n.process(batch)
			n.maybeSnapshot(false)
		case <-tick.C:
			n.inflight.Done()
			n.maybeSnapshot(false)
		case <-n.wake:
			n.inflight.Done()
			n.settle()
		case <-n.quit:
			n.inflight.Done()
			// Finish what is in the pipeline, then refuse whatever is still queued.
			n.settle()
			close(n.toSync)
			for {
				select {
				case r := <-n.in:
					r.err = ErrClosed
					close(r.done)
				default:
					return
				}
			}
		}
	}
}

func (n *Node) stamp(env *engine.Envelope) {
	now := n.opts.Now().UnixMilli()
	if now < n.lastTime {
		now = n.lastTime // keep command times monotonic even if the wall clock steps back
	}
	n.lastTime = now
	env.Time = now
}

func (n *Node) fail(err error) {
	if n.failed.CompareAndSwap(nil, &err) {
		n.log.Error().Err(err).Dur("retry_every", n.opts.ProbeEvery).
			Msg("journal write failed: the server is read-only (changes get 503) until a journal write succeeds again")
	}
}

// probeLoop retries the journal every ProbeEvery while the node is read-only, and
// makes it writable again once a probe write (and fdatasync) succeeds.
func (n *Node) probeLoop() {
	defer close(n.probeDone)
	t := time.NewTicker(n.opts.ProbeEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if n.Failure() == nil {
				continue
			}
			if err := n.j.Probe(); err != nil {
				continue // the cause was logged when the node became read-only
			}
			_ = n.do(func() {
				if n.dirty.Load() {
					n.rollback()
				}
				if n.dirty.Load() {
					return // the engine may hold refused changes: stay read-only
				}
				if old := n.failed.Swap(nil); old != nil {
					n.log.Info().AnErr("was", *old).Msg("journal writable again: the server accepts changes")
				}
			})
		case <-n.quit:
			return
		}
	}
}

// backupThenApply writes a backup of the current state and then applies r alone. This
// is the one place where the writer does I/O besides the journal: a reset must not
// happen unless the state before it is safe on disk.
func (n *Node) backupThenApply(r *request) {
	if err := n.Failure(); err != nil {
		r.err = ErrReadOnly
		close(r.done)
		return
	}
	seq := n.eng.Applied()
	encode := func(w io.Writer) error { _, err := n.eng.EncodeTo(w); return err }
	var err error
	r.backupName, err = WriteBackup(n.dir, n.opts.Now(), encode, seq, "pre-reset")
	if err != nil {
		n.log.Error().Err(err).Msg("backup before reset failed; reset refused")
		r.err = fmt.Errorf("backup before reset failed: %w", err)
		close(r.done)
		return
	}
	n.commitGroup([]*request{r})
}

// gcLoop runs Badger's value-log garbage collection every ten minutes.
func (n *Node) gcLoop() {
	defer close(n.gcDone)
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			n.st.CollectGarbage()
		case <-n.quit:
			return
		}
	}
}

// Close stops the writer, writes a final snapshot and closes the store.
func (n *Node) Close() error {
	var err error
	n.closeOnce.Do(func() {
		if n.Failure() == nil {
			if e := n.Snapshot(); e != nil {
				err = e
			}
		}
		n.closing.Store(true)
		close(n.quit)
		<-n.loopDone
		<-n.syncDone
		<-n.gcDone
		<-n.probeDone
		n.waitSnapshot()
		if e := n.st.Close(); e != nil && err == nil {
			err = e
		}
		if e := n.j.Close(); e != nil && err == nil {
			err = e
		}
	})
	return err
}
