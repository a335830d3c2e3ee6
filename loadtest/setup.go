package loadtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"mime/multipart"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes a scenario. Zero values get the defaults of the standard scenario
// where noted.
type Config struct {
	URL string // server base URL, e.g. http://127.0.0.1:8080 (ignored when ServerBin is set)
	// MoreURLs are further nodes of a cluster: judges are spread over URL and these
	// (setup, admin requests and checks use URL).
	MoreURLs      []string
	AdminPassword string
	APIKey        string // PUBLIC_API_KEY: readers also hit /v1/public/* when set

	Projects int // P projects to create
	Judges   int // J judges to create
	Watchers int // W websocket connections
	Readers  int // expo/content readers

	Duration       time.Duration // length of the measured phase
	Think          time.Duration // judge think time between actions (0 = stress)
	ReaderInterval time.Duration // pause between a reader's requests (default 500 ms)
	SkipProb       float64       // probability that a judge skips instead of finishing (default 0.15)
	RankProb       float64       // probability of a rank after a finish (default 0.2)
	ClockInterval  time.Duration // admin pauses+unpauses the clock this often (default 2 s; <0 disables)
	ClockPause     time.Duration // how long the clock stays paused (default 100 ms)
	SampleInterval time.Duration // judge/project list sampling for the hold invariant (default 10 s; <0 disables)
	SetupWorkers   int           // concurrent setup requests (default 16)
	Seed           uint64        // random seed (0 = from time)
	NoCSV          bool          // create projects/judges one by one even if the CSV imports exist

	// Managed server (the tool starts the binary itself).
	ServerBin      string   // path to the podium binary; empty = use URL
	DataDir        string   // data directory for the managed server (default: a temp dir)
	ServerLogLevel string   // LOG_LEVEL for the managed server (default "warn")
	ServerLog      string   // file for the managed server's output (default: a new temp file, kept)
	ServerEnv      []string // extra KEY=VALUE for the managed server

	// Crash mode.
	CrashCycles int           // >0 runs crash mode with this many SIGKILL cycles
	CrashMin    time.Duration // earliest kill after the load starts (default 2 s)
	CrashMax    time.Duration // latest kill (default 6 s)
	Creators    int           // admin goroutines creating projects/judges during crash cycles (default 1)

	// Cluster mode and failure injection (cluster.go).
	ClusterNodes int           // with ServerBin: start this many nodes as one cluster (SPEC §8a)
	KillAfter    time.Duration // SIGKILL a target this long into the measured phase (0: never)
	KillLeader   bool          // the target is the cluster's leader (needs ClusterNodes)
	KillPID      int           // the target is this process

	Log func(format string, args ...any) // progress output (default: none)
}

// checkCluster rejects combinations of the cluster and kill settings that cannot work.
func (c *Config) checkCluster() error {
	switch {
	case c.ClusterNodes > 0 && c.ServerBin == "":
		return errors.New("a cluster of nodes needs the server binary (-server)")
	case c.ClusterNodes > 0 && c.CrashCycles > 0:
		return errors.New("crash mode runs one server, not a cluster")
	case c.KillLeader && c.ClusterNodes == 0:
		return errors.New("killing the leader needs a cluster started by the tool (-cluster N)")
	case c.KillLeader && c.KillPID > 0:
		return errors.New("kill the leader or a pid, not both")
	case c.KillAfter > 0 && !c.KillLeader && c.KillPID <= 0:
		return errors.New("a kill time needs a target (the leader or a pid)")
	case c.KillAfter > 0 && c.KillAfter >= c.Duration:
		return errors.New("the kill time must fall inside the measured phase")
	}
	return nil
}

func (c *Config) defaults() {
	if c.ReaderInterval == 0 {
		c.ReaderInterval = 500 * time.Millisecond
	}
	if c.SkipProb == 0 {
		c.SkipProb = 0.15
	}
	if c.RankProb == 0 {
		c.RankProb = 0.2
	}
	if c.ClockInterval == 0 {
		c.ClockInterval = 2 * time.Second
	}
	if c.ClockPause == 0 {
		c.ClockPause = 100 * time.Millisecond
	}
	if c.SampleInterval == 0 {
		c.SampleInterval = 10 * time.Second
	}
	if c.SetupWorkers == 0 {
		c.SetupWorkers = 16
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if c.ServerLogLevel == "" {
		c.ServerLogLevel = "warn"
	}
	if c.CrashMin == 0 {
		c.CrashMin = 2 * time.Second
	}
	if c.CrashMax < c.CrashMin {
		c.CrashMax = c.CrashMin + 4*time.Second
	}
	if c.Creators == 0 {
		c.Creators = 1
	}
	if c.Log == nil {
		c.Log = func(string, ...any) {}
	}
}

// runID makes the names and emails of one run unique on a server that already has data.
func runID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// parallel runs fn(i) for i in [0, n) on workers goroutines and returns the first error.
func parallel(n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < workers && w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || first.Load() != nil {
					return
				}
				if err := fn(i); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return err
	}
	return nil
}

// raiseLoginLimit lifts the per-IP judge login throttle so that hundreds of judges can
// log in from one load generator. It tries POST /api/admin/max-reqs, then
// POST /api/admin/options; it returns a note when neither exists.
func raiseLoginLimit(ctx context.Context, c *client) string {
	body := map[string]any{"max_req_per_min": 100000}
	err := c.do(ctx, "POST", "/api/admin/max-reqs", "/api/admin/max-reqs", asAdmin, body, nil)
	if err == nil {
		return ""
	}
	if err2 := c.do(ctx, "POST", "/api/admin/options", "/api/admin/options", asAdmin, body, nil); err2 == nil {
		return ""
	}
	return "could not raise max_req_per_min (" + err.Error() + "); judge logins may be throttled (429, retried after Retry-After)"
}

func multipartCSV(fields map[string]string, csv string) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			return nil, "", err
		}
	}
	fw, err := w.CreateFormFile("csv", "import.csv")
	if err != nil {
		return nil, "", err
	}
	if _, err := fw.Write([]byte(csv)); err != nil {
		return nil, "", err
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

// importCSV posts a CSV import; ok false means the route does not exist (404/405).
func importCSV(ctx context.Context, c *client, path string, fields map[string]string, csv string) (bool, error) {
	body, ctype, err := multipartCSV(fields, csv)
	if err != nil {
		return false, err
	}
	err = c.do(ctx, "POST", path, path, auth{admin: true, hdr: map[string]string{"Content-Type": ctype}}, body, nil)
	if code := statusOf(err); code == 404 || code == 405 {
		return false, nil
	}
	return err == nil, err
}

// createProjects adds n projects named "<prefix>-p<i>" and records them in the ledger.
func createProjects(ctx context.Context, c *client, lg *ledger, prefix string, from, n, workers int, csv bool) error {
	name := func(i int) string { return fmt.Sprintf("%s-p%05d", prefix, i) }
	if csv && n > 1 {
		var sb strings.Builder
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&sb, "%s,Demo of project %d,https://example.com/p/%d\n", name(i), i, i)
		}
		ok, err := importCSV(ctx, c, "/api/project/csv", map[string]string{"hasHeader": "false"}, sb.String())
		if err != nil {
			return fmt.Errorf("project CSV import: %w", err)
		}
		if ok {
			list, err := c.projectList(ctx)
			if err != nil {
				return err
			}
			want := map[string]bool{}
			for i := from; i < from+n; i++ {
				want[name(i)] = true
			}
			for _, p := range list {
				if want[p.Name] {
					lg.addProject(p.ID, p.Name)
				}
			}
			return nil
		}
	}
	return parallel(n, workers, func(k int) error {
		i := from + k
		var out struct {
			ID string `json:"id"`
		}
		body := map[string]any{"name": name(i), "description": fmt.Sprintf("Demo of project %d", i), "url": fmt.Sprintf("https://example.com/p/%d", i)}
		if err := c.do(ctx, "POST", "/api/project/new", "/api/project/new", asAdmin, body, &out); err != nil {
			return err
		}
		lg.addProject(out.ID, name(i))
		return nil
	})
}

// createJudges adds n judges (no emails sent) and records them with their login codes.
func createJudges(ctx context.Context, c *client, lg *ledger, prefix string, from, n, workers int, csv bool) error {
	name := func(i int) string { return fmt.Sprintf("%s-j%05d", prefix, i) }
	email := func(i int) string { return fmt.Sprintf("%s-j%05d@example.com", prefix, i) }
	imported := false
	if csv && n > 1 {
		var sb strings.Builder
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&sb, "%s,%s\n", name(i), email(i))
		}
		ok, err := importCSV(ctx, c, "/api/judge/csv", map[string]string{"hasHeader": "false", "noSend": "true"}, sb.String())
		if err != nil {
			return fmt.Errorf("judge CSV import: %w", err)
		}
		imported = ok
	}
	if !imported {
		err := parallel(n, workers, func(k int) error {
			i := from + k
			body := map[string]any{"name": name(i), "email": email(i), "notes": "load test", "no_send": true}
			return c.do(ctx, "POST", "/api/judge/new", "/api/judge/new", asAdmin, body, nil)
		})
		if err != nil {
			return err
		}
	}
	list, err := c.judgeList(ctx)
	if err != nil {
		return err
	}
	byEmail := map[string]wireJudge{}
	for _, j := range list {
		byEmail[j.Email] = j
	}
	for i := from; i < from+n; i++ {
		j, ok := byEmail[email(i)]
		if !ok {
			return fmt.Errorf("judge %s was acknowledged but is not in /api/judge/list", email(i))
		}
		lg.addJudge(&judgeRec{id: j.ID, name: j.Name, email: j.Email, code: j.Code, xff: fakeIP(i)})
	}
	return nil
}

// fakeIP gives every judge its own X-Forwarded-For address, so that a server started
// with TRUSTED_PROXIES=127.0.0.1 throttles logins per judge rather than per load
// generator. Servers that do not trust the peer ignore the header.
func fakeIP(i int) string {
	return fmt.Sprintf("10.%d.%d.%d", (i>>16)&255, (i>>8)&255, i&255)
}

// login logs a judge in, waiting out throttling (429 + Retry-After) up to a few times.
func login(ctx context.Context, c *client, j *judgeRec) error {
	for attempt := 0; ; attempt++ {
		var out struct {
			Token string `json:"token"`
		}
		err := c.do(ctx, "POST", "/api/judge/login", "/api/judge/login", auth{xff: j.xff}, map[string]string{"code": j.code}, &out)
		if err == nil {
			if out.Token == "" {
				return fmt.Errorf("judge login: empty token")
			}
			j.mu.Lock()
			j.token = out.Token
			j.mu.Unlock()
			return nil
		}
		if statusOf(err) != 429 || attempt >= 3 {
			return err
		}
		wait := 5 * time.Second
		var se *StatusError
		if errors.As(err, &se) {
			wait = time.Duration(atoiDefault(se.RetryAfter, 5)) * time.Second
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

func atoiDefault(s string, def int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		return n
	}
	return def
}
