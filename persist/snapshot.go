package persist

// Snapshots of a single node: periodic ones in the background (the writer only copies
// the state), Snapshot on demand and at Close; each drops the journal it covers.

import (
	"io"
	"time"
)

// maybeSnapshot starts a background snapshot when enough commands or time have passed.
func (n *Node) maybeSnapshot(force bool) {
	if n.Failure() != nil {
		return // read-only: the durable state is already on disk
	}
	applied := n.eng.Applied()
	if applied == n.snapSeq {
		return
	}
	due := applied-n.snapSeq >= n.opts.SnapshotEvery || n.opts.Now().Sub(n.snapAt) >= n.opts.SnapshotInterval
	if !force && !due {
		return
	}
	// Under a flood of commands 10,000 of them come every second or two: a snapshot
	// then waits until snapSpacing (20) times the last one's duration has passed since
	// it started, so snapshots never take more than a twentieth of a core (the journal
	// after the snapshot grows instead, and recovery replays it).
	if nb := n.snapNotBefore.Load(); !force && nb != 0 && time.Now().UnixNano() < nb {
		return
	}
	if !n.snapBusy.CompareAndSwap(false, true) {
		return
	}
	// A snapshot holds only durable changes: the batch still being journaled, if any,
	// goes first (a wait of at most one fsync).
	n.settle()
	if n.Failure() != nil {
		n.snapBusy.Store(false)
		return
	}
	// The writer only copies the state; encoding and writing happen in the background.
	encode, seq := n.eng.Capture()
	n.snapSeq, n.snapAt = seq, n.opts.Now()
	savedAt := n.opts.Now().UnixMilli()
	done := make(chan struct{})
	n.snapDone.Store(&done)
	go func() {
		defer close(done)
		defer n.snapBusy.Store(false)
		n.writeSnapshot(encode, seq, savedAt)
	}()
}

// writeSnapshot encodes and stores a snapshot (streamed: see Store.WriteSnapshotFrom).
func (n *Node) writeSnapshot(encode func(io.Writer) error, seq uint64, savedAt int64) error {
	t0 := time.Now()
	size, err := n.st.WriteSnapshotFrom(encode, seq, savedAt)
	n.snapNotBefore.Store(t0.Add(snapSpacing * time.Since(t0)).UnixNano())
	if err != nil {
		n.log.Error().Err(err).Msg("snapshot not written; the previous snapshot and the journal after it stay in use")
		return err
	}
	n.core.Observer().SnapshotWritten(size, time.Since(t0))
	n.log.Info().Uint64("seq", seq).Int("bytes", size).Dur("took", time.Since(t0)).Msg("snapshot written")
	// The journal records it covers are no longer needed.
	if err := n.j.TruncateFront(seq); err != nil {
		n.log.Warn().Err(err).Msg("could not drop journal segments covered by the snapshot")
	}
	return nil
}

// waitSnapshot waits for the background snapshot started last, if any.
func (n *Node) waitSnapshot() {
	if p := n.snapDone.Load(); p != nil {
		<-*p
	}
}

// Snapshot writes a full snapshot now and returns when it is on disk.
func (n *Node) Snapshot() error {
	if n.Failure() != nil {
		return ErrReadOnly
	}
	var encode func(io.Writer) error
	var seq uint64
	// Wait for a running background snapshot, then capture in the writer.
	n.waitSnapshot()
	if e := n.do(func() {
		encode, seq = n.eng.Capture()
		n.snapSeq, n.snapAt = seq, n.opts.Now()
	}); e != nil {
		return e
	}
	return n.writeSnapshot(encode, seq, n.opts.Now().UnixMilli())
}

// snapSpacing: under a flood of commands a snapshot waits until this many times the
// last one's duration has passed since that one started (see maybeSnapshot).
const snapSpacing = 20
