package engine

import "io"

// Capture takes a consistent copy of the state for a snapshot or backup. Copying is
// much cheaper than encoding, so the writer only copies and the returned encode function
// runs on another goroutine while the writer goes on applying commands (hashicorp/raft's
// "capture, then persist concurrently").
// The encode function streams the snapshot to w (see State.EncodeTo).
func (e *Engine) Capture() (encode func(w io.Writer) error, seq uint64) {
	e.mu.RLock()
	c := e.s.clone()
	e.mu.RUnlock()
	return c.EncodeTo, c.Applied
}

// clone deep-copies every exported (snapshotted) part of the state. Strings are
// immutable and shared. TestCloneSharesNothingMutable checks that no map, slice or
// pointer of the copy aliases the original, so a field added later without a copy here
// fails the tests.
func (s *State) clone() *State {
	c := *s
	c.Options = s.OptionsView()
	c.Judges = make(map[ID]*Judge, len(s.Judges))
	for id, j := range s.Judges {
		c.Judges[id] = j.clone()
	}
	c.JudgeOrder = cloneSlice(s.JudgeOrder)
	c.Projects = make(map[ID]*Project, len(s.Projects))
	for id, p := range s.Projects {
		c.Projects[id] = p.clone()
	}
	c.Flags = cloneSlice(s.Flags)
	c.Log = cloneSlice(s.Log)
	c.AdminSessions = make(map[string]int64, len(s.AdminSessions))
	for k, v := range s.AdminSessions {
		c.AdminSessions[k] = v
	}
	c.Content = s.Content.clone()
	c.codeIndex, c.tokenIndex, c.locIndex = nil, nil, nil
	c.maxLocOK = false
	return &c
}

func (j *Judge) clone() *Judge {
	c := *j
	c.SeenProjects = cloneSlice(j.SeenProjects)
	c.Rankings = cloneSlice(j.Rankings)
	c.Skipped = make(map[ID]bool, len(j.Skipped))
	for k, v := range j.Skipped {
		c.Skipped[k] = v
	}
	return &c
}

func (p *Project) clone() *Project {
	c := *p
	c.ChallengeList = cloneSlice(p.ChallengeList)
	c.TrackSeen = make(map[string]int, len(p.TrackSeen))
	for k, v := range p.TrackSeen {
		c.TrackSeen[k] = v
	}
	return &c
}

// cloneSlice copies a slice, keeping nil as nil and empty as empty (they encode
// differently).
func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}
