package server

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fakePodium writes a script that prints podium's listening line with a wildcard host,
// reports its data directory and one extra setting on stderr, and waits.
func fakePodium(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "podium")
	script := "#!/bin/sh\necho \"data=$DATA_DIR port=$PORT extra=$EXTRA\" >&2\necho 'podium listening on http://[::]:4321'\nexec sleep 60\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestProcessStartKillRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	logPath := filepath.Join(t.TempDir(), "server.log")
	p, err := New(fakePodium(t), dir, logPath, []string{"EXTRA=yes", "PORT=7"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !p.Exited() {
		t.Fatal("a process never started counts as exited")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for start := 1; start <= 2; start++ {
		if err := p.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if p.Addr() != "127.0.0.1:4321" || p.URL() != "http://127.0.0.1:4321" || p.PID() == 0 || p.Exited() {
			t.Fatalf("start %d: addr %q url %q pid %d exited %v", start, p.Addr(), p.URL(), p.PID(), p.Exited())
		}
		if !Alive(p.PID()) || RSS(p.PID()) <= 0 {
			t.Fatalf("start %d: pid %d not seen running (RSS %d)", start, p.PID(), RSS(p.PID()))
		}
		p.Kill()
		if !p.Exited() || Alive(p.PID()) {
			t.Fatalf("start %d: still running after Kill", start)
		}
	}
	b, _ := os.ReadFile(logPath)
	if want := "data=" + dir + " port=7 extra=yes"; strings.Count(string(b), want) != 2 {
		t.Fatalf("log %q: want %q twice (env given last wins over PORT=0)", b, want)
	}
}

func TestBackgroundFindsAddress(t *testing.T) {
	p, err := StartBackground([]string{"sh", "-c", "echo 'baseline listening on http://0.0.0.0:5555'; exec sleep 60"}, nil,
		regexp.MustCompile(`baseline listening on http://(\S+)`))
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(p.LogPath())
	if p.Addr() != "127.0.0.1:5555" || p.PID() == 0 {
		t.Fatalf("addr %q pid %d", p.Addr(), p.PID())
	}
	p.Stop()
	if Alive(p.PID()) {
		t.Fatal("still running after Stop")
	}
}

func TestOwnProcessFigures(t *testing.T) {
	if RSS(os.Getpid()) <= 0 || RSS(0) != 0 {
		t.Fatalf("RSS: own %d, pid 0 %d", RSS(os.Getpid()), RSS(0))
	}
	if CPU(os.Getpid()) < 0 || SelfCPU() < 0 {
		t.Fatal("negative CPU time")
	}
	if idle, total := MachineCPU(); total <= 0 || idle > total {
		t.Fatalf("machine CPU: idle %v of %v", idle, total)
	}
	if strings.Count(LoadAvg(), " ") != 2 {
		t.Fatalf("load average %q", LoadAvg())
	}
}
