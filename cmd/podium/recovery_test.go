package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestRecoveryTimes measures, through the binary, how long a start takes until /readyz
// answers 200 (from the process's start), median of 3 each: on an empty data
// directory; on $PODIUM_RECOVERY_FIXTURE as a kill -9 leaves it (10,000 projects, 5,000
// judges × 20 views, a snapshot and 40,000 journal records after it); and a clean
// restart after SIGTERM (the final snapshot covers everything). Skipped without the
// fixture (docs/performance.md); $PODIUM_BENCH_BINARY measures another build:
//
//	PODIUM_RECOVERY_FIXTURE=/tmp/recovery-fixture go test ./persist -run WriteRecoveryFixture
//	PODIUM_RECOVERY_FIXTURE=/tmp/recovery-fixture go test ./cmd/podium -run RecoveryTimes -v
func TestRecoveryTimes(t *testing.T) {
	fixture := os.Getenv("PODIUM_RECOVERY_FIXTURE")
	if fixture == "" {
		t.Skip("PODIUM_RECOVERY_FIXTURE not set")
	}
	bin := benchBinary(t)
	var empty, killed, clean, cpuEmpty, cpuKilled, cpuClean []time.Duration
	for round := 0; round < 3; round++ {
		d, p := timedStart(t, bin, t.TempDir())
		empty, cpuEmpty = append(empty, d), append(cpuEmpty, procCPU(t, p))
		p.kill()

		dir := filepath.Join(t.TempDir(), "data")
		if out, err := exec.Command("cp", "-a", fixture, dir).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		d, p = timedStart(t, bin, dir)
		killed, cpuKilled = append(killed, d), append(cpuKilled, procCPU(t, p))
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("SIGTERM: %v", err)
		}
		d, p = timedStart(t, bin, dir)
		clean, cpuClean = append(clean, d), append(cpuClean, procCPU(t, p))
		p.kill()
	}
	median := func(ds []time.Duration) string {
		s := slices.Clone(ds)
		slices.Sort(s)
		return fmt.Sprintf("%d ms (%v)", s[len(s)/2].Milliseconds(), ds)
	}
	t.Logf("start → /readyz 200: empty directory %s; after kill -9 %s; clean restart %s", median(empty), median(killed), median(clean))
	t.Logf("server CPU until then: empty directory %s; after kill -9 %s; clean restart %s", median(cpuEmpty), median(cpuKilled), median(cpuClean))
}

// procCPU returns the CPU time (user + system) the server process has used so far.
func procCPU(t *testing.T, p *proc) time.Duration { return pidCPU(t, p.cmd.Process.Pid) }

// benchBinary is $PODIUM_BENCH_BINARY (another build to measure), else this tree's.
func benchBinary(t *testing.T) string {
	if bin := os.Getenv("PODIUM_BENCH_BINARY"); bin != "" {
		return bin
	}
	return podiumBinary(t)
}

// timedStart starts the binary bin on dir and returns how long /readyz took to answer
// 200 from the process's start.
func timedStart(t *testing.T, bin, dir string) (time.Duration, *proc) {
	t.Helper()
	t0 := time.Now()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PORT=0", "DATA_DIR="+dir, "ADMIN_PASSWORD="+killPassword, "LOG_LEVEL=warn")
	p := startCmd(t, cmd)
	for {
		code, _, err := p.req("GET", "/readyz", nil, "")
		if err == nil && code == 200 {
			return time.Since(t0), p
		}
		if time.Since(t0) > time.Minute {
			t.Fatalf("not ready after a minute (%d %v)", code, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
