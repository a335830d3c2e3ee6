package engine

// Event types pushed over the websocket (docs/behaviour.md#realtime).
const (
	EvClock        = "clock"
	EvDeliberation = "deliberation"
	EvGroupInfo    = "group_info"
	EvExpo         = "expo"
	EvJudge        = "judge"
	EvFlag         = "flag"
	EvLog          = "log"
	EvChanged      = "changed"
	EvStats        = "stats" // produced by the hub, not by commands
	EvWinners      = "winners"
)

// Audience says who receives an event.
type Audience int

// Audiences.
const (
	ToEveryone Audience = iota
	ToAdmins
	ToJudge // only the judge named in Event.Judge
)

// Event is something that happened, produced by a command and published to websocket
// clients only after the command is durable. Data holds copies, never live state, so it
// can be encoded outside the engine's lock.
type Event struct {
	Type  string
	To    Audience
	Judge ID // for ToJudge
	Data  any
}

// ClockEvent is the data of a "clock" event.
type ClockEvent struct {
	Running   bool  `json:"running"`
	Time      int64 `json:"time"`
	StartTime int64 `json:"start_time"`
	PauseTime int64 `json:"pause_time"`
}

// DeliberationEvent is the data of a "deliberation" event.
type DeliberationEvent struct {
	On bool `json:"on"`
}

// GroupInfo is the data of a "group_info" event and the body of GET /api/group-info.
type GroupInfo struct {
	Names   []string `json:"names"`
	Enabled bool     `json:"enabled"`
	// EventName is options.event_name, for the expo header and page titles.
	EventName string `json:"event_name"`
}

// ExpoEvent is the data of an "expo" event: a project entered, changed in or left the
// public listing.
type ExpoEvent struct {
	Action  string        `json:"action"` // "upsert" | "remove"
	Project PublicProject `json:"project"`
}

// JudgeEvent is the data of a "judge" event: the judge's assignment or group changed from
// outside its own request.
type JudgeEvent struct {
	Current *ID    `json:"current"`
	Group   int    `json:"group"`
	Reason  string `json:"reason"`
}

// LogEvent is the data of a "log" event.
type LogEvent struct {
	Lines []string `json:"lines"`
}

// ChangedEvent is the data of a "changed" event.
type ChangedEvent struct {
	Kind string `json:"kind"` // "judge" | "project" | "options" | "content"
	IDs  []ID   `json:"ids"`
}
