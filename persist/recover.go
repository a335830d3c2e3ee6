package persist

import (
	"fmt"

	"podium/engine"
	"podium/persist/journal"
)

// replayed is what a journal replay did.
type replayed struct {
	records  int
	lastTime int64 // the latest command time replayed (ms), 0 when none
}

// replayJournal applies the journal's records after seq after to eng, checking that
// each lands on its own sequence number.
func replayJournal(eng *engine.Engine, j *journal.Journal, after uint64) (replayed, error) {
	var r replayed
	err := j.Replay(after, func(seq uint64, payload []byte) error {
		var env engine.Envelope
		if err := engine.DecodeEnvelope(payload, &env); err != nil {
			return fmt.Errorf("journal record %d: decode: %w", seq, err)
		}
		if _, _, err := eng.Apply(&env); err != nil {
			return fmt.Errorf("journal record %d: apply %s: %w", seq, env.Cmd.Kind(), err)
		}
		if got := eng.Applied(); got != seq {
			return fmt.Errorf("engine is at sequence %d after applying record %d", got, seq)
		}
		if env.Time > r.lastTime {
			r.lastTime = env.Time
		}
		r.records++
		return nil
	})
	return r, err
}
