package engine

import (
	"errors"
	"fmt"
)

// ErrorKind classifies why a command or read was refused; transport maps it to a status.
type ErrorKind int

// The kinds of refusal.
const (
	KindInvalid       ErrorKind = iota + 1 // bad input: 400
	KindUnauthorized                       // bad credentials: 401
	KindNotFound                           // unknown id: 404
	KindConflict                           // conflicts with current state: 409
	KindUnprocessable                      // an Idempotency-Key reused for another request: 422
)

// Error is a refusal with a human-readable message. A refused command changes nothing.
type Error struct {
	Kind ErrorKind
	Msg  string
}

// Error returns the message.
func (e *Error) Error() string { return e.Msg }

func invalidf(format string, a ...any) *Error {
	return &Error{Kind: KindInvalid, Msg: fmt.Sprintf(format, a...)}
}
func notFoundf(format string, a ...any) *Error {
	return &Error{Kind: KindNotFound, Msg: fmt.Sprintf(format, a...)}
}
func conflictf(format string, a ...any) *Error {
	return &Error{Kind: KindConflict, Msg: fmt.Sprintf(format, a...)}
}
func unauthorizedf(format string, a ...any) *Error {
	return &Error{Kind: KindUnauthorized, Msg: fmt.Sprintf(format, a...)}
}

// Refusals of the storage layer that hold for every command: the node owning the state
// (persist) returns them and transport maps them to 503. They live here so that transport
// needs no import of persist.
var (
	// ErrReadOnly: the journal could not be written, so every change is refused.
	ErrReadOnly = errors.New("storage failure: the server is read-only")
	// ErrClosed: the change arrived after shutdown began.
	ErrClosed = errors.New("server is shutting down")
	// ErrNoLeader: a cluster has had no leader for the whole wait (docs/behaviour.md#cluster).
	ErrNoLeader = errors.New("no cluster leader at the moment: try again")
)
