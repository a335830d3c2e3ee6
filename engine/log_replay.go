package engine

// A replay's audit lines are written off the writer (docs/behaviour.md#recovery-at-
// memory-speed). Building a line (time, names, table) was a fifth of a replayed
// command's cost, and the writer is the one goroutine a replay cannot share. So while
// the journal replays, Ctx.log hands each line in parts (logEntry: strings and numbers
// only, nothing of the state) to a goroutine that builds them, in batches, in order;
// the built lines are stored, in order and with the same trimming, when the replay
// ends or before anything reads or copies the state (State.settle).

// lineBatch is how many entries go to the line writer at a time.
const lineBatch = 256

// lineWriter builds a replay's audit lines on a goroutine of its own.
type lineWriter struct {
	batch []logEntry
	work  chan []logEntry
	done  chan []string
}

// deferLine hands an audit line to the replay's line writer, starting it if need be.
func (s *State) deferLine(e *logEntry) {
	w := s.lines
	if w == nil {
		w = &lineWriter{work: make(chan []logEntry, 64), done: make(chan []string, 1)}
		go w.run()
		s.lines = w
	}
	if w.batch == nil {
		w.batch = make([]logEntry, 0, lineBatch)
	}
	w.batch = append(w.batch, *e)
	if len(w.batch) == lineBatch {
		w.work <- w.batch
		w.batch = nil
	}
}

// run builds the lines of the batches it is handed until the work channel closes.
func (w *lineWriter) run() {
	var lines []string
	var b []byte
	for batch := range w.work {
		for i := range batch {
			b = batch[i].appendTo(b[:0])
			lines = append(lines, lineOf(b))
		}
	}
	w.done <- lines
}

// flushLines stores the lines the replay's line writer built, if there is one.
func (s *State) flushLines() {
	w := s.lines
	if w == nil {
		return
	}
	s.lines = nil
	if len(w.batch) > 0 {
		w.work <- w.batch
	}
	close(w.work)
	for _, line := range <-w.done {
		s.appendLog(line)
	}
}

// settle does the work a replay left pending: its audit lines and a fit's projects'
// part (ratings_replay.go).
func (s *State) settle() {
	s.flushLines()
	s.flushFit()
}

// settled settles the state, if a replay left anything pending, before a copy or an
// encoding of it.
func (e *Engine) settled() {
	e.mu.RLock()
	pending := e.s.lines != nil || e.s.pendingFit != nil
	e.mu.RUnlock()
	if pending {
		e.Replayed()
	}
}
