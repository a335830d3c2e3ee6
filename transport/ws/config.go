package ws

import (
	"time"

	"podium/engine"
)

// SocketSendBuffer is the SO_SNDBUF of a websocket connection: a client that stops
// reading fills its backlog (and is dropped) after about this much, not the several MiB
// Linux autotuning would let it hold.
const SocketSendBuffer = 128 << 10

// Timings are the websocket intervals; a zero field takes its default (30 s, 75 s,
// 10 s, 500 ms).
type Timings struct {
	Ping         time.Duration // server ping interval
	ReadTimeout  time.Duration // a connection silent this long is dropped
	WriteTimeout time.Duration // one write taking longer marks the client slow
	StatsEvery   time.Duration // minimum gap between two stats messages
}

var defaultTimings = Timings{
	Ping: 30 * time.Second, ReadTimeout: 75 * time.Second,
	WriteTimeout: 10 * time.Second, StatsEvery: 500 * time.Millisecond,
}

// withDefaults fills the zero fields of t with the defaults.
func (t Timings) withDefaults() Timings {
	d := defaultTimings
	if t.Ping > 0 {
		d.Ping = t.Ping
	}
	if t.ReadTimeout > 0 {
		d.ReadTimeout = t.ReadTimeout
	}
	if t.WriteTimeout > 0 {
		d.WriteTimeout = t.WriteTimeout
	}
	if t.StatsEvery > 0 {
		d.StatsEvery = t.StatsEvery
	}
	return d
}

// Config sets the hub's limits and intervals.
type Config struct {
	// MaxConnections caps the anonymous and judge connections (admins get
	// 64 more, so they are never locked out); it must be positive.
	MaxConnections int
	// MaxPerIP caps the non-admin connections of one client IP; it must be positive.
	MaxPerIP int
	Timings  Timings
}

// StateReader reads the engine's state (persist's node).
type StateReader interface {
	Read(fn func(s *engine.State))
}

// Authenticator checks the credentials of an "auth" message from a client at ip: a
// judge session token and an admin password, each nil when absent. It returns the roles
// they prove, or the text of a refusal (the connection then closes with 1008).
type Authenticator interface {
	Authenticate(ip string, token, password *string) (r Roles, refusal string)
}
