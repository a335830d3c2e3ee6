package engine

import (
	"encoding/hex"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Hand-written journal encoding for the judge's hot commands. A journal record is the
// envelope's JSON; for next, finish, skip and rank (nearly every record of a judging
// run) it is appended byte by byte instead of through reflection. The bytes are exactly
// what encoding/json writes (tested), so records read the same either way.

// appender is a command that appends its own JSON (identical to json.Marshal's).
type appender interface {
	appendJSON(b []byte) []byte
}

// AppendJSON appends the envelope's journal encoding to b.
func (e *Envelope) AppendJSON(b []byte) ([]byte, error) {
	a, ok := e.Cmd.(appender)
	if !ok {
		enc, err := e.MarshalJSON()
		return append(b, enc...), err
	}
	b = append(b, `{"k":`...)
	b = appendJSONString(b, e.Cmd.Kind())
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, e.Time, 10)
	b = append(b, `,"s":`...)
	b = strconv.AppendUint(b, e.Seed, 10)
	b = append(b, `,"a":{"k":`...)
	b = appendJSONString(b, string(e.Actor.Kind))
	b = append(b, `,"j":`...)
	b = appendID(b, e.Actor.Judge)
	b = append(b, `},"d":`...)
	b = a.appendJSON(b)
	if e.Keyed != nil {
		k, err := json.Marshal(e.Keyed)
		if err != nil {
			return b, err
		}
		b = append(append(b, `,"i":`...), k...)
	}
	return append(b, '}'), nil
}

func appendID(b []byte, id ID) []byte {
	var h [24]byte
	hex.Encode(h[:], id[:])
	b = append(b, '"')
	b = append(b, h[:]...)
	return append(b, '"')
}

// jsonPlain[c]: byte c stands for itself in a JSON string as encoding/json writes it.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString appends s as encoding/json does: plain printable ASCII as it is,
// anything else (quotes, backslashes, HTML characters, control characters, non-ASCII)
// through encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !jsonPlain[s[i]] {
			enc, _ := json.Marshal(s) // a string always encodes
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func (cmd *JudgeNext) appendJSON(b []byte) []byte {
	b = append(b, `{"judge":`...)
	b = appendID(b, cmd.Judge)
	if cmd.Got != nil {
		b = append(b, `,"got":`...)
		b = appendID(b, *cmd.Got)
	}
	if len(cmd.Upcoming) > 0 {
		b = append(b, `,"upcoming":`...)
		b = appendIDList(b, cmd.Upcoming)
	}
	return append(b, '}')
}

func (cmd *JudgeFinish) appendJSON(b []byte) []byte {
	b = append(b, `{"judge":`...)
	b = appendID(b, cmd.Judge)
	b = append(b, `,"notes":`...)
	b = appendJSONString(b, cmd.Notes)
	b = append(b, `,"starred":`...)
	b = strconv.AppendBool(b, cmd.Starred)
	if !cmd.Project.IsZero() {
		b = append(b, `,"project":`...)
		b = appendID(b, cmd.Project)
	}
	if cmd.Feedback != "" {
		b = append(b, `,"feedback":`...)
		b = appendJSONString(b, cmd.Feedback)
	}
	return append(b, '}')
}

func (cmd *JudgeSkip) appendJSON(b []byte) []byte {
	b = append(b, `{"judge":`...)
	b = appendID(b, cmd.Judge)
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, cmd.Reason)
	return append(b, '}')
}

func (cmd *JudgeRank) appendJSON(b []byte) []byte {
	b = append(b, `{"judge":`...)
	b = appendID(b, cmd.Judge)
	b = append(b, `,"ranking":`...)
	if cmd.Ranking == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, id := range cmd.Ranking {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendID(b, id)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}
