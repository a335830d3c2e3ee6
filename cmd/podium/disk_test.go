package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFullDiskStartsReadOnlyAndHeals starts the real binary on a full filesystem (a
// small tmpfs filled up; where mounting is not allowed, an injected ENOSPC in the
// journal file layer while a marker file exists): it comes up read-only instead of
// crashing, serves reads, answers changes and /readyz with 503 and logs the cause once.
// Once space is freed it accepts changes again by itself, and they survive SIGTERM and
// a restart.
func TestFullDiskStartsReadOnlyAndHeals(t *testing.T) {
	base := t.TempDir()
	mounted := exec.Command("mount", "-t", "tmpfs", "-o", "size=160m", "tmpfs", base).Run() == nil
	dir := filepath.Join(base, "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var env []string
	free := filepath.Join(base, "filler")
	if mounted {
		t.Cleanup(func() { exec.Command("umount", "-l", base).Run() })
		f, err := os.Create(free)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1<<20)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
		f.Close()
	} else {
		t.Log("cannot mount a tmpfs: injecting ENOSPC into the journal while a marker file exists")
		os.WriteFile(free, nil, 0o600)
		env = append(env, "PODIUM_TEST_JOURNAL_FAULT_FILE="+free)
	}
	p := startBinary(t, dir, env...)
	if code, _, err := p.req("GET", "/readyz", nil, ""); err != nil || code != 503 {
		t.Fatalf("/readyz on a full disk: %d %v, want 503", code, err)
	}
	p.must("GET", "/api/project/list", nil, "")
	for i := 0; i < 3; i++ {
		code, b, err := p.req("POST", "/api/project/new", map[string]any{"name": "Alpha"}, "")
		if err != nil || code != 503 {
			t.Fatalf("change on a full disk: %d %v %s, want 503", code, err, b)
		}
	}
	p.mu.Lock()
	out := p.out.String()
	p.mu.Unlock()
	if n := strings.Count(out, "journal write failed"); n != 1 || !strings.Contains(out, "no space left on device") {
		t.Fatalf("want the cause logged once, got %d times:\n%s", n, out)
	}
	os.Remove(free)
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, _, _ := p.req("GET", "/readyz", nil, "")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still not ready 15 s after space was freed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.must("POST", "/api/project/new", map[string]any{"name": "Alpha"}, "")
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.out.String())
	}
	p2 := startBinary(t, dir, env...)
	if b := p2.must("GET", "/api/project/list", nil, ""); !strings.Contains(string(b), `"Alpha"`) {
		t.Fatalf("the change made after healing is gone: %s", b)
	}
}

// TestSIGTERMWithDataDirGoneExitsNonZero: when the final snapshot cannot be written
// (here the data directory was removed), shutdown logs why and exits non-zero within
// the 10 s bound instead of hanging or pretending success.
func TestSIGTERMWithDataDirGoneExitsNonZero(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p := startBinary(t, dir, "LOG_LEVEL=info")
	p.must("POST", "/api/project/new", map[string]any{"name": "Alpha"}, "")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("no exit 30 s after SIGTERM")
	}
	p.mu.Lock()
	out := p.out.String()
	p.mu.Unlock()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("exit: %v, want a non-zero status\n%s", err, out)
	}
	if !strings.Contains(out, "shutdown incomplete") {
		t.Errorf("no log line saying why:\n%s", out)
	}
	t.Logf("exited with %d after %s", ee.ExitCode(), time.Since(start).Round(time.Millisecond))
}

// TestCloseWithinGivesUp: a close that hangs (Badger retrying its final flush forever)
// is abandoned after the bound with an error naming it.
func TestCloseWithinGivesUp(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	err := closeWithin(50*time.Millisecond, func() error { <-block; return nil })
	if err == nil || !strings.Contains(err.Error(), "did not finish within 50ms") {
		t.Fatalf("err = %v", err)
	}
	if err := closeWithin(time.Second, func() error { return fmt.Errorf("boom") }); err == nil || err.Error() != "boom" {
		t.Fatalf("err = %v", err)
	}
}
