package engine

import "testing"

func (r *settingsRig) clock() Clock {
	var c Clock
	r.e.Read(func(s *State) { c = s.Options.Clock })
	return c
}

func TestClockPauseUnpauseReset(t *testing.T) {
	r := newSettingsRig(t)
	if c := r.clock(); c != (Clock{}) {
		t.Fatalf("new clock %+v", c)
	}
	ref := r.opts().Ref
	// Pausing a paused clock changes nothing (not even ref).
	res, evs := r.must(&ClockPause{})
	if res.(Clock) != (Clock{}) || hasEvent(evs, EvClock) || r.opts().Ref != ref {
		t.Fatalf("pause of paused clock: %+v %+v", res, evs)
	}
	res, evs = r.must(&ClockUnpause{})
	start := r.now
	if c := res.(Clock); !c.Running || c.StartTime != start || c.PauseTime != 0 || !hasEvent(evs, EvClock) {
		t.Fatalf("unpause: %+v %+v", c, evs)
	}
	// Unpausing a running clock changes nothing.
	r.must(&ClockUnpause{})
	if c := r.clock(); c.StartTime != start {
		t.Fatalf("second unpause moved start: %+v", c)
	}
	r.now += 5000
	res, _ = r.must(&ClockPause{}) // 7 s after start (1 s per command + 5 s)
	c := res.(Clock)
	if c.Running || c.Elapsed(r.now+99999) != 7000 {
		t.Fatalf("paused: %+v elapsed %d", c, c.Elapsed(r.now))
	}
	// Resuming keeps the elapsed time.
	r.now += 10000
	res, _ = r.must(&ClockUnpause{})
	if c := res.(Clock); c.Elapsed(r.now+2000) != 9000 {
		t.Fatalf("resumed: %+v elapsed %d", c, c.Elapsed(r.now+2000))
	}
	res, evs = r.must(&ClockReset{})
	if res.(Clock) != (Clock{}) || r.clock() != (Clock{}) || !hasEvent(evs, EvClock) {
		t.Fatalf("reset: %+v", res)
	}
	if got := r.opts().Ref; got != ref+4 {
		t.Fatalf("ref %d, want %d (unpause, pause, unpause, reset)", got, ref+4)
	}
}

func TestClockRecover(t *testing.T) {
	r := newSettingsRig(t)
	// Nothing to recover: paused clock.
	r.refuse(KindConflict, &ClockRecover{PauseAt: r.now})
	r.must(&ClockUnpause{})
	start := r.now
	// clock_sync on: a running clock is left running (it counts the downtime).
	r.must(&SetOptions{ClockSync: boolp(true)})
	r.refuse(KindConflict, &ClockRecover{PauseAt: r.now})
	if c := r.clock(); !c.Running || c.StartTime != start {
		t.Fatalf("clock_sync on: %+v", c)
	}
	// clock_sync off: it pauses at the last moment the server was up.
	r.must(&SetOptions{ClockSync: boolp(false)})
	lastUp := r.now
	r.now += 3_600_000 // an hour of downtime
	_, evs := r.must(&ClockRecover{PauseAt: lastUp})
	c := r.clock()
	if c.Running || c.Elapsed(r.now) != lastUp-start || !hasEvent(evs, EvClock) {
		t.Fatalf("recovered: %+v elapsed %d want %d", c, c.Elapsed(r.now), lastUp-start)
	}
	// A pause time before the start is clamped to the start.
	r.must(&ClockReset{})
	r.must(&ClockUnpause{})
	r.must(&ClockRecover{PauseAt: 5})
	if c := r.clock(); c.Running || c.Elapsed(r.now) != 0 {
		t.Fatalf("clamped: %+v", c)
	}
}

func TestDeliberation(t *testing.T) {
	r := newSettingsRig(t)
	r.must(&ClockUnpause{})
	ref := r.opts().Ref
	_, evs := r.must(&SetDeliberation{Start: true})
	o := r.opts()
	if !o.Deliberation || o.Clock.Running || o.Ref != ref+2 || !hasEvent(evs, EvDeliberation) || !hasEvent(evs, EvClock) {
		t.Fatalf("start: %+v events %+v", o, evs)
	}
	// Turning it off leaves the clock paused.
	_, evs = r.must(&SetDeliberation{Start: false})
	o = r.opts()
	if o.Deliberation || o.Clock.Running || !hasEvent(evs, EvDeliberation) || hasEvent(evs, EvClock) {
		t.Fatalf("stop: %+v events %+v", o, evs)
	}
	// Off leaves a running clock running.
	r.must(&ClockUnpause{})
	r.must(&SetDeliberation{Start: false})
	if !r.clock().Running {
		t.Fatal("stopping deliberation paused the clock")
	}
	// Starting with a paused clock still tells clients the clock state.
	r.must(&ClockPause{})
	_, evs = r.must(&SetDeliberation{Start: true})
	if !hasEvent(evs, EvClock) || !r.opts().Deliberation {
		t.Fatalf("events %+v", evs)
	}
}
