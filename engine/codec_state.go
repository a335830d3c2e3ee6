package engine

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// Hand-written snapshot decoding (codec.go has the reader): a snapshot is mostly
// judges with their seen lists, projects, the audit log, the judges' order and their
// undo points, which are read by hand here; every
// other field of the state goes through encoding/json on its own bytes. The result is
// what json.Unmarshal gives, which decodeState falls back to for anything unexpected
// (docs/behaviour.md#recovery-at-memory-speed).

// decodeState decodes a snapshot into the fresh state s.
func decodeState(b []byte, s *State) error {
	if decodeStateFast(b, s) {
		return nil
	}
	*s = State{}
	if err := json.Unmarshal(b, s); err != nil {
		return err
	}
	for _, j := range s.Judges { // as the hand decoder does (judging_seen.go)
		if j != nil {
			j.buildSeenFilter()
		}
	}
	return nil
}

// stateFields maps the state's JSON field names to their field indexes.
var stateFields = sync.OnceValue(func() map[string]int {
	m := map[string]int{}
	t := reflect.TypeFor[State]()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "" && name != "-" {
			m[name] = i
		}
	}
	return m
})

func decodeStateFast(b []byte, s *State) bool {
	r := &jsonReader{b: b}
	v := reflect.ValueOf(s).Elem()
	fields := stateFields()
	var seen fieldSet
	return r.object(func(k []byte) bool {
		switch string(k) {
		case "judges":
			return seen.once(0) && r.judges(&s.Judges)
		case "log":
			return seen.once(1) && r.texts(&s.Log)
		case "projects":
			return seen.once(2) && r.projects(&s.Projects)
		case "judge_order":
			return seen.once(3) && r.ids(&s.JudgeOrder)
		case "undo":
			return seen.once(4) && r.undo(&s.Undo)
		}
		i, ok := fields[string(k)]
		if !ok {
			return false
		}
		raw, ok := r.skipValue()
		return ok && json.Unmarshal(raw, v.Field(i).Addr().Interface()) == nil
	}) && r.end()
}

// byID reads null or an object of values by id, each read by read into a new value.
func byID[T any](r *jsonReader, out *map[ID]*T, read func(*T) bool) bool {
	if r.literal("null") {
		*out = nil
		return true
	}
	m := map[ID]*T{}
	*out = m
	return r.object(func(k []byte) bool {
		var id ID
		if !r.idText(k, &id) {
			return false
		}
		if _, dup := m[id]; dup {
			return false
		}
		v := new(T)
		m[id] = v
		return read(v)
	})
}

// judges reads null or the object of judges by id (a big one in parts: codec_parts.go).
func (r *jsonReader) judges(out *map[ID]*Judge) bool {
	return byIDInParts(r, out, judgesLayout, (*jsonReader).judge)
}

// idText parses a key as an id (ID.UnmarshalText; a key with escapes is refused).
func (r *jsonReader) idText(k []byte, id *ID) bool { return idFromHex(k, id) }

// texts reads null or an array of strings.
func (r *jsonReader) texts(out *[]string) bool { return readList(r, out, 0, r.text) }

// int reads an integer into an int.
func (r *jsonReader) int(v *int) bool {
	var n int64
	ok := r.int64(&n)
	*v = int(n)
	return ok && int64(*v) == n
}

// judge reads a judge as Judge.appendJSON writes it.
func (r *jsonReader) judge(j *Judge) bool {
	var seen fieldSet
	return r.object(func(k []byte) bool {
		switch string(k) {
		case "id":
			return seen.once(0) && r.id(&j.ID)
		case "code":
			return seen.once(1) && r.text(&j.Code)
		case "name":
			return seen.once(2) && r.text(&j.Name)
		case "email":
			return seen.once(3) && r.text(&j.Email)
		case "notes":
			return seen.once(4) && r.text(&j.Notes)
		case "track":
			return seen.once(5) && r.text(&j.Track)
		case "token_hash":
			return seen.once(6) && r.text(&j.TokenHash)
		case "active":
			return seen.once(7) && r.bool(&j.Active)
		case "read_welcome":
			return seen.once(8) && r.bool(&j.ReadWelcome)
		case "group":
			return seen.once(9) && r.int(&j.Group)
		case "group_seen":
			return seen.once(10) && r.int(&j.GroupSeen)
		case "current":
			return seen.once(11) && r.id(&j.Current)
		case "current_since":
			return seen.once(12) && r.int64(&j.CurrentSince)
		case "last_location":
			return seen.once(13) && r.int(&j.LastLocation)
		case "seen":
			return seen.once(14) && r.int(&j.Seen)
		}
		return r.judgeLists(j, k, &seen)
	})
}

// judgeLists reads the judge's list and map fields and its reliability figures.
func (r *jsonReader) judgeLists(j *Judge, k []byte, seen *fieldSet) bool {
	switch string(k) {
	case "seen_projects":
		if !seen.once(15) || !r.seenProjects(&j.SeenProjects, j.Seen) {
			return false
		}
		j.buildSeenFilter()
		return true
	case "skipped":
		return seen.once(16) && r.skipped(&j.Skipped)
	case "flagged":
		return seen.once(17) && r.ids(&j.Flagged)
	case "rankings":
		return seen.once(18) && r.ids(&j.Rankings)
	case "last_activity":
		return seen.once(19) && r.int64(&j.LastActivity)
	case "reliability":
		return seen.once(20) && r.float(&j.Reliability)
	case "disagreement":
		return seen.once(21) && r.float(&j.Disagreement)
	case "compared":
		return seen.once(22) && r.int(&j.Compared)
	case "upcoming":
		return seen.once(23) && r.ids(&j.Upcoming)
	}
	return false
}

// seenProjects reads null or an array of seen projects; hint is how many there
// probably are (the judge's seen count, which comes first).
func (r *jsonReader) seenProjects(out *[]SeenProject, hint int) bool {
	if r.literal("null") {
		*out = nil
		return true
	}
	if !r.byte('[') {
		return false
	}
	// Room for a few more: the judge's next finishes (a replay's, then live ones)
	// append without copying the list.
	list := make([]SeenProject, 0, min(max(hint, 0)*5/4+2, 4096))
	if !r.byte(']') {
		for {
			list = append(list, SeenProject{})
			sp := &list[len(list)-1]
			var seen fieldSet
			ok := r.object(func(k []byte) bool {
				switch string(k) {
				case "project_id":
					return seen.once(0) && r.id(&sp.ProjectID)
				case "starred":
					return seen.once(1) && r.bool(&sp.Starred)
				case "notes":
					return seen.once(2) && r.text(&sp.Notes)
				case "name":
					return seen.once(3) && r.text(&sp.Name)
				case "location":
					return seen.once(4) && r.int(&sp.Location)
				case "description":
					return seen.once(5) && r.text(&sp.Description)
				case "feedback":
					return seen.once(6) && r.text(&sp.Feedback)
				}
				return false
			})
			if !ok {
				return false
			}
			if r.byte(']') {
				break
			}
			if !r.byte(',') {
				return false
			}
		}
	}
	*out = list
	return true
}

// idMap reads null or an object of id -> value, each value read by val; a repeated id
// is not the fast path's (encoding/json keeps the last).
func idMap[V any](r *jsonReader, out *map[ID]V, val func(*V) bool) bool {
	if r.literal("null") {
		*out = nil
		return true
	}
	m := map[ID]V{}
	*out = m
	return r.object(func(k []byte) bool {
		var id ID
		if !r.idText(k, &id) {
			return false
		}
		if _, dup := m[id]; dup {
			return false
		}
		var v V
		ok := val(&v)
		m[id] = v
		return ok
	})
}

// skipped reads null or an object of id -> bool.
func (r *jsonReader) skipped(out *map[ID]bool) bool { return idMap(r, out, r.bool) }

// undo reads null or the object of undo points by judge id.
func (r *jsonReader) undo(out *map[ID]UndoPoint) bool { return idMap(r, out, r.undoPoint) }

// undoPoint reads one undo point as encoding/json writes it.
func (r *jsonReader) undoPoint(u *UndoPoint) bool {
	var seen fieldSet
	return r.object(func(k []byte) bool {
		switch string(k) {
		case "project":
			return seen.once(0) && r.id(&u.Project)
		case "time":
			return seen.once(1) && r.int64(&u.Time)
		case "general":
			return seen.once(2) && r.bool(&u.General)
		case "track":
			return seen.once(3) && r.text(&u.Track)
		case "group":
			return seen.once(4) && r.int(&u.Group)
		case "group_seen":
			return seen.once(5) && r.int(&u.GroupSeen)
		}
		return false
	})
}

// projects reads null or the object of projects by id (a big one in parts:
// codec_parts.go).
func (r *jsonReader) projects(out *map[ID]*Project) bool {
	return byIDInParts(r, out, projectsLayout, (*jsonReader).project)
}

// project reads a project as encoding/json writes it.
func (r *jsonReader) project(p *Project) bool {
	var seen fieldSet
	return r.object(func(k []byte) bool {
		switch string(k) {
		case "id":
			return seen.once(0) && r.id(&p.ID)
		case "name":
			return seen.once(1) && r.text(&p.Name)
		case "description":
			return seen.once(2) && r.text(&p.Description)
		case "url":
			return seen.once(3) && r.text(&p.URL)
		case "try_link":
			return seen.once(4) && r.text(&p.TryLink)
		case "video_link":
			return seen.once(5) && r.text(&p.VideoLink)
		case "challenge_list":
			return seen.once(6) && r.texts(&p.ChallengeList)
		case "location":
			return seen.once(7) && r.int(&p.Location)
		case "group":
			return seen.once(8) && r.int(&p.Group)
		case "seen":
			return seen.once(9) && r.int(&p.Seen)
		case "track_seen":
			return seen.once(10) && r.counts(&p.TrackSeen)
		case "active":
			return seen.once(11) && r.bool(&p.Active)
		case "prioritized":
			return seen.once(12) && r.bool(&p.Prioritized)
		case "last_activity":
			return seen.once(13) && r.int64(&p.LastActivity)
		case "created":
			return seen.once(14) && r.uint64(&p.Created)
		case "ratings":
			return seen.once(15) && r.rating(&p.Ratings)
		case "contact_emails":
			return seen.once(16) && r.texts(&p.ContactEmails)
		case "team_token":
			return seen.once(17) && r.text(&p.TeamToken)
		}
		return false
	})
}

// counts reads null or an object of name -> int.
func (r *jsonReader) counts(out *map[string]int) bool {
	if r.literal("null") {
		*out = nil
		return true
	}
	if !r.byte('{') {
		return false
	}
	m := map[string]int{}
	*out = m
	if r.byte('}') {
		return true
	}
	for {
		// Names are the admin's track names: keys may hold escapes.
		var k string
		var n int
		if !r.text(&k) || !r.byte(':') || !r.int(&n) {
			return false
		}
		if _, dup := m[k]; dup {
			return false
		}
		m[k] = n
		if r.byte('}') {
			return true
		}
		if !r.byte(',') {
			return false
		}
	}
}

// rating reads a project's fitted rating.
func (r *jsonReader) rating(pr *ProjectRating) bool {
	var seen fieldSet
	return r.object(func(k []byte) bool {
		switch string(k) {
		case "rating":
			return seen.once(0) && r.float(&pr.Rating)
		case "sd":
			return seen.once(1) && r.float(&pr.SD)
		case "p_top":
			return seen.once(2) && r.float(&pr.PTop)
		case "p_top3":
			return seen.once(3) && r.float(&pr.PTop3)
		case "rank":
			return seen.once(4) && r.int(&pr.Rank)
		}
		return false
	})
}
