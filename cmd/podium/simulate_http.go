package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"podium/engine"
	"podium/engine/simulate"
)

// httpBackend is simulate.Backend for a real server over HTTP
// (docs/behaviour.md#simulation): the admin sets the event up through the admin API,
// each simulated judge logs in with its code and uses the judge API, and Current waits
// until podium_ratings_pending_changes on /metrics reads 0.
type httpBackend struct {
	base, metrics, auth string
	client              *http.Client
	tokens              []string
	reset               bool // a full reset first (a server given by -url)
}

// startedServer is a podium binary started for one simulated event, on its own data
// directory, with the ratings current at every assignment.
type startedServer struct {
	cmd *exec.Cmd
	dir string
}

// startServer starts the binary at path (this one when empty) on a fresh data directory
// with RATINGS_MIN_GAP=0 RATINGS_EVERY=1 and returns a backend driving it.
func startServer(path string) (*httpBackend, *startedServer, error) {
	if path == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, nil, err
		}
		path = self
	}
	dir, err := os.MkdirTemp("", "podium-simulate-")
	if err != nil {
		return nil, nil, err
	}
	var pw [18]byte
	if _, err := rand.Read(pw[:]); err != nil {
		return nil, nil, err
	}
	password := base64.RawURLEncoding.EncodeToString(pw[:])
	cmd := exec.Command(path, "serve")
	cmd.Env = append(os.Environ(), "PORT=0", "DATA_DIR="+dir, "ADMIN_PASSWORD="+password, "LOG_LEVEL=warn",
		"METRICS_ADDR=", "RATINGS_MIN_GAP=0", "RATINGS_EVERY=1", "JUDGE_WRITES_PER_SEC=1000")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	srv := &startedServer{cmd: cmd, dir: dir}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "podium listening on http://"); ok {
				addr <- rest
			}
		}
	}()
	select {
	case a := <-addr:
		port := a[strings.LastIndex(a, ":")+1:]
		return newHTTPBackend("http://127.0.0.1:"+port, "", password, false), srv, nil
	case <-time.After(30 * time.Second):
		srv.stop()
		return nil, nil, errors.New("simulate: the server did not start within 30 s")
	}
}

// stop ends the started server and removes its data.
func (s *startedServer) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	os.RemoveAll(s.dir)
}

// newHTTPBackend drives the server at base (metrics at metrics, base/metrics when
// empty) as the admin with password; reset asks for a full reset before the event.
func newHTTPBackend(base, metrics, password string, reset bool) *httpBackend {
	base = strings.TrimRight(base, "/")
	if metrics == "" {
		metrics = base + "/metrics"
	}
	return &httpBackend{
		base: base, metrics: metrics, reset: reset, client: &http.Client{Timeout: time.Minute},
		auth: "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+password)),
	}
}

// call sends a JSON request (auth: an Authorization header) and decodes a JSON answer
// into out (when not nil); a 429 is retried after its Retry-After.
func (h *httpBackend) call(method, url, auth string, body, out any) error {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return err
		}
	}
	for {
		req, err := http.NewRequest(method, url, bytes.NewReader(b))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := h.client.Do(req)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			time.Sleep(time.Duration(max(wait, 1)) * time.Second)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s %s: %d %s", method, strings.TrimPrefix(url, h.base), resp.StatusCode, bytes.TrimSpace(data))
		}
		if out == nil {
			return nil
		}
		return json.Unmarshal(data, out)
	}
}

func (h *httpBackend) admin(method, path string, body, out any) error {
	return h.call(method, h.base+path, h.auth, body, out)
}

func (h *httpBackend) judge(j int, path string, body, out any) error {
	return h.call("POST", h.base+path, "Bearer "+h.tokens[j], body, out)
}

// SetUp creates the projects one by one (tables in order), the judges (no mail), logs
// each judge in, sets the options and starts the clock.
func (h *httpBackend) SetUp(cfg simulate.Config) ([]engine.ID, error) {
	if h.reset {
		if err := h.admin("POST", "/api/admin/reset", map[string]string{"type": "all"}, nil); err != nil {
			return nil, err
		}
	}
	for i := 0; i < cfg.Projects; i++ {
		body := map[string]string{"name": fmt.Sprintf("Project %d", i+1)}
		if cfg.Track != nil && slices.Contains(cfg.Track.Tables, i+1) {
			body["challenge_list"] = simulate.TrackName
		}
		if err := h.admin("POST", "/api/project/new", body, nil); err != nil {
			return nil, err
		}
	}
	var projects []struct {
		ID       engine.ID `json:"id"`
		Location int       `json:"location"`
	}
	if err := h.admin("GET", "/api/project/list", nil, &projects); err != nil {
		return nil, err
	}
	slices.SortFunc(projects, func(a, b struct {
		ID       engine.ID `json:"id"`
		Location int       `json:"location"`
	}) int {
		return a.Location - b.Location
	})
	pids := make([]engine.ID, len(projects))
	for i, p := range projects {
		pids[i] = p.ID
	}
	if cfg.Track != nil { // a track judge's track must exist
		if err := h.admin("POST", "/api/admin/options", simulate.Options(cfg), nil); err != nil {
			return nil, err
		}
	}
	if err := h.judgesUp(cfg); err != nil {
		return nil, err
	}
	if cfg.Track == nil {
		if err := h.admin("POST", "/api/admin/options", simulate.Options(cfg), nil); err != nil {
			return nil, err
		}
	}
	return pids, h.admin("POST", "/api/admin/clock/unpause", nil, nil)
}

// judgesUp creates the judges of cfg (the track's after the general ones) and logs
// each in with its code.
func (h *httpBackend) judgesUp(cfg simulate.Config) error {
	n := cfg.Judges
	if cfg.Track != nil {
		n += cfg.Track.Judges
	}
	ids := make([]engine.ID, n)
	for i := range ids {
		var res struct {
			ID engine.ID `json:"id"`
		}
		body := map[string]any{"name": fmt.Sprintf("Judge %d", i+1), "email": fmt.Sprintf("j%d@example.com", i+1), "no_send": true}
		if i >= cfg.Judges {
			body["track"] = simulate.TrackName
		}
		if err := h.admin("POST", "/api/judge/new", body, &res); err != nil {
			return err
		}
		ids[i] = res.ID
	}
	var list []struct {
		ID   engine.ID `json:"id"`
		Code string    `json:"code"`
	}
	if err := h.admin("GET", "/api/judge/list", nil, &list); err != nil {
		return err
	}
	codes := map[engine.ID]string{}
	for _, j := range list {
		codes[j.ID] = j.Code
	}
	h.tokens = make([]string, n)
	for i, id := range ids {
		var res struct {
			Token string `json:"token"`
		}
		if err := h.call("POST", h.base+"/api/judge/login", "", map[string]string{"code": codes[id]}, &res); err != nil {
			return err
		}
		h.tokens[i] = res.Token
	}
	return nil
}

func (h *httpBackend) Next(j int) (engine.ID, bool, error) {
	var res struct {
		ProjectID *engine.ID `json:"project_id"`
	}
	if err := h.judge(j, "/api/judge/next", nil, &res); err != nil {
		return engine.ZeroID, false, err
	}
	if res.ProjectID == nil {
		return engine.ZeroID, false, nil
	}
	return *res.ProjectID, true, nil
}

func (h *httpBackend) Finish(j int, starred bool) error {
	return h.judge(j, "/api/judge/finish", map[string]bool{"starred": starred}, nil)
}

func (h *httpBackend) Rank(j int, ranking []engine.ID) error {
	return h.judge(j, "/api/judge/rank", map[string][]engine.ID{"ranking": ranking}, nil)
}

// Current waits until podium_ratings_pending_changes reads 0 (the server's fit that
// includes every change made so far is stored), looking every 2 ms.
func (h *httpBackend) Current() error {
	deadline := time.Now().Add(time.Minute)
	for {
		n, err := h.pending()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("simulate: ratings still %v changes behind after a minute", n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// pending reads podium_ratings_pending_changes.
func (h *httpBackend) pending() (float64, error) {
	req, err := http.NewRequest("GET", h.metrics, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", h.auth)
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "podium_ratings_pending_changes "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("simulate: %s has no podium_ratings_pending_changes (status %d)", h.metrics, resp.StatusCode)
}

func (h *httpBackend) Final() (simulate.Final, error) {
	var res struct {
		Projects []struct {
			ID    engine.ID `json:"id"`
			Score int       `json:"score"`
			Seen  int       `json:"seen"`
		} `json:"projects"`
		Tracks map[string][]struct {
			ID         engine.ID `json:"id"`
			Rank       int       `json:"rank"`
			TrackStars int       `json:"track_stars"`
		} `json:"tracks"`
	}
	f := simulate.Final{Score: map[engine.ID]int{}, Seen: map[engine.ID]int{}}
	if err := h.admin("GET", "/api/admin/results", nil, &res); err != nil {
		return f, err
	}
	for _, p := range res.Projects {
		f.ByRank = append(f.ByRank, p.ID)
		f.Score[p.ID], f.Seen[p.ID] = p.Score, p.Seen
	}
	for _, e := range res.Tracks[simulate.TrackName] {
		f.Track = append(f.Track, simulate.TrackEntry{ID: e.ID, TrackStars: e.TrackStars, Rank: e.Rank})
	}
	return f, nil
}
