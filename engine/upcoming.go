package engine

// Judging without a network (docs/behaviour.md#on-the-floor): next names a few more
// projects the judge would likely get (upcoming), and a finish may name the project
// judged while offline, accepted when the judge could be assigned it now.

import "slices"

// maxUpcoming is how many upcoming projects next names.
const maxUpcoming = 2

// offlineVisit checks that j, with no current project, could be assigned project id
// now (steps 3, 4 and 7 of the assignment: active, not seen, skipped or conflicted,
// in the judge's track or group; views wanted and busy tables do not matter for a
// visit already made) and returns it, or a refusal a judge can read.
func (s *State) offlineVisit(j *Judge, id ID) (*Project, error) {
	p, ok := s.Projects[id]
	switch {
	case !ok:
		return nil, conflictf("this project is no longer in the event")
	case !p.Active:
		return nil, conflictf("project %s was hidden by the organisers", p.Name)
	case j.seenIndex(id) >= 0:
		return nil, conflictf("you already judged project %s", p.Name)
	}
	if _, skipped := j.Skipped[id]; skipped {
		return nil, conflictf("you skipped project %s", p.Name)
	}
	if s.hasConflict(j.ID, id) {
		return nil, conflictf("you have a conflict of interest with project %s", p.Name)
	}
	if t := s.trackOf(j); t != "" && !containsString(p.ChallengeList, t) {
		return nil, conflictf("project %s is not in your track %s", p.Name, t)
	}
	if o := &s.Options; s.trackOf(j) == "" && o.MultiGroup && o.NumGroups > 0 && p.Group != j.Group {
		return nil, conflictf("project %s is in another group than yours", p.Name)
	}
	return p, nil
}

// upcomingFor lists up to maxUpcoming projects j would likely be sent to after its
// current one: candidates as the assignment has them (steps 3–5 and 7, without moving
// the judge to another group), the fewest viewed first, then the nearest to the
// current table (a track judge: the next tables along), then table order. Nothing is
// reserved and no random number is drawn, so the list follows from the state alone.
func (s *State) upcomingFor(j *Judge, c *Ctx) []ID {
	cur, ok := s.currentProject(j)
	if !ok {
		return nil
	}
	x := s.jd()
	x.sync(s)
	p := s.newPicker(j, c)
	defer func() { x.pickSeen = nil }()
	if k, ok := x.slotOf[cur.ID]; ok {
		x.mark[k] = p.ep
	}
	cs := candidates{all: x.cands[:0], free: x.free[:0], bestAll: choice{ties: x.ties[:0]}, bestFree: choice{ties: x.ties2[:0]}}
	defer func() {
		x.cands, x.free, x.ties, x.ties2 = cs.all[:0], cs.free[:0], cs.bestAll.ties[:0], cs.bestFree.ties[:0]
	}()
	p.scan(&cs)
	list := cs.all
	if len(cs.free) > 0 {
		list = cs.free
	}
	o := &s.Options
	if p.track == "" && o.MultiGroup && o.NumGroups > 0 {
		list = slices.DeleteFunc(slices.Clone(list), func(k int32) bool { return int(x.slots[k].group) != j.Group })
	}
	loc := int32(cur.Location)
	key := func(k int32) (int32, int32) {
		d := x.slots[k].loc - loc
		if p.track != "" {
			if d <= 0 {
				d += 1 << 30 // along the tables, wrapping round
			}
			return 0, d
		}
		return x.slots[k].seen, max(d, -d)
	}
	var out [maxUpcoming]int32
	n := 0
	for _, k := range list { // table order: equals keep it
		sk, dk := key(k)
		i := n
		for i > 0 {
			si, di := key(out[i-1])
			if si < sk || si == sk && di <= dk {
				break
			}
			i--
		}
		if i >= maxUpcoming {
			continue
		}
		if n < maxUpcoming {
			n++
		}
		copy(out[i+1:n], out[i:n-1])
		out[i] = k
	}
	ids := make([]ID, n)
	for i := range ids {
		ids[i] = x.proj[out[i]].ID
	}
	return ids
}
