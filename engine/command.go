package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Command is one change to the state. Every change goes through a command so that the
// journal can replay it. Applying validates everything first and only then mutates, so
// a refused command changes nothing.
type Command interface {
	// Kind names the command in the journal (e.g. "judge.new").
	Kind() string
	// apply validates and applies the command; it returns the result for the caller.
	apply(s *State, c *Ctx) (any, error)
}

// ActorKind says who issued a command, for the audit log.
type ActorKind string

// The actors.
const (
	ActorSystem ActorKind = "system"
	ActorAdmin  ActorKind = "admin"
	ActorJudge  ActorKind = "judge"
	ActorPublic ActorKind = "public" // unauthenticated (QR self-signup, login)
)

// Actor is who issued a command.
type Actor struct {
	Kind  ActorKind `json:"k"`
	Judge ID        `json:"j,omitempty"`
}

// Admin, System and Public are the actors without an id.
var (
	Admin  = Actor{Kind: ActorAdmin}
	System = Actor{Kind: ActorSystem}
	Public = Actor{Kind: ActorPublic}
)

// JudgeActor is the actor for a judge's own request.
func JudgeActor(id ID) Actor { return Actor{Kind: ActorJudge, Judge: id} }

// Envelope is a command with everything nondeterministic fixed: time and random seed.
// It is what the journal stores.
type Envelope struct {
	Time  int64  // ms since the Unix epoch
	Seed  uint64 // seed of the command's random stream
	Actor Actor
	Cmd   Command
	// Keyed is the judge write's Idempotency-Key and, once applied, its answer
	// (idempotency.go); nil without a key.
	Keyed *Keyed
}

type envelopeWire struct {
	Kind  string          `json:"k"`
	Time  int64           `json:"t"`
	Seed  uint64          `json:"s"`
	Actor Actor           `json:"a"`
	Data  json.RawMessage `json:"d"`
	Keyed *Keyed          `json:"i,omitempty"`
}

// MarshalJSON encodes the envelope with its command kind.
func (e *Envelope) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(e.Cmd)
	if err != nil {
		return nil, err
	}
	return json.Marshal(envelopeWire{Kind: e.Cmd.Kind(), Time: e.Time, Seed: e.Seed, Actor: e.Actor, Data: data, Keyed: e.Keyed})
}

// UnmarshalJSON decodes an envelope, looking its command kind up in the registry.
func (e *Envelope) UnmarshalJSON(b []byte) error {
	var w envelopeWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	mk, ok := registry[w.Kind]
	if !ok {
		return fmt.Errorf("unknown command kind %q", w.Kind)
	}
	cmd := mk()
	if err := json.Unmarshal(w.Data, cmd); err != nil {
		return fmt.Errorf("command %s: %w", w.Kind, err)
	}
	e.Time, e.Seed, e.Actor, e.Cmd, e.Keyed = w.Time, w.Seed, w.Actor, cmd, w.Keyed
	return nil
}

var registry = map[string]func() Command{}

// register makes a command kind decodable from the journal. Each file registers its
// commands in an init function.
func register(mk ...func() Command) {
	for _, f := range mk {
		k := f().Kind()
		if _, dup := registry[k]; dup {
			panic("engine: command kind registered twice: " + k)
		}
		registry[k] = f
	}
}

// Ctx is what a command sees while it applies: the fixed time, the random stream, and
// collectors for events and audit log lines.
type Ctx struct {
	Time   int64
	Rand   *Rand
	Actor  Actor
	state  *State
	events []Event
	quiet  bool // replaying the journal: events are not collected (Engine.Replay)
}

// emit queues an event; it is published only after the command is durable.
func (c *Ctx) emit(ev Event) {
	if ev.Type == EvExpo {
		c.state.publicAt++ // a refused command's bump costs a rebuild, never a stale listing
	}
	if c.quiet {
		return
	}
	if c.events == nil {
		c.events = make([]Event, 0, 4) // a judge's next emits three
	}
	c.events = append(c.events, ev)
}

// changed emits a "changed" notification for dashboards.
func (c *Ctx) changed(kind string, ids ...ID) {
	if c.quiet {
		return
	}
	if ids == nil {
		ids = []ID{}
	}
	c.emit(Event{Type: EvChanged, To: ToAdmins, Data: ChangedEvent{Kind: kind, IDs: ids}})
}

// newID returns a fresh id that no judge, project or flag uses yet.
func (c *Ctx) newID() ID {
	for {
		id := newID(c.Time, c.Rand)
		if _, ok := c.state.Judges[id]; ok {
			continue
		}
		if _, ok := c.state.Projects[id]; ok {
			continue
		}
		return id
	}
}

// hasLineBreak reports whether b holds \r, \n, U+2028 or U+2029 (both encoded E2 80 A8/A9).
func hasLineBreak(b []byte) bool {
	if bytes.IndexByte(b, '\n') >= 0 || bytes.IndexByte(b, '\r') >= 0 {
		return true
	}
	for {
		i := bytes.IndexByte(b, 0xE2)
		if i < 0 || i+2 >= len(b) {
			return false
		}
		if b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9) {
			return true
		}
		b = b[i+1:]
	}
}

// logTimeLayout is the audit log's time format (UTC, milliseconds).
const logTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// appendLogTime appends ms (Unix milliseconds) in logTimeLayout, written by hand for
// years 0–9999 (time.Format for any other).
func appendLogTime(b []byte, ms int64) []byte {
	t := time.UnixMilli(ms).UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, logTimeLayout)
	}
	h, mi, sec := t.Clock()
	milli := t.Nanosecond() / 1e6
	n2 := func(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }
	b = append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-')
	b = append(n2(b, int(mo)), '-')
	b = append(n2(b, d), 'T')
	b = append(n2(b, h), ':')
	b = append(n2(b, mi), ':')
	b = append(n2(b, sec), '.')
	return append(b, byte('0'+milli/100), byte('0'+milli/10%10), byte('0'+milli%10), 'Z')
}

// logLineBreaks keeps user input from splitting an audit entry into forged lines.
var logLineBreaks = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ", "\u2028", " ", "\u2029", " ")

// logf appends an audit log line "<time> [ACTOR] message" and emits it to admins.
func (c *Ctx) logf(format string, a ...any) {
	e := c.logEntry()
	e.parts[0], e.n = fmt.Sprintf(format, a...), 1
	c.log(&e)
}

// logText is logf for a line of plain parts, without fmt (the judge's edits write one
// each).
func (c *Ctx) logText(parts ...string) {
	e := c.logEntry()
	if len(parts) > len(e.parts) {
		parts = []string{strings.Join(parts, "")}
	}
	e.n = int8(copy(e.parts[:], parts))
	c.log(&e)
}

// logProject is logf("<verb> project %s (table %d)<tail>", p.Name, p.Location) without
// fmt: the judging flow writes one of these per next, finish and skip.
func (c *Ctx) logProject(verb string, p *Project, tail ...string) {
	e := c.logEntry()
	e.parts[0], e.parts[1], e.table, e.loc = verb, p.Name, true, p.Location
	if len(tail) > len(e.parts)-2 {
		tail = []string{strings.Join(tail, "")}
	}
	e.n = 2 + int8(copy(e.parts[2:], tail))
	c.log(&e)
}

// logEntry starts an audit line: its time and actor (a judge by its name now).
func (c *Ctx) logEntry() logEntry {
	e := logEntry{time: c.Time, kind: c.Actor.Kind}
	if c.Actor.Kind == ActorJudge {
		if j, ok := c.state.Judges[c.Actor.Judge]; ok {
			e.who = j.Name
		} else {
			e.who = c.Actor.Judge.String()
		}
	}
	return e
}

// log writes the line: built in the state's reused buffer, stored and emitted; while
// the journal replays, handed to the replay's line writer instead (log_replay.go).
func (c *Ctx) log(e *logEntry) {
	s := c.state
	if c.quiet {
		s.deferLine(e)
		return
	}
	b := e.appendTo(s.logBuf[:0])
	if cap(b) <= 4096 { // the buffer is kept for the next line unless a huge one grew it
		s.logBuf = b[:0]
	}
	line := lineOf(b)
	s.appendLog(line)
	c.emit(Event{Type: EvLog, To: ToAdmins, Data: LogEvent{Lines: []string{line}}})
}

// logEntry is an audit line in parts: "<time> [ACTOR] " then the message, parts[:n]
// joined, with " project " between the first two and " (table <loc>)" after the
// second when table is set.
type logEntry struct {
	time  int64
	kind  ActorKind
	who   string // a judge actor's name (or id, when the judge is gone)
	parts [4]string
	n     int8
	table bool
	loc   int
}

// appendTo appends the line's bytes to b.
func (e *logEntry) appendTo(b []byte) []byte {
	b = appendLogTime(b, e.time)
	switch e.kind {
	case ActorAdmin:
		b = append(b, " [ADMIN] "...)
	case ActorJudge:
		b = append(append(append(b, " [JUDGE "...), e.who...), "] "...)
	default:
		// ActorPublic (QR self-signup) stays SYSTEM: docs/behaviour.md#admin-operations allows only SYSTEM, ADMIN, JUDGE.
		b = append(b, " [SYSTEM] "...)
	}
	for i, p := range e.parts[:e.n] {
		b = append(b, p...)
		if e.table && i == 0 {
			b = append(b, " project "...)
		}
		if e.table && i == 1 {
			b = append(strconv.AppendInt(append(b, " (table "...), int64(e.loc), 10), ')')
		}
	}
	return b
}

// lineOf makes an audit line of its bytes: one entry is one line, so the line breaks
// of user input (names) become spaces.
func lineOf(b []byte) string {
	line := string(b)
	if hasLineBreak(b) {
		line = logLineBreaks.Replace(line)
	}
	return line
}

// appendLog stores an audit line, keeping the newest MaxLogLines.
func (s *State) appendLog(line string) {
	s.Log = append(s.Log, line)
	if len(s.Log) > logTrimAt {
		// The kept lines get room for the next logTrimAt-MaxLogLines at once: trimmed to
		// an exact fit, the very next line would copy all MaxLogLines again to grow it.
		kept := make([]string, MaxLogLines, logTrimAt+1)
		copy(kept, s.Log[len(s.Log)-MaxLogLines:])
		s.Log = kept
	}
}
