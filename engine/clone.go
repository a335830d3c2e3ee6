package engine

import (
	"io"
	"reflect"
	"sync"
)

// Capture takes a consistent copy of the state for a snapshot or backup. Copying is
// much cheaper than encoding, so the writer only copies and the returned encode function
// runs on another goroutine while the writer goes on applying commands (hashicorp/raft's
// "capture, then persist concurrently").
// The encode function streams the snapshot to w (see State.EncodeTo).
func (e *Engine) Capture() (encode func(w io.Writer) error, seq uint64) {
	e.settled()
	e.mu.RLock()
	e.captures.Add(1) // arrays the writer owned are shared from now on (State.ownSeen)
	c := e.s.clone()
	e.mu.RUnlock()
	return c.EncodeTo, c.Applied
}

// clone deep-copies every exported (snapshotted) part of the state. Strings are
// immutable and shared. TestCloneSharesNothingMutable checks that no map, slice or
// pointer of the copy aliases the original, so a field added later without a copy here
// fails the tests.
//
// The writer waits for this copy, so it is cheap: all judges in one array, all
// projects in another, empty maps shared, and the slices of copyOnWrite shared with
// the state rather than copied (the copy is only read, by the encoder).
func (s *State) clone() *State {
	c := *s
	c.Options = s.OptionsView()

	judges := make([]Judge, 0, len(s.Judges))
	c.Judges = make(map[ID]*Judge, len(s.Judges))
	for id, j := range s.Judges {
		judges = append(judges, *j) // SeenProjects and Rankings shared: see copyOnWrite
		cj := &judges[len(judges)-1]
		cj.Skipped = cloneMap(j.Skipped)
		cj.Flagged = cloneSlice(j.Flagged)
		c.Judges[id] = cj
	}
	c.JudgeOrder = cloneSlice(s.JudgeOrder)

	projects := make([]Project, 0, len(s.Projects))
	c.Projects = make(map[ID]*Project, len(s.Projects))
	for id, p := range s.Projects {
		projects = append(projects, *p) // ChallengeList shared: see copyOnWrite
		cp := &projects[len(projects)-1]
		cp.TrackSeen = cloneMap(p.TrackSeen)
		c.Projects[id] = cp
	}
	c.Flags = cloneSlice(s.Flags)
	c.Log = cloneSlice(s.Log)
	c.AdminSessions = cloneMap(s.AdminSessions)
	c.Content = s.Content.clone()
	c.Mail = cloneMap(s.Mail)
	c.Conflicts = cloneSlice(s.Conflicts)
	c.Undo = cloneMap(s.Undo)
	c.Keys = cloneSlice(s.Keys)
	c.Prizes = cloneSlice(s.Prizes)
	c.Outcome = s.Outcome.clone()
	c.TrackFits = cloneTrackFits(s.TrackFits)
	c.codeIndex, c.tokenIndex, c.locIndex, c.jx, c.tokens, c.captures = nil, nil, nil, nil, nil, nil
	c.keys, c.conflicted, c.teamIndex = nil, nil, nil
	c.maxLocOK = false
	return &c
}

// copyOnWrite names the slices a copy shares with the state instead of copying them
// (most of a big state's bytes are judges' seen projects). The writer never changes
// their elements in place: it replaces the slice (Judge.ownSeen before an in-place
// edit, a fresh array when deleting an element, new slices elsewhere), and an append
// only writes past the end a copy sees. TestCloneSharesNothingMutable allows exactly
// these; TestCaptureUnaffectedByLaterChanges checks the edits that touch them.
var copyOnWrite = map[string]bool{"SeenProjects": true, "Rankings": true, "ChallengeList": true, "ContactEmails": true, "Upcoming": true}

// ownSeen gives j a private SeenProjects array before one of its elements is changed
// in place (captures may share the current one: see copyOnWrite). An array the writer
// made private after the last capture is kept: a judge's edits between two snapshots
// copy its list once (docs/behaviour.md#recovery-at-memory-speed: none in a replay).
func (s *State) ownSeen(j *Judge) {
	gen := uint64(1)
	if s.captures != nil {
		gen += s.captures.Load()
	}
	if j.seenOwn == gen {
		return
	}
	if j.SeenProjects != nil {
		j.SeenProjects = append(make([]SeenProject, 0, len(j.SeenProjects)+1), j.SeenProjects...)
	}
	j.seenOwn = gen
}

// cloneMap copies a map, keeping nil as nil. Empty maps (most judges' skips, most
// projects' track counts) become one shared empty map per type: the copy is never
// written to, and it saves an allocation per entity.
func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	if len(m) == 0 {
		return emptyMap[K, V]()
	}
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

var emptyMaps sync.Map // reflect.Type of the map -> the shared empty map

func emptyMap[K comparable, V any]() map[K]V {
	var zero map[K]V
	t := reflect.TypeOf(zero)
	if m, ok := emptyMaps.Load(t); ok {
		return m.(map[K]V)
	}
	m, _ := emptyMaps.LoadOrStore(t, map[K]V{})
	return m.(map[K]V)
}

// cloneSlice copies a slice, keeping nil as nil and empty as empty (they encode
// differently).
func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}
