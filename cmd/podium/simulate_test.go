package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSimulateAgainstTheBinary: `podium simulate -http` starts the binary itself per
// event and drives it over HTTP with the in-process mode's judges: it completes events
// and prints its table row (what it measures is compared in docs/behaviour.md#simulation's quality table).
func TestSimulateAgainstTheBinary(t *testing.T) {
	bin := podiumBinary(t)
	for _, mode := range [][]string{{}, {"-http"}} {
		args := append([]string{"simulate", "-projects", "12", "-judges", "4", "-visits", "5", "-seeds", "2", "-mode", "focus"}, mode...)
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("podium %v: %v\n%s", args, err, out)
		}
		if !strings.Contains(string(out), "| 12/4/5 | focus | 1 |") {
			t.Fatalf("podium %v printed no result row:\n%s", args, out)
		}
	}
	// The track-prize world over HTTP prints its table (docs/behaviour.md#track-prizes).
	args := []string{"simulate", "-projects", "30", "-judges", "4", "-visits", "5", "-seeds", "1", "-track", "-http"}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("podium %v: %v\n%s", args, err, out)
	}
	for _, want := range []string{"| Podium: PrizeOrder (results' track list) |", "never seen by a track judge:"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("podium %v printed no %q:\n%s", args, want, out)
		}
	}
	// A bad flag is a clear error, not a run.
	out, err = exec.Command(bin, "simulate", "-http", "-url", "http://127.0.0.1:1", "-password", "x").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "-http starts its own server") {
		t.Fatalf("-http with -url: %v\n%s", err, out)
	}
}
