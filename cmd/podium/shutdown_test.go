package main

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERMShutsDownGracefully: SIGTERM stops the server with exit status 0 after
// writing a snapshot (SPEC §8), so the next start replays no journal record and every
// list endpoint is back byte for byte.
func TestSIGTERMShutsDownGracefully(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, dir, "LOG_LEVEL=info")
	p.must("POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@example.com", "no_send": true}, "")
	p.must("POST", "/api/project/new", map[string]any{"name": "Alpha", "challenge_list": "AI"}, "")
	want := p.snapshotLists()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop after SIGTERM")
	}

	p2 := startBinary(t, dir, "LOG_LEVEL=info")
	p2.mu.Lock()
	out := p2.out.String()
	p2.mu.Unlock()
	if !strings.Contains(out, `"replayed":0`) {
		t.Errorf("restart after SIGTERM replayed journal records (no shutdown snapshot?):\n%s", out)
	}
	got := p2.snapshotLists()
	for _, path := range listEndpoints {
		if got[path] != want[path] {
			t.Errorf("%s after SIGTERM and restart:\n got %s\nwant %s", path, got[path], want[path])
		}
	}
}
