package engine

// The hot commands' hand-written decoders (codec.go): the judge's commands and a fit's
// result, which together are nearly every journal record of an event. A judge's
// command is first matched against the layout the journal writes (its keys in order,
// each with its punctuation one literal); otherwise each field may come once, in any
// order, and any other field sends the command to encoding/json.

import "encoding/json"

// fieldSet records which fields a decoder has read.
type fieldSet uint32

// once marks field i read and reports whether it was not read before.
func (f *fieldSet) once(i uint) bool {
	if *f&(1<<i) != 0 {
		return false
	}
	*f |= 1 << i
	return true
}

// newID reads an id into a new ID at *id.
func (r *jsonReader) newID(id **ID) bool {
	*id = new(ID)
	return r.id(*id)
}

func (cmd *JudgeNext) decodeJSON(r *jsonReader) bool {
	at := r.i
	ok := r.lit(`{"judge":`) && r.id(&cmd.Judge)
	if ok && r.lit(`,"got":`) {
		ok = r.newID(&cmd.Got)
	}
	if ok && r.lit(`,"upcoming":`) {
		ok = r.ids(&cmd.Upcoming)
	}
	if ok && r.lit("}") {
		return true
	}
	*cmd, r.i = JudgeNext{}, at
	var seen fieldSet
	return r.object(func(k []byte) bool {
		switch string(k) {
		case "judge":
			return seen.once(0) && r.id(&cmd.Judge)
		case "got":
			return seen.once(1) && r.newID(&cmd.Got)
		case "upcoming":
			return seen.once(2) && r.ids(&cmd.Upcoming)
		}
		return false
	})
}

func (cmd *JudgeFinish) decodeJSON(r *jsonReader) bool {
	at := r.i
	if r.lit(`{"judge":`) && r.id(&cmd.Judge) && r.lit(`,"notes":`) && r.text(&cmd.Notes) && r.lit(`,"starred":`) &&
		r.bool(&cmd.Starred) && (r.lit("}") || r.lit(`,"project":`) && r.id(&cmd.Project) && r.lit("}")) {
		return true
	}
	*cmd, r.i = JudgeFinish{}, at
	var seen fieldSet
	return r.object(func(k []byte) bool {
		switch string(k) {
		case "judge":
			return seen.once(0) && r.id(&cmd.Judge)
		case "notes":
			return seen.once(1) && r.text(&cmd.Notes)
		case "starred":
			return seen.once(2) && r.bool(&cmd.Starred)
		case "project":
			return seen.once(3) && r.id(&cmd.Project)
		case "feedback":
			return seen.once(4) && r.text(&cmd.Feedback)
		}
		return false
	})
}

func (cmd *JudgeSkip) decodeJSON(r *jsonReader) bool {
	at := r.i
	if r.lit(`{"judge":`) && r.id(&cmd.Judge) && r.lit(`,"reason":`) && r.text(&cmd.Reason) && r.lit("}") {
		return true
	}
	*cmd, r.i = JudgeSkip{}, at
	var seen fieldSet
	return r.object(func(k []byte) bool {
		switch string(k) {
		case "judge":
			return seen.once(0) && r.id(&cmd.Judge)
		case "reason":
			return seen.once(1) && r.text(&cmd.Reason)
		}
		return false
	})
}

func (cmd *JudgeRank) decodeJSON(r *jsonReader) bool {
	at := r.i
	if r.lit(`{"judge":`) && r.id(&cmd.Judge) && r.lit(`,"ranking":`) && r.ids(&cmd.Ranking) && r.lit("}") {
		return true
	}
	*cmd, r.i = JudgeRank{}, at
	var seen fieldSet
	return r.object(func(k []byte) bool {
		switch string(k) {
		case "judge":
			return seen.once(0) && r.id(&cmd.Judge)
		case "ranking":
			return seen.once(1) && r.ids(&cmd.Ranking)
		}
		return false
	})
}

func (cmd *JudgeStar) decodeJSON(r *jsonReader) bool {
	at := r.i
	if r.lit(`{"judge":`) && r.id(&cmd.Judge) && r.lit(`,"project":`) && r.id(&cmd.Project) && r.lit(`,"starred":`) &&
		r.bool(&cmd.Starred) && r.lit("}") {
		return true
	}
	*cmd, r.i = JudgeStar{}, at
	var seen fieldSet
	return r.object(func(k []byte) bool {
		switch string(k) {
		case "judge":
			return seen.once(0) && r.id(&cmd.Judge)
		case "project":
			return seen.once(1) && r.id(&cmd.Project)
		case "starred":
			return seen.once(2) && r.bool(&cmd.Starred)
		}
		return false
	})
}

func (cmd *JudgeNotes) decodeJSON(r *jsonReader) bool {
	at := r.i
	if r.lit(`{"judge":`) && r.id(&cmd.Judge) && r.lit(`,"project":`) && r.id(&cmd.Project) && r.lit(`,"notes":`) &&
		r.text(&cmd.Notes) && r.lit("}") {
		return true
	}
	*cmd, r.i = JudgeNotes{}, at
	var seen fieldSet
	return r.object(func(k []byte) bool {
		switch string(k) {
		case "judge":
			return seen.once(0) && r.id(&cmd.Judge)
		case "project":
			return seen.once(1) && r.id(&cmd.Project)
		case "notes":
			return seen.once(2) && r.text(&cmd.Notes)
		}
		return false
	})
}

func (cmd *SetRatings) decodeJSON(r *jsonReader) bool {
	var seen fieldSet
	return r.object(func(k []byte) bool {
		switch string(k) {
		case "version":
			return seen.once(0) && r.uint64(&cmd.Version)
		case "projects":
			return seen.once(1) && r.ids(&cmd.Projects)
		case "rating":
			return seen.once(2) && r.floats(&cmd.Rating, len(cmd.Projects))
		case "sd":
			return seen.once(3) && r.floats(&cmd.SD, len(cmd.Projects))
		case "p_top":
			return seen.once(4) && r.floats(&cmd.PTop, len(cmd.Projects))
		case "p_top3":
			return seen.once(5) && r.floats(&cmd.PTop3, len(cmd.Projects))
		case "judges":
			return seen.once(6) && r.ids(&cmd.Judges)
		case "reliability":
			return seen.once(7) && r.floats(&cmd.Reliability, len(cmd.Judges))
		case "disagreement":
			return seen.once(8) && r.floats(&cmd.Disagreement, len(cmd.Judges))
		case "compared":
			return seen.once(9) && r.ints(&cmd.Compared, len(cmd.Judges))
		case "tracks":
			raw, ok := r.skipValue()
			return seen.once(10) && ok && json.Unmarshal(raw, &cmd.Tracks) == nil
		}
		return false
	})
}
