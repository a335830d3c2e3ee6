// Package server starts the Podium binary (or another listening process) for the load
// tools and reads what the kernel knows about it: resident memory, CPU time, whether it
// still runs. It speaks no HTTP: the tools reach the server through its address.
package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a podium binary the tool starts (and may kill and restart) on one data
// directory. Its output is copied to a log file; the tool learns its address from the
// "podium listening on http://ADDR" line.
type Process struct {
	bin, dir string
	env      []string
	cmd      *exec.Cmd
	addr     string // host:port
	done     chan struct{}
	logMu    sync.Mutex
	log      io.Writer
	logPath  string
	logFile  *os.File
	exitErr  error
}

// New prepares the binary bin to run on the data directory dir with PORT=0, DATA_DIR=dir
// and env (KEY=VALUE, later entries win) added to this process's environment. Its output
// is appended to logPath (empty: discarded). It does not start it.
func New(bin, dir, logPath string, env []string) (*Process, error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("server binary: %w", err)
	}
	full := append(os.Environ(), "DATA_DIR="+dir, "PORT=0")
	full = append(full, env...)
	p := &Process{bin: abs, dir: dir, env: full, log: io.Discard}
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("server log: %w", err)
		}
		p.log, p.logPath, p.logFile = f, logPath, f
	}
	return p, nil
}

// Start runs the binary and waits for its "podium listening on http://ADDR" line.
func (s *Process) Start(ctx context.Context) error {
	cmd := exec.Command(s.bin)
	cmd.Env = s.env
	cmd.Dir = filepath.Dir(s.dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = s.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	s.cmd = cmd
	s.done = make(chan struct{})
	addrCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		found := false
		for sc.Scan() {
			line := sc.Text()
			if !found {
				if i := strings.Index(line, "podium listening on http://"); i >= 0 {
					found = true
					addrCh <- strings.TrimSpace(line[i+len("podium listening on http://"):])
				}
			}
			s.logMu.Lock()
			fmt.Fprintln(s.log, line)
			s.logMu.Unlock()
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		s.exitErr = cmd.Wait()
		close(s.done)
	}()
	select {
	case a := <-addrCh:
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			s.Kill()
			return fmt.Errorf("parse listen address %q: %w", a, err)
		}
		if host == "" || host == "::" || host == "0.0.0.0" || host == "[::]" {
			host = "127.0.0.1"
		}
		s.addr = net.JoinHostPort(host, port)
		return nil
	case <-s.done:
		return fmt.Errorf("server exited before listening: %v (log: %s)%s", s.exitErr, s.logPath, s.logTail())
	case <-ctx.Done():
		s.Kill()
		return ctx.Err()
	case <-time.After(60 * time.Second):
		s.Kill()
		return fmt.Errorf("server did not print its listen address within 60 s (log: %s)", s.logPath)
	}
}

// URL is the server's base URL, http://HOST:PORT.
func (s *Process) URL() string { return "http://" + s.addr }

// PID is the process id of the running (or last) process; 0 before the first start.
func (s *Process) PID() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Kill sends SIGKILL and waits for the process to be gone.
func (s *Process) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// Stop sends SIGTERM (graceful shutdown) and waits up to 30 s, then SIGKILLs.
func (s *Process) Stop() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.Kill()
		return fmt.Errorf("server did not stop within 30 s of SIGTERM; killed")
	}
	return nil
}

// Close closes the log file.
func (s *Process) Close() {
	if s.logFile != nil {
		s.logFile.Close()
	}
}

// Addr is the server's listen address, host:port.
func (s *Process) Addr() string { return s.addr }

// Dir is the server's data directory.
func (s *Process) Dir() string { return s.dir }

// LogPath is the file the server's output goes to ("" when discarded).
func (s *Process) LogPath() string { return s.logPath }

// Exited reports whether the process has ended (or never started).
func (s *Process) Exited() bool {
	if s.done == nil {
		return true
	}
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// logTail returns the end of the server's log (its last 2 KiB), for an error that the
// log explains: a test's temporary directory is gone by the time anyone reads the path.
func (s *Process) logTail() string {
	if s.logPath == "" {
		return ""
	}
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return ""
	}
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	return "; the log ends:\n" + string(b)
}
