package metrics

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"podium/engine"
)

// gather returns the registry's families by name, after one observation of each kind so
// that labelled families without known values (HTTP) have a series.
func gather(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	m.Request("/api/judge/:id", "GET", 200, time.Millisecond)
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// labelValues lists the values label takes in family f.
func labelValues(f *dto.MetricFamily, label string) map[string]bool {
	out := map[string]bool{}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				out[l.GetValue()] = true
			}
		}
	}
	return out
}

// TestSpecFamilies checks the families of docs/behaviour.md#operations: name, type and the label values
// shown at 0 from startup.
func TestSpecFamilies(t *testing.T) {
	m := New()
	m.WatchState(engine.New().Read)
	fams := gather(t, m)
	types := map[string]dto.MetricType{
		"podium_http_requests_total":            dto.MetricType_COUNTER,
		"podium_http_request_duration_seconds":  dto.MetricType_HISTOGRAM,
		"podium_engine_commands_total":          dto.MetricType_COUNTER,
		"podium_engine_apply_duration_seconds":  dto.MetricType_HISTOGRAM,
		"podium_engine_queue_depth":             dto.MetricType_GAUGE,
		"podium_journal_fsync_duration_seconds": dto.MetricType_HISTOGRAM,
		"podium_journal_batch_size":             dto.MetricType_HISTOGRAM,
		"podium_snapshot_duration_seconds":      dto.MetricType_HISTOGRAM,
		"podium_snapshot_size_bytes":            dto.MetricType_GAUGE,
		"podium_ws_connections":                 dto.MetricType_GAUGE,
		"podium_ws_messages_sent_total":         dto.MetricType_COUNTER,
		"podium_ws_clients_dropped_total":       dto.MetricType_COUNTER,
		"podium_login_throttled_total":          dto.MetricType_COUNTER,
		"podium_emails_total":                   dto.MetricType_COUNTER,
		"podium_projects":                       dto.MetricType_GAUGE,
		"podium_judges":                         dto.MetricType_GAUGE,
		"podium_flags":                          dto.MetricType_GAUGE,
		"podium_clock_running":                  dto.MetricType_GAUGE,
		"podium_deliberation":                   dto.MetricType_GAUGE,
		"podium_ready":                          dto.MetricType_GAUGE,
		"podium_journal_readonly":               dto.MetricType_GAUGE,
		"podium_ratings_pending_changes":        dto.MetricType_GAUGE,
		"podium_views":                          dto.MetricType_GAUGE,
		"go_goroutines":                         dto.MetricType_GAUGE,
		"process_resident_memory_bytes":         dto.MetricType_GAUGE,
	}
	for name, typ := range types {
		f, ok := fams[name]
		if !ok {
			t.Errorf("family %s missing", name)
			continue
		}
		if f.GetType() != typ {
			t.Errorf("%s is %v, want %v", name, f.GetType(), typ)
		}
	}
	known := []struct {
		family, label string
		values        []string
	}{
		{"podium_ws_connections", "role", wsRoles},
		{"podium_ws_clients_dropped_total", "reason", wsDropReasons},
		{"podium_emails_total", "result", emailResults},
		{"podium_login_throttled_total", "route", throttleRoutes},
		{"podium_projects", "state", itemStates},
		{"podium_judges", "state", itemStates},
		{"podium_flags", "reason", FlagReasons},
		{"podium_engine_commands_total", "result", []string{"ok", "error"}},
		{"podium_engine_commands_total", "command", []string{"judging.finish", "judging.next"}},
	}
	for _, k := range known {
		f, ok := fams[k.family]
		if !ok {
			continue
		}
		have := labelValues(f, k.label)
		for _, v := range k.values {
			if !have[v] {
				t.Errorf("%s{%s=%q} not shown from startup", k.family, k.label, v)
			}
		}
	}
}

// TestHealthGauges checks that podium_ready, podium_journal_readonly and
// podium_ratings_pending_changes follow the functions given to WatchHealth and
// WatchRatings, and read 0 before them.
func TestHealthGauges(t *testing.T) {
	m := New()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	scrape := func() string {
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	want := func(body string, lines ...string) {
		t.Helper()
		for _, l := range lines {
			if !strings.Contains(body, "\n"+l+"\n") {
				t.Errorf("scrape lacks %q", l)
			}
		}
	}
	want(scrape(), "podium_ready 0", "podium_journal_readonly 0", "podium_ratings_pending_changes 0")
	pending := uint64(17)
	m.WatchRatings(func() uint64 { return pending })
	want(scrape(), "podium_ratings_pending_changes 17")
	pending = 0
	want(scrape(), "podium_ratings_pending_changes 0")
	ready, ro := true, false
	m.WatchHealth(func() bool { return ready }, func() bool { return ro })
	want(scrape(), "podium_ready 1", "podium_journal_readonly 0")
	ready, ro = false, true
	want(scrape(), "podium_ready 0", "podium_journal_readonly 1")
}

var (
	metricRef = regexp.MustCompile(`\b((?:podium|process|go)_[a-zA-Z0-9_]+)(\{[^}]*\})?`)
	byClause  = regexp.MustCompile(`\bby \(([^)]*)\)`)
	matcher   = regexp.MustCompile(`([a-z_]+)\s*(?:=~|!=|!~|=)\s*"`)
	exprLine  = regexp.MustCompile(`^\s*expr:\s*(.*)$`)
)

// deployExpressions reads the PromQL of deploy/grafana/podium.json and
// deploy/prometheus/alerts.yml.
func deployExpressions(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "deploy")
	raw, err := os.ReadFile(filepath.Join(root, "grafana", "podium.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Targets []struct{ Expr string } `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	f, err := os.Open(filepath.Join(root, "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := exprLine.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// TestDeployNamesAndLabels checks every metric the dashboard and the alert rules use is
// a family of the registry, and every label they match on or group by is one of its
// labels (labels Prometheus adds, instance, job and le, aside).
func TestDeployNamesAndLabels(t *testing.T) {
	m := New()
	m.WatchState(engine.New().Read)
	fams := gather(t, m)
	family := func(name string) *dto.MetricFamily {
		if f, ok := fams[name]; ok {
			return f
		}
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suf); ok {
				if f, ok := fams[base]; ok && (f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY) {
					return f
				}
			}
		}
		return nil
	}
	exprs := deployExpressions(t)
	if len(exprs) < 20 {
		t.Fatalf("found only %d expressions", len(exprs))
	}
	free := map[string]bool{"instance": true, "job": true, "le": true}
	for _, e := range exprs {
		refs := metricRef.FindAllStringSubmatch(e, -1)
		labels := map[string]bool{}
		for _, r := range refs {
			f := family(r[1])
			if f == nil {
				t.Errorf("%q: metric %s is not registered", e, r[1])
				continue
			}
			for _, mm := range f.GetMetric() {
				for _, l := range mm.GetLabel() {
					labels[l.GetName()] = true
				}
			}
			for _, lm := range matcher.FindAllStringSubmatch(r[2], -1) {
				if !free[lm[1]] && !labelValuesExist(f, lm[1]) {
					t.Errorf("%q: %s has no label %s", e, r[1], lm[1])
				}
			}
		}
		for _, b := range byClause.FindAllStringSubmatch(e, -1) {
			for _, l := range strings.Split(b[1], ",") {
				if l = strings.TrimSpace(l); !free[l] && !labels[l] {
					t.Errorf("%q: groups by %s, which none of its metrics has", e, l)
				}
			}
		}
	}
}

func labelValuesExist(f *dto.MetricFamily, label string) bool {
	return len(labelValues(f, label)) > 0
}

// TestCommandAppliedCounts: each call moves exactly the child of its kind and result,
// for kinds known at startup (pre-resolved) and any other kind alike.
func TestCommandAppliedCounts(t *testing.T) {
	m := New()
	calls := []struct {
		kind string
		ok   bool
	}{{"judging.next", true}, {"judging.next", true}, {"judging.next", false}, {"judging.finish", false}, {"not.a.kind", true}}
	for _, c := range calls {
		m.CommandApplied(c.kind, c.ok, time.Microsecond)
	}
	got := map[string]float64{}
	for _, mm := range gather(t, m)["podium_engine_commands_total"].GetMetric() {
		var kind, result string
		for _, l := range mm.GetLabel() {
			switch l.GetName() {
			case "command":
				kind = l.GetValue()
			case "result":
				result = l.GetValue()
			}
		}
		if v := mm.GetCounter().GetValue(); v != 0 {
			got[kind+"/"+result] = v
		}
	}
	want := map[string]float64{"judging.next/ok": 2, "judging.next/error": 1, "judging.finish/error": 1, "not.a.kind/ok": 1}
	if len(got) != len(want) {
		t.Fatalf("counters %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("counters %v, want %v", got, want)
		}
	}
	if h := gather(t, m)["podium_engine_apply_duration_seconds"].GetMetric()[0].GetHistogram(); h.GetSampleCount() != uint64(len(calls)) {
		t.Fatalf("apply duration samples %d, want %d", h.GetSampleCount(), len(calls))
	}
}
