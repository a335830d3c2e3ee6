package ratio

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the baseline broadcaster's process (as loadtest
// -baseline-ws does for the real tool).
func init() {
	if addr := os.Getenv("PODIUM_TEST_BASELINE_WS"); addr != "" {
		if err := ServeBaseline(addr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// TestRatioBenchmarkRuns runs the ratio benchmark at toy size against the real binary
// and the gorilla baseline: every figure is measured, nothing is missed.
func TestRatioBenchmarkRuns(t *testing.T) {
	bin := buildPodium(t)
	t.Setenv("PODIUM_TEST_BASELINE_WS", "127.0.0.1:0")
	profDir := t.TempDir()
	rep, err := Run(context.Background(), Config{
		ServerBin: bin, BaselineCmd: []string{os.Args[0]},
		Rounds: 1, Phase: 400e6, Conns: 4, Projects: 20, Sockets: 300, Broadcasts: 2,
		ProfileDir: profDir, ProfileFor: time.Second,
		LogLevel: "warn", Log: testLog(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Heartbeat[0] <= 0 || rep.JudgeActions[0] <= 0 {
		t.Fatalf("HTTP figures missing: %+v", rep)
	}
	if rep.PodiumWSKiB[0] <= 0 || rep.BaselineWSKiB[0] <= 0 || rep.PodiumP99[0] <= 0 || rep.BaselineP99[0] <= 0 {
		t.Fatalf("websocket figures missing: %+v", rep)
	}
	// The machine's idle share is sampled from /proc/stat around both kinds of slice.
	if len(rep.IdleHeartbeat) != 1 || len(rep.IdleAction) != 1 {
		t.Fatalf("machine idle figures missing: %+v", rep)
	}
	for _, p := range []float64{rep.IdleHeartbeat[0], rep.IdleAction[0]} {
		if p < 0 || p > 100 {
			t.Fatalf("machine idle %.1f%% is not a share", p)
		}
	}
	if rep.PodiumMissed != 0 || rep.BaselineMissed != 0 {
		t.Fatalf("missed deliveries: podium %d, baseline %d", rep.PodiumMissed, rep.BaselineMissed)
	}
	// The profiled phases leave the server's and the load generator's CPU profiles.
	for _, ph := range []string{"heartbeat", "judge"} {
		for _, f := range []string{ph + ".pprof", ph + ".loadgen.pprof", ph + ".allocs", ph + ".metrics.after"} {
			if fi, err := os.Stat(filepath.Join(profDir, f)); err != nil || fi.Size() == 0 {
				t.Errorf("profile dir lacks %s (%v)", f, err)
			}
		}
	}
	var out bytes.Buffer
	rep.Print(&out)
	if !strings.Contains(out.String(), "server CPU µs per delivery") || !strings.Contains(out.String(), "machine CPU idle") {
		t.Fatalf("report:\n%s", out.String())
	}
}

func TestHasProjectID(t *testing.T) {
	for body, want := range map[string]bool{
		`{"project_id":"0194ab"}`:               true,
		`{"project_id":""}`:                     false,
		`{"project_id":null}`:                   false,
		`{}`:                                    false,
		`{"project_id":"`:                       false,
		`{"status":"done","project_id":"x1"}`:   true,
		`{"error":"no projects left to judge"}`: false,
	} {
		if got := hasProjectID([]byte(body)); got != want {
			t.Errorf("%s: %v, want %v", body, got, want)
		}
	}
}
