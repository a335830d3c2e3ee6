// Package ws is Podium's websocket hub: it owns the upgraded connections (frame reader
// and writer, one bounded backlog per connection, slow consumers dropped), keeps the
// registry of who is connected with which roles, and pushes the engine's events to
// them, each encoded once. Package transport does the HTTP upgrade and hands the socket
// over with Hub.Accept.
package ws
