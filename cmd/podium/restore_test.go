package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listEndpoints are compared before a backup and after restoring it.
var listEndpoints = []string{
	"/api/judge/list", "/api/project/list", "/api/project/list/public", "/api/admin/options",
	"/api/admin/flags", "/api/challenges", "/api/group-info", "/api/admin/stats",
}

// snapshotLists waits until the background ratings fit has seen every change (the
// lists carry rank and p_top, which a fit landing between two captures would change),
// then reads every list endpoint.
func (p *proc) snapshotLists() map[string]string {
	p.t.Helper()
	p.ratingsCurrent()
	out := map[string]string{}
	for _, path := range listEndpoints {
		out[path] = string(p.must("GET", path, nil, ""))
	}
	return out
}

// ratingsCurrent waits until /metrics says no change awaits a ratings fit (docs/behaviour.md#ratings:
// the fit runs in the background, a second or so after the last change).
func (p *proc) ratingsCurrent() {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, b, err := p.req("GET", "/metrics", nil, "")
		if err == nil && strings.Contains(string(b), "\npodium_ratings_pending_changes 0\n") {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("ratings still not fitted after 30 s (err %v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// download fetches GET path as admin into file.
func (p *proc) download(path, file string) {
	p.t.Helper()
	req, _ := http.NewRequest("GET", p.base+path, nil)
	req.SetBasicAuth("admin", killPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		p.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	f, err := os.Create(file)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		p.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		p.t.Fatal(err)
	}
}

func runRestore(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(podiumBinary(t), append([]string{"restore"}, args...)...).CombinedOutput()
	return string(out), err
}

// TestRestoreBackupThroughBinary takes a backup with POST /api/admin/backup, downloads
// it, restores it with `podium restore` into an empty directory and starts the server
// on that directory: every list endpoint is back byte for byte, later changes work, and
// the restored server survives its own restart.
func TestRestoreBackupThroughBinary(t *testing.T) {
	src := startBinary(t, t.TempDir())
	src.must("POST", "/api/admin/tracks", map[string]any{"tracks": []string{"AI", "Web"}}, "")
	var j struct{ ID string }
	json.Unmarshal(src.must("POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@example.com", "notes": "n", "no_send": true}, ""), &j)
	src.must("POST", "/api/judge/new", map[string]any{"name": "Bob", "email": "bob@example.com", "track": "AI", "no_send": true}, "")
	for _, name := range []string{"Alpha", "Beta", "Gamma"} {
		src.must("POST", "/api/project/new", map[string]any{"name": name, "challenge_list": "AI, Web"}, "")
	}
	src.must("PUT", "/api/judge/hide/"+j.ID, nil, "")
	src.must("POST", "/api/admin/clock/unpause", nil, "")
	src.must("POST", "/api/admin/clock/pause", nil, "")
	want := src.snapshotLists()

	var b struct {
		OK     int    `json:"ok"`
		Backup string `json:"backup"`
	}
	json.Unmarshal(src.must("POST", "/api/admin/backup", nil, ""), &b)
	if b.OK != 1 || b.Backup == "" {
		t.Fatalf("backup answer %+v", b)
	}
	file := filepath.Join(t.TempDir(), b.Backup)
	src.download("/api/admin/backup/"+b.Backup, file)
	// A change after the backup must not be in the restored state.
	src.must("POST", "/api/project/new", map[string]any{"name": "After backup"}, "")
	src.kill()

	// Restoring into a non-empty directory is refused and leaves it alone.
	busy := t.TempDir()
	os.WriteFile(filepath.Join(busy, "keep"), []byte("x"), 0o600)
	if out, err := runRestore(t, file, busy); err == nil {
		t.Fatalf("restore into a non-empty directory succeeded: %s", out)
	}
	// A file that is not a backup is refused.
	junk := filepath.Join(t.TempDir(), "junk.json.gz")
	os.WriteFile(junk, []byte("not a backup"), 0o600)
	if out, err := runRestore(t, junk, filepath.Join(t.TempDir(), "d")); err == nil {
		t.Fatalf("restore of a junk file succeeded: %s", out)
	}

	dst := filepath.Join(t.TempDir(), "restored")
	if out, err := runRestore(t, file, dst); err != nil {
		t.Fatalf("podium restore: %v\n%s", err, out)
	}
	p := startBinary(t, dst)
	got := p.snapshotLists()
	for _, path := range listEndpoints {
		if got[path] != want[path] {
			t.Errorf("%s after restore:\n got %s\nwant %s", path, got[path], want[path])
		}
	}
	// The restored server takes changes and keeps them across its own restart.
	p.must("POST", "/api/project/new", map[string]any{"name": "Delta"}, "")
	after := p.snapshotLists()
	p.kill()
	p2 := startBinary(t, dst)
	again := p2.snapshotLists()
	for _, path := range listEndpoints {
		if again[path] != after[path] {
			t.Errorf("%s after restart of the restored server:\n got %s\nwant %s", path, again[path], after[path])
		}
	}
	if !strings.Contains(again["/api/project/list"], `"Delta"`) || strings.Contains(again["/api/project/list"], "After backup") {
		t.Fatalf("restored project list is wrong: %s", again["/api/project/list"])
	}
}

// TestRestorePreResetBackup restores the backup that POST /api/admin/reset writes: the
// state before the reset comes back.
func TestRestorePreResetBackup(t *testing.T) {
	src := startBinary(t, t.TempDir())
	src.must("POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@example.com", "no_send": true}, "")
	src.must("POST", "/api/project/new", map[string]any{"name": "Alpha"}, "")
	want := src.snapshotLists()
	var r struct {
		OK     int    `json:"ok"`
		Backup string `json:"backup"`
	}
	json.Unmarshal(src.must("POST", "/api/admin/reset", nil, ""), &r)
	if r.OK != 1 || r.Backup == "" {
		t.Fatalf("reset answer %+v", r)
	}
	if l := string(src.must("GET", "/api/project/list", nil, "")); l != "[]" {
		t.Fatalf("projects after reset: %s", l)
	}
	file := filepath.Join(t.TempDir(), r.Backup)
	src.download("/api/admin/backup/"+r.Backup, file)
	src.kill()

	dst := t.TempDir() // exists and is empty
	if out, err := runRestore(t, file, dst); err != nil {
		t.Fatalf("podium restore: %v\n%s", err, out)
	}
	p := startBinary(t, dst)
	got := p.snapshotLists()
	for _, path := range listEndpoints {
		if got[path] != want[path] {
			t.Errorf("%s after restoring the pre-reset backup:\n got %s\nwant %s", path, got[path], want[path])
		}
	}
}

// TestRestoreKeepsRunningClockAtBackupTime: with clock_sync off, a clock that was
// running when the backup was taken comes back paused at the backup's time, not at the
// time of the restore (the downtime between backup and restore is not judging time).
func TestRestoreKeepsRunningClockAtBackupTime(t *testing.T) {
	src := startBinary(t, t.TempDir())
	src.must("POST", "/api/admin/options", map[string]any{"clock_sync": false}, "")
	src.must("POST", "/api/admin/clock/unpause", nil, "")
	w0 := time.Now()
	var c0 struct {
		Running bool  `json:"running"`
		Time    int64 `json:"time"`
	}
	json.Unmarshal(src.must("GET", "/api/admin/clock", nil, ""), &c0)
	var b struct{ Backup string }
	json.Unmarshal(src.must("POST", "/api/admin/backup", nil, ""), &b)
	slack := time.Since(w0).Milliseconds() + 1
	file := filepath.Join(t.TempDir(), b.Backup)
	src.download("/api/admin/backup/"+b.Backup, file)
	src.kill()
	time.Sleep(1500 * time.Millisecond) // downtime that must not count

	dst := filepath.Join(t.TempDir(), "restored")
	if out, err := runRestore(t, file, dst); err != nil {
		t.Fatalf("podium restore: %v\n%s", err, out)
	}
	p := startBinary(t, dst)
	var c1 struct {
		Running bool  `json:"running"`
		Time    int64 `json:"time"`
	}
	json.Unmarshal(p.must("GET", "/api/admin/clock", nil, ""), &c1)
	if c1.Running {
		t.Fatalf("clock_sync is off but the restored clock runs: %+v", c1)
	}
	if c1.Time < c0.Time || c1.Time > c0.Time+slack {
		t.Fatalf("restored clock at %d ms; the backup was taken at %d..%d ms", c1.Time, c0.Time, c0.Time+slack)
	}
}
