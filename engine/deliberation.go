package engine

func init() {
	register(func() Command { return &SetDeliberation{} })
}

// SetDeliberation turns deliberation mode on (which also pauses the clock) or off (the
// clock stays as it is). While it is on, judges cannot finish, rank or star.
type SetDeliberation struct {
	Start bool `json:"start"`
}

// Kind implements Command.
func (*SetDeliberation) Kind() string { return "deliberation.set" }

func (cmd *SetDeliberation) apply(s *State, c *Ctx) (any, error) {
	was := s.Options.Deliberation
	s.Options.Deliberation = cmd.Start
	if cmd.Start {
		c.logf("deliberation started")
		if s.Options.Clock.Running {
			s.pauseClock(c, c.Time) // emits the clock event
		} else {
			s.emitClock(c)
		}
	} else {
		c.logf("deliberation ended")
	}
	c.emit(Event{Type: EvDeliberation, To: ToEveryone, Data: DeliberationEvent{On: cmd.Start}})
	if was != cmd.Start {
		s.bumpOptionsRef(c)
	}
	return nil, nil
}
