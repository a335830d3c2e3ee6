package main

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startUnderFileLimit runs the binary with soft and hard open-file limits of n (set by
// the shell, as a supervisor or container would).
func startUnderFileLimit(t *testing.T, n string, extraEnv ...string) *proc {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "ulimit -n "+n+" && exec \"$0\"", podiumBinary(t))
	cmd.Env = append(os.Environ(), "PORT=0", "DATA_DIR="+t.TempDir(), "ADMIN_PASSWORD="+killPassword, "LOG_LEVEL=info")
	cmd.Env = append(cmd.Env, extraEnv...)
	return startCmd(t, cmd)
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// TestOutOfFileDescriptorsKeepsServing: more connections than the process may have
// files make accept fail with EMFILE; the server retries instead of returning from its
// accept loop (which used to end the process with status 0), and serves again once the
// connections are gone.
func TestOutOfFileDescriptorsKeepsServing(t *testing.T) {
	p := startUnderFileLimit(t, "128")
	var conns []net.Conn
	for i := 0; i < 200; i++ {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(p.base, "http://"), time.Second)
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	// Give the accept loop time to hit the limit (the kernel queues connections the
	// process cannot accept yet).
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.output(), "accept failed") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(p.output(), "accept failed") {
		t.Fatalf("no accept failure logged with %d connections open; output:\n%s", len(conns), p.output())
	}
	for _, c := range conns {
		_ = c.Close()
	}
	// Back to normal: requests are answered and the process is still there.
	var code int
	var err error
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if code, _, err = p.req("GET", "/healthz", nil, ""); err == nil && code == 200 {
			break
		}
	}
	if err != nil || code != 200 {
		t.Fatalf("after the connections closed: %d %v\n%s", code, err, p.output())
	}
	if err := p.cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("process gone: %v", err)
	}
}

// TestWSCapClampedToFileLimit: MAX_WS_CONNECTIONS above the file limit is lowered (and
// logged) so that websockets cannot use the descriptors HTTP needs.
func TestWSCapClampedToFileLimit(t *testing.T) {
	p := startUnderFileLimit(t, "512", "MAX_WS_CONNECTIONS=20000")
	out := p.output()
	if !strings.Contains(out, "MAX_WS_CONNECTIONS lowered") || !strings.Contains(out, `"clamped_to":410`) {
		t.Fatalf("no clamp logged:\n%s", out)
	}
}

// TestCORSWildcardRefusedAtStartup: a wildcard in CORS_ORIGINS stops startup with one
// line and a non-zero status (no panic trace).
func TestCORSWildcardRefusedAtStartup(t *testing.T) {
	cmd := exec.Command(podiumBinary(t))
	cmd.Env = append(os.Environ(), "PORT=0", "DATA_DIR="+t.TempDir(), "ADMIN_PASSWORD=x", "CORS_ORIGINS=https://a.example,*")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err == nil || !asExit(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "CORS_ORIGINS") || strings.Contains(string(out), "panic") {
		t.Fatalf("output:\n%s", out)
	}
}

func asExit(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}
