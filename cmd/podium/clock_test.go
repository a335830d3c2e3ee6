package main

import (
	"encoding/json"
	"syscall"
	"testing"
	"time"
)

type clockReading struct {
	Running bool  `json:"running"`
	Time    int64 `json:"time"`
}

func (p *proc) clock() clockReading {
	p.t.Helper()
	var c clockReading
	if err := json.Unmarshal(p.must("GET", "/api/admin/clock", nil, ""), &c); err != nil {
		p.t.Fatal(err)
	}
	return c
}

// stopTerm stops the binary with SIGTERM and waits for it to exit.
func (p *proc) stopTerm() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		p.t.Fatalf("exit after SIGTERM: %v", err)
	}
}

// TestClockThroughRestart: a new event keeps its clock as it was through a restart of
// the binary (clock_sync is on by default, docs/behaviour.md#resources): a running
// clock is still running afterwards and has counted the downtime, after a graceful
// SIGTERM and after a SIGKILL alike. With clock_sync turned off it comes back paused.
func TestClockThroughRestart(t *testing.T) {
	const down = 1200 * time.Millisecond
	for _, tc := range []struct {
		name      string
		clockSync bool
		stop      func(*proc)
	}{
		{"SIGTERM", true, (*proc).stopTerm},
		{"SIGKILL", true, (*proc).kill},
		{"SIGKILL clock_sync off", false, (*proc).kill},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := startBinary(t, dir)
			if !tc.clockSync {
				p.must("POST", "/api/admin/options", map[string]any{"clock_sync": false}, "")
			}
			p.must("POST", "/api/admin/clock/unpause", nil, "")
			before := p.clock()
			if !before.Running {
				t.Fatalf("clock after Resume: %+v", before)
			}
			tc.stop(p)
			time.Sleep(down)

			p2 := startBinary(t, dir)
			after := p2.clock()
			var started struct{ OK int }
			json.Unmarshal(p2.must("GET", "/api/admin/started", nil, ""), &started)
			if !tc.clockSync {
				// Paused at the previous run's last known moment (here its last command).
				if after.Running || started.OK != 0 {
					t.Fatalf("clock_sync off: clock after restart %+v (started %d), want it paused", after, started.OK)
				}
				return
			}
			if !after.Running || started.OK != 1 {
				t.Fatalf("clock after restart %+v (started %d), want it still running", after, started.OK)
			}
			if after.Time < before.Time+down.Milliseconds() {
				t.Fatalf("clock after restart at %d ms; it read %d ms before a downtime of %v, which counts", after.Time, before.Time, down)
			}
		})
	}
}
