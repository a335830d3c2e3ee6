package persist

import (
	"errors"
	"fmt"
	"time"

	"podium/engine"
	"podium/persist/journal"
	"podium/persist/store"
)

// recover loads the latest snapshot and replays the journal after it. The journal's
// records are read and decoded while the snapshot decodes (two cores at a start), then
// applied in order (docs/behaviour.md#recovery-at-memory-speed).
func (n *Node) recover() error {
	start := time.Now()
	data, ptr, found, err := n.st.LoadSnapshot()
	if err != nil {
		return fmt.Errorf("recovery: %w", err)
	}
	restored := make(chan error, 1)
	go func() { restored <- n.restore(data, ptr, found) }()
	// Reading the file journal changes nothing; what migrate appends to it is read after.
	recs, decodeErr := decodeJournal(n.j, ptr.Seq)
	if err := <-restored; err != nil {
		return err
	}
	if err := n.migrate(); err != nil {
		return fmt.Errorf("recovery: %w", err)
	}
	first, last := n.j.FirstIndex(), n.j.LastIndex()
	switch {
	case last > n.snapSeq && first > n.snapSeq+1:
		return fmt.Errorf("recovery: the journal starts at record %d but the snapshot covers only up to %d: records are missing", first, n.snapSeq)
	case last < n.snapSeq:
		// The snapshot is newer than the whole journal (e.g. restored): the journal
		// continues after it. Failing here (a full disk) only costs a segment later.
		if err := n.j.TruncateFront(n.snapSeq); err != nil {
			n.log.Warn().Err(err).Msg("could not mark the journal as starting after the snapshot")
		}
	}
	if decodeErr == nil {
		after := n.snapSeq
		if len(recs) > 0 {
			after = recs[len(recs)-1].seq
		}
		var more []journalRecord
		more, decodeErr = decodeJournal(n.j, after) // migrated records, if any
		recs = append(recs, more...)
	}
	if decodeErr != nil {
		return fmt.Errorf("recovery: %w", decodeErr)
	}
	r, err := applyRecords(n.eng, recs)
	if err != nil {
		return fmt.Errorf("recovery: %w", err)
	}
	if r.lastTime > n.recoveredAt {
		n.recoveredAt = r.lastTime
	}
	n.eng.Read(func(s *engine.State) { n.lastTime = s.LastTime })
	n.log.Info().Uint64("snapshot_seq", n.snapSeq).Int("replayed", r.records).
		Dur("took", time.Since(start)).Msg("state recovered")
	return nil
}

// restore decodes the snapshot, if there is one, into the engine.
func (n *Node) restore(data []byte, ptr store.Pointer, found bool) error {
	if !found {
		return nil
	}
	if err := n.eng.Restore(data); err != nil {
		return fmt.Errorf("recovery: snapshot %d: %w", ptr.ID, err)
	}
	if got := n.eng.Applied(); got != ptr.Seq {
		return fmt.Errorf("recovery: snapshot says sequence %d but holds %d", ptr.Seq, got)
	}
	n.snapSeq = ptr.Seq
	n.recoveredAt = ptr.SavedAt
	return nil
}

// journalRecord is a decoded journal record.
type journalRecord struct {
	seq uint64
	env engine.Envelope
}

// replayed is what a journal replay did.
type replayed struct {
	records  int
	lastTime int64 // the latest command time replayed (ms), 0 when none
}

// decodeJournal reads and decodes the journal's records after seq after.
func decodeJournal(j *journal.Journal, after uint64) ([]journalRecord, error) {
	var recs []journalRecord
	if last := j.LastIndex(); last > after {
		recs = make([]journalRecord, 0, last-after)
	}
	err := j.Replay(after, func(seq uint64, payload []byte) error {
		recs = append(recs, journalRecord{seq: seq})
		if err := engine.DecodeEnvelope(payload, &recs[len(recs)-1].env); err != nil {
			return fmt.Errorf("journal record %d: decode: %w", seq, err)
		}
		return nil
	})
	return recs, err
}

// applyJournal applies decoded records to eng, checking that each lands on its own
// sequence number.
func applyJournal(eng *engine.Engine, recs []journalRecord) (replayed, error) {
	var r replayed
	// Each record moves the engine one sequence on: the records must follow on from it.
	at, n := eng.Applied(), len(recs)
	for i := range recs {
		if recs[i].seq != at+uint64(i)+1 {
			n = i
			break
		}
	}
	applied, err := eng.ReplayRecords(n, func(i int) *engine.Envelope { return &recs[i].env })
	for i := range recs[:applied] {
		r.lastTime = max(r.lastTime, recs[i].env.Time)
	}
	r.records = applied
	switch {
	case err != nil:
		rec := &recs[applied]
		return r, fmt.Errorf("journal record %d: apply %s: %w", rec.seq, rec.env.Cmd.Kind(), err)
	case n < len(recs):
		return r, fmt.Errorf("journal record %d follows sequence %d", recs[n].seq, at+uint64(n))
	}
	return r, nil
}

// applyRecords applies the records recovery decoded, with the collector held, and ends
// the replay (Engine.Replayed), also after a failed record.
func applyRecords(eng *engine.Engine, recs []journalRecord) (replayed, error) {
	defer holdGC()()
	defer eng.Replayed()
	return applyJournal(eng, recs)
}

// replayBatch is how many decoded records replayJournal's decoder hands on at a time.
const replayBatch = 512

// errReplayStopped ends the decoder of a replay whose applying failed.
var errReplayStopped = errors.New("replay stopped")

// replayJournal decodes the journal's records after seq after and applies them to eng:
// the decoding runs on a goroutine of its own, batches ahead of the applying, so that
// the two share two cores (docs/behaviour.md#recovery-at-memory-speed). On an error
// the records before it may have been applied.
func replayJournal(eng *engine.Engine, j *journal.Journal, after uint64) (replayed, error) {
	defer holdGC()()
	defer eng.Replayed()
	batches := make(chan []journalRecord, 8)
	stop, decoded := make(chan struct{}), make(chan error, 1)
	go func() {
		defer close(batches)
		batch := make([]journalRecord, 0, replayBatch)
		send := func() error {
			select {
			case batches <- batch:
				batch = make([]journalRecord, 0, replayBatch)
				return nil
			case <-stop:
				return errReplayStopped
			}
		}
		err := j.Replay(after, func(seq uint64, payload []byte) error {
			batch = append(batch, journalRecord{seq: seq})
			if err := engine.DecodeEnvelope(payload, &batch[len(batch)-1].env); err != nil {
				return fmt.Errorf("journal record %d: decode: %w", seq, err)
			}
			if len(batch) < replayBatch {
				return nil
			}
			return send()
		})
		if err == nil && len(batch) > 0 {
			err = send()
		}
		decoded <- err
	}()
	var r replayed
	for batch := range batches {
		b, err := applyJournal(eng, batch)
		r.records += b.records
		r.lastTime = max(r.lastTime, b.lastTime)
		if err != nil {
			close(stop)
			for range batches { // the decoder stops at its next batch
			}
			<-decoded
			return r, err
		}
	}
	return r, <-decoded
}
