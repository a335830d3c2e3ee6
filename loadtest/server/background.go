package server

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// Background is a server process whose output goes straight to a file (a pipe read by
// this tool would cost the shared CPU for every request log line).
type Background struct {
	cmd  *exec.Cmd
	addr string
	out  string
}

// StartBackground runs args with env, sending its output to a temp file, and waits for a line
// matching re (whose first group is the listen address).
func StartBackground(args, env []string, re *regexp.Regexp) (*Background, error) {
	f, err := os.CreateTemp("", "podium-ratio-*.log")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", args[0], err)
	}
	p := &Background{cmd: cmd, out: f.Name()}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(f.Name())
		if m := re.FindSubmatch(b); m != nil {
			p.addr = string(m[1])
			if strings.HasPrefix(p.addr, "[::]:") || strings.HasPrefix(p.addr, "0.0.0.0:") {
				p.addr = "127.0.0.1:" + p.addr[strings.LastIndexByte(p.addr, ':')+1:]
			}
			return p, nil
		}
	}
	p.Stop()
	return nil, fmt.Errorf("%s did not start; see %s", args[0], f.Name())
}

// PID is the process id.
func (p *Background) PID() int { return p.cmd.Process.Pid }

// Stop interrupts the process and waits for it to end (SIGKILL after 20 s).
func (p *Background) Stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// Addr is the listen address the process printed (a wildcard host made 127.0.0.1).
func (p *Background) Addr() string { return p.addr }

// LogPath is the file that holds the process's output.
func (p *Background) LogPath() string { return p.out }
