package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const killPassword = "kill-test-password"

// buildBinary compiles ./cmd/podium once per test binary run.
var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func podiumBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "podium-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "podium")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// proc is a running podium binary.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string
	out  *bytes.Buffer
	mu   *sync.Mutex
}

func startBinary(t *testing.T, dataDir string, extraEnv ...string) *proc {
	t.Helper()
	cmd := exec.Command(podiumBinary(t))
	cmd.Env = append(os.Environ(), "PORT=0", "DATA_DIR="+dataDir, "ADMIN_PASSWORD="+killPassword, "LOG_LEVEL=warn")
	cmd.Env = append(cmd.Env, extraEnv...)
	return startCmd(t, cmd)
}

// startCmd starts a prepared podium command and waits for its listening line.
func startCmd(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, out: &bytes.Buffer{}, mu: &sync.Mutex{}}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.out.WriteString(line + "\n")
			p.mu.Unlock()
			if rest, ok := strings.CutPrefix(line, "podium listening on "); ok {
				addr <- rest // http://[::]:port, or https:// with TLS settings
			}
		}
	}()
	select {
	case a := <-addr:
		scheme, _, _ := strings.Cut(a, "://")
		port := a[strings.LastIndex(a, ":")+1:]
		p.base = scheme + "://127.0.0.1:" + port
	case <-time.After(30 * time.Second):
		p.mu.Lock()
		defer p.mu.Unlock()
		t.Fatalf("server did not start; output:\n%s", p.out.String())
	}
	return p
}

func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
}

func (p *proc) req(method, path string, body any, token string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, p.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	} else {
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("admin:"+killPassword)))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func (p *proc) must(method, path string, body any, token string) []byte {
	p.t.Helper()
	code, b, err := p.req(method, path, body, token)
	if err != nil || code != 200 {
		p.t.Fatalf("%s %s: %d %v %s", method, path, code, err, b)
	}
	return b
}

// TestSIGKILLKeepsAcknowledgedChanges makes changes, kills the server with SIGKILL and
// restarts it on the same directory: every list endpoint comes back byte for byte.
func TestSIGKILLKeepsAcknowledgedChanges(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, dir)
	var tokens []string
	for i := 0; i < 15; i++ {
		p.must("POST", "/api/judge/new", map[string]any{"name": fmt.Sprint("Judge ", i), "email": fmt.Sprintf("j%d@example.com", i), "notes": "n", "no_send": true}, "")
	}
	for i := 0; i < 25; i++ {
		p.must("POST", "/api/project/new", map[string]any{"name": fmt.Sprint("Project ", i), "description": "d", "challenge_list": "AI, Web"}, "")
	}
	var judges []struct{ Code string }
	json.Unmarshal(p.must("GET", "/api/judge/list", nil, ""), &judges)
	for _, j := range judges[:5] {
		var res struct{ Token string }
		json.Unmarshal(p.must("POST", "/api/judge/login", map[string]string{"code": j.Code}, "x"), &res)
		tokens = append(tokens, res.Token)
	}
	p.must("POST", "/api/admin/clock/unpause", nil, "")
	lists := []string{"/api/judge/list", "/api/project/list", "/api/project/list/public", "/api/challenges", "/api/group-info"}
	p.ratingsCurrent() // no fit lands between the capture and the kill
	before := map[string][]byte{}
	for _, l := range lists {
		before[l] = p.must("GET", l, nil, "")
	}
	p.kill()

	p2 := startBinary(t, dir)
	for _, l := range lists {
		if got := p2.must("GET", l, nil, ""); !bytes.Equal(got, before[l]) {
			t.Errorf("%s differs after SIGKILL restart:\nbefore %s\nafter  %s", l, before[l], got)
		}
	}
	// Sessions survive: the judges' tokens still work.
	for _, tok := range tokens {
		p2.must("GET", "/api/judge", nil, tok)
	}
	// The clock through restarts: clock_test.go.
}

// TestSIGKILLUnderLoad kills the server while writers are busy: every project whose
// creation was acknowledged is there after the restart.
func TestSIGKILLUnderLoad(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, dir)
	var mu sync.Mutex
	acked := map[string]string{} // id -> name
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("w%d-%d", w, i)
				code, b, err := p.req("POST", "/api/project/new", map[string]any{"name": name}, "")
				if err != nil {
					return // the server is gone
				}
				if code == 200 {
					var res struct{ ID string }
					json.Unmarshal(b, &res)
					mu.Lock()
					acked[res.ID] = name
					mu.Unlock()
				}
			}
		}(w)
	}
	time.Sleep(400 * time.Millisecond)
	p.kill()
	close(stop)
	wg.Wait()
	mu.Lock()
	n := len(acked)
	mu.Unlock()
	if n == 0 {
		t.Fatal("no write was acknowledged before the kill")
	}

	p2 := startBinary(t, dir)
	var projects []struct{ ID, Name string }
	json.Unmarshal(p2.must("GET", "/api/project/list", nil, ""), &projects)
	have := map[string]string{}
	for _, pr := range projects {
		have[pr.ID] = pr.Name
	}
	lost := 0
	for id, name := range acked {
		if have[id] != name {
			lost++
		}
	}
	t.Logf("acknowledged %d creations before SIGKILL, %d present after restart", n, len(projects))
	if lost > 0 {
		t.Fatalf("%d acknowledged creations lost", lost)
	}
	// The server keeps working on the recovered directory.
	p2.must("POST", "/api/project/new", map[string]any{"name": "after restart"}, "")
}
