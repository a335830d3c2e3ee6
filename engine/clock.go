package engine

func init() {
	register(
		func() Command { return &ClockPause{} },
		func() Command { return &ClockUnpause{} },
		func() Command { return &ClockReset{} },
		func() Command { return &ClockRecover{} },
	)
}

// ClockPause pauses the judging clock (a paused clock is left as it is).
type ClockPause struct{}

// Kind implements Command.
func (*ClockPause) Kind() string { return "clock.pause" }

func (*ClockPause) apply(s *State, c *Ctx) (any, error) {
	s.pauseClock(c, c.Time)
	return s.Options.Clock, nil
}

func (s *State) pauseClock(c *Ctx, at int64) {
	clk := &s.Options.Clock
	if !clk.Running {
		return
	}
	if at < clk.StartTime {
		at = clk.StartTime
	}
	clk.PauseTime = at
	clk.Running = false
	c.logf("clock paused")
	s.emitClock(c)
	s.bumpOptionsRef(c)
}

// ClockUnpause starts or resumes the clock.
type ClockUnpause struct{}

// Kind implements Command.
func (*ClockUnpause) Kind() string { return "clock.unpause" }

func (*ClockUnpause) apply(s *State, c *Ctx) (any, error) {
	clk := &s.Options.Clock
	if clk.Running {
		return *clk, nil
	}
	elapsed := clk.PauseTime - clk.StartTime
	clk.StartTime = c.Time - elapsed
	clk.PauseTime = 0
	clk.Running = true
	c.logf("clock started")
	s.emitClock(c)
	s.bumpOptionsRef(c)
	return *clk, nil
}

// ClockReset stops the clock and sets it to zero.
type ClockReset struct{}

// Kind implements Command.
func (*ClockReset) Kind() string { return "clock.reset" }

func (*ClockReset) apply(s *State, c *Ctx) (any, error) {
	s.Options.Clock = Clock{}
	c.logf("clock reset")
	s.emitClock(c)
	s.bumpOptionsRef(c)
	return s.Options.Clock, nil
}

// ClockRecover runs at startup after recovery when clock_sync is off: a clock that was
// running comes back paused at the last moment the server is known to have been up.
type ClockRecover struct {
	PauseAt int64 `json:"pause_at"`
}

// Kind implements Command.
func (*ClockRecover) Kind() string { return "clock.recover" }

func (cmd *ClockRecover) apply(s *State, c *Ctx) (any, error) {
	if s.Options.ClockSync || !s.Options.Clock.Running {
		return nil, conflictf("clock needs no recovery")
	}
	s.pauseClock(c, cmd.PauseAt)
	return s.Options.Clock, nil
}

func (s *State) emitClock(c *Ctx) {
	clk := s.Options.Clock
	c.emit(Event{Type: EvClock, To: ToEveryone, Data: ClockEvent{
		Running: clk.Running, Time: clk.Elapsed(c.Time), StartTime: clk.StartTime, PauseTime: clk.PauseTime,
	}})
}
