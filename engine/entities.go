package engine

import (
	"bytes"
	"sort"
)

// Helpers shared by the admin commands on judges, projects and groups.

// knownJudges returns ids without duplicates (first occurrence kept) or a not-found
// error naming the first unknown id.
func (s *State) knownJudges(ids []ID) ([]ID, error) { return knownIDs(s.Judges, ids, "judge") }

// knownProjects is knownJudges for projects.
func (s *State) knownProjects(ids []ID) ([]ID, error) { return knownIDs(s.Projects, ids, "project") }

// knownIDs is knownJudges for the items of m, called what in the error.
func knownIDs[T any](m map[ID]T, ids []ID, what string) ([]ID, error) {
	out := make([]ID, 0, len(ids))
	seen := make(map[ID]bool, len(ids))
	for _, id := range ids {
		if _, ok := m[id]; !ok {
			return nil, notFoundf("%s %s not found", what, id)
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

// hideVerb is the audit verb of a hide command: "hid" or "unhid".
func hideVerb(hide bool) string {
	if hide {
		return "hid"
	}
	return "unhid"
}

// logProjects writes the audit line of a command that did verb to the projects ids:
// naming the project and its table when there is one, else counting them.
func (s *State) logProjects(c *Ctx, verb string, ids []ID) {
	if len(ids) == 1 {
		p := s.Projects[ids[0]]
		c.logf("%s project %s (table %d)", verb, p.Name, p.Location)
	} else {
		c.logf("%s %d projects", verb, len(ids))
	}
}

// judgeEvent is the "judge" event data telling j its assignment or group changed.
func (s *State) judgeEvent(j *Judge, reason string) JudgeEvent {
	ev := JudgeEvent{Group: j.Group, Reason: reason}
	if !j.Current.IsZero() {
		cur := j.Current
		ev.Current = &cur
	}
	return ev
}

// sortedIDs returns ids sorted and without duplicates (a new slice).
func sortedIDs(ids []ID) []ID {
	out := append([]ID{}, ids...)
	sort.Slice(out, func(a, b int) bool { return bytes.Compare(out[a][:], out[b][:]) < 0 })
	n := 0
	for i, id := range out {
		if i == 0 || id != out[n-1] {
			out[n] = id
			n++
		}
	}
	return out[:n]
}

// releaseJudgesOn takes the projects in pids away from every judge currently on one of
// them and tells each of them why. It returns the released judges in creation order.
func (s *State) releaseJudgesOn(c *Ctx, pids map[ID]bool, reason string) []ID {
	var out []ID
	for _, j := range s.JudgesInOrder() {
		if j.Current.IsZero() || !pids[j.Current] {
			continue
		}
		j.Current, j.CurrentSince = ZeroID, 0
		c.emit(Event{Type: EvJudge, To: ToJudge, Judge: j.ID, Data: s.judgeEvent(j, reason)})
		out = append(out, j.ID)
	}
	return out
}

// place puts p at table loc (which must be free or p's own) and recomputes its group.
func (s *State) place(p *Project, loc int) {
	if s.locIndex[p.Location] == p.ID {
		delete(s.locIndex, p.Location)
	}
	p.Location = loc
	p.Group = s.Options.GroupOfTable(loc)
	s.locIndex[loc] = p.ID
	s.maxLocOK = false
}

// syncSeenCopies refreshes the judges' SeenProject copies (table, name, description) of
// the given projects.
func (s *State) syncSeenCopies(ps map[ID]*Project) {
	if len(ps) == 0 {
		return
	}
	var only *Project // the common case: one project, compared without a map lookup
	if len(ps) == 1 {
		for _, p := range ps {
			only = p
		}
	}
	for _, j := range s.Judges {
		owned := false
		for i := range j.SeenProjects {
			sp := &j.SeenProjects[i]
			p := only
			if p == nil {
				p = ps[sp.ProjectID]
			} else if sp.ProjectID != p.ID {
				continue
			}
			if p != nil && (sp.Location != p.Location || sp.Name != p.Name || sp.Description != p.Description) {
				if !owned {
					s.ownSeen(j)
					owned = true
					sp = &j.SeenProjects[i]
				}
				sp.Location, sp.Name, sp.Description = p.Location, p.Name, p.Description
			}
		}
	}
}

// emitExpoUpsert tells expo screens that p changed: an upsert while it is listed (active).
func emitExpoUpsert(c *Ctx, p *Project) {
	if p.Active {
		c.emit(Event{Type: EvExpo, To: ToEveryone, Data: ExpoEvent{Action: "upsert", Project: p.Public()}})
	}
}

// emitExpoRemove tells expo screens that p left the public listing.
func emitExpoRemove(c *Ctx, p *Project) {
	c.emit(Event{Type: EvExpo, To: ToEveryone, Data: ExpoEvent{Action: "remove", Project: p.Public()}})
}

// bumpOptionsRef bumps the options revision and notifies dashboards.
func (s *State) bumpOptionsRef(c *Ctx) {
	s.Options.Ref++
	c.changed("options")
}
