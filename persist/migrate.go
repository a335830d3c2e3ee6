package persist

import (
	"fmt"
	"podium/persist/journal"
)

// migrate moves the journal of a data directory from before the file journal (records
// in Badger under j/) into the file journal, once: records after the snapshot and after
// what the file journal already holds are appended, then the Badger records are
// deleted (when the store is writable; otherwise the next start finishes that, and
// skips what is already moved).
func (n *Node) migrate() error {
	from := max(n.snapSeq, n.j.LastIndex())
	var batch []journal.Entry
	size := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := n.j.Append(batch); err != nil {
			return fmt.Errorf("migrate the Badger journal: %w", err)
		}
		batch, size = batch[:0], 0
		return nil
	}
	moved := 0
	last, torn, err := n.st.ReplayLegacyJournal(from, func(seq uint64, payload []byte) error {
		batch = append(batch, journal.Entry{Index: seq, Data: append([]byte(nil), payload...)})
		size += len(payload)
		moved++
		if size > 4<<20 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	if torn {
		n.log.Warn().Uint64("after", last).Msg("discarded a torn final record of the Badger journal")
	}
	if moved > 0 {
		n.log.Info().Int("records", moved).Uint64("last", last).Msg("moved the Badger journal into the file journal")
	}
	n.st.DropLegacyJournal()
	return nil
}
