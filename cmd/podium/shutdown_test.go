package main

import (
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERMShutsDownGracefully: SIGTERM stops the server with exit status 0 after
// writing a snapshot (docs/behaviour.md#state-durability-and-recovery), so the next start replays no journal record and every
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

func adminLoginStatus(t *testing.T, base, password string) int {
	t.Helper()
	resp, err := http.Post(base+"/api/admin/login", "application/json", strings.NewReader(`{"password":"`+password+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestGeneratedAdminPassword: without ADMIN_PASSWORD / JURY_ADMIN_PASSWORD the first
// start generates a password, prints it once and keeps it in the data directory; the
// next start uses it without printing it; JURY_ADMIN_PASSWORD is honoured.
func TestGeneratedAdminPassword(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, dir, "ADMIN_PASSWORD=")
	// The password block (on stderr, a plain block for a person) follows the address line: wait for it.
	re := regexp.MustCompile(`Podium admin password \(generated at this first start\):\s+(\S+)\s`)
	var out string
	var m []string
	for deadline := time.Now().Add(10 * time.Second); m == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		p.mu.Lock()
		out = p.out.String()
		p.mu.Unlock()
		m = re.FindStringSubmatch(out)
	}
	if m == nil {
		t.Fatalf("no generated password printed:\n%s", out)
	}
	pw := m[1]
	if c := adminLoginStatus(t, p.base, pw); c != 200 {
		t.Fatalf("login with the generated password: %d", c)
	}
	if c := adminLoginStatus(t, p.base, killPassword); c != 400 {
		t.Fatalf("login with another password: %d", c)
	}
	p.kill()
	p2 := startBinary(t, dir, "ADMIN_PASSWORD=", "LOG_LEVEL=debug") // successful requests log at debug
	if c := adminLoginStatus(t, p2.base, pw); c != 200 {
		t.Fatalf("login with the stored password after restart: %d", c)
	}
	// Requests are served only after the startup lines are printed, so once the
	// request's log line is there, a password line would be too.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		p2.mu.Lock()
		out = p2.out.String()
		p2.mu.Unlock()
		if strings.Contains(out, `"route":"/api/admin/login"`) {
			break
		}
	}
	if !strings.Contains(out, `"route":"/api/admin/login"`) || strings.Contains(out, pw) {
		t.Errorf("the stored password was printed again (or no request log):\n%s", out)
	}
	p2.kill()
	p3 := startBinary(t, dir, "ADMIN_PASSWORD=", "JURY_ADMIN_PASSWORD=jury-secret")
	if c := adminLoginStatus(t, p3.base, "jury-secret"); c != 200 {
		t.Fatalf("JURY_ADMIN_PASSWORD not honoured: %d", c)
	}
}

// TestBadConfigurationStopsStartup: an invalid PORT, LOG_LEVEL or LOG_FORMAT is a clear
// startup error (exit status 1 naming the variable), never a server on a default.
func TestBadConfigurationStopsStartup(t *testing.T) {
	for _, bad := range []string{"PORT=abc", "LOG_LEVEL=loud", "LOG_FORMAT=xml", "MAX_WS_CONNECTIONS=many"} {
		cmd := exec.Command(podiumBinary(t))
		cmd.Env = append(os.Environ(), "DATA_DIR="+t.TempDir(), "ADMIN_PASSWORD=x", bad)
		out, err := cmd.CombinedOutput()
		name := strings.SplitN(bad, "=", 2)[0]
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), name) {
			t.Errorf("%s: err %v, output %q", bad, err, out)
		}
	}
}
