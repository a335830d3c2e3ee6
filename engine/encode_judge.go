package engine

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
)

// appendJSON appends the judge as encoding/json writes it (field order, nil slices and
// maps as null, map keys sorted by their text, HTML characters escaped), byte for byte:
// judges with their seen lists are most of a snapshot, and reflection was most of a
// snapshot's encoding time. TestJudgeAppendJSONMatchesMarshal compares the two on
// random judges, so a field added to Judge without being added here fails it.
func (j *Judge) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = appendID(b, j.ID)
	b = append(b, `,"code":`...)
	b = appendJSONString(b, j.Code)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, j.Name)
	b = append(b, `,"email":`...)
	b = appendJSONString(b, j.Email)
	b = append(b, `,"notes":`...)
	b = appendJSONString(b, j.Notes)
	b = append(b, `,"track":`...)
	b = appendJSONString(b, j.Track)
	b = append(b, `,"token_hash":`...)
	b = appendJSONString(b, j.TokenHash)
	b = append(b, `,"active":`...)
	b = strconv.AppendBool(b, j.Active)
	b = append(b, `,"read_welcome":`...)
	b = strconv.AppendBool(b, j.ReadWelcome)
	b = append(b, `,"group":`...)
	b = strconv.AppendInt(b, int64(j.Group), 10)
	b = append(b, `,"group_seen":`...)
	b = strconv.AppendInt(b, int64(j.GroupSeen), 10)
	b = append(b, `,"current":`...)
	b = appendID(b, j.Current)
	b = append(b, `,"current_since":`...)
	b = strconv.AppendInt(b, j.CurrentSince, 10)
	b = append(b, `,"last_location":`...)
	b = strconv.AppendInt(b, int64(j.LastLocation), 10)
	b = append(b, `,"seen":`...)
	b = strconv.AppendInt(b, int64(j.Seen), 10)
	b = append(b, `,"seen_projects":`...)
	if j.SeenProjects == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range j.SeenProjects {
			if i > 0 {
				b = append(b, ',')
			}
			b = j.SeenProjects[i].appendJSON(b)
		}
		b = append(b, ']')
	}
	b = append(b, `,"skipped":`...)
	if j.Skipped == nil {
		b = append(b, "null"...)
	} else {
		keys := make([]ID, 0, len(j.Skipped))
		for k := range j.Skipped {
			keys = append(keys, k)
		}
		// encoding/json sorts keys by their text; hex text sorts like the bytes.
		slices.SortFunc(keys, func(x, y ID) int { return bytes.Compare(x[:], y[:]) })
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendID(b, k)
			b = append(b, ':')
			b = strconv.AppendBool(b, j.Skipped[k])
		}
		b = append(b, '}')
	}
	b = append(b, `,"flagged":`...)
	b = appendIDList(b, j.Flagged)
	b = append(b, `,"rankings":`...)
	b = appendIDList(b, j.Rankings)
	b = append(b, `,"last_activity":`...)
	b = strconv.AppendInt(b, j.LastActivity, 10)
	if j.Reliability != 0 {
		// encoding/json's float format (and its error for NaN and infinities).
		f, err := json.Marshal(j.Reliability)
		if err != nil {
			return b, err
		}
		b = append(b, `,"reliability":`...)
		b = append(b, f...)
	}
	if j.Disagreement != 0 {
		f, err := json.Marshal(j.Disagreement)
		if err != nil {
			return b, err
		}
		b = append(b, `,"disagreement":`...)
		b = append(b, f...)
	}
	if j.Compared != 0 {
		b = append(b, `,"compared":`...)
		b = strconv.AppendInt(b, int64(j.Compared), 10)
	}
	if len(j.Upcoming) > 0 {
		b = append(b, `,"upcoming":`...)
		b = appendIDList(b, j.Upcoming)
	}
	return append(b, '}'), nil
}

func (sp *SeenProject) appendJSON(b []byte) []byte {
	b = append(b, `{"project_id":`...)
	b = appendID(b, sp.ProjectID)
	b = append(b, `,"starred":`...)
	b = strconv.AppendBool(b, sp.Starred)
	b = append(b, `,"notes":`...)
	b = appendJSONString(b, sp.Notes)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, sp.Name)
	b = append(b, `,"location":`...)
	b = strconv.AppendInt(b, int64(sp.Location), 10)
	b = append(b, `,"description":`...)
	b = appendJSONString(b, sp.Description)
	if sp.Feedback != "" {
		b = append(b, `,"feedback":`...)
		b = appendJSONString(b, sp.Feedback)
	}
	return append(b, '}')
}

// appendIDList appends ids as a JSON array of hex strings (null when nil).
func appendIDList(b []byte, ids []ID) []byte {
	if ids == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendID(b, id)
	}
	return append(b, ']')
}
