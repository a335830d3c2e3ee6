package loadtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// serverProc is a podium binary started by the tool (managed mode).
type serverProc struct {
	bin, dir string
	env      []string
	cmd      *exec.Cmd
	addr     string // host:port
	done     chan struct{}
	logMu    sync.Mutex
	log      *os.File
	exitErr  error
	starts   int
}

// RaiseFDLimit lifts the soft open-files limit to the hard limit so that thousands of
// sockets fit; the server started by the tool inherits it.
func RaiseFDLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return lim.Cur, err
		}
	}
	return lim.Cur, nil
}

func newServerProc(bin, dir, logPath, password, apiKey, logLevel string, extra []string) (*serverProc, error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("server binary: %w", err)
	}
	env := append(os.Environ(),
		"DATA_DIR="+dir,
		"PORT=0",
		"ADMIN_PASSWORD="+password,
		"LOG_LEVEL="+logLevel,
		"TRUSTED_PROXIES=127.0.0.1,::1",
		// Zero think time makes a simulated judge write far faster than a person can
		// (the server's default is 10 writes a second per judge): measure throughput.
		"JUDGE_WRITES_PER_SEC=100000",
	)
	if apiKey != "" {
		env = append(env, "PUBLIC_API_KEY="+apiKey)
	}
	env = append(env, extra...)
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("server log: %w", err)
	}
	return &serverProc{bin: abs, dir: dir, env: env, log: f}, nil
}

// start runs the binary and waits for its "podium listening on http://ADDR" line.
func (s *serverProc) start(ctx context.Context) error {
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
	s.starts++
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
			s.kill()
			return fmt.Errorf("parse listen address %q: %w", a, err)
		}
		if host == "" || host == "::" || host == "0.0.0.0" || host == "[::]" {
			host = "127.0.0.1"
		}
		s.addr = net.JoinHostPort(host, port)
		return nil
	case <-s.done:
		return fmt.Errorf("server exited before listening: %v (log: %s)", s.exitErr, s.log.Name())
	case <-ctx.Done():
		s.kill()
		return ctx.Err()
	case <-time.After(60 * time.Second):
		s.kill()
		return fmt.Errorf("server did not print its listen address within 60 s (log: %s)", s.log.Name())
	}
}

func (s *serverProc) url() string { return "http://" + s.addr }

func (s *serverProc) pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *serverProc) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// stop sends SIGTERM (graceful shutdown) and waits up to 30 s, then SIGKILLs.
func (s *serverProc) stop() error {
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
		s.kill()
		return fmt.Errorf("server did not stop within 30 s of SIGTERM; killed")
	}
	return nil
}

func (s *serverProc) close() {
	if s.log != nil {
		s.log.Close()
	}
}

// procRSS reads VmRSS of pid from /proc (bytes); 0 when unavailable.
func procRSS(pid int) int64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// metricsRSS reads process_resident_memory_bytes from GET /metrics; 0 when unavailable.
func metricsRSS(ctx context.Context, c *client) int64 {
	var body []byte
	if err := c.do(ctx, "GET", "/metrics", "/metrics", asAnon, nil, &body); err != nil {
		return 0
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "process_resident_memory_bytes ") {
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, "process_resident_memory_bytes ")), 64)
			if err == nil {
				return int64(v)
			}
		}
	}
	return 0
}

// procCPU returns the user+system CPU seconds used so far by pid (0 when unavailable).
func procCPU(pid int) float64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ is 100 on Linux
}

// selfCPU returns the CPU seconds used so far by this process.
func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// machineCPU returns the machine's idle and total CPU time so far in USER_HZ ticks
// (the first line of /proc/stat, all CPUs): idle counts idle and iowait, total every
// field up to steal. Zero when /proc/stat cannot be read.
func machineCPU() (idle, total float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0
	}
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		x, _ := strconv.ParseFloat(v, 64)
		total += x
		if i == 3 || i == 4 {
			idle += x
		}
	}
	return idle, total
}

// loadAvg returns the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// fsyncProbe times n 4 KiB write+fsync pairs in dir: the floor under every durable
// write the server acknowledges on this disk.
func fsyncProbe(dir string, n int) Latency {
	f, err := os.CreateTemp(dir, "fsync-probe-*")
	if err != nil {
		return Latency{}
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 4096)
	d := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t := time.Now()
		if _, err := f.WriteAt(buf, int64(i)*4096); err != nil {
			break
		}
		if err := f.Sync(); err != nil {
			break
		}
		d = append(d, time.Since(t))
	}
	return summarize(d)
}
