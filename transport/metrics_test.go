package transport

import (
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	fastws "github.com/fasthttp/websocket"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"podium/engine"
	"podium/metrics"
)

// startMetricsServer starts a server wired to a metrics registry the way cmd/podium does.
func startMetricsServer(t *testing.T) (*testServer, *metrics.Metrics) {
	t.Helper()
	m := metrics.New()
	ts := startServerWith(t, m, []Option{WithObserver(m), WithHubObserver(m), WithMetricsHandler(m.Handler())})
	m.WatchState(ts.Node.Read)
	return ts, m
}

// scrape fetches /metrics and parses it with the Prometheus text parser.
func scrape(t *testing.T, ts *testServer) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("/metrics: %d %s", resp.StatusCode, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// sample is one series' value (counter, gauge, or a histogram's count).
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if got[k] != v {
				continue next
			}
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue(), true
		case dto.MetricType_GAUGE:
			return m.GetGauge().GetValue(), true
		case dto.MetricType_HISTOGRAM:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

func labelsOf(f *dto.MetricFamily, name string) []string {
	var out []string
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == name {
				out = append(out, l.GetValue())
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestMetricsFamiliesAndMovement(t *testing.T) {
	ts, _ := startMetricsServer(t)
	ts.must(200, "GET", "/api/", nil, anon, nil) // so the HTTP families have a sample

	type family struct {
		name   string
		typ    dto.MetricType
		labels map[string][]string // label -> values that must exist from startup
	}
	want := []family{
		{"podium_http_requests_total", dto.MetricType_COUNTER, nil},
		{"podium_http_request_duration_seconds", dto.MetricType_HISTOGRAM, nil},
		{"podium_engine_commands_total", dto.MetricType_COUNTER, map[string][]string{"result": {"error", "ok"}}},
		{"podium_engine_apply_duration_seconds", dto.MetricType_HISTOGRAM, nil},
		{"podium_engine_queue_depth", dto.MetricType_GAUGE, nil},
		{"podium_journal_fsync_duration_seconds", dto.MetricType_HISTOGRAM, nil},
		{"podium_journal_batch_size", dto.MetricType_HISTOGRAM, nil},
		{"podium_snapshot_duration_seconds", dto.MetricType_HISTOGRAM, nil},
		{"podium_snapshot_size_bytes", dto.MetricType_GAUGE, nil},
		{"podium_ws_connections", dto.MetricType_GAUGE, map[string][]string{"role": {"admin", "anonymous", "judge"}}},
		{"podium_ws_messages_sent_total", dto.MetricType_COUNTER, nil},
		{"podium_ws_clients_dropped_total", dto.MetricType_COUNTER, map[string][]string{"reason": {"idle", "oversize", "slow"}}},
		{"podium_login_throttled_total", dto.MetricType_COUNTER, map[string][]string{"route": {"admin_login", "judge_login", "qr"}}},
		{"podium_requests_rejected_total", dto.MetricType_COUNTER, map[string][]string{"reason": {"body_too_large", "judge_writes", "login_flood", "login_ip", "media_type", "ws_full", "ws_per_ip"}}},
		{"podium_emails_total", dto.MetricType_COUNTER, map[string][]string{"result": {"failed", "sent", "skipped"}}},
		{"podium_projects", dto.MetricType_GAUGE, map[string][]string{"state": {"active", "hidden"}}},
		{"podium_judges", dto.MetricType_GAUGE, map[string][]string{"state": {"active", "hidden"}}},
		{"podium_flags", dto.MetricType_GAUGE, map[string][]string{"reason": {"absent", "busy", "cannot-demo", "hidden-absent", "offensive", "too-complex"}}},
		{"podium_clock_running", dto.MetricType_GAUGE, nil},
		{"podium_deliberation", dto.MetricType_GAUGE, nil},
		{"go_goroutines", dto.MetricType_GAUGE, nil},
		{"process_resident_memory_bytes", dto.MetricType_GAUGE, nil},
	}
	fams := scrape(t, ts)
	for _, w := range want {
		f, ok := fams[w.name]
		if !ok {
			t.Fatalf("family %s missing", w.name)
		}
		if f.GetType() != w.typ {
			t.Fatalf("%s is %v, want %v", w.name, f.GetType(), w.typ)
		}
		for label, values := range w.labels {
			got := strings.Join(labelsOf(f, label), ",")
			for _, v := range values {
				if !strings.Contains(","+got+",", ","+v+",") {
					t.Fatalf("%s{%s=%q} not initialised (have %s)", w.name, label, v, got)
				}
			}
		}
	}
	for _, k := range engine.CommandKinds() {
		if _, ok := sample(fams, "podium_engine_commands_total", map[string]string{"command": k, "result": "ok"}); !ok {
			t.Fatalf("command %s not initialised", k)
		}
	}

	// Each action moves its metric.
	type probe struct {
		name   string
		labels map[string]string
	}
	value := func(fams map[string]*dto.MetricFamily, p probe) float64 {
		v, _ := sample(fams, p.name, p.labels)
		return v
	}
	moves := func(what string, action func(), probes ...probe) {
		t.Helper()
		before := scrape(t, ts)
		action()
		for _, p := range probes {
			waitFor(t, what+": "+p.name, func() bool { return value(scrape(t, ts), p) > value(before, p) })
		}
	}
	moves("HTTP request with a route template", func() {
		ts.do("GET", "/api/admin/backup/nothing-here", nil, asAdmin)
	},
		probe{"podium_http_requests_total", map[string]string{"route": "/api/admin/backup/:name", "method": "GET"}},
		probe{"podium_http_request_duration_seconds", map[string]string{"route": "/api/admin/backup/:name", "method": "GET"}})
	moves("unmatched route", func() { ts.do("GET", "/api/no/such/route", nil, anon) },
		probe{"podium_http_requests_total", map[string]string{"route": "unmatched", "code": "404"}})
	for _, r := range labelsOf(scrape(t, ts)["podium_http_requests_total"], "route") {
		if strings.Contains(r, "nothing-here") || strings.Contains(r, "no/such") {
			t.Fatalf("raw path used as route label: %q", r)
		}
	}
	moves("commands", func() {
		ts.addJudge("Ada", "ada@example.com", "")
		ts.do("POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@example.com", "no_send": true}, asAdmin)
	},
		probe{"podium_engine_commands_total", map[string]string{"command": "judge.create", "result": "ok"}},
		probe{"podium_engine_commands_total", map[string]string{"command": "judge.create", "result": "error"}},
		probe{"podium_engine_apply_duration_seconds", nil},
		probe{"podium_journal_fsync_duration_seconds", nil},
		probe{"podium_journal_batch_size", nil},
		probe{"podium_judges", map[string]string{"state": "active"}})
	moves("project", func() { ts.addProject("Rocket", "AI") },
		probe{"podium_projects", map[string]string{"state": "active"}})
	moves("hide", func() {
		pid := ts.addProject("Hidden", "")
		jid, _ := ts.addJudge("Hidden Judge", "hidden@example.com", "")
		ts.must(200, "PUT", "/api/project/hide/"+pid, nil, asAdmin, nil)
		ts.must(200, "PUT", "/api/judge/hide/"+jid, nil, asAdmin, nil)
	},
		probe{"podium_projects", map[string]string{"state": "hidden"}},
		probe{"podium_judges", map[string]string{"state": "hidden"}})
	moves("deliberation", func() {
		ts.must(200, "POST", "/api/admin/deliberation", map[string]bool{"start": true}, asAdmin, nil)
		ts.must(200, "POST", "/api/admin/deliberation", map[string]bool{"start": false}, asAdmin, nil)
		ts.must(200, "POST", "/api/admin/deliberation", map[string]bool{"start": true}, asAdmin, nil)
	}, probe{"podium_deliberation", nil})
	moves("clock", func() { ts.must(200, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil) },
		probe{"podium_clock_running", nil})
	moves("snapshot", func() { ts.must(200, "POST", "/api/admin/clock/backup", nil, asAdmin, nil) },
		probe{"podium_snapshot_duration_seconds", nil},
		probe{"podium_snapshot_size_bytes", nil})

	var anonWS, judgeWS, adminWS *wsConn
	_, code := ts.addJudge("Bob", "bob@example.com", "")
	token := ts.login(code)
	moves("websocket connections", func() {
		anonWS, _ = ts.mustDialWS(nil)
		judgeWS, _ = ts.mustDialWS(cookieHeader(cookieJudge, token))
		adminWS, _ = ts.mustDialWS(http.Header{})
		adminWS.send(map[string]string{"type": "auth", "password": testPassword})
		adminWS.expectNext("hello")
	},
		probe{"podium_ws_connections", map[string]string{"role": "anonymous"}},
		probe{"podium_ws_connections", map[string]string{"role": "judge"}},
		probe{"podium_ws_connections", map[string]string{"role": "admin"}},
		probe{"podium_ws_messages_sent_total", map[string]string{"type": "hello"}},
		probe{"podium_ws_messages_sent_total", map[string]string{"type": "stats"}})
	// A broadcast counts once per connection written to.
	before := scrape(t, ts)
	ts.must(200, "POST", "/api/admin/clock/pause", nil, asAdmin, nil)
	for _, w := range []*wsConn{anonWS, judgeWS, adminWS} {
		w.expect("clock")
	}
	clockSent := probe{"podium_ws_messages_sent_total", map[string]string{"type": "clock"}}
	// (counted after each write returns, so possibly just after the client has it)
	waitFor(t, "3 clock messages counted", func() bool { return value(scrape(t, ts), clockSent)-value(before, clockSent) == 3 })
	moves("oversize drop", func() {
		_ = anonWS.c.WriteMessage(fastws.TextMessage, []byte(strings.Repeat("x", wsMaxInbound+1)))
		anonWS.expectClose()
	}, probe{"podium_ws_clients_dropped_total", map[string]string{"reason": "oversize"}})
	moves("admin login throttling", func() {
		for i := 0; i <= adminFailLimit; i++ {
			ts.do("POST", "/api/admin/login", map[string]string{"password": "wrong"}, anon)
		}
	}, probe{"podium_login_throttled_total", map[string]string{"route": "admin_login"}})
}

// The email counters belong to the outbox (another issue); the metrics type implements
// its observer. This checks the counters it feeds.
func TestMetricsEmailCounters(t *testing.T) {
	ts, m := startMetricsServer(t)
	m.EmailSent()
	m.EmailFailed()
	m.EmailFailed()
	m.EmailSkipped()
	m.EmailUnknown()
	fams := scrape(t, ts)
	for result, want := range map[string]float64{"sent": 1, "failed": 2, "skipped": 1, "unknown": 1} {
		if v, _ := sample(fams, "podium_emails_total", map[string]string{"result": result}); v != want {
			t.Fatalf("emails{result=%s} = %v, want %v", result, v, want)
		}
	}
}
