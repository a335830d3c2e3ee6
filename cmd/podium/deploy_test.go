package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// metricName finds the metric names an expression uses (Podium's, the Go and process
// collectors'); PromQL functions and label names do not start with these prefixes.
var metricName = regexp.MustCompile(`\b(?:podium|process|go)_[a-zA-Z0-9_]+`)

// deployExprs returns every PromQL expression of the Grafana dashboard and the alert
// rules shipped in deploy/, keyed by where it comes from.
func deployExprs(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "..", "deploy")
	out := map[string]string{}

	raw, err := os.ReadFile(filepath.Join(root, "grafana", "podium.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("deploy/grafana/podium.json: %v", err)
	}
	for _, p := range dash.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		for i, tg := range p.Targets {
			out["dashboard panel "+p.Title+" #"+string(rune('A'+i))] = tg.Expr
		}
	}
	for _, v := range dash.Templating.List {
		out["dashboard variable "+v.Definition] = v.Definition
	}

	// The rules file is YAML; its expressions are one line each (`expr: ...`).
	f, err := os.Open(filepath.Join(root, "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	alert := ""
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if a, ok := strings.CutPrefix(line, "- alert:"); ok {
			alert = strings.TrimSpace(a)
		}
		if e, ok := strings.CutPrefix(line, "expr:"); ok {
			out["alert "+alert] = strings.TrimSpace(e)
		}
	}
	if len(out) < 20 {
		t.Fatalf("found only %d expressions in deploy/", len(out))
	}
	return out
}

// TestDeployMetricsExist starts the real binary, makes a few requests and checks that
// every metric the Grafana dashboard and the alert rules use is on its /metrics.
func TestDeployMetricsExist(t *testing.T) {
	p := startBinary(t, t.TempDir())
	p.must("POST", "/api/judge/new", map[string]any{"name": "A", "email": "a@b.co", "no_send": true}, "")
	p.must("GET", "/api/judge/list", nil, "")
	code, body, err := p.req("GET", "/metrics", nil, "")
	if err != nil || code != 200 {
		t.Fatalf("GET /metrics: %d %v", code, err)
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		have[name] = true
	}
	used := map[string][]string{}
	for where, expr := range deployExprs(t) {
		names := metricName.FindAllString(expr, -1)
		if len(names) == 0 && !strings.Contains(expr, "up{") {
			t.Errorf("%s: no metric in %q", where, expr)
		}
		for _, n := range names {
			used[n] = append(used[n], where)
		}
	}
	var missing []string
	for n, where := range used {
		if !have[n] {
			sort.Strings(where)
			missing = append(missing, n+" (used by "+strings.Join(where, "; ")+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("metric not on /metrics: %s", m)
	}
	// The readiness gauges say what /readyz says.
	for _, want := range []string{"podium_ready 1", "podium_journal_readonly 0", "podium_views 0"} {
		if !bytes.Contains(body, []byte("\n"+want+"\n")) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestHealthcheckCommand runs "podium healthcheck" against a live server (exit 0) and
// against a port nobody listens on (non-zero), as the image's HEALTHCHECK does.
func TestHealthcheckCommand(t *testing.T) {
	p := startBinary(t, t.TempDir())
	port := p.base[strings.LastIndex(p.base, ":")+1:]
	cmd := exec.Command(podiumBinary(t), "healthcheck")
	cmd.Env = append(os.Environ(), "PORT="+port)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("healthcheck against a live server: %v\n%s", err, out)
	}
	p.kill()
	cmd = exec.Command(podiumBinary(t), "healthcheck", "-url", p.base+"/healthz")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("healthcheck against a stopped server succeeded: %s", out)
	}
}

// TestDockerfile checks what can be checked without a container engine: every file the
// build stage copies from the context exists and is not excluded by .dockerignore, the
// build runs the static build this test binary was built with, and the health check
// calls a subcommand the binary has.
func TestDockerfile(t *testing.T) {
	root := filepath.Join("..", "..")
	raw, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	ignored := map[string]bool{}
	for _, l := range strings.Split(string(ignore), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			ignored[l] = true
		}
	}
	text := strings.ReplaceAll(string(raw), "\\\n", " ")
	var copies, runs int
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "COPY":
			args := f[1:]
			fromStage := false
			for len(args) > 0 && strings.HasPrefix(args[0], "--") {
				fromStage = fromStage || strings.HasPrefix(args[0], "--from=")
				args = args[1:]
			}
			if fromStage || len(args) < 2 {
				continue
			}
			for _, src := range args[:len(args)-1] {
				copies++
				if _, err := os.Stat(filepath.Join(root, src)); err != nil {
					t.Errorf("Dockerfile copies %s: %v", src, err)
				}
				if ignored[src] {
					t.Errorf("Dockerfile copies %s, which .dockerignore excludes", src)
				}
			}
		case "RUN":
			runs++
			if strings.Contains(line, "go build") && !strings.Contains(line, "CGO_ENABLED=0") {
				t.Errorf("the image's go build is not static: %s", line)
			}
		case "HEALTHCHECK":
			if !strings.Contains(line, `"healthcheck"`) {
				t.Errorf("HEALTHCHECK does not call podium healthcheck: %s", line)
			}
		}
	}
	if copies < 2 || runs < 2 {
		t.Fatalf("parsed %d COPY sources and %d RUN lines; the Dockerfile changed shape", copies, runs)
	}
	for _, must := range []string{"USER 65532", `VOLUME ["/data"]`, "DATA_DIR=/data", "CGO_ENABLED=0 go build"} {
		if !strings.Contains(text, must) {
			t.Errorf("Dockerfile lacks %q", must)
		}
	}
	for _, keep := range []string{"cmd", "engine", "persist", "transport", "metrics", "go.mod", "go.sum"} {
		if ignored[keep] {
			t.Errorf(".dockerignore excludes %s, which the build needs", keep)
		}
	}
}
