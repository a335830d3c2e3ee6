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

// journalSegments lists the journal segment files of a data directory.
func journalSegments(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "journal", "*.seg"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no journal segments in %s: %v", dir, err)
	}
	return m
}

// lastNonZero returns the end of the written part of a preallocated segment.
func lastNonZero(b []byte) int {
	i := len(b)
	for i > 0 && b[i-1] == 0 {
		i--
	}
	return i
}

func treeHash(t *testing.T, dir string) string {
	t.Helper()
	var sb strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			fmt.Fprintf(&sb, "%s %d %x\n", p, len(b), b)
		}
		return nil
	})
	return sb.String()
}

// TestCorruptJournalRefusesStartTouchingNothing: 40 acknowledged creations, SIGKILL,
// eight bytes flipped in the middle of the journal: the binary refuses to start (exit
// status 1) with a message naming segment, offset and record, and every file of the
// data directory is byte for byte what it was.
func TestCorruptJournalRefusesStartTouchingNothing(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, dir)
	for i := 0; i < 40; i++ {
		p.must("POST", "/api/project/new", map[string]any{"name": fmt.Sprint("Project ", i)}, "")
	}
	p.kill()
	seg := journalSegments(t, dir)[0]
	b, _ := os.ReadFile(seg)
	mid := lastNonZero(b) / 2
	for i := mid; i < mid+8; i++ {
		b[i] ^= 0xff
	}
	os.WriteFile(seg, b, 0o600)
	before := treeHash(t, dir)
	cmd := exec.Command(podiumBinary(t))
	cmd.Env = append(os.Environ(), "PORT=0", "DATA_DIR="+dir, "ADMIN_PASSWORD="+killPassword)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("start on a corrupt journal: %v, want exit status 1\n%s", err, out)
	}
	for _, want := range []string{"corrupt", seg, "offset ", "record "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("message lacks %q:\n%s", want, out)
		}
	}
	if treeHash(t, dir) != before {
		t.Fatal("the refused start changed files in the data directory")
	}
}

// TestTornJournalTailStartsWithWarning: half a record after the last acknowledged one
// (a crash in the middle of a write) is dropped with a warning; every acknowledged
// change is there.
func TestTornJournalTailStartsWithWarning(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, dir)
	for i := 0; i < 20; i++ {
		p.must("POST", "/api/project/new", map[string]any{"name": fmt.Sprint("Project ", i)}, "")
	}
	p.ratingsCurrent() // no fit lands between the capture and the kill
	want := p.must("GET", "/api/project/list", nil, "")
	p.kill()
	segs := journalSegments(t, dir)
	seg := segs[len(segs)-1]
	b, _ := os.ReadFile(seg)
	end := (lastNonZero(b) + 7) &^ 7
	f, _ := os.OpenFile(seg, os.O_RDWR, 0)
	f.WriteAt([]byte("\x01\x02\x03\x04\x00\x01\x00\x00\x15\x00\x00\x00\x00\x00\x00\x00{\"k\":\"project.cr"), int64(end))
	f.Close()
	p2 := startBinary(t, dir)
	if got := p2.must("GET", "/api/project/list", nil, ""); string(got) != string(want) {
		t.Fatalf("projects after dropping the torn tail:\n%s\nwant\n%s", got, want)
	}
	p2.mu.Lock()
	out := p2.out.String()
	p2.mu.Unlock()
	if !strings.Contains(out, "torn") || !strings.Contains(out, seg) {
		t.Errorf("no warning naming the segment:\n%s", out)
	}
	p2.must("POST", "/api/project/new", map[string]any{"name": "after"}, "")
}
