package ws

import (
	"encoding/json"
	"strings"
	"testing"

	"podium/engine"
)

func TestCoalesce(t *testing.T) {
	id := func(b byte) engine.ID { return engine.ID{b} }
	in := []engine.Event{
		{Type: engine.EvLog, To: engine.ToAdmins, Data: engine.LogEvent{Lines: []string{"a"}}},
		{Type: engine.EvChanged, To: engine.ToAdmins, Data: engine.ChangedEvent{Kind: "judge", IDs: []engine.ID{id(1)}}},
		{Type: engine.EvClock, To: engine.ToEveryone, Data: engine.ClockEvent{Running: true}},
		{Type: engine.EvLog, To: engine.ToAdmins, Data: engine.LogEvent{Lines: []string{"b", "c"}}},
		{Type: engine.EvChanged, To: engine.ToAdmins, Data: engine.ChangedEvent{Kind: "judge", IDs: []engine.ID{id(2), id(1)}}},
		{Type: engine.EvChanged, To: engine.ToAdmins, Data: engine.ChangedEvent{Kind: "options", IDs: []engine.ID{}}},
		{Type: engine.EvChanged, To: engine.ToAdmins, Data: engine.ChangedEvent{Kind: "project", IDs: []engine.ID{id(3)}}},
		{Type: engine.EvChanged, To: engine.ToAdmins, Data: engine.ChangedEvent{Kind: "project", IDs: []engine.ID{}}},
	}
	out := coalesce(in)
	got := []string{}
	for _, ev := range out {
		b, _ := json.Marshal(ev.Data)
		got = append(got, ev.Type+" "+string(b))
	}
	want := []string{
		`log {"lines":["a","b","c"]}`,
		`changed {"kind":"judge","ids":["010000000000000000000000","020000000000000000000000"]}`,
		`clock {"running":true,"time":0,"start_time":0,"pause_time":0}`,
		`changed {"kind":"options","ids":[]}`,
		`changed {"kind":"project","ids":[]}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("coalesce:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The input is not modified.
	if l := in[0].Data.(engine.LogEvent).Lines; len(l) != 1 {
		t.Fatalf("input changed: %v", l)
	}
}

// TestWSIdleConnectionHoldsNoWriter: on plain TCP a delivery is written by whoever
// dispatches it; no writer goroutine or backlog stays behind.
func TestWSIdleConnectionHoldsNoWriter(t *testing.T) {
	th := startHub(t, Config{})
	w := th.dial(nil, "")
	th.publishClock(true)
	w.expect("clock")
	h := th.h
	h.mu.RLock()
	defer h.mu.RUnlock()
	if len(h.clients) != 1 {
		t.Fatalf("%d clients", len(h.clients))
	}
	c := h.clients[0]
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rc == nil {
		t.Fatal("no file descriptor for non-blocking writes on a TCP connection")
	}
	if c.writing || c.backlog != nil || c.partial != nil {
		t.Fatalf("writer state left behind: writing=%v backlog=%d partial=%d", c.writing, len(c.backlog), len(c.partial))
	}
}
