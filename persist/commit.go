package persist

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"podium/engine"
	"podium/persist/journal"
)

// The commit pipeline of a single node. The writer goroutine applies a batch of
// commands and encodes their journal records; the syncer goroutine writes and
// fdatasyncs them (one write and one fdatasync per batch) and only then releases the
// batch's results and events, in order. While the syncer waits for the disk, the writer
// already applies the next batch, so a batch costs max(apply, fsync) of the writer's
// time instead of apply + fsync, and the requests that arrive meanwhile form the next
// group commit. Nobody is told of a change before its record is durable.
//
// The writer is at most one batch ahead of the disk (the hand-over is unbuffered): it
// applies the commands that arrive while the syncer is busy into one open batch, handed
// over whole when the syncer is free (loop in node.go), so a command waits for at most
// the fsync under way and its own. Whatever must see only durable state waits for the
// open batch to be handed over and the pipeline to drain first: function
// requests (backups, the probe's heal, captures for Snapshot), backup-first commands,
// periodic snapshots and the rollback after a journal failure.

// syncBatch is one group commit handed from the writer to the syncer.
type syncBatch struct {
	group   []*request      // every request of the group, answered in order
	applied []*request      // those whose command applied (their records are in recs)
	recs    []journal.Entry // the journal records of applied, in order
	broken  bool            // a command applied but its record could not be encoded
}

// syncLoop is the syncer goroutine: it commits each batch and then answers it.
func (n *Node) syncLoop() {
	defer close(n.syncDone)
	for b := range n.toSync {
		n.commitBatch(b)
		n.inflight.Done()
	}
}

// commitBatch journals a batch and releases its results and events. After a journal
// failure no later batch is written: every applied command of it is refused (503). The
// refused batches are answered by the writer once it has rolled the engine back to the
// durable state, so nobody reads a refused change after being told of the refusal.
func (n *Node) commitBatch(b *syncBatch) {
	failed := b.broken
	if len(b.recs) > 0 {
		err := n.Failure()
		if err == nil {
			t0 := time.Now()
			err = n.j.Append(b.recs)
			n.core.Observer().JournalCommitted(len(b.recs), time.Since(t0))
			if err != nil {
				n.fail(err)
			}
		}
		if err != nil {
			// One write and one fdatasync per batch: none of it counts as written.
			for _, r := range b.applied {
				r.res, r.events, r.err = nil, nil, ErrReadOnly
			}
			failed = true
		}
	}
	if failed || n.needRollback.Load() {
		n.heldMu.Lock()
		n.held = append(n.held, b)
		n.heldMu.Unlock()
		if failed {
			n.needRollback.Store(true)
			select { // the writer rolls back as soon as it is idle
			case n.wake <- struct{}{}:
			default:
			}
		}
		return
	}
	n.answer(b)
}

// answer releases a batch's results, then its events.
func (n *Node) answer(b *syncBatch) {
	count := 0
	for _, r := range b.group {
		count += len(r.events)
	}
	events := make([]engine.Event, 0, count)
	for _, r := range b.group {
		events = append(events, r.events...)
		close(r.done)
	}
	n.core.Emit(events)
}

// drain hands the open batch over, if any, and waits until every batch handed to the
// syncer is journaled and answered. Writer only.
func (n *Node) drain() {
	if n.open != nil {
		n.inflight.Add(1)
		n.toSync <- n.open
		n.open, n.openBuf = nil, nil
	}
	n.inflight.Wait()
}

// settle runs in the writer before anything that reads the state as durable: it drains
// the pipeline and, if a journal failure refused changes the engine already holds,
// goes back to the durable state.
func (n *Node) settle() {
	n.drain()
	if n.needRollback.Swap(false) {
		// The engine holds changes that were refused (503) because they never reached
		// the journal: go back to what is durable before anyone reads or saves them,
		// then answer them.
		n.rollback()
		n.heldMu.Lock()
		held := n.held
		n.held = nil
		n.heldMu.Unlock()
		for _, b := range held {
			n.answer(b)
		}
	}
}

// process applies a batch: commands in order, one journal commit for all of them, then
// results and events. Function requests and backup-first commands split the batch and
// run on a drained pipeline.
func (n *Node) process(batch []*request) {
	if n.needRollback.Load() {
		n.settle()
	}
	start := 0
	for i, r := range batch {
		if r.fn != nil || r.backupBefore {
			n.commitGroup(batch[start:i])
			n.settle()
			if r.fn != nil {
				r.fn()
				close(r.done)
			} else {
				n.backupThenApply(r)
			}
			start = i + 1
		}
	}
	n.commitGroup(batch[start:])
}

// commitGroup applies a group of commands into the open batch (the loop hands it to the
// syncer).
func (n *Node) commitGroup(group []*request) {
	if len(group) == 0 {
		return
	}
	b := n.open
	if b == nil {
		// The syncer gets its own slices: the caller reuses its batch slice, and each
		// batch has its own record buffer (slices of an outgrown array keep their bytes).
		b = &syncBatch{group: make([]*request, 0, len(group)), recs: make([]journal.Entry, 0, len(group))}
		n.open, n.openBuf = b, make([]byte, 0, 256*len(group))
	}
	b.group = append(b.group, group...)
	buf := n.openBuf
	for _, r := range group {
		if err := n.Failure(); err != nil {
			r.err = ErrReadOnly
			continue
		}
		n.stamp(r.env)
		res, evs, err := n.core.Apply(r.env)
		if err != nil {
			r.err = err
			var ee *engine.Error
			var rp *engine.Replayed // a repeated keyed write: answered, not failed
			if !errors.As(err, &ee) && !errors.As(err, &rp) {
				n.log.Error().Err(err).Str("command", r.env.Cmd.Kind()).Msg("command failed")
			}
			continue
		}
		from := len(buf)
		buf, err = r.env.AppendJSON(buf)
		payload := buf[from:len(buf):len(buf)]
		if err != nil {
			// Cannot happen for well-formed commands; treat it as a storage failure.
			n.fail(fmt.Errorf("encode journal record: %w", err))
			b.broken = true
			r.err = ErrReadOnly
			continue
		}
		r.res, r.events = res, evs
		b.recs = append(b.recs, journal.Entry{Index: n.eng.Applied(), Data: payload})
		b.applied = append(b.applied, r)
	}
	n.openBuf = buf
}

// rollback replaces the engine's state with the durable one (snapshot + journal) after
// a journal failure. If that cannot be read either, the node is marked dirty: its state
// may hold unjournaled changes, so no snapshot or backup is taken from it.
func (n *Node) rollback() {
	fresh := engine.New()
	var err error
	// A background snapshot may be replacing the current one and dropping the journal
	// it covers: read snapshot and journal as one.
	n.st.Exclusive(func() {
		data, ptr, found, lerr := n.st.LoadSnapshot()
		err = lerr
		var seq uint64
		if err == nil && found {
			err = fresh.Restore(data)
			seq = ptr.Seq
		}
		if err == nil {
			err = n.j.Replay(seq, func(_ uint64, payload []byte) error {
				var env engine.Envelope
				if err := json.Unmarshal(payload, &env); err != nil {
					return err
				}
				_, _, err := fresh.Apply(&env)
				return err
			})
		}
	})
	var b []byte
	if err == nil {
		b, _, err = fresh.Snapshot()
	}
	if err == nil {
		err = n.eng.Restore(b)
	}
	if err != nil {
		n.dirty.Store(true)
		n.log.Error().Err(err).Msg("could not reload the durable state after the journal failure: reads may show refused changes")
		return
	}
	n.dirty.Store(false)
}
